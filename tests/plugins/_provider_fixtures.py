"""Shared helpers for the provider-plugin tests: recorded traffic, mock HTTP, entry points.

The recorded traffic lives in ``shared/fixtures/provider-traffic`` beside the clone (or where
``AGENTRIG_FIXTURES`` points).  A missing directory fails the tests -- it never skips them.
"""

from __future__ import annotations

import abc
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Protocol

import anyio
import httpx
import pytest

from agentrig.cancel import CancelSignal
from agentrig.llm import (
    AssistantMessage,
    ModelRegistry,
    ModelRequest,
    Provider,
    ProviderConfig,
    StreamAssembler,
    StreamChunk,
)
from agentrig.testing.conformance_provider import ProviderConformance, Scenario

MISSING = "__fixtures_missing__"


def fixtures_dir() -> Path:
    override = os.environ.get("AGENTRIG_FIXTURES")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "provider-traffic"


def fixture_names(api: str) -> list[str]:
    """Names of every fixture of ``api``; a sentinel that fails the test if the dir is absent."""
    folder = fixtures_dir() / api
    names = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    return names or [MISSING]


def load_fixture(api: str, name: str) -> dict[str, Any]:
    if name == MISSING:
        pytest.fail(
            f"recorded provider traffic not found at {fixtures_dir() / api} "
            "(expected shared/ beside the clone, or AGENTRIG_FIXTURES)"
        )
    data: dict[str, Any] = json.loads((fixtures_dir() / api / f"{name}.json").read_text("utf-8"))
    return data


def provider_factory(kind: str) -> Any:
    """The factory an installed distribution registers under ``agentrig.providers``."""
    found = entry_points(group="agentrig.providers")
    names = [ep.name for ep in found]
    assert kind in names, (
        f"entry point {kind!r} not installed (found {names}); pip install -e plugins/..."
    )
    return found[kind].load()


# -- mock HTTP -------------------------------------------------------------------------------


class TrackingStream(httpx.AsyncByteStream):
    """A response body that records whether it was closed; it can hang after some chunks."""

    def __init__(self, chunks: Iterable[bytes], *, hang_after: int | None = None) -> None:
        self.chunks = list(chunks)
        self.hang_after = hang_after
        self.closed = False
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if self.hang_after is not None and index >= self.hang_after:
                await anyio.sleep_forever()
            self.sent += 1
            yield chunk
        if self.hang_after is not None and self.hang_after >= len(self.chunks):
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        self.closed = True


def split_bytes(data: bytes, size: int = 37) -> list[bytes]:
    """Cut a body into odd-sized pieces so the SSE reader must join lines across reads."""
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def sse_bytes(events: list[str]) -> bytes:
    return "\n".join(events).encode("utf-8")


def fixture_response(fixture: Mapping[str, Any]) -> tuple[httpx.Response, TrackingStream]:
    recorded = fixture["response"]
    headers = dict(recorded.get("headers", {}))
    if "sse_events" in recorded:
        body = sse_bytes(recorded["sse_events"])
    else:
        body = json.dumps(recorded["body"]).encode("utf-8")
    stream = TrackingStream(split_bytes(body))
    return httpx.Response(recorded["status"], headers=headers, stream=stream), stream


class MockServer:
    """Answers every request from ``respond`` and records what was sent."""

    def __init__(self, respond: Callable[[httpx.Request], httpx.Response]) -> None:
        self.respond = respond
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.respond(request)

    def http(self, *, trace_to: Iterable[str] = (), **kwargs: Any) -> httpx.AsyncClient:
        # the runtime's factory takes ``trace_to`` (where trace headers may go); none here
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler), **kwargs)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def make_provider(
    kind: str,
    server: MockServer,
    *,
    options: Mapping[str, Any] | None = None,
    api_key: str = "test-key",
    models: ModelRegistry | None = None,
) -> Provider:
    factory = provider_factory(kind)
    validated = factory.options_model.model_validate(dict(options or {}))
    config = ProviderConfig(
        id=f"{kind}-test",
        kind=kind,
        options=validated.model_dump(exclude_unset=True),
        credentials={"api_key": api_key},
        http=server.http,
        models=models if models is not None else ModelRegistry(),
    )
    provider: Provider = factory(config)
    assert isinstance(provider, Provider)
    return provider


class ScenarioServer(Protocol):
    """Answers every request with one conformance scenario and keeps what was sent."""

    bodies: list[dict[str, Any]]
    slow: list[TrackingStream]  # the held streams of a SLOW_STREAM scenario

    def handle(self, request: httpx.Request) -> httpx.Response: ...


class MockTransportConformance(ProviderConformance, abc.ABC):
    """The conformance suite for the installed ``kind`` provider, each scenario answered by
    :meth:`scenario_server` through ``httpx.MockTransport``.

    Set ``kind``, ``api_key``, ``options`` and ``expected_exemption`` (the private hosts the
    provider must ask the runtime's egress policy to allow).
    """

    kind: ClassVar[str]
    api_key: ClassVar[str] = "sk-conformance"
    options: ClassVar[dict[str, Any]] = {}
    expected_exemption: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def scenario_server(self, scenario: Scenario) -> ScenarioServer:
        """The server that answers ``scenario`` the way the provider's API does."""

    def make_provider(self, scenario: Scenario) -> Provider:
        server = self.scenario_server(scenario)
        self.__dict__.setdefault("servers", []).append(server)
        factory = provider_factory(self.kind)
        options = {"max_retries": 0, **self.options}

        def http(*, trace_to: Iterable[str] = (), **kwargs: Any) -> httpx.AsyncClient:
            # the runtime's factory takes ``trace_to`` (where trace headers may go); none here
            # The exemption a private base_url asks of the runtime's egress policy.
            exempt = kwargs.pop("allow_private", ())
            assert tuple(exempt) == self.expected_exemption
            return httpx.AsyncClient(transport=httpx.MockTransport(server.handle), **kwargs)

        config = ProviderConfig(
            id=f"{self.kind}-conformance",
            kind=self.kind,
            options=factory.options_model.model_validate(options).model_dump(exclude_unset=True),
            credentials={"api_key": self.api_key},
            http=http,
            models=ModelRegistry(),
        )
        provider: Provider = factory(config)
        return provider

    def _servers(self) -> list[ScenarioServer]:
        servers: list[ScenarioServer] = self.__dict__.get("servers", [])
        return servers

    def wire_requests(self) -> Sequence[Mapping[str, Any]] | None:
        return [body for server in self._servers() for body in server.bodies]

    def stream_closed(self) -> bool | None:
        slow = [stream for server in self._servers() for stream in server.slow]
        return bool(slow) and all(stream.closed for stream in slow)


def loopback_http(**kwargs: Any) -> httpx.AsyncClient:
    """The runtime's client factory for a suite server on loopback: its timeout, no proxy
    from the environment, the rest (``trace_to``, the egress exemption) not needed here."""
    return httpx.AsyncClient(timeout=kwargs.get("timeout"), trust_env=False)


def served_provider(
    kind: str, instance_id: str, base_url: str, *, api_key: str = "sk-conformance", **options: Any
) -> Provider:
    """The installed ``kind`` provider aimed at a loopback server at ``base_url``: a private
    base URL allowed, no retries (a scenario's error must reach the suite once)."""
    factory = provider_factory(kind)
    config = ProviderConfig(
        id=instance_id,
        kind=kind,
        options={"base_url": base_url, "allow_private_base_url": True, "max_retries": 0, **options},
        credentials={"api_key": api_key},
        http=loopback_http,
        models=ModelRegistry(),
    )
    provider: Provider = factory(config)
    return provider


async def body_sent(
    kind: str,
    request: ModelRequest,
    answer: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body the installed ``kind`` provider sends for ``request`` through
    ``complete()`` (the mock server answers ``answer``)."""
    server = MockServer(lambda _r: httpx.Response(200, json=dict(answer)))
    provider = make_provider(kind, server, options=options)
    await provider.complete(request, signal=CancelSignal())
    await provider.aclose()
    body: dict[str, Any] = server.bodies()[0]
    return body


async def run_stream(
    provider: Provider, request: ModelRequest, signal: CancelSignal | None = None
) -> tuple[AssistantMessage, list[StreamChunk]]:
    assembler = StreamAssembler()
    chunks: list[StreamChunk] = []
    async for chunk in provider.stream(request, signal=signal or CancelSignal()):
        chunks.append(chunk)
        assembler.feed(chunk)
    return assembler.message(), chunks


def compare_body(
    sent: Mapping[str, Any], recorded: Mapping[str, Any], differences: Mapping[str, str]
) -> None:
    """Every key of the recorded body must be sent equal, except documented differences."""
    for key, value in recorded.items():
        if key in differences:
            continue
        assert key in sent, f"request key {key!r} missing (sent {sorted(sent)})"
        assert sent[key] == value, (
            f"request key {key!r} differs:\n sent {sent[key]!r}\n want {value!r}"
        )
