"""The ``fallback`` provider: ordered deployments, moves decided by the error taxonomy."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
import pytest

from agentrig.builtins._fallback import (
    Deployment,
    FallbackOptions,
    FallbackProvider,
    factory,
    peer_lookup,
)
from agentrig.builtins._scripted import Reply, ScriptedProvider
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AbortError, ConfigError
from agentrig.ids import AgentId
from agentrig.llm import (
    Capabilities,
    CapabilityError,
    ModelRequest,
    Provider,
    ProviderConfig,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StreamAssembler,
    StreamChunk,
    TextDelta,
    Usage,
    UserMessage,
    error_from_status,
)

pytestmark = pytest.mark.anyio


def http_error(status: int, vendor_type: str = "error") -> ProviderError:
    body = {"error": {"type": vendor_type, "message": f"status {status}"}}
    return error_from_status(status, body, {}, provider="scripted")


def request(model: str = "smart") -> ModelRequest:
    return ModelRequest(model=model, messages=(UserMessage.of("hi"),))


def fallback(
    peers: Mapping[str, Provider], models: Mapping[str, str] | None = None
) -> FallbackProvider:
    models = models or {}
    return FallbackProvider(
        [Deployment(name, models.get(name)) for name in peers],
        peer_lookup(dict(peers)),
        instance_id="smart",
    )


async def stream_all(
    provider: Provider, req: ModelRequest, signal: CancelSignal | None = None
) -> list[StreamChunk]:
    return [c async for c in provider.stream(req, signal=signal or CancelSignal())]


async def call(provider: Provider, mode: str) -> None:
    if mode == "complete":
        await provider.complete(request(), signal=CancelSignal())
    else:
        await stream_all(provider, request())


# -- which failures move on ------------------------------------------------------------------

MOVES_ON = [
    pytest.param(http_error(429, "rate_limit_error"), id="429"),
    pytest.param(http_error(529, "overloaded_error"), id="overloaded"),
    pytest.param(http_error(500), id="500"),
    pytest.param(http_error(503), id="503"),
    pytest.param(http_error(401, "authentication_error"), id="401-at-this-deployment"),
    pytest.param(http_error(404, "not_found_error"), id="model-not-found"),
    pytest.param(ProviderTimeoutError("timed out"), id="timeout"),
    pytest.param(ProviderConnectionError("refused"), id="connection"),
]

STAYS = [
    pytest.param(http_error(400, "invalid_request_error"), id="400"),
    pytest.param(ProviderError("unplaceable"), id="unknown-cause"),
    pytest.param(CapabilityError("no schema transport"), id="capability"),
]


@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize("error", MOVES_ON)
async def test_a_failure_another_deployment_can_serve_moves_on(
    error: ProviderError, mode: str
) -> None:
    assert error.can_fallback
    primary = ScriptedProvider([Reply(error=error)])
    backup = ScriptedProvider([Reply(text="from backup", usage=Usage.of(3, 2))])
    smart = fallback({"primary": primary, "backup": backup}, {"backup": "claude-sonnet-4-5"})
    if mode == "complete":
        response = await smart.complete(request(), signal=CancelSignal())
        message = response.message
        assert response.served_model == "claude-sonnet-4-5"
    else:
        assembler = StreamAssembler()
        for chunk in await stream_all(smart, request()):
            assembler.feed(chunk)
        message = assembler.message()
    assert message.text == "from backup"
    assert message.model == "claude-sonnet-4-5"
    assert message.usage == Usage.of(3, 2)
    assert [m.deployment for m in smart.moves] == ["primary"]
    assert smart.moves[0].error is error
    assert backup.requests[0].model == "claude-sonnet-4-5"
    assert primary.requests[0].model == "smart"  # no override for primary: the asked model


@pytest.mark.parametrize("mode", ["complete", "stream"])
@pytest.mark.parametrize("error", STAYS)
async def test_an_unplaceable_or_request_failure_does_not_move(
    error: ProviderError, mode: str
) -> None:
    assert not error.can_fallback
    primary = ScriptedProvider([Reply(error=error)])
    backup = ScriptedProvider(["never asked"])
    smart = fallback({"primary": primary, "backup": backup})
    with pytest.raises(ProviderError) as caught:
        await call(smart, mode)
    assert caught.value is error
    assert backup.requests == []
    assert smart.moves == []


async def test_a_plain_exception_is_never_a_reason_to_switch() -> None:
    class Broken(ScriptedProvider):
        async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> Any:
            raise KeyError("bug in the adapter")

    backup = ScriptedProvider(["never asked"])
    smart = fallback({"primary": Broken(), "backup": backup})
    with pytest.raises(KeyError):
        await smart.complete(request(), signal=CancelSignal())
    assert backup.requests == []


async def test_the_first_healthy_deployment_answers_and_later_ones_are_untouched() -> None:
    primary = ScriptedProvider(["primary answer"])
    backup = ScriptedProvider(["never asked"])
    smart = fallback({"primary": primary, "backup": backup}, {"primary": "gpt-4.1"})
    response = await smart.complete(request(), signal=CancelSignal())
    assert response.message.text == "primary answer"
    assert response.served_model == "gpt-4.1"
    assert backup.requests == []


async def test_a_deployment_naming_its_model_keeps_that_name() -> None:
    class Named(ScriptedProvider):
        async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> Any:
            response = await super().complete(request, signal=signal)
            message = response.message.model_copy(update={"model": "gpt-4.1-2025-04-14"})
            return response.model_copy(
                update={"message": message, "served_model": "gpt-4.1-2025-04-14"}
            )

    smart = fallback({"primary": Named(["hi"])}, {"primary": "gpt-4.1"})
    response = await smart.complete(request(), signal=CancelSignal())
    assert response.served_model == "gpt-4.1-2025-04-14"
    assert response.message.model == "gpt-4.1-2025-04-14"


async def test_when_every_deployment_fails_the_last_failure_is_raised_with_notes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, second, third = http_error(500), http_error(429), http_error(503)
    smart = fallback(
        {
            "a": ScriptedProvider([Reply(error=first)]),
            "b": ScriptedProvider([Reply(error=second)]),
            "c": ScriptedProvider([Reply(error=third)]),
        }
    )
    with (
        caplog.at_level(logging.WARNING, logger="agentrig.fallback"),
        pytest.raises(ProviderError) as caught,
    ):
        await smart.complete(request(), signal=CancelSignal())
    assert caught.value is third
    notes = "\n".join(getattr(third, "__notes__", []))
    assert "status 500" in notes
    assert "status 429" in notes
    assert [(m.deployment, m.next_deployment) for m in smart.moves] == [
        ("a", "b"),
        ("b", "c"),
        ("c", None),
    ]
    moved = [r.getMessage() for r in caplog.records if r.name == "agentrig.fallback"]
    assert len(moved) == 2
    assert "moving to 'b'" in moved[0]


# -- streams ---------------------------------------------------------------------------------


async def test_a_stream_failing_before_its_first_chunk_moves_on() -> None:
    primary = ScriptedProvider([Reply(text="xxxx", error=http_error(529), fail_after_chunks=0)])
    backup = ScriptedProvider([Reply(text="backup text", chunk_size=3)])
    smart = fallback({"primary": primary, "backup": backup})
    chunks = await stream_all(smart, request())
    assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "backup text"
    assert len(backup.requests) == 1


async def test_a_stream_failing_after_a_chunk_was_yielded_does_not_move() -> None:
    error = http_error(529, "overloaded_error")
    primary = ScriptedProvider(
        [Reply(text="partial answer", chunk_size=4, error=error, fail_after_chunks=2)]
    )
    backup = ScriptedProvider(["never asked"])
    smart = fallback({"primary": primary, "backup": backup})
    seen: list[StreamChunk] = []

    async def consume() -> None:
        async for chunk in smart.stream(request(), signal=CancelSignal()):
            seen.append(chunk)

    with pytest.raises(ProviderError) as caught:
        await consume()
    assert caught.value is error
    assert [c.text for c in seen if isinstance(c, TextDelta)] == ["part", "ial "]
    assert backup.requests == []
    assert smart.moves == []


async def test_a_stream_that_succeeds_names_the_serving_model_in_its_finish() -> None:
    smart = fallback({"primary": ScriptedProvider(["hello"])}, {"primary": "gpt-4.1"})
    chunks = await stream_all(smart, request())
    assembler = StreamAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    assert assembler.message().model == "gpt-4.1"


async def test_stream_and_complete_agree_through_a_fallback() -> None:
    def build() -> FallbackProvider:
        return fallback(
            {
                "primary": ScriptedProvider([Reply(error=http_error(500))]),
                "backup": ScriptedProvider([Reply(text="same answer", usage=Usage.of(4, 2))]),
            },
            {"backup": "backup-model"},
        )

    completed = (await build().complete(request(), signal=CancelSignal())).message
    assembler = StreamAssembler()
    for chunk in await stream_all(build(), request()):
        assembler.feed(chunk)
    assert assembler.message() == completed


async def test_abandoning_a_fallback_stream_closes_the_inner_stream() -> None:
    closed: list[bool] = []

    class Tracking(ScriptedProvider):
        async def stream(self, request: ModelRequest, *, signal: CancelSignal) -> Any:
            try:
                async for chunk in super().stream(request, signal=signal):
                    yield chunk
            finally:
                closed.append(True)

    smart = fallback({"primary": Tracking([Reply(text="a long answer", chunk_size=2)])})
    stream = smart.stream(request(), signal=CancelSignal())
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()
    assert closed == [True]


# -- cancellation ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["complete", "stream"])
async def test_cancellation_is_never_retried_elsewhere(mode: str) -> None:
    primary = ScriptedProvider([Reply(text="slow answer", delay=5.0)])
    backup = ScriptedProvider(["never asked"])
    smart = fallback({"primary": primary, "backup": backup})
    signal = CancelSignal()

    async def cancel_soon() -> None:
        await anyio.sleep(0.05)
        signal.cancel("user pressed stop")

    failure: Exception | None = None
    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_soon)
            try:
                if mode == "complete":
                    await smart.complete(request(), signal=signal)
                else:
                    await stream_all(smart, request(), signal)
            except Exception as exc:
                failure = exc
    assert isinstance(failure, AbortError)
    assert is_abort(failure, signal)
    assert backup.requests == []
    assert smart.moves == []


async def test_a_failure_while_cancelled_does_not_move_either() -> None:
    signal = CancelSignal()

    class FailsAfterCancel(ScriptedProvider):
        async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> Any:
            signal.cancel("stop")
            raise ProviderConnectionError("connection dropped while cancelling")

    backup = ScriptedProvider(["never asked"])
    smart = fallback({"primary": FailsAfterCancel(), "backup": backup})
    with pytest.raises(ProviderConnectionError):
        await smart.complete(request(), signal=signal)
    assert backup.requests == []


async def test_an_already_cancelled_signal_reaches_no_deployment() -> None:
    primary = ScriptedProvider(["never asked"])
    smart = fallback({"primary": primary})
    signal = CancelSignal()
    signal.cancel("early")
    with pytest.raises(AbortError):
        await smart.complete(request(), signal=signal)
    assert primary.requests == []


# -- capabilities ----------------------------------------------------------------------------


def test_capabilities_are_what_every_deployment_declares() -> None:
    native = ScriptedProvider(
        capabilities=Capabilities(
            structured_output="native",
            tool_choice=True,
            parallel_tool_calls=True,
            streaming=True,
            reasoning_effort=("low", "medium", "high"),
        )
    )
    weaker = ScriptedProvider(
        capabilities=Capabilities(
            structured_output="json_mode",
            tool_choice=True,
            parallel_tool_calls=False,
            streaming=True,
            reasoning_effort=("medium", "high", "max"),
        )
    )
    caps = fallback({"a": native, "b": weaker}).capabilities("smart")
    assert caps.structured_output == "json_mode"
    assert caps.tool_choice is True
    assert caps.parallel_tool_calls is False
    assert caps.streaming is True
    assert caps.reasoning_effort == ("medium", "high")
    assert caps.vision is None  # silence on one side stays silence


def test_capabilities_ask_each_deployment_for_its_own_model() -> None:
    asked: list[str] = []

    class Recording(ScriptedProvider):
        def capabilities(self, model: str) -> Capabilities:
            asked.append(model)
            return super().capabilities(model)

    smart = fallback({"a": Recording(), "b": Recording()}, {"a": "gpt-4.1"})
    smart.capabilities("smart")
    assert asked == ["gpt-4.1", "smart"]


# -- configuration and peers -----------------------------------------------------------------


def test_options_are_strict() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        FallbackOptions.model_validate({"deployments": []})
    with pytest.raises(ValueError, match="twice"):
        FallbackOptions.model_validate({"deployments": ["a", "a"]})
    with pytest.raises(ValueError, match="not listed"):
        FallbackOptions.model_validate({"deployments": ["a"], "models": {"b": "m"}})
    with pytest.raises(ValueError, match="extra"):
        FallbackOptions.model_validate({"deployments": ["a"], "bogus": 1})


async def test_an_unknown_deployment_fails_the_call_naming_the_known_ids() -> None:
    smart = FallbackProvider(
        [Deployment("nope")], peer_lookup({"primary": ScriptedProvider()}), instance_id="smart"
    )
    with pytest.raises(ConfigError, match="primary"):
        await smart.complete(request(), signal=CancelSignal())


async def test_a_fallback_listing_itself_is_refused() -> None:
    peers: dict[str, Provider] = {}
    smart = FallbackProvider([Deployment("smart")], peer_lookup(peers), instance_id="smart")
    peers["smart"] = smart
    with pytest.raises(ConfigError, match="itself"):
        await smart.complete(request(), signal=CancelSignal())


@attrs.frozen(slots=True)
class _ConfigWithPeers(ProviderConfig):
    """A ProviderConfig carrying the proposed ``peers`` lookup (see the report)."""

    peers: Any = None


async def test_the_factory_resolves_peers_lazily_through_the_config() -> None:
    catalog: dict[str, Provider] = {}
    config = _ConfigWithPeers(
        id="smart",
        kind="fallback",
        options={"deployments": ["primary", "backup"], "models": {"backup": "m2"}},
        peers=peer_lookup(catalog),
    )
    smart = factory(config)  # the peers do not exist yet: nothing is looked up here
    catalog["primary"] = ScriptedProvider([Reply(error=http_error(503))])
    catalog["backup"] = ScriptedProvider(["late but fine"])
    response = await smart.complete(request(), signal=CancelSignal())
    assert response.message.text == "late but fine"
    assert response.served_model == "m2"


async def test_without_a_peer_lookup_the_first_call_says_what_is_missing() -> None:
    config = ProviderConfig(id="smart", kind="fallback", options={"deployments": ["primary"]})
    smart = factory(config)
    with pytest.raises(RuntimeError, match="peer lookup"):
        await smart.complete(request(), signal=CancelSignal())


async def test_a_runtime_composes_a_fallback_agent_end_to_end() -> None:
    from agentrig.kernel import MemorySource, open_runtime

    memory = MemorySource()
    memory.add("providers", "fallback", factory)
    config = {
        "providers": {
            "smart": {
                "kind": "fallback",
                "options": {"deployments": ["primary", "backup"], "models": {"backup": "b-1"}},
            },
            "primary": {
                "kind": "scripted",
                "options": {"script": [{"error": {"status": 429, "type": "rate_limit_error"}}]},
            },
            "backup": {"kind": "scripted", "options": {"script": [{"text": "served by backup"}]}},
        },
        "agents": {"assistant": {"provider": "smart", "model": "smart-model"}},
    }
    async with open_runtime(config, memory=memory, environ={}) as rt:
        result = await rt.agent(AgentId("assistant")).run("hello")
        assert result.value == "served by backup"
