"""Which tool-call gate a composition gets, and when the permission layer is loaded.

A config with ``[permissions]``, ``[hooks]`` or ``[claude_code]`` gets its gate built at
composition, where a bad rule or hook is reported.  Without those tables the gate holds only
the defaults, which always parse: nothing about it can fail at composition, so it is built
the first time a tool is offered or called -- an agent with no tool (a one-shot ``agentrig
run`` of a plain chat agent) never imports the permission layer (about 5 % of that run).
Either way every call goes through the same :class:`~agentrig.builtins._gate.PermissionGate`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from agentrig.agent import Agent, Gate
    from agentrig.kernel import Runtime
    from agentrig.llm import ToolCallBlock
    from agentrig.tools import GateDecision, Tool

__all__ = ["DeferredGate", "gate_for"]

#: the tables that give the gate something to check at composition
_GATE_TABLES = frozenset({"permissions", "hooks", "claude_code"})


def gate_for(rt: Runtime) -> Gate:
    """``rt``'s gate: built now when its config has gate tables, else on first use."""
    if _GATE_TABLES & rt.loaded.sections.keys():
        from agentrig.builtins._gate import compose_gate

        return compose_gate(rt)
    return DeferredGate(rt)


@final
class DeferredGate:
    """The default gate of a runtime, built from its config when a tool first needs it."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._gate: Gate | None = None

    def _built(self) -> Gate:
        if self._gate is None:
            from agentrig.builtins._gate import compose_gate

            self._gate = compose_gate(self._runtime)
        return self._gate

    def denied_tools(self, tools: Sequence[Tool]) -> set[str]:
        return self._built().denied_tools(tools) if tools else set()

    def __call__(self, tool: Tool, call: ToolCallBlock, agent: Agent) -> Awaitable[GateDecision]:
        return self._built()(tool, call, agent)
