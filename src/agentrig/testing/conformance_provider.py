"""The provider conformance suite: a test mixin every provider plugin inherits in its own tests.

Like keyring's ``BackendBasicTests``, the suite is a class of ``test_*`` methods with one
abstract hook.  A plugin's test module subclasses it and says how to build a provider that
answers one abstract :class:`Scenario` (usually through an ``httpx.MockTransport`` that
speaks the vendor's wire format)::

    import pytest
    from agentrig.testing.conformance_provider import ProviderConformance, Scenario

    class TestMyProviderConformance(ProviderConformance):
        model = "my-model"

        def make_provider(self, scenario: Scenario) -> Provider:
            return MyProvider(client=httpx.AsyncClient(transport=mock_for(scenario)))

What a scenario must answer -- to *every* request, streaming or not, so one provider may be
asked twice -- is fixed by the constants below (:data:`TEXT`, :data:`TEXT_USAGE`,
:data:`TOOL_CALLS`, :data:`RETRY_AFTER` ...); see :class:`Scenario`.  The suite checks only
what a caller can observe through the :class:`~agentrig.llm.Provider` port:

* streaming and non-streaming agree (``StreamAssembler`` over ``stream()`` equals
  ``complete().message``);
* cancellation mid-stream ends the stream promptly with an abort (and, when the plugin can
  tell, closes the response);
* HTTP failures map onto the taxonomy (class, ``status``, category, ``retryable``,
  ``can_fallback``, ``retry_after``);
* usage is never fabricated; tool-call ids are passed through opaquely (an empty id stays
  empty); a call to a tool nobody offered reaches the caller;
* capability declarations are honest: what is declared is exercised, and a request needing
  a capability declared absent fails with :class:`~agentrig.llm.CapabilityError` before any
  network activity.

Optional hooks: :meth:`ProviderConformance.wire_requests` (the JSON bodies the provider sent
-- enables the "on the wire" and "before any network activity" checks) and
:meth:`ProviderConformance.stream_closed` (whether the cancelled stream's response body was
closed).

Served mode: a plugin that implements :meth:`ProviderConformance.wire_reply` (the vendor's
answer to one request, as a :class:`~agentrig.testing.MockReply`) lets the suite serve the
scenarios itself, over a real loopback server, as a model API does: with the media type of
the stream (``text/event-stream; charset=utf-8`` or ``application/x-ndjson``, or the reply's
own), chunked transfer encoding, the stream cut into writes of :data:`SERVED_SPLIT` bytes
that cross event, line and UTF-8 character boundaries, and a ``: keep-alive`` comment before
every server-sent event.  ``make_provider`` then points the provider at :attr:`base_url`;
the wire and closing hooks are answered from what the server saw.

Build providers with retries disabled: the suite checks the error mapping, not the
retry policy, and :data:`RETRY_AFTER` would otherwise make it slow.

The async tests carry ``pytest.mark.anyio``; they run on whatever ``anyio_backend`` the
plugin's test suite selects (anyio's default is asyncio).
"""

from __future__ import annotations

import enum
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import anyio
import attrs
import pytest

from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AbortError
from agentrig.llm import (
    AssistantMessage,
    AuthenticationError,
    Capabilities,
    CapabilityError,
    FinishChunk,
    ImageBlock,
    InvalidRequestError,
    ModelRequest,
    Provider,
    ProviderError,
    RateLimitError,
    ResponseFormat,
    ServerError,
    StreamAssembler,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolSpec,
    Usage,
    UsageChunk,
    UserMessage,
)
from agentrig.testing._diff import mismatch
from agentrig.testing.mock_provider_server import MockProviderServer, MockReply, MockRequest

__all__ = [
    "ABORT_DEADLINE",
    "ERROR_EXPECTATIONS",
    "RETRY_AFTER",
    "SCHEMA",
    "SERVED_SPLIT",
    "SLOW_FIRST_DELTA",
    "STOP_DEADLINE",
    "TEXT",
    "TEXT_DELTAS",
    "TEXT_USAGE",
    "TOOL_CALLS",
    "TOOL_USAGE",
    "WEATHER_TOOL",
    "ErrorExpectation",
    "ProviderConformance",
    "Scenario",
    "ScenarioCall",
    "conformance_request",
]


class Scenario(enum.Enum):
    """What the provider under test must be wired to answer (to every request).

    * ``TEXT`` -- the text :data:`TEXT`, streamed as the deltas :data:`TEXT_DELTAS`, a normal
      end of turn, usage :data:`TEXT_USAGE`.
    * ``TEXT_NO_USAGE`` -- the same text and stop, with no usage reported anywhere.
    * ``TOOL_CALLS`` -- the two parallel calls of :data:`TOOL_CALLS` (the second with an
      empty id and a tool name nobody offered), arguments streamed in the given pieces, stop
      reason "tool calls", usage :data:`TOOL_USAGE`.
    * ``ERROR_429`` -- HTTP 429 with ``retry-after: 7`` (:data:`RETRY_AFTER`).
    * ``ERROR_500`` / ``ERROR_400`` / ``ERROR_401`` -- those HTTP statuses with the vendor's
      usual error body (for 400 an ordinary invalid-request error, not a context overflow).
    * ``SLOW_STREAM`` -- a stream that delivers the text delta :data:`SLOW_FIRST_DELTA` and
      then sends nothing until the caller gives up (a non-streaming call may answer
      :data:`TEXT`).
    """

    TEXT = "text"
    TEXT_NO_USAGE = "text_no_usage"
    TOOL_CALLS = "tool_calls"
    ERROR_429 = "error_429"
    ERROR_500 = "error_500"
    ERROR_400 = "error_400"
    ERROR_401 = "error_401"
    SLOW_STREAM = "slow_stream"


@attrs.frozen(slots=True)
class ScenarioCall:
    """One tool call of :data:`TOOL_CALLS`: ``pieces`` joined are the JSON of ``arguments``."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    pieces: tuple[str, ...]


TEXT = "hello world"
TEXT_DELTAS: tuple[str, ...] = ("hel", "lo w", "orld")
TEXT_USAGE = Usage.of(11, 2)
"""Prompt 11, completion 2, total 13 (no cache counts)."""

TOOL_CALLS: tuple[ScenarioCall, ...] = (
    ScenarioCall(
        id="call_Zx9:/+=Opaque-ID.42",
        name="get_weather",
        arguments={"city": "Paris", "units": "metric"},
        pieces=('{"city": "Pa', 'ris", "uni', 'ts": "metric"}'),
    ),
    ScenarioCall(
        id="",
        name="tool_nobody_offered",
        arguments={"q": "x"},
        pieces=('{"q"', ': "x"}'),
    ),
)
TOOL_USAGE = Usage.of(20, 9)

RETRY_AFTER = 7.0
"""Seconds in the ``retry-after`` header of ``ERROR_429``."""

SLOW_FIRST_DELTA = "hello"

ABORT_DEADLINE = 0.5
"""Seconds within which a cancelled stream must raise its abort."""

STOP_DEADLINE = 2.0
"""Seconds after which a stream still running after its cancel fails as "did not stop"."""

_CANCEL_DELAY = 0.05

SERVED_SPLIT = 5
"""In served mode, the bytes of each network write of a stream."""

_SLOW_HOLD = 30.0  # a served SLOW_STREAM is held open this long at most (the test ends first)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}

WEATHER_TOOL = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
        "required": ["city", "units"],
        "additionalProperties": False,
    },
)

# A 1x1 transparent PNG.
_PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAAB"
    "JRU5ErkJggg=="
)


@attrs.frozen(slots=True)
class ErrorExpectation:
    """What an error scenario must raise."""

    cls: type[ProviderError]
    status: int
    retryable: bool
    can_fallback: bool


ERROR_EXPECTATIONS: Mapping[Scenario, ErrorExpectation] = {
    Scenario.ERROR_429: ErrorExpectation(RateLimitError, 429, retryable=True, can_fallback=True),
    Scenario.ERROR_500: ErrorExpectation(ServerError, 500, retryable=True, can_fallback=True),
    Scenario.ERROR_400: ErrorExpectation(
        InvalidRequestError, 400, retryable=False, can_fallback=False
    ),
    Scenario.ERROR_401: ErrorExpectation(
        AuthenticationError, 401, retryable=False, can_fallback=True
    ),
}
"""The taxonomy's answer for each error scenario."""

_ERRORS = tuple(ERROR_EXPECTATIONS)
_AGREEING = (Scenario.TEXT, Scenario.TEXT_NO_USAGE, Scenario.TOOL_CALLS)
_CALL_TIMEOUT = 10.0


def conformance_request(model: str, **fields: Any) -> ModelRequest:
    """The suite's request: one user message, plus ``fields``."""
    return ModelRequest(model=model, messages=(UserMessage.of("Say hello."),), **fields)


def _contains(haystack: object, needle: object) -> bool:
    """Whether ``needle`` equals ``haystack`` or any value nested in it."""
    if haystack == needle:
        return True
    if isinstance(haystack, Mapping):
        return any(_contains(value, needle) for value in haystack.values())
    if isinstance(haystack, list | tuple):
        return any(_contains(value, needle) for value in haystack)
    return False


async def _collect(
    provider: Provider, request: ModelRequest, signal: CancelSignal | None = None
) -> tuple[AssistantMessage, list[StreamChunk]]:
    assembler = StreamAssembler()
    chunks: list[StreamChunk] = []
    with anyio.fail_after(_CALL_TIMEOUT):
        async for chunk in provider.stream(request, signal=signal or CancelSignal()):
            chunks.append(chunk)
            assembler.feed(chunk)
    return assembler.message(), chunks


async def _complete(provider: Provider, request: ModelRequest) -> AssistantMessage:
    with anyio.fail_after(_CALL_TIMEOUT):
        response = await provider.complete(request, signal=CancelSignal())
    return response.message


async def _call(
    provider: Provider, request: ModelRequest, signal: CancelSignal, *, stream: bool
) -> None:
    """Send ``request`` (streamed to the end, or not) and discard the answer."""
    with anyio.fail_after(_CALL_TIMEOUT):
        if not stream:
            await provider.complete(request, signal=signal)
            return
        iterator = provider.stream(request, signal=signal)
        try:
            async for _chunk in iterator:
                pass
        finally:
            await _aclose(iterator)


async def _aclose(stream: object) -> None:
    closer = getattr(stream, "aclose", None)
    if closer is not None:
        with anyio.CancelScope(shield=True):
            await closer()


class ProviderConformance:
    """Inherit in a ``Test...`` class and implement :meth:`make_provider`.

    Class attributes: ``model`` (the model every request names) and ``capability_models``
    (models whose capability declarations are checked; default ``(model,)``).
    """

    model: ClassVar[str] = "conformance-model"
    capability_models: ClassVar[tuple[str, ...]] = ()

    base_url: str = ""
    """In served mode: the URL of the server answering the scenario of the provider that
    :meth:`make_provider` is building (``http://127.0.0.1:PORT``)."""

    # ---- hooks -----------------------------------------------------------------------------

    def make_provider(self, scenario: Scenario) -> Provider:
        """A fresh provider that answers every request with ``scenario``."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement make_provider(scenario) -> Provider"
        )

    def wire_reply(self, scenario: Scenario, request: MockRequest) -> MockReply:
        """Served mode (optional): the vendor's answer to ``request`` in ``scenario``.

        Implement it and the suite serves every scenario itself (see the module); the
        provider :meth:`make_provider` builds must then talk to :attr:`base_url` (with
        ``allow_private_base_url``).  A stream is the reply's ``events`` in its
        ``stream_format``; for ``SLOW_STREAM`` give the first delta's events -- the suite
        holds the stream open after them.
        """
        raise NotImplementedError

    def wire_requests(self) -> Sequence[Mapping[str, Any]] | None:
        """The request bodies sent by the providers this test built, in order.

        ``None`` (the default) means the plugin cannot tell; the checks that need the wire
        then check only what the caller sees.  In served mode: the bodies the server got.
        """
        if not self.__serves():
            return None
        return [r.body for server in self.__servers() for r in server.requests]

    def stream_closed(self) -> bool | None:
        """After a ``SLOW_STREAM`` was cancelled: was its response body closed?

        ``None`` (the default) means the plugin cannot tell.  In served mode: whether the
        client hung up on the held stream (waited for at most :data:`STOP_DEADLINE`).
        """
        if not self.__serves():
            return None
        deadline = time.monotonic() + STOP_DEADLINE
        while time.monotonic() < deadline:  # the server's thread notices the hang-up
            if any(server.abandoned for server in self.__servers()):
                return True
            time.sleep(0.01)
        return False

    # ---- plumbing --------------------------------------------------------------------------

    def __serves(self) -> bool:
        return type(self).wire_reply is not ProviderConformance.wire_reply

    def __servers(self) -> list[MockProviderServer]:
        servers: list[MockProviderServer] | None = self.__dict__.get("_ProviderConformance_served")
        if servers is None:
            servers = self.__dict__["_ProviderConformance_served"] = []
        return servers

    @pytest.fixture(autouse=True)
    def __close_servers(self) -> Iterator[None]:
        """Served mode: the test's servers stop when the test ends."""
        yield
        for server in self.__servers():
            server.close()

    def __serve(self, scenario: Scenario) -> None:
        def answer(request: MockRequest) -> MockReply:
            reply = self.wire_reply(scenario, request)
            if scenario is Scenario.SLOW_STREAM and reply.events is not None:
                reply = attrs.evolve(reply, hold_open=max(reply.hold_open, _SLOW_HOLD))
            return reply

        server = MockProviderServer(answer, split=SERVED_SPLIT, keep_alives=True).start()
        self.__servers().append(server)
        self.base_url = server.url

    @asynccontextmanager
    async def provider(self, scenario: Scenario) -> AsyncIterator[Provider]:
        """Build a provider for ``scenario`` and close it afterwards."""
        if self.__serves():
            self.__serve(scenario)
        built = self.make_provider(scenario)
        assert isinstance(built, Provider), (
            f"make_provider returned {type(built).__name__}, which does not implement the "
            "Provider protocol (kind, capabilities, complete, stream, aclose)"
        )
        try:
            yield built
        finally:
            with anyio.CancelScope(shield=True):
                await built.aclose()

    def request(self, **fields: Any) -> ModelRequest:
        return conformance_request(self.model, **fields)

    def _wire_count(self) -> int | None:
        wire = self.wire_requests()
        return None if wire is None else len(wire)

    # ---- the protocol ----------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_implements_the_provider_protocol(self) -> None:
        async with self.provider(Scenario.TEXT) as provider:
            assert isinstance(provider.kind, str)
            assert provider.kind
            assert isinstance(provider.capabilities(self.model), Capabilities)

    # ---- text, usage, agreement ------------------------------------------------------------

    @pytest.mark.anyio
    async def test_text_is_answered_in_full(self) -> None:
        async with self.provider(Scenario.TEXT) as provider:
            message = await _complete(provider, self.request())
        assert message.text == TEXT
        assert message.stop_reason == "end"
        assert message.usage is not None, "the TEXT scenario reports usage; it was dropped"
        assert (message.usage.prompt, message.usage.completion) == (
            TEXT_USAGE.prompt,
            TEXT_USAGE.completion,
        )
        assert message.usage.total == TEXT_USAGE.total

    @pytest.mark.anyio
    async def test_text_streams_as_several_deltas_then_one_finish(self) -> None:
        async with self.provider(Scenario.TEXT) as provider:
            message, chunks = await _collect(provider, self.request())
        deltas = [c.text for c in chunks if isinstance(c, TextDelta)]
        assert len(deltas) >= 2, f"the text came in {len(deltas)} delta(s), not streamed"
        assert "".join(deltas) == TEXT
        finishes = [c for c in chunks if isinstance(c, FinishChunk)]
        assert len(finishes) == 1, f"expected one finish chunk, got {len(finishes)}"
        assert chunks[-1] is finishes[0], "the finish chunk must be the last chunk"
        assert message.stop_reason == "end"

    @pytest.mark.anyio
    @pytest.mark.parametrize("scenario", _AGREEING, ids=lambda s: s.value)
    async def test_stream_and_complete_agree(self, scenario: Scenario) -> None:
        async with self.provider(scenario) as provider:
            completed = await _complete(provider, self.request(tools=(WEATHER_TOOL,)))
            streamed, _chunks = await _collect(provider, self.request(tools=(WEATHER_TOOL,)))
        problem = mismatch(
            "the messages of complete() (expected) and stream() (got)", completed, streamed
        )
        assert problem is None, problem

    @pytest.mark.anyio
    async def test_usage_is_never_fabricated(self) -> None:
        async with self.provider(Scenario.TEXT_NO_USAGE) as provider:
            completed = await _complete(provider, self.request())
            streamed, chunks = await _collect(provider, self.request())
        assert completed.usage is None, f"complete() made up usage: {completed.usage!r}"
        assert streamed.usage is None, f"stream() made up usage: {streamed.usage!r}"
        assert not [c for c in chunks if isinstance(c, UsageChunk)]
        assert completed.text == streamed.text == TEXT

    # ---- tool calls ------------------------------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("mode", ["complete", "stream"])
    async def test_tool_call_ids_and_names_pass_through(self, mode: str) -> None:
        request = self.request(tools=(WEATHER_TOOL,))
        async with self.provider(Scenario.TOOL_CALLS) as provider:
            if mode == "complete":
                message = await _complete(provider, request)
            else:
                message, _chunks = await _collect(provider, request)
        calls = message.tool_calls
        assert [c.id for c in calls] == [c.id for c in TOOL_CALLS], (
            "tool-call ids must be passed through exactly (an empty id stays empty)"
        )
        assert [c.name for c in calls] == [c.name for c in TOOL_CALLS], (
            "a call to a tool that was not offered must still reach the loop"
        )
        assert [c.arguments for c in calls] == [dict(c.arguments) for c in TOOL_CALLS]
        assert all(c.raw_arguments is None for c in calls)
        assert message.stop_reason == "tool_calls"
        assert message.usage is not None
        assert (message.usage.prompt, message.usage.completion) == (
            TOOL_USAGE.prompt,
            TOOL_USAGE.completion,
        )

    # ---- errors ----------------------------------------------------------------------------

    @pytest.mark.anyio
    @pytest.mark.parametrize("mode", ["complete", "stream"])
    @pytest.mark.parametrize("scenario", _ERRORS, ids=lambda s: s.value)
    async def test_http_errors_map_onto_the_taxonomy(self, scenario: Scenario, mode: str) -> None:
        expected = ERROR_EXPECTATIONS[scenario]
        async with self.provider(scenario) as provider:
            with pytest.raises(ProviderError) as caught:
                await _call(provider, self.request(), CancelSignal(), stream=mode == "stream")
        error = caught.value
        assert isinstance(error, expected.cls), (
            f"{scenario.value}: expected {expected.cls.__name__}, got {type(error).__name__}"
        )
        assert error.status == expected.status
        assert error.category == "provider"
        assert error.retryable is expected.retryable
        assert error.can_fallback is expected.can_fallback
        assert error.recoverable is expected.retryable
        assert not is_abort(error)
        if scenario is Scenario.ERROR_429:
            assert error.retry_after == RETRY_AFTER, "the server's retry-after was lost"

    # ---- cancellation ----------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_cancelling_mid_stream_aborts_promptly_and_closes_it(self) -> None:
        signal = CancelSignal()
        async with self.provider(Scenario.SLOW_STREAM) as provider:
            stream = provider.stream(self.request(), signal=signal)
            try:
                with anyio.fail_after(_CALL_TIMEOUT):
                    first = await anext(aiter(stream))
                assert isinstance(first, StreamChunk)
                cancelled_at: list[float] = []

                async def cancel_soon() -> None:
                    await anyio.sleep(_CANCEL_DELAY)
                    cancelled_at.append(time.monotonic())
                    signal.cancel("conformance: cancelled mid-stream")

                failure: BaseException | None = None
                with anyio.move_on_after(_CANCEL_DELAY + STOP_DEADLINE) as waited:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(cancel_soon)
                        try:
                            async for _chunk in stream:
                                pass
                        except Exception as exc:
                            failure = exc
                ended = time.monotonic()
            finally:
                await _aclose(stream)
        assert not waited.cancelled_caught, (
            f"the stream did not stop after cancel: it was still running {STOP_DEADLINE:g}s "
            "after its signal fired (wrap each network wait in signal.scope())"
        )
        assert failure is not None, "the stream ended normally although it was cancelled"
        assert isinstance(failure, AbortError), (
            f"a cancelled stream must raise AbortError, got {type(failure).__name__}: {failure}"
        )
        assert is_abort(failure, signal)
        assert cancelled_at
        assert ended - cancelled_at[0] < ABORT_DEADLINE, (
            f"the abort took {ended - cancelled_at[0]:.3f}s (limit {ABORT_DEADLINE}s)"
        )
        closed = self.stream_closed()
        if closed is not None:
            assert closed, "the response body of the cancelled stream was left open"

    @pytest.mark.anyio
    @pytest.mark.parametrize("mode", ["complete", "stream"])
    async def test_an_already_cancelled_signal_sends_nothing(self, mode: str) -> None:
        signal = CancelSignal()
        signal.cancel("conformance: cancelled before the call")
        async with self.provider(Scenario.TEXT) as provider:
            before = self._wire_count()
            with pytest.raises(AbortError) as caught:
                await _call(provider, self.request(), signal, stream=mode == "stream")
            assert is_abort(caught.value, signal)
            assert self._wire_count() == before, "a request was sent despite the cancelled signal"

    # ---- capability honesty ----------------------------------------------------------------

    def _models(self) -> tuple[str, ...]:
        return self.capability_models or (self.model,)

    async def _works(self, provider: Provider, request: ModelRequest, what: str) -> None:
        try:
            await _complete(provider, request)
        except CapabilityError as exc:
            raise AssertionError(f"declared {what}, but the request was refused: {exc}") from exc

    async def _refused_before_network(
        self, provider: Provider, request: ModelRequest, what: str, *, stream: bool = False
    ) -> None:
        # ``what`` reads "<model>: <capability>=<declared>"
        name = what.rsplit(": ", 1)[-1].split("=", 1)[0]
        before = self._wire_count()
        refusal: CapabilityError | None = None
        try:
            await _call(provider, request, CancelSignal(), stream=stream)
        except CapabilityError as exc:
            refusal = exc
        assert refusal is not None, (
            f"{what}: the model declares capability {name!r} absent, but a request that "
            f"needs it was not refused (expected a CapabilityError naming {name!r})"
        )
        assert name in str(refusal), (
            f"{what}: refused, but the CapabilityError does not name the capability "
            f"{name!r}: {refusal}"
        )
        assert self._wire_count() == before, f"{what}: the request reached the network first"

    @pytest.mark.anyio
    async def test_declared_streaming_is_honest(self) -> None:
        for model in self._models():
            async with self.provider(Scenario.TEXT) as provider:
                declared = provider.capabilities(model).streaming
                request = conformance_request(model)
                if declared is None:
                    continue
                if declared:
                    message, _chunks = await _collect(provider, request)
                    assert message.text == TEXT
                else:
                    await self._refused_before_network(
                        provider, request, f"{model}: streaming=False", stream=True
                    )

    @pytest.mark.anyio
    async def test_declared_structured_output_is_honest(self) -> None:
        fmt = ResponseFormat(name="answer", schema=SCHEMA)
        checked = False
        for model in self._models():
            async with self.provider(Scenario.TEXT) as provider:
                declared = provider.capabilities(model).structured_output
                native = conformance_request(model, response_format=fmt, structured_output="native")
                json_mode = conformance_request(model, structured_output="json_mode")
                if declared == "native":
                    checked = True
                    before = self._wire_count()
                    await self._works(provider, native, f"{model}: structured_output='native'")
                    wire = self.wire_requests()
                    if wire is not None and before is not None:
                        sent = wire[before:]
                        assert sent, f"{model}: nothing was sent"
                        assert _contains(sent[-1], SCHEMA), (
                            f"{model}: declared native structured output, but the response "
                            "schema is not in the request that was sent"
                        )
                elif declared == "json_mode":
                    checked = True
                    await self._works(
                        provider, json_mode, f"{model}: structured_output='json_mode'"
                    )
                    await self._refused_before_network(
                        provider, native, f"{model}: structured_output='json_mode'"
                    )
                elif declared == "none":
                    checked = True
                    await self._refused_before_network(
                        provider, native, f"{model}: structured_output='none'"
                    )
                    await self._refused_before_network(
                        provider, json_mode, f"{model}: structured_output='none'"
                    )
        if not checked:
            pytest.skip("no checked model declares structured_output")

    @pytest.mark.anyio
    async def test_declared_tool_choice_is_honest(self) -> None:
        checked = False
        for model in self._models():
            async with self.provider(Scenario.TOOL_CALLS) as provider:
                declared = provider.capabilities(model).tool_choice
                request = conformance_request(
                    model, tools=(WEATHER_TOOL,), tool_choice=WEATHER_TOOL.name
                )
                if declared is True:
                    checked = True
                    await self._works(provider, request, f"{model}: tool_choice=True")
                elif declared is False:
                    checked = True
                    await self._refused_before_network(
                        provider, request, f"{model}: tool_choice=False"
                    )
        if not checked:
            pytest.skip("no checked model declares tool_choice")

    @pytest.mark.anyio
    async def test_declared_parallel_tool_calls_is_honest(self) -> None:
        checked = False
        for model in self._models():
            async with self.provider(Scenario.TOOL_CALLS) as provider:
                declared = provider.capabilities(model).parallel_tool_calls
                request = conformance_request(
                    model, tools=(WEATHER_TOOL,), parallel_tool_calls=False
                )
                if declared is True:
                    checked = True
                    await self._works(provider, request, f"{model}: parallel_tool_calls=True")
                elif declared is False:
                    checked = True
                    await self._refused_before_network(
                        provider, request, f"{model}: parallel_tool_calls=False"
                    )
        if not checked:
            pytest.skip("no checked model declares parallel_tool_calls")

    @pytest.mark.anyio
    async def test_declared_vision_is_honest(self) -> None:
        checked = False
        image = UserMessage(
            content=(
                TextBlock(text="What is in this picture?"),
                ImageBlock(media_type="image/png", data=_PIXEL),
            )
        )
        for model in self._models():
            async with self.provider(Scenario.TEXT) as provider:
                declared = provider.capabilities(model).vision
                request = ModelRequest(model=model, messages=(image,))
                if declared is True:
                    checked = True
                    await self._works(provider, request, f"{model}: vision=True")
                elif declared is False:
                    checked = True
                    await self._refused_before_network(provider, request, f"{model}: vision=False")
        if not checked:
            pytest.skip("no checked model declares vision")

    @pytest.mark.anyio
    async def test_declared_reasoning_efforts_are_accepted(self) -> None:
        checked = False
        for model in self._models():
            async with self.provider(Scenario.TEXT) as provider:
                levels = provider.capabilities(model).reasoning_effort
                for level in levels or ():
                    checked = True
                    request = conformance_request(model, reasoning_effort=level)
                    await self._works(provider, request, f"{model}: reasoning_effort {level!r}")
        if not checked:
            pytest.skip("no checked model declares a reasoning-effort level")
