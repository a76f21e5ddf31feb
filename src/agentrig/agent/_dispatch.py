"""Tool-call dispatch: from a model's tool call to exactly one tool result message.

Per call: unknown names become an explicit skip naming what exists; known tools go through
the gate (permission evaluator and blockers, when configured), then the ``tool_execution``
waterfall whose default validates the arguments, runs ``authorize`` and ``execute``.
Whatever happens -- invalid input, refusal, an exception, cancellation -- the call gets one
:class:`~agentrig.llm.ToolMessage`.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Mapping, Sequence
from types import CoroutineType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio
import attrs

from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AgentrigError, ExecutionControlError
from agentrig.ids import InvocationId, new_invocation_id
from agentrig.kernel.payloads import ToolExecution, new_observation
from agentrig.llm import FileBlock, ImageBlock, TextBlock, ToolCallBlock, ToolMessage, ToolStatus
from agentrig.tools import (
    GateDecision,
    Tool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    ToolRefusedError,
    ToolReportedError,
    ToolTimeoutError,
    render_output,
)
from agentrig.tools.schema import parse_with

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent

__all__ = [
    "CallOutcome",
    "Gate",
    "GateDecision",
    "ReadyCall",
    "dispatch_call",
    "execute_call",
    "is_concurrent",
    "not_executed",
    "prepare_call",
    "tool_timeout",
    "unknown_tool",
]

INTERRUPTED_TEXT = "not executed: interrupted"


class Gate(Protocol):
    """Decides whether a call may run (permissions, blockers, hooks); installed by the runtime."""

    def __call__(self, tool: Tool, call: ToolCallBlock, agent: Agent) -> Awaitable[GateDecision]:
        """Allow or refuse one call."""
        ...

    def denied_tools(self, tools: Sequence[Tool]) -> set[str]:
        """Tools denied outright, so the model is never offered them."""
        ...


# the invocation id of a call that never reached dispatch
_NOT_DISPATCHED = InvocationId("")


@attrs.frozen(slots=True)
class CallOutcome:
    """A settled call: its message, whether it concludes the turn, and display-only view."""

    message: ToolMessage
    executed: bool
    concludes_turn: bool = False
    view: Any = None
    duration_ms: float = 0.0
    invocation_id: InvocationId = _NOT_DISPATCHED
    #: when the call began (seconds since the epoch; 0 for a call that never reached dispatch)
    started_at: float = 0.0
    #: the exception's class name when the call failed
    error_type: str | None = None
    #: why the call failed (invalid input, a refusal, the tool's own exception, an error
    #: output): what ``agent.call_tool()`` raises; ``None`` for a success
    failure: BaseException | None = attrs.field(default=None, eq=False, repr=False)


def _observe_permission(agent: Agent, call: ToolCallBlock, decision: GateDecision) -> None:
    """Emit the ``permission`` observation of the gate's decision on one call (content-free)."""
    hooks = agent.runtime.hooks
    if not hooks.has_listeners("observe"):
        return
    data = {
        "session_id": agent.session.id,
        "tool": call.name,
        "call_id": call.id,
        "allowed": decision.allowed,
        "reason": decision.reason,
    }
    hooks.notify("observe", new_observation("permission", agent._id, data))


def not_executed(call: ToolCallBlock, reason: str = INTERRUPTED_TEXT) -> ToolMessage:
    return ToolMessage.of(call.id, call.name, reason, status="not_executed")


def unknown_tool(call: ToolCallBlock, available: Sequence[str]) -> ToolMessage:
    names = ", ".join(sorted(available)) or "none"
    return ToolMessage.of(
        call.id,
        call.name,
        f"Tool {call.name!r} is not available, so the call was not executed. "
        f"Available tools: {names}.",
        status="skipped",
    )


def _error_text(error: BaseException) -> str:
    if isinstance(error, AgentrigError):
        return f"{error.code}: {error}"
    return f"{type(error).__name__}: {error}"


_NO_GATE = GateDecision(True)  # without a gate every call may run (frozen: one for all)


class ReadyCall(NamedTuple):
    """A call that validated and passed the gate: what :func:`execute_call` runs.

    A named tuple: one is made per tool call, and a tuple is the cheapest record to build.
    """

    tool: Tool
    call: ToolCallBlock
    parsed: Any
    checked: dict[str, Any]
    arguments: dict[str, Any]
    invocation_id: InvocationId
    started_at: float
    started: float


async def dispatch_call(
    agent: Agent,
    tool: Tool,
    call: ToolCallBlock,
    signal: CancelSignal,
    gate: Gate | None,
) -> CallOutcome:
    """Run one known tool call through gate, waterfall and tool; always returns an outcome."""
    ready = await prepare_call(agent, tool, call, signal, gate)
    if isinstance(ready, CallOutcome):
        return ready
    return await execute_call(agent, ready, signal)


async def prepare_call(
    agent: Agent,
    tool: Tool,
    call: ToolCallBlock,
    signal: CancelSignal,
    gate: Gate | None,
) -> CallOutcome | ReadyCall:
    """Validate ``call`` and ask the gate: a refusal or invalid input is the call's outcome.

    The loop runs this step in call order even for calls that then execute concurrently, so
    permission questions, ``PreToolUse`` hooks and approvals are asked one at a time.
    """
    invocation_id = new_invocation_id()
    started_at = time.time()
    started = time.perf_counter()

    def failed(error: BaseException, text: str) -> CallOutcome:
        message = ToolMessage.of(call.id, call.name, text, status="error")
        return CallOutcome(
            message,
            executed=False,
            invocation_id=invocation_id,
            started_at=started_at,
            error_type=type(error).__name__,
            failure=error,
        )

    if call.raw_arguments is not None:
        text = f"The arguments were not a JSON object and could not be read: {call.raw_arguments!r}"
        return failed(ToolInputError(text), text)
    # The arguments validate before anything else looks at them: nobody is asked to approve
    # a call that would fail validation.
    checked = dict(call.arguments)
    try:
        parsed = parse_with(tool.input_schema, checked)
    except Exception as exc:
        if is_abort(exc, signal):
            raise
        return failed(exc, _error_text(exc))
    decision = _NO_GATE
    if gate is not None:
        decision = await gate(tool, call, agent)
        _observe_permission(agent, call, decision)
        if not decision.allowed:
            text = f"The call was refused: {decision.reason}"
            return failed(ToolRefusedError(text), text)
    arguments = checked
    if decision.updated_arguments is not None:
        arguments = dict(decision.updated_arguments)
    return ReadyCall(tool, call, parsed, checked, arguments, invocation_id, started_at, started)


async def execute_call(
    agent: Agent, ready: ReadyCall, signal: CancelSignal, *, alongside: bool = False
) -> CallOutcome:
    """Run a prepared call through the ``tool_execution`` waterfall; always an outcome.

    ``alongside``: the call runs concurrently with other calls of its reply (told to the tool
    in its context, with the timeout that applies).
    """
    tool, call, parsed, checked = ready.tool, ready.call, ready.parsed, ready.checked
    invocation_id, started_at = ready.invocation_id, ready.started_at
    ctx = ToolContext(
        signal=signal,
        tool_id=tool.id,
        call_id=call.id,
        invocation_id=invocation_id,
        agent=agent,
        services=agent.runtime.services,
        timeout=tool_timeout(agent, tool),
        alongside=alongside,
    )
    extras: dict[str, Any] = {}

    async def run(running: Any, arguments: Mapping[str, Any]) -> ToolMessage:
        value, running_ctx = parsed, ctx
        if arguments is not checked or running is not tool:
            # rewritten on the way (a hook or a tool_execution listener): validate again
            value = parse_with(running.input_schema, dict(arguments))
        if running is not tool:  # another tool's own timeout applies
            running_ctx = attrs.evolve(ctx, timeout=tool_timeout(agent, running))
        limit = running_ctx.timeout
        verdict = running.authorize(value, running_ctx)
        if verdict is not None and inspect.isawaitable(verdict):
            verdict = await verdict
        if verdict is not None:
            raise AgentrigError(
                f"authorize() of {tool.id!r} returned {verdict!r}; it must return None to approve "
                "and raise to refuse",
                code="tool.authorize_contract",
            )
        result = running.execute(value, running_ctx)
        if type(result) is CoroutineType or (
            not isinstance(result, str) and inspect.isawaitable(result)
        ):  # cheap tests first: most results are a coroutine's or a plain string
            if limit is None:
                result = await result
            else:
                with anyio.move_on_after(limit) as scope:
                    result = await result
                if scope.cancelled_caught:
                    raise ToolTimeoutError(
                        f"the tool {running.id!r} did not finish within its "
                        f"{limit:g}s timeout and was stopped"
                    )
        if isinstance(result, ToolOutput):
            extras["concludes_turn"] = result.concludes_turn
            extras["view"] = result.view
            status: ToolStatus = "error" if result.is_error else "ok"
            made = _result_message(call, running.parse_output(result.content), status)
            if result.is_error:
                extras["failure"] = ToolReportedError(made.text)
            return made
        return _result_message(call, running.parse_output(result))

    hooks = agent.runtime.hooks
    failure: BaseException | None = None
    # typed as object: a listener may break the waterfall's contract, and that is checked below
    returned: object
    try:
        if hooks.has_listeners("tool_execution"):

            def run_tool(payload: ToolExecution) -> Awaitable[ToolMessage]:
                return run(payload.tool, payload.arguments)  # the end of the waterfall

            payload = ToolExecution(
                agent=agent, call=call, arguments=ready.arguments, tool=tool, signal=signal
            )
            returned = await hooks.waterfall("tool_execution", payload, run_tool)
        else:  # the waterfall's end, without its payload
            returned = await run(tool, ready.arguments)
    except ExecutionControlError:
        raise  # a journal/persistence failure ends the run; it is not a tool result
    except Exception as exc:
        failure = exc
        if is_abort(exc, signal):
            text = f"interrupted while running: {_error_text(exc)}"
        else:
            text = _error_text(exc)
        returned = ToolMessage.of(call.id, call.name, text, status="error")
    if isinstance(returned, ToolMessage):
        message = returned
        if message.call_id != call.id:
            message = message.model_copy(update={"call_id": call.id, "name": call.name})
    else:  # a listener broke the waterfall's contract
        failure = AgentrigError(
            f"tool_execution listener returned {type(returned).__name__}, not a ToolMessage",
            code="hook.contract",
        )
        text = str(failure)
        message = ToolMessage.of(call.id, call.name, text, status="error")
    if failure is None and message.status == "error":
        # an error result without an exception: the tool's own error output, or a listener's
        failure = extras.get("failure") or ToolReportedError(message.text)
    return CallOutcome(
        message,
        executed=True,
        concludes_turn=bool(extras.get("concludes_turn", False)),
        view=extras.get("view"),
        duration_ms=(time.perf_counter() - ready.started) * 1000,
        invocation_id=invocation_id,
        started_at=started_at,
        error_type=type(failure).__name__ if failure is not None else None,
        failure=failure,
    )


def is_concurrent(tool: Tool) -> bool:
    """May ``tool`` run alongside the other calls of its reply?

    Its own ``concurrent`` attribute decides when it declares one (``@tool(concurrent=...)``);
    otherwise a tool of the read-only risk class (``inspect``) may.
    """
    declared = getattr(tool, "concurrent", None)
    if declared is not None:
        return bool(declared)
    return tool.risk == "inspect"


def tool_timeout(agent: Agent, tool: Tool) -> float | None:
    """Seconds ``tool`` may run per call: ``[tools.<id>] timeout``, else the tool's own."""
    configured = agent.runtime.config.tools.get(tool.id)
    if configured is not None and configured.timeout is not None:
        return configured.timeout
    own = getattr(tool, "timeout", None)
    return float(own) if isinstance(own, int | float) and not isinstance(own, bool) else None


_RESULT_BLOCKS = (TextBlock, ImageBlock, FileBlock)


def _result_message(call: ToolCallBlock, value: Any, status: ToolStatus = "ok") -> ToolMessage:
    """A tool's value as its result message.

    A content block, or a non-empty sequence of text, image and file blocks, is kept as
    blocks (a multimodal result: each provider projects them, e.g. images to the model);
    anything else is rendered as text (:func:`~agentrig.tools.render_output`).
    """
    if type(value) is str:  # the common case, without isinstance on the block classes
        return ToolMessage.of(call.id, call.name, value, status=status)
    if isinstance(value, _RESULT_BLOCKS):
        value = (value,)
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(b, _RESULT_BLOCKS) for b in value)
    ):
        return ToolMessage(call_id=call.id, name=call.name, content=tuple(value), status=status)
    return ToolMessage.of(call.id, call.name, render_output(value), status=status)


# one shared encoder: json.dumps with keywords would build a new one per call
_ENCODE_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


def canonical_input(call: ToolCallBlock) -> str:
    """A byte-stable rendering of a call's input for the identical-input guard."""
    return f"{call.name}\x00{_ENCODE_CANONICAL(call.arguments)}"
