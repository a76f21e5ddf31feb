"""Requests, the Provider port, capabilities and the public face of agentrig.llm."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

import agentrig.llm as llm
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import (
    AssistantMessage,
    Capabilities,
    CapabilityError,
    FinishChunk,
    ModelInfo,
    ModelRegistry,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderConfig,
    ProviderFactory,
    ResponseFormat,
    StreamAssembler,
    StreamChunk,
    SystemMessage,
    TextBlock,
    TextDelta,
    ToolMessage,
    ToolSpec,
    Usage,
    UsageChunk,
    UserMessage,
    capability,
    require_capability,
)


class FakeProvider:
    """A minimal provider answering every request with one fixed reply."""

    kind = "fake"

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.closed = False

    def capabilities(self, model: str) -> Capabilities:
        base = Capabilities(
            structured_output="json_mode",
            tool_choice=True,
            streaming=True,
            reasoning_effort=("low", "high"),
            native_web_tools=frozenset({"web_search"}),
        )
        info = self.config.models.lookup(model)
        return base.overlay(info.capabilities if info else None)

    def _chunks(self) -> list[StreamChunk]:
        return [
            TextDelta(text="Hel"),
            TextDelta(text="lo"),
            UsageChunk(usage=Usage.of(5, 2)),
            FinishChunk(stop_reason="end", provider_stop_reason="stop", model="fake-1"),
        ]

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        signal.raise_if_cancelled()
        message = AssistantMessage(
            content=(TextBlock(text="Hello"),),
            stop_reason="end",
            provider_stop_reason="stop",
            model="fake-1",
            usage=Usage.of(5, 2),
        )
        return ModelResponse(message=message, request_id="r1", served_model="fake-1")

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        for chunk in self._chunks():
            if signal.cancelled:
                raise signal.abort_error()
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


def _request(**kwargs: Any) -> ModelRequest:
    return ModelRequest(
        model="fake-1", messages=(SystemMessage(text="s"), UserMessage.of("hi")), **kwargs
    )


def test_fake_provider_satisfies_the_port() -> None:
    provider = FakeProvider(ProviderConfig(id="main", kind="fake"))
    assert isinstance(provider, Provider)
    assert isinstance(FakeProvider, ProviderFactory)
    assert not isinstance(object(), Provider)


@pytest.mark.anyio
async def test_streaming_and_complete_agree() -> None:
    provider = FakeProvider(ProviderConfig(id="main", kind="fake"))
    signal = CancelSignal()
    response = await provider.complete(_request(), signal=signal)
    assembler = StreamAssembler()
    async for chunk in provider.stream(_request(), signal=signal):
        assembler.feed(chunk)
    assert assembler.message() == response.message
    await provider.aclose()
    assert provider.closed


@pytest.mark.anyio
async def test_cancelled_stream_raises_abort() -> None:
    provider = FakeProvider(ProviderConfig(id="main", kind="fake"))
    signal = CancelSignal()
    signal.cancel("user")
    with pytest.raises(AbortError):
        async for _ in provider.stream(_request(), signal=signal):
            pass


def test_provider_config_defaults_and_immutability() -> None:
    options = {"base_url": "https://x.test"}
    config = ProviderConfig(id="p", kind="fake", options=options, credentials={"api_key": "s3cret"})
    options["base_url"] = "changed"
    assert config.options["base_url"] == "https://x.test"
    with pytest.raises(TypeError):
        config.options["new"] = 1  # type: ignore[index]
    assert "s3cret" not in repr(config)
    assert isinstance(config.models, ModelRegistry)
    with pytest.raises(RuntimeError):
        config.http()
    seen: list[dict[str, Any]] = []

    def http(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return "client"

    client: object = ProviderConfig(id="p", kind="fake", http=http).http(timeout=3)
    assert client == "client"
    assert seen == [{"timeout": 3}]


def test_capability_query_returns_none_when_undeclared() -> None:
    models = ModelRegistry()
    models.register(ModelInfo("vision-1", 1000, capabilities=Capabilities(vision=True)))
    provider = FakeProvider(ProviderConfig(id="p", kind="fake", models=models))
    assert capability(provider, "fake-1", "structured_output") == "json_mode"
    assert capability(provider, "fake-1", "tool_choice") is True
    # silence is not absence: undeclared is None, not False
    assert capability(provider, "fake-1", "vision") is None
    assert capability(provider, "fake-1", "parallel_tool_calls") is None
    assert capability(provider, "fake-1", "no_such_capability") is None
    # a model's own table is asked first
    assert capability(provider, "vision-1", "vision") is True


def test_require_capability() -> None:
    provider = FakeProvider(ProviderConfig(id="p", kind="fake"))
    assert require_capability(provider, "m", "tool_choice") is True
    assert require_capability(provider, "m", "native_web_tools", "web_search") == frozenset(
        {"web_search"}
    )
    assert require_capability(provider, "m", "reasoning_effort", "high") == ("low", "high")
    with pytest.raises(CapabilityError) as caught:
        require_capability(provider, "m", "native_web_tools", "web_fetch")
    assert caught.value.category == "user"
    assert caught.value.provider == "fake"
    with pytest.raises(CapabilityError):
        require_capability(provider, "m", "structured_output", "native")
    with pytest.raises(CapabilityError):
        require_capability(provider, "m", "vision")
    assert require_capability(provider, "m", "vision", assume_undeclared=True) is None
    with pytest.raises(CapabilityError):
        require_capability(provider, "m", "bogus", assume_undeclared=True)


def test_capabilities_overlay() -> None:
    base = Capabilities(vision=False, streaming=True)
    assert base.overlay(None) is base
    merged = base.overlay(Capabilities(vision=True, tool_choice=False))
    assert merged == Capabilities(vision=True, streaming=True, tool_choice=False)
    assert Capabilities().structured_output is None


def test_model_request_round_trip() -> None:
    request = ModelRequest(
        model="m",
        messages=(
            SystemMessage(text="sys"),
            UserMessage.of("hi"),
            AssistantMessage(content=(TextBlock(text="yo"),), stop_reason="end"),
            ToolMessage.of("c", "t", "r"),
        ),
        tools=(ToolSpec(name="t", description="d", parameters={"type": "object"}),),
        tool_choice="t",
        max_tokens=100,
        temperature=0.2,
        stop=("END",),
        response_format=ResponseFormat(name="Answer", schema={"type": "object"}),
        structured_output="native",
        reasoning_effort="auto",
        parallel_tool_calls=False,
        options={"seed": 1},
    )
    dumped = request.model_dump(mode="json")
    assert dumped["response_format"] == {
        "name": "Answer",
        "schema": {"type": "object"},
        "strict": True,
    }
    assert ModelRequest.model_validate_json(json.dumps(dumped)) == request
    assert request.system == "sys"
    assert ModelRequest(model="m", messages=()).options == {}
    assert ModelRequest(model="m", messages=(UserMessage.of("x"),)).system is None


def test_model_request_validation() -> None:
    with pytest.raises(ValidationError):
        ModelRequest(model="m", messages=(UserMessage.of("x"), SystemMessage(text="late")))
    with pytest.raises(ValidationError):
        _request(reasoning_effort="extreme")
    with pytest.raises(ValidationError):
        _request(structured_output="telepathy")
    for choice in ("auto", "none", "required", "my_tool", None):
        assert _request(tool_choice=choice).tool_choice == choice


def test_response_format_accepts_both_names() -> None:
    a = ResponseFormat(name="A", schema={"type": "string"})
    b = ResponseFormat.model_validate({"name": "A", "schema_": {"type": "string"}})
    assert a == b
    assert a.schema_ == {"type": "string"}
    assert ResponseFormat.model_validate(a.model_dump()) == a


def test_model_response_round_trip() -> None:
    response = ModelResponse(
        message=AssistantMessage(content=(TextBlock(text="x"),), stop_reason="length"),
        request_id="r",
        served_model="m-2",
    )
    assert ModelResponse.model_validate_json(response.model_dump_json()) == response
    assert response.stop_reason == "length"


def test_public_face() -> None:
    for name in llm.__all__:
        assert hasattr(llm, name), name
    assert len(set(llm.__all__)) == len(llm.__all__)


def test_import_does_not_load_httpx() -> None:
    code = "import sys, agentrig.llm; print('httpx' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
