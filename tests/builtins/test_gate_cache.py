"""The gate judges every tool by its own declaration, never by a cached one.

Regression: the gate kept each tool's permission class in a dict keyed by ``id(tool)``, so a
tool that replaced another at the same address (``replace_tools``, a reloaded plugin) ran
with the dead tool's class -- an ``execute`` tool after an ``inspect`` one ran unasked.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from typing import Any

import pytest

import agentrig
from agentrig.builtins import _gate as gate_module
from agentrig.builtins._scripted import ScriptedProvider
from agentrig.ids import AgentId
from agentrig.permissions import RiskClass
from agentrig.tools import (
    FunctionTool,
    PermissionArg,
    Tool,
    ToolContext,
    ToolPermissions,
    ToolRefusedError,
    read_permissions,
    tool,
)


@tool(risk="inspect", permission_arg=("command", "command"))
def t(command: str) -> str:
    """Do something with a command."""
    return f"did {command}"


class _Declared:
    """``t`` under another risk class: one small object per declaration, all of one size
    (so a new one can land where a dead one lived)."""

    __slots__ = ("risk",)

    def __init__(self, risk: RiskClass) -> None:
        self.risk = risk

    id = property(lambda self: t.id)
    description = property(lambda self: t.description)
    input_schema = property(lambda self: t.input_schema)
    permission_arg = property(lambda self: t.permission_arg)

    def authorize(self, input: Any, ctx: ToolContext) -> Awaitable[None] | None:
        return t.authorize(input, ctx)

    def execute(self, input: Any, ctx: ToolContext) -> Any:
        return t.execute(input, ctx)

    def parse_output(self, value: Any) -> Any:
        return t.parse_output(value)


def _declared(risk: RiskClass) -> Tool:
    made: Tool = _Declared(risk)
    return made


_CONFIG: dict[str, Any] = {
    "providers": {"local": {"kind": "scripted"}},
    "agents": {"a": {"provider": "local", "model": "m"}},
}


async def _open(stack: Any, tmp_path: Any) -> agentrig.Agent:
    rt = await stack.enter_async_context(
        agentrig.open_runtime(
            {**_CONFIG, "permissions": {"workspace": str(tmp_path)}},
            overrides=[("providers", "local", ScriptedProvider([]))],
            environ={},
        )
    )
    agent: agentrig.Agent = rt.agent(AgentId("a"))
    return agent


@pytest.mark.anyio
@pytest.mark.parametrize("made", ["declared", "function"])
async def test_a_replaced_tool_at_the_same_address_is_judged_by_its_own_declaration(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, made: str
) -> None:
    # every object "at the same address" as far as the gate module can tell: what a reused
    # id looks like to a cache keyed by id(); a function tool holds its permissions, read
    # once from its declaration: the one that replaces it is another object with its own
    monkeypatch.setattr(gate_module, "id", lambda obj: 1, raising=False)
    make = _declared if made == "declared" else _function_tool
    async with AsyncExitStack() as stack:
        agent = await _open(stack, tmp_path)
        agent.replace_tools([make("inspect")])
        first = await agent.call_tool("t", {"command": "ls"})
        assert first.value.text == "did ls"
        assert (await agent.call_tool("t", {"command": "ls"})).value.text == "did ls"
        agent.replace_tools([make("execute")])
        with pytest.raises(ToolRefusedError, match="no-approver"):
            await agent.call_tool("t", {"command": "touch x"})


@pytest.mark.anyio
async def test_a_tool_reborn_at_a_dead_tools_id_is_judged_by_its_own_declaration(
    tmp_path: Any,
) -> None:
    async with AsyncExitStack() as stack:
        agent = await _open(stack, tmp_path)
        old = _declared("inspect")
        agent.replace_tools([old])
        assert (await agent.call_tool("t", {"command": "ls"})).value.text == "did ls"
        address = id(old)
        agent.replace_tools([])
        del old  # the last reference: the inspect tool is freed here
        # CPython's allocator hands out every free block of a size before taking new memory:
        # new tools, all kept alive, sooner or later fill the dead tool's block -- unless
        # another thread (pytest-xdist's worker has one) allocates meanwhile, so the
        # interpreter stays on this thread while it allocates
        born: list[Tool] = []
        interval = sys.getswitchinterval()
        sys.setswitchinterval(60.0)
        try:
            while id(born[-1] if born else None) != address and len(born) < 1_000_000:
                born.append(_declared("execute"))
        finally:
            sys.setswitchinterval(interval)
        reborn = born.pop()
        assert id(reborn) == address, "no new tool landed at the dead tool's address"
        agent.replace_tools([reborn])
        with pytest.raises(ToolRefusedError, match="no-approver"):
            await agent.call_tool("t", {"command": "touch x"})


def _function_tool(risk: RiskClass) -> Tool:
    @tool(id="t", risk=risk, permission_arg=("command", "command"))
    def made(command: str) -> str:
        """Do something with a command."""
        return f"did {command}"

    return made


def test_a_function_tool_holds_what_its_declaration_reads() -> None:
    made = _function_tool("execute")
    assert isinstance(made, FunctionTool)
    held = made.permissions
    assert held is made.permissions  # read once
    assert held == read_permissions(made)
    assert held == ToolPermissions(
        "t", "execute", PermissionArg("command", "command"), {"command"}, frozenset()
    )
    assert gate_module.tool_permissions(made) is held
    assert gate_module.tool_permissions(_declared("modify")).risk == "modify"  # read each time


def test_a_workspace_tool_holds_what_its_declaration_reads() -> None:
    from agentrig.builtins.workspace._files import WriteTool
    from agentrig.builtins.workspace._search import GrepTool

    write, grep = WriteTool(), GrepTool()
    for made in (write, grep):
        held = made.permissions
        assert held is made.permissions  # read once
        assert held == read_permissions(made)
        assert gate_module.tool_permissions(made) is held
    assert write.permissions.rule_names == {"Edit"}  # its class's family
    assert "-i" in grep.permissions.parameters  # Claude Code's aliases, as the schema shows
    assert WriteTool().permissions is not write.permissions  # another tool, its own
