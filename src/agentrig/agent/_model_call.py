"""One model round of a turn: the request, the provider call, streaming, retries, commit.

A round is retried while a ``request_error`` listener answers ``Retry``; an interrupted
call keeps what arrived (committed as an interrupted assistant message); a failed one is
logged as a ``model/error`` event -- never as words of the model -- and raised as the typed
error it is.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import NoReturn, final

import anyio

from agentrig.agent._context import (
    ContextUsage,
    context_tokens,
    context_usage,
    measure_context,
)
from agentrig.agent._observations import observe_model_call
from agentrig.agent._request import (
    CONTEXT_GUARD_RATIO,
    build_request,
    context_overflow,
    request_config,
    request_messages,
)
from agentrig.agent._results import ContextWindowError, ReasoningAudit
from agentrig.agent._structured import structured_instruction, structured_transport
from agentrig.agent._turn_state import Interrupted, OpenCalls, TurnContext, TurnOutcome
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import error_info
from agentrig.lifecycle import ExecutionControlError, RequestConfig, RequestError, Retry
from agentrig.llm import (
    COOLDOWNS,
    PROVIDERS,
    AssistantMessage,
    Capabilities,
    ModelDeployment,
    ModelRequest,
    ModelResponse,
    Provider,
    StreamAssembler,
    StreamCheck,
    StreamChunk,
    capture_efforts,
    message_chunks,
    require_capabilities,
)
from agentrig.session import AssistantMessageEvent, ModelError, RequestHeader
from agentrig.tools import Tool

__all__ = ["ModelRound", "failed_call_event", "model_error"]


@final
class ModelRound:
    """The model rounds of one turn: each sends the history and commits the reply."""

    __slots__ = (
        "ask",
        "audit",
        "calls",
        "compact_at",
        "ctx",
        "first_chunk",
        "guard_text",
        "outcome",
        "response_id",
        "scope_class",
    )

    def __init__(self, ctx: TurnContext, outcome: TurnOutcome, calls: OpenCalls) -> None:
        self.ctx = ctx
        self.outcome = outcome
        self.calls = calls
        self.first_chunk = 0.0  # when the current call's first chunk arrived
        self.response_id: str | None = None  # the provider's id of the current call's response
        self.audit: ReasoningAudit | None = None  # the current call's reasoning effort
        #: what the current call asks for: the tools it offers, the tool choice, and an
        #: instruction for this request only (a forced final answer's)
        self.ask: tuple[Sequence[Tool], str | None, str | None] = ((), None, None)
        #: the class of the anyio cancel scope of the turn's first provider call (the turn
        #: runs in one task on one event loop; anyio looks the library up per scope otherwise)
        self.scope_class: type[anyio.CancelScope] | None = None
        # the agent's compaction settings (its configuration is fixed), read once per turn:
        # the share of the window that compacts first (None: never), the guard's wording
        settings = ctx.port.config.compaction
        self.compact_at = settings.at if settings.auto else None
        self.guard_text = settings.guard_text

    async def run(
        self,
        *,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None = None,
    ) -> AssistantMessage:
        """One provider call, retried while a ``request_error`` listener says so: it offers
        ``tools``, asks for ``tool_choice``, and adds ``extra_instruction`` to this request
        only (a forced final answer's)."""
        ctx = self.ctx
        cfg = await request_config(ctx.port)
        self.ask = (tools, tool_choice, extra_instruction)
        attempt = 1
        while True:
            trace = ctx.trace
            scope = (
                trace.open("model_call", ctx.agent.id, cfg.model, cfg.provider)
                if trace is not None
                else None
            )
            try:
                message = await self._attempt(cfg, attempt)
            finally:
                if scope is not None:
                    scope.close()
            if message is not None:
                return message
            attempt += 1

    async def _attempt(self, cfg: RequestConfig, attempt: int) -> AssistantMessage | None:
        """One attempt: its message, or None when a listener said retry."""
        started = (time.time(), time.perf_counter())
        self.first_chunk = 0.0
        self.audit = None
        try:
            request, provider, declared = await self._request(cfg, attempt)
            message = await self._call(provider, request, declared, cfg, attempt)
        except Interrupted:
            self._observe(cfg, started, attempt, "interrupted", self.outcome.final)
            raise
        except (ContextWindowError, ExecutionControlError):
            raise
        except Exception as exc:
            self._cool(cfg, exc)  # a rate limit with its reset
            self._observe(cfg, started, attempt, "failure", None, exc)
            if await self._retry(exc, attempt):
                return None
            # its own event in the log (never words of the model), then raised as itself;
            # a compaction's failed summary call names its own provider and model
            port = self.ctx.port
            called = port.compactor.failed_call(exc) or (cfg.provider, cfg.model)
            await port.append(failed_call_event(*called, attempt, exc))
            raise
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                self._observe(cfg, started, attempt, "cancelled", self.outcome.final)
            raise
        self.outcome.rounds += 1
        self._observe(cfg, started, attempt, "success", message)
        await self.commit(message)
        return message

    async def _call(
        self,
        provider: Provider,
        request: ModelRequest,
        declared: Capabilities,
        cfg: RequestConfig,
        attempt: int,
    ) -> AssistantMessage:
        """Call the provider, recording how it resolved the request's reasoning effort
        (what it reported while it was called: see :func:`agentrig.llm.report_effort`)."""
        position = (self.outcome.rounds + 1, attempt)
        with capture_efforts() as reports:
            try:
                return await self._receive(
                    provider, request, declared, cfg.model, StreamCheck(cfg.provider)
                )
            finally:
                audit = ReasoningAudit.of(
                    cfg.provider, cfg.model, position, cfg.reasoning_effort, reports
                )
                self.audit = audit
                self.outcome.reasoning.append(audit)

    def _cool(self, cfg: RequestConfig, error: Exception) -> None:
        """Start the cooldown of the deployment ``cfg`` sends to, when ``error`` is a rate
        limit with a deadline that no lower layer (the HTTP retries) started already."""
        provider = self.ctx.port.runtime.catalog(PROVIDERS).get(cfg.provider)
        if provider is not None:
            COOLDOWNS.note(ModelDeployment.of(provider, cfg.provider, cfg.model), error)

    async def _retry(self, error: Exception, attempt: int) -> bool:
        """Does a ``request_error`` listener want the failed call sent again?"""
        ctx = self.ctx
        payload = RequestError(agent=ctx.agent, error=error, attempt=attempt, signal=ctx.signal)
        action = await ctx.port.runtime.hooks.waterfall("request_error", payload, _terminal)
        return isinstance(action, Retry) and not ctx.signal.cancelled

    def _observe(
        self,
        cfg: RequestConfig,
        started: tuple[float, float],
        attempt: int,
        result: str,
        message: AssistantMessage | None,
        error: BaseException | None = None,
    ) -> None:
        ctx = self.ctx
        if ctx.agent.runtime.hooks.has_listeners("observe"):  # built only for a listener
            observe_model_call(
                ctx, self.outcome, cfg, started, self.first_chunk, attempt, result, message,
                error, response_id=self.response_id, reasoning=self.audit,
            )  # fmt: skip

    async def _request(
        self, cfg: RequestConfig, attempt: int
    ) -> tuple[ModelRequest, Provider, Capabilities]:
        """The request to send, after the context guard; its header is logged."""
        tools, tool_choice, extra_instruction = self.ask
        ctx = self.ctx
        port, options = ctx.port, ctx.options
        provider = port.runtime.catalog(PROVIDERS).require(cfg.provider)
        if COOLDOWNS.cooling:  # its deployment was rate limited a moment ago: fail fast
            deployment = ModelDeployment.of(provider, cfg.provider, cfg.model)
            COOLDOWNS.check(deployment, provider=cfg.provider)
        system_extra = structured_instruction(options, provider, cfg.model)
        extra_chars = len(system_extra or "") + len(extra_instruction or "")
        specs, tool_chars = port.offer.request_specs(tools)
        window = port.runtime.models.context_window(cfg.model)
        session = port.session
        history = session.derive_messages()  # measured, then sent
        # the tokens it uses; the whole ContextUsage only to compact or refuse
        used = context_tokens(session, history.chars, tool_chars, extra_chars)[0]
        compact_at = self.compact_at
        if compact_at is not None and window > 0 and used / window >= compact_at:
            usage = context_usage(session, history.chars, window, tool_chars, extra_chars)
            used = (await self._compacted(usage, window, tool_chars, extra_chars)).used
            history = session.derive_messages()  # the compacted history
        messages = request_messages(history, system_extra, extra_instruction)
        if used > window * CONTEXT_GUARD_RATIO:  # the guard refuses: say why
            usage = context_usage(session, history.chars, window, tool_chars, extra_chars)
            refusal = context_overflow(usage, cfg.model, self.guard_text)
            if refusal is not None:
                error = ContextWindowError(refusal)
                await port.append(model_error(cfg, attempt, error))
                raise error
        response_format, transport = structured_transport(options, provider, cfg.model)
        declared = provider.capabilities(cfg.model)
        if declared.tool_choice is False and not specs:
            tool_choice = None  # nothing to choose from: no need to ask for what is absent
        request = build_request(cfg, messages, specs, tool_choice, response_format, transport)
        require_capabilities(provider, request, declared)  # refused here: never called
        await port.write(
            RequestHeader,
            provider=cfg.provider,
            model=cfg.model,
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            tools=tuple([t.id for t in tools]),
        )
        return request, provider, declared

    async def _compacted(
        self, usage: ContextUsage, window: int, tool_chars: int, extra_chars: int
    ) -> ContextUsage:
        """Compact the history the request would carry (``usage`` is past ``compaction.at``
        of the window); the request's context usage after it."""
        port = self.ctx.port
        signal = self.ctx.signal
        try:
            done = await port.compactor.compact(
                usage, trigger="auto", instructions=None, signal=signal
            )
        except ExecutionControlError:
            raise  # a journal failure stays a failure, even when a cancellation races it
        except Exception as exc:
            if signal.cancelled or is_abort(exc, signal):
                self.outcome.interrupted = True  # cancelled while summarising
                raise Interrupted() from None
            raise
        if done is None:
            return usage
        # the summary call is the run's too: in its usage, and apart as the compaction's
        self.outcome.usages.append(done.usage)
        self.outcome.compaction_usages.append(done.usage)
        return measure_context(port.session, window, tool_chars=tool_chars, extra_chars=extra_chars)

    async def _receive(
        self,
        provider: Provider,
        request: ModelRequest,
        declared: Capabilities,
        model: str,
        check: StreamCheck,
    ) -> AssistantMessage:
        """Call the provider under the run's signal; an interruption keeps what arrived."""
        ctx = self.ctx
        assembler = StreamAssembler()
        answered: AssistantMessage | None = None  # a reply that arrived whole
        self.outcome.model = model
        self.response_id = None
        scope_class = self.scope_class
        scope = anyio.CancelScope() if scope_class is None else scope_class()
        self.scope_class = type(scope)
        try:
            with ctx.signal.scope(scope):
                if declared.streaming is False:
                    # a provider that cannot stream is driven through its non-streaming call
                    answered = await self._complete(provider, request, check)
                else:
                    stream = provider.stream(request, signal=ctx.signal)
                    await self._stream(stream, assembler, check)
            ctx.signal.raise_if_cancelled()
        except ExecutionControlError:
            raise  # a journal failure stays a failure, even when a cancellation races it
        except BaseException as exc:
            if answered is not None:
                partial = answered.model_copy(update={"interrupted": True})
            else:
                partial = assembler.message(interrupted=True)
                self.response_id = assembler.response_id
            await self._interrupted(exc, partial)
            raise
        if answered is None:
            self.response_id = assembler.response_id
        message = answered if answered is not None else assembler.message()
        if message.model:
            self.outcome.model = message.model  # the model that answered (fallbacks move)
        return message

    async def _complete(
        self, provider: Provider, request: ModelRequest, check: StreamCheck
    ) -> AssistantMessage:
        try:
            response = await provider.complete(request, signal=self.ctx.signal)
        except Exception as exc:
            _raise_failure(check, exc, self.ctx.signal)
        self.response_id = response.response_id
        answered = _whole(response)
        self.first_chunk = time.perf_counter()
        emit = self.ctx.emit
        if emit is not None:
            for chunk in message_chunks(answered):
                await emit(chunk)
        return answered

    async def _stream(
        self, stream: AsyncIterator[StreamChunk], assembler: StreamAssembler, check: StreamCheck
    ) -> None:
        """Feed the provider's chunks to ``assembler``; a chunk the protocol does not allow,
        or an exception of the provider's, fails as the provider's (``provider.protocol``)."""
        emit = self.ctx.emit
        chunks = aiter(stream)
        try:
            while True:
                try:
                    chunk = check.chunk(await anext(chunks))
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    _raise_failure(check, exc, self.ctx.signal)
                if not self.first_chunk:
                    self.first_chunk = time.perf_counter()
                assembler.feed(chunk)
                if emit is not None:
                    await emit(chunk)
        finally:
            aclose = getattr(stream, "aclose", None)  # a plain AsyncIterator has none
            if aclose is not None:
                await aclose()

    async def _interrupted(self, exc: BaseException, partial: AssistantMessage) -> None:
        """Commit what arrived when the call was cancelled; a failure commits nothing."""
        signal = self.ctx.signal
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            # The caller's own cancellation (the signal's scope absorbs only its own):
            # keep what arrived, then let it propagate -- it is not ours to swallow.
            with anyio.CancelScope(shield=True):
                await self.commit(partial)
            self.outcome.interrupted = True
        elif signal.cancelled or is_abort(exc, signal):
            await self.commit(partial)
            self.outcome.interrupted = True
            raise Interrupted() from None

    async def commit(self, message: AssistantMessage) -> None:
        """Log the reply; its calls are open until each has its result."""
        await self.ctx.port.write(AssistantMessageEvent, message=message)
        self.calls.open(message.tool_calls)
        self.outcome.usages.append(message.usage)
        self.outcome.final = message


async def _terminal(_payload: RequestError) -> Retry | None:
    return None  # the end of the request_error waterfall: the failure is terminal


def _raise_failure(check: StreamCheck, error: Exception, signal: CancelSignal) -> NoReturn:
    """Raise what ``error``, raised by the provider, becomes (see :class:`StreamCheck`)."""
    failure = check.failure(error, signal)
    if failure is error:
        raise error
    raise failure from error


def model_error(cfg: RequestConfig, attempt: int, error: BaseException) -> ModelError:
    """The ``model/error`` event of a failed call (``attempt`` counts from 1)."""
    return failed_call_event(cfg.provider, cfg.model, attempt, error)


def failed_call_event(provider: str, model: str, attempt: int, error: BaseException) -> ModelError:
    """The ``model/error`` event of a failed call to ``provider`` / ``model``."""
    info = error_info(error)
    return ModelError(
        provider=provider,
        model=model,
        attempt=attempt,
        code=info.code,
        category=info.category,
        message=info.message,
    )


def _whole(response: ModelResponse) -> AssistantMessage:
    message = response.message
    if message.model is None and response.served_model:
        message = message.model_copy(update={"model": response.served_model})
    return message
