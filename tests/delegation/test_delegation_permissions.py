"""A child's calls pass the same permission order as its parent's: same mode and rules (a
child is never wider), the same approver, which is told which child asks."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.kernel import MemorySource
from agentrig.lifecycle import PermissionQuestion
from agentrig.llm import ToolMessage
from agentrig.plugin import hookimpl
from agentrig.testing import Overrides, RuntimeFactory
from agentrig.tools import tool

pytestmark = pytest.mark.anyio

WRITTEN: list[str] = []


@tool(id="Write", risk="modify")
def write(path: str) -> str:
    """Write a file (a test double: records the path)."""
    WRITTEN.append(path)
    return f"wrote {path}"


class Person:
    """The approver: records every question and answers ``answer``."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[PermissionQuestion] = []

    @hookimpl
    def permission_approver(self, payload: PermissionQuestion) -> str:
        self.asked.append(payload)
        return self.answer


async def _run(
    factory: RuntimeFactory,
    entries: MemorySource,
    overrides: Overrides,
    permissions: dict[str, Any],
    person: Person,
) -> tuple[list[str], Any]:
    WRITTEN.clear()
    entries.add("tools", "Write", write)
    lead = ScriptedProvider(
        [Reply(tool_calls=(ScriptedCall("delegate_writer", {"prompt": "write a"}, "d1"),)), "ok"]
    )
    child = ScriptedProvider([Reply(tool_calls=(ScriptedCall("Write", {"path": "a"}, "w1"),)), "x"])
    overrides.set("providers", "lead_llm", lead)
    overrides.set("providers", "child_llm", child)
    config = {
        "providers": {"lead_llm": {"kind": "scripted"}, "child_llm": {"kind": "scripted"}},
        "agents": {
            "lead": {"provider": "lead_llm", "model": "m", "subagents": ["writer"]},
            "writer": {"provider": "child_llm", "model": "m", "tools": ["Write"]},
        },
        "permissions": permissions,
    }
    async with factory(config, plugins={"person": person}) as rt:
        result = await rt.agent("lead").run("go")
    answers = [m.text for m in child.requests[1].messages if isinstance(m, ToolMessage)]
    return answers, result


async def test_a_childs_call_reaches_the_same_approver_naming_the_child(
    agentrig_runtime: RuntimeFactory, agentrig_entries: MemorySource, agentrig_overrides: Overrides
) -> None:
    person = Person("allow")
    answers, result = await _run(
        agentrig_runtime, agentrig_entries, agentrig_overrides, {"mode": "default"}, person
    )
    assert result.value == "ok"
    (question,) = person.asked  # the delegation itself (inspect) is not asked about
    assert question.tool == "Write"
    assert question.agent_id is not None
    assert question.agent_id.startswith("writer-")
    assert WRITTEN == ["a"]
    assert answers == ["wrote a"]


async def test_the_parents_rules_bind_the_child(
    agentrig_runtime: RuntimeFactory, agentrig_entries: MemorySource, agentrig_overrides: Overrides
) -> None:
    person = Person("allow")
    answers, _ = await _run(
        agentrig_runtime,
        agentrig_entries,
        agentrig_overrides,
        {"mode": "accept-edits", "deny": ["Write"]},
        person,
    )
    assert WRITTEN == []
    assert person.asked == []
    assert "denied" in answers[0].lower()


async def test_plan_mode_refuses_the_childs_edit_too(
    agentrig_runtime: RuntimeFactory, agentrig_entries: MemorySource, agentrig_overrides: Overrides
) -> None:
    person = Person("allow")
    answers, _ = await _run(
        agentrig_runtime, agentrig_entries, agentrig_overrides, {"mode": "plan"}, person
    )
    assert WRITTEN == []
    assert "plan mode" in answers[0]
