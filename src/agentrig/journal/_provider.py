"""The journaled provider: a Provider wrapper that journals every model call.

Per call: the bound execution is recorded if new, the ``model/intent`` is made durable,
then the real provider is called.  The real call runs on the runtime's task group, shielded
from the caller's cancel scope: only the run's :class:`~agentrig.cancel.CancelSignal`
reaches it.  Whatever way the caller leaves -- completion, failure, cancellation, closing
the stream early -- the wrapper waits for the real call to settle and records its
``model/result`` (a late response's usage and tool calls included) before it returns.  A
failed journal write wins over everything else; otherwise the caller's own outcome (the
cancellation that won, or the provider's error) is kept.

A compaction's summary call (made inside the ``compaction`` waterfall) is journaled as
``c<n>``; when a restarted run compacts again with the same request, the recorded answer is
returned and the provider is not called a second time.  A compaction outside any run (a
manual ``agent.compact()`` between runs) belongs to no execution and is not journaled.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any

import anyio

from agentrig.cancel import CancelSignal, is_abort
from agentrig.ids import InvocationId
from agentrig.journal._binding import BINDING, COMPACTING, Binding, ensure_execution
from agentrig.journal._errors import JournalError, JournalWriteError
from agentrig.journal._guard import durable
from agentrig.journal._port import ExecutionJournal
from agentrig.journal._records import ModelIntent, ModelSettlement, request_digest
from agentrig.llm import (
    AssistantMessage,
    Capabilities,
    ModelRequest,
    ModelResponse,
    Provider,
    StreamAssembler,
    StreamChunk,
    message_chunks,
)

__all__ = ["JournaledProvider"]


def _describe(error: BaseException) -> str:
    code = getattr(error, "code", None)
    return f"{code}: {error}" if code else f"{type(error).__name__}: {error}"


class _Settlement:
    __slots__ = ("done", "error", "write_error")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.error: BaseException | None = None
        self.write_error: BaseException | None = None


class JournaledProvider:
    """Wrap ``inner`` so each call is journaled in ``journal`` (see the module docs).

    Install it in place of the real provider's catalog entry and register the journal's
    listener plugin (:func:`~agentrig.journal.attach_journal` does both); calls made outside
    a journaled turn are refused with :class:`~agentrig.journal.JournalError`.
    """

    def __init__(self, inner: Provider, journal: ExecutionJournal) -> None:
        self.inner = inner
        self.journal = journal
        self.kind = inner.kind

    def __getattr__(self, name: str) -> Any:
        # anything else (model metadata, a fake's request log) is the real provider's
        return getattr(self.inner, name)

    def capabilities(self, model: str) -> Capabilities:
        return self.inner.capabilities(model)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __repr__(self) -> str:
        return f"<JournaledProvider {self.inner!r} journal={self.journal!r}>"

    # ---- the intent ----------------------------------------------------------------------------
    async def _intent(self, request: ModelRequest) -> tuple[Binding, InvocationId]:
        binding = BINDING.get()
        if binding is None:
            raise JournalError(
                "a journaled provider was called outside a journaled turn: register the "
                "journal's listener plugin (attach_journal) so every call belongs to a run"
            )
        run_id = binding.run_id
        state = await durable(ensure_execution(self.journal, binding), f"execution {run_id}")
        call_id = state.next_call_id(compaction=COMPACTING.get())
        intent = ModelIntent(
            run_id=run_id,
            call_id=call_id,
            digest=request_digest(request),
            model=request.model,
            tools=tuple(t.name for t in request.tools),
        )
        await durable(self.journal.model_intent(intent), f"model/intent:{run_id}/{call_id}")
        return binding, call_id

    async def _settle(
        self,
        binding: Binding,
        call_id: InvocationId,
        assembler: StreamAssembler,
        error: BaseException | None,
        signal: CancelSignal,
        fed: bool,
    ) -> None:
        if error is None and not signal.cancelled:
            settlement = ModelSettlement(
                run_id=binding.run_id,
                call_id=call_id,
                outcome="completed",
                message=assembler.message(),
            )
        elif error is None or signal.cancelled or is_abort(error, signal):
            # the run was cancelled: even a complete late answer was not taken by it
            settlement = ModelSettlement(
                run_id=binding.run_id,
                call_id=call_id,
                outcome="interrupted",
                message=assembler.message(interrupted=True),
                error=_describe(error) if error is not None else "cancelled",
            )
        else:
            settlement = ModelSettlement(
                run_id=binding.run_id,
                call_id=call_id,
                outcome="failed",
                message=assembler.message(interrupted=True) if fed else None,
                error=_describe(error),
            )
        what = f"model/result:{binding.run_id}/{call_id}"
        await durable(self.journal.model_result(settlement), what)

    async def _recorded_summary(self, request: ModelRequest) -> AssistantMessage | None:
        """A compaction's summary call of a run: the answer recorded for the same request
        before a restart, if any."""
        binding = BINDING.get()
        assert binding is not None
        what = f"execution {binding.run_id}"
        state = await durable(ensure_execution(self.journal, binding), what)
        return state.summary(request_digest(request))

    # ---- the port ------------------------------------------------------------------------------
    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        if COMPACTING.get():
            if BINDING.get() is None:  # a compaction between runs: no execution owns it
                return await self.inner.complete(request, signal=signal)
            recorded = await self._recorded_summary(request)
            if recorded is not None:  # answered before a restart: never asked twice
                return ModelResponse(message=recorded)
        binding, call_id = await self._intent(request)
        error: BaseException | None = None
        response: ModelResponse | None = None
        with anyio.CancelScope(shield=True):  # join: only the signal stops the real call
            try:
                response = await self.inner.complete(request, signal=signal)
            except BaseException as exc:  # recorded, then re-raised below
                error = exc
            assembler = StreamAssembler()
            if response is not None:
                settlement = ModelSettlement(
                    run_id=binding.run_id,
                    call_id=call_id,
                    outcome="completed",
                    message=response.message,
                )
                what = f"model/result:{binding.run_id}/{call_id}"
                await durable(self.journal.model_result(settlement), what)
            else:
                await self._settle(binding, call_id, assembler, error, signal, False)
        if error is not None:
            raise error
        assert response is not None
        return response

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        if COMPACTING.get():
            if BINDING.get() is None:  # a compaction between runs: no execution owns it
                async for chunk in self.inner.stream(request, signal=signal):
                    yield chunk
                return
            recorded = await self._recorded_summary(request)
            if recorded is not None:  # answered before a restart: never asked twice
                for chunk in message_chunks(recorded):
                    yield chunk
                return
        binding, call_id = await self._intent(request)
        settlement = _Settlement()
        send, receive = anyio.create_memory_object_stream[StreamChunk](math.inf)
        inner = self.inner

        async def produce() -> None:
            assembler = StreamAssembler()
            fed = False
            try:
                with anyio.CancelScope(shield=True):
                    try:
                        stream = inner.stream(request, signal=signal)
                        try:
                            async for chunk in stream:
                                assembler.feed(chunk)
                                fed = True
                                # the caller may have left: keep draining to settle the call
                                with contextlib.suppress(
                                    anyio.BrokenResourceError, anyio.ClosedResourceError
                                ):
                                    send.send_nowait(chunk)
                        finally:
                            aclose = getattr(stream, "aclose", None)
                            if aclose is not None:
                                await aclose()
                    except BaseException as exc:  # the caller gets it below
                        settlement.error = exc
                    try:
                        await self._settle(
                            binding, call_id, assembler, settlement.error, signal, fed
                        )
                    except BaseException as exc:
                        settlement.write_error = exc
            finally:
                send.close()
                settlement.done.set()

        spawn = _spawner(binding)
        if spawn is None:
            raise JournalError("a journaled provider needs the agent's runtime to join its calls")
        spawn(produce)
        try:
            async with receive:
                async for chunk in receive:
                    yield chunk
        finally:
            with anyio.CancelScope(shield=True):
                await settlement.done.wait()
            if settlement.write_error is not None:
                # persistence failure stays a failure, even when cancellation raced it
                raise _as_write_error(settlement.write_error, call_id)
        if settlement.error is not None:
            raise settlement.error


def _spawner(binding: Binding) -> Any:
    runtime = getattr(binding.agent, "runtime", None)
    return getattr(runtime, "spawn", None)


def _as_write_error(error: BaseException, call_id: str) -> BaseException:
    if isinstance(error, JournalError):
        return error
    return JournalWriteError(
        f"the result of model call {call_id} could not be journaled: {error}",
        record=f"model/result:{call_id}",
        cause=error,
    )
