"""One model round of a turn: the request, the provider call, streaming, retries, commit.

A round is retried while a ``request_error`` listener answers ``Retry``; an interrupted
call keeps what arrived (committed as an interrupted assistant message) and a failed one
is kept readable in history before it is raised as the typed error it is.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio

from agentrig.agent._observations import observe_model_call
from agentrig.agent._request import (
    build_request,
    context_overflow,
    request_config,
    request_messages,
)
from agentrig.agent._results import ContextWindowError
from agentrig.agent._structured import structured_instruction, structured_transport
from agentrig.agent._turn_state import Interrupted, TurnState
from agentrig.cancel import is_abort
from agentrig.errors import ExecutionControlError, error_info
from agentrig.kernel.payloads import RequestConfig, RequestError, Retry
from agentrig.llm import (
    PROVIDERS,
    AssistantMessage,
    ModelResponse,
    StreamAssembler,
    message_chunks,
    require_capabilities,
)
from agentrig.session import AssistantMessageEvent, ModelError, RequestHeader
from agentrig.tools import Tool

__all__ = ["ModelCall"]


class ModelCall(TurnState):
    """The model-call part of a turn (a mixin of :class:`~._turn_state.TurnState`)."""

    async def call_model(
        self,
        cfg: RequestConfig,
        *,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None = None,
        attempt: int = 1,
    ) -> AssistantMessage:
        agent = self.agent
        provider = agent.runtime.catalog(PROVIDERS).require(cfg.provider)
        view = agent.session.derive_messages()
        system_extra = structured_instruction(self.options, provider, cfg.model)
        messages = request_messages(view, system_extra, extra_instruction)
        extra_chars = len(system_extra or "") + len(extra_instruction or "")
        specs, tool_chars = agent._offer.request_specs(tools)
        window = agent.runtime.models.context_window(cfg.model)
        refusal = context_overflow(window, cfg.model, view.chars + extra_chars + tool_chars)
        if refusal is not None:
            error = ContextWindowError(refusal)
            await self.log(model_error(cfg, attempt, error))
            raise error
        response_format, transport = structured_transport(self.options, provider, cfg.model)
        declared = provider.capabilities(cfg.model)
        if declared.tool_choice is False and not specs:
            tool_choice = None  # nothing to choose from: no need to ask for what is absent
        request = build_request(cfg, messages, specs, tool_choice, response_format, transport)
        require_capabilities(
            provider, request, declared
        )  # refused here: the provider is never called
        writing = self.write(
            RequestHeader,
            provider=cfg.provider,
            model=cfg.model,
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            tools=tuple(t.id for t in tools),
        )
        if writing is not None:
            await writing
        assembler = StreamAssembler()
        answered: AssistantMessage | None = None  # a reply that arrived whole
        self.outcome.model = cfg.model
        emit = self.emit
        # the turn runs in one task on one event loop: its provider calls' scopes are made
        # from the class of its first (anyio looks the loop's library up for each otherwise)
        scope_class = self.scope_class
        scope = anyio.CancelScope() if scope_class is None else scope_class()
        self.scope_class = type(scope)
        try:
            with self.signal.scope(scope):
                if declared.streaming is False:
                    # a provider that cannot stream is driven through its non-streaming call
                    answered = _whole(await provider.complete(request, signal=self.signal))
                    self.first_chunk = time.perf_counter()
                    if emit is not None:
                        for chunk in message_chunks(answered):
                            if (waiting := emit(chunk)) is not None:
                                await waiting
                else:
                    stream = provider.stream(request, signal=self.signal)
                    try:
                        async for chunk in stream:
                            if not self.first_chunk:
                                self.first_chunk = time.perf_counter()
                            assembler.feed(chunk)
                            if emit is not None and (waiting := emit(chunk)) is not None:
                                await waiting
                    finally:
                        aclose = getattr(stream, "aclose", None)  # a plain AsyncIterator has none
                        if aclose is not None:
                            await aclose()
            self.signal.raise_if_cancelled()
        except ExecutionControlError:
            raise  # a journal failure stays a failure, even when a cancellation races it
        except BaseException as exc:
            if answered is not None:
                partial = answered.model_copy(update={"interrupted": True})
            else:
                partial = assembler.message(interrupted=True)
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                # The caller's own cancellation (the signal's scope absorbs only its own):
                # keep what arrived, then let it propagate -- it is not ours to swallow.
                with anyio.CancelScope(shield=True):
                    await self.commit_assistant(partial)
                self.outcome.interrupted = True
                raise
            if self.signal.cancelled or is_abort(exc, self.signal):
                await self.commit_assistant(partial)
                self.outcome.interrupted = True
                raise Interrupted() from None
            raise
        message = answered if answered is not None else assembler.message()
        if message.model:
            self.outcome.model = message.model  # the model that answered (fallbacks move)
        return message

    async def commit_assistant(self, message: AssistantMessage) -> None:
        if (writing := self.write(AssistantMessageEvent, message=message)) is not None:
            await writing
        for index, call in enumerate(message.tool_calls):
            self.open_calls[index] = call
        self.outcome.usages.append(message.usage)
        self.outcome.final = message

    async def model_round(
        self,
        *,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None = None,
    ) -> AssistantMessage:
        """One provider call, retried while a ``request_error`` listener says so."""
        attempt = 0
        cfg = await request_config(self.agent)
        while True:
            trace = self.trace
            scope = trace.open("model_call", self.agent.id) if trace is not None else None
            try:
                message = await self._attempt(cfg, attempt, tools, tool_choice, extra_instruction)
            finally:
                if scope is not None:
                    scope.close()
            if message is not None:
                return message
            attempt += 1

    async def _attempt(
        self,
        cfg: RequestConfig,
        attempt: int,
        tools: Sequence[Tool],
        tool_choice: str | None,
        extra_instruction: str | None,
    ) -> AssistantMessage | None:
        """One attempt of a model round: its message, or None when a listener said retry."""
        started = (time.time(), time.perf_counter())
        self.first_chunk = 0.0
        try:
            message = await self.call_model(
                cfg,
                tools=tools,
                tool_choice=tool_choice,
                extra_instruction=extra_instruction,
                attempt=attempt + 1,
            )
        except Interrupted:
            observe_model_call(self, cfg, started, attempt, "interrupted", self.outcome.final)
            raise
        except (ContextWindowError, ExecutionControlError):
            raise
        except Exception as exc:
            observe_model_call(self, cfg, started, attempt, "failure", None, exc)

            async def terminal(_payload: RequestError) -> Retry | None:
                return None

            action = await self.agent.runtime.hooks.waterfall(
                "request_error",
                RequestError(agent=self.agent, error=exc, attempt=attempt + 1, signal=self.signal),
                terminal,
            )
            if isinstance(action, Retry) and not self.signal.cancelled:
                return None
            # its own event in the log (never words of the model), then raised as itself
            await self.log(model_error(cfg, attempt + 1, exc))
            raise
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                observe_model_call(self, cfg, started, attempt, "cancelled", self.outcome.final)
            raise
        self.outcome.rounds += 1
        observe_model_call(self, cfg, started, attempt, "success", message)
        await self.commit_assistant(message)
        return message


def model_error(cfg: RequestConfig, attempt: int, error: BaseException) -> ModelError:
    """The ``model/error`` event of a failed call (``attempt`` counts from 1)."""
    info = error_info(error)
    return ModelError(
        provider=cfg.provider,
        model=cfg.model,
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
