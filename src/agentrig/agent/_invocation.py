"""One known tool call, from validation to its one outcome: :class:`ToolInvocation`.

Two steps the tool round can run apart: :meth:`ToolInvocation.check` validates the arguments
and asks the gate (the round runs it in call order, so no two questions are open at once),
then :meth:`ToolInvocation.execute` runs the ``tool_execution`` waterfall, whose end runs
``authorize`` and ``execute``.  What the tool said besides its content (``concludes_turn``,
its ``view``, an error output) is kept on the invocation.  A refusal is a
:class:`~agentrig.agent._dispatch.CallOutcome`; a call that ran is the settled invocation
itself, which the tool round reads as it is and turns into a ``CallOutcome`` only when a
reader needs that record (an observer, a refusal, ``agent.call_tool()``).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable
from types import CoroutineType
from typing import TYPE_CHECKING, Any, ClassVar, final

import anyio

from agentrig.agent._dispatch import (
    NO_GATE,
    CallOutcome,
    Gate,
    error_text,
    observe_permission,
    result_message,
    tool_timeout,
)
from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AgentrigError
from agentrig.ids import new_invocation_id
from agentrig.lifecycle import ExecutionControlError, ToolExecution
from agentrig.llm import ToolCallBlock, ToolMessage, ToolStatus
from agentrig.tools import (
    Tool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    ToolRefusedError,
    ToolReportedError,
    ToolTimeoutError,
)
from agentrig.tools.schema import parse_with

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent

__all__ = ["ToolInvocation"]


@final
class ToolInvocation:
    """A model's call of ``tool`` on its way to exactly one result."""

    __slots__ = (
        "agent",
        "alongside",
        "arguments",
        "call",
        "checked",
        "concludes_turn",
        "duration_ms",
        "failure",
        "invocation_id",
        "message",
        "parsed",
        "reported",
        "signal",
        "started",
        "started_at",
        "tool",
        "view",
    )

    #: what the round reads of a settled call, as on a ``CallOutcome``: it ran (a call that
    #: did not is a ``CallOutcome``), its result message and how long it took
    executed: ClassVar[bool] = True
    message: ToolMessage
    duration_ms: float

    def __init__(self, agent: Agent, tool: Tool, call: ToolCallBlock, signal: CancelSignal):
        self.agent = agent
        self.tool = tool
        self.call = call
        self.signal = signal
        self.invocation_id = new_invocation_id()
        self.started_at = time.time()
        self.started = time.perf_counter()
        self.parsed: Any = None
        self.checked: dict[str, Any] = {}
        self.arguments: dict[str, Any] = {}
        self.alongside = False
        #: what the tool said besides its content (a ``ToolOutput``)
        self.concludes_turn = False
        self.view: Any = None
        self.reported: ToolReportedError | None = None  # its error output, as an error
        #: the exception the call failed with (a listener's broken contract, an error output)
        self.failure: BaseException | None = None

    async def settle(self, gate: Gate | None) -> CallOutcome:
        """Check, then run: the call's one outcome."""
        refused = await self.check(gate)
        return refused if refused is not None else (await self.execute()).outcome()

    # ---- step 1: validation and the gate ----------------------------------------------------
    async def check(self, gate: Gate | None) -> CallOutcome | None:
        """Validate and ask the gate: a refusal or invalid input is the outcome (None: it may
        run).  The arguments validate first: nobody is asked to approve a call that would
        fail validation."""
        call = self.call
        if call.raw_arguments is not None:
            text = (
                f"The arguments were not a JSON object and could not be read: "
                f"{call.raw_arguments!r}"
            )
            return self._not_run(ToolInputError(text), text)
        self.checked = dict(call.arguments)
        try:
            self.parsed = parse_with(self.tool.input_schema, self.checked)
        except Exception as exc:
            if is_abort(exc, self.signal):
                raise
            return self._not_run(exc, error_text(exc))
        decision = NO_GATE
        if gate is not None:
            decision = await gate(self.tool, call, self.agent)
            if self.agent.runtime.hooks.has_listeners("observe"):
                observe_permission(self.agent, call, decision)
            if not decision.allowed:
                text = f"The call was refused: {decision.reason}"
                return self._not_run(ToolRefusedError(text), text)
        updated = decision.updated_arguments
        self.arguments = self.checked if updated is None else dict(updated)
        return None

    def _not_run(self, error: BaseException, text: str) -> CallOutcome:
        message = ToolMessage.of(self.call.id, self.call.name, text, status="error")
        return CallOutcome(
            message,
            executed=False,
            invocation_id=self.invocation_id,
            started_at=self.started_at,
            error_type=type(error).__name__,
            failure=error,
        )

    # ---- step 2: the tool_execution waterfall and the tool ------------------------------------
    async def execute(self, *, alongside: bool = False) -> ToolInvocation:
        """Run the checked call through the ``tool_execution`` waterfall; always settles it
        (its ``message``, ``failure`` and ``duration_ms`` are set).

        ``alongside``: it runs concurrently with other calls of its reply (told to the tool
        in its context, with the timeout that applies).
        """
        call = self.call
        self.alongside = alongside
        hooks = self.agent.runtime.hooks
        returned: object  # a listener may break the waterfall's contract: checked below
        try:
            if hooks.has_listeners("tool_execution"):
                payload = ToolExecution(
                    agent=self.agent,
                    call=call,
                    arguments=self.arguments,
                    tool=self.tool,
                    signal=self.signal,
                )
                returned = await hooks.waterfall("tool_execution", payload, self._waterfall_end)
            else:  # the waterfall's end, without its payload
                returned = await self.run(self.tool, self.arguments)
        except ExecutionControlError:
            raise  # a journal/persistence failure ends the run; it is not a tool result
        except Exception as exc:
            self.failure = exc
            text = error_text(exc)
            if is_abort(exc, self.signal):
                text = f"interrupted while running: {text}"
            returned = ToolMessage.of(call.id, call.name, text, status="error")
        return self._settled(returned)

    async def _waterfall_end(self, payload: ToolExecution) -> ToolMessage:
        return await self.run(payload.tool, payload.arguments)

    async def run(self, running: Tool, arguments: Any) -> ToolMessage:
        """Run ``running`` (the tool, or one a listener put in its place) on ``arguments``."""
        value = self.parsed
        if arguments is not self.checked or running is not self.tool:
            # rewritten on the way (a hook or a tool_execution listener): validate again
            value = parse_with(running.input_schema, dict(arguments))
        agent = self.agent
        ctx = ToolContext(  # by position (keywords cost a third more): the fields in order
            self.signal,
            self.tool.id,
            self.call.id,
            self.invocation_id,
            agent,
            agent.runtime.services,
            tool_timeout(agent, running),  # timeout
            self.alongside,
        )
        # a tool's authorize() may be sync or async (the tool contract lets it choose)
        verdict: object = running.authorize(value, ctx)
        if verdict is not None and inspect.isawaitable(verdict):
            verdict = await verdict
        if verdict is not None:
            raise AgentrigError(
                f"authorize() of {self.tool.id!r} returned {verdict!r}; it must return None to "
                "approve and raise to refuse",
                code="tool.authorize_contract",
            )
        result = running.execute(value, ctx)
        if type(result) is CoroutineType or (
            not isinstance(result, str) and inspect.isawaitable(result)
        ):  # cheap tests first: most results are a coroutine's or a plain string
            limit = ctx.timeout
            result = await (result if limit is None else _within(running, result, limit))
        return self._message(running, result)

    def _message(self, running: Tool, result: Any) -> ToolMessage:
        if not isinstance(result, ToolOutput):
            return result_message(self.call, running.parse_output(result))
        self.concludes_turn = result.concludes_turn
        self.view = result.view
        status: ToolStatus = "error" if result.is_error else "ok"
        made = result_message(self.call, running.parse_output(result.content), status)
        if result.is_error:
            self.reported = ToolReportedError(made.text)
        return made

    def _settled(self, returned: object) -> ToolInvocation:
        call = self.call
        if isinstance(returned, ToolMessage):
            message = returned
            if message.call_id != call.id:
                message = message.model_copy(update={"call_id": call.id, "name": call.name})
        else:  # a listener broke the waterfall's contract
            self.failure = AgentrigError(
                f"tool_execution listener returned {type(returned).__name__}, not a ToolMessage",
                code="hook.contract",
            )
            message = ToolMessage.of(call.id, call.name, str(self.failure), status="error")
        if self.failure is None and message.status == "error":
            # an error result without an exception: the tool's own error output, or a listener's
            self.failure = self.reported or ToolReportedError(message.text)
        self.message = message
        self.duration_ms = (time.perf_counter() - self.started) * 1000
        return self

    def outcome(self) -> CallOutcome:
        """The executed call as a :class:`~agentrig.agent._dispatch.CallOutcome`."""
        failure = self.failure
        return CallOutcome(
            self.message,
            executed=True,
            concludes_turn=self.concludes_turn,
            view=self.view,
            duration_ms=self.duration_ms,
            invocation_id=self.invocation_id,
            started_at=self.started_at,
            error_type=type(failure).__name__ if failure is not None else None,
            failure=failure,
        )


async def _within(tool: Tool, result: Awaitable[Any], limit: float) -> Any:
    """A tool's awaitable result, awaited within ``limit`` seconds."""
    with anyio.move_on_after(limit):
        return await result
    raise ToolTimeoutError(
        f"the tool {tool.id!r} did not finish within its {limit:g}s timeout and was stopped"
    )
