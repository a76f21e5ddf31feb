"""A suspension in a run without an execution journal: the turn still ends ``suspended``
(it is no failure), but nothing could ever continue the pending calls, so they are settled
"not executed" and the session stays sendable -- the next prompt works.  (With a journal the
calls stay pending for continuation: tests/journal/test_journal_suspend.py.)"""

from __future__ import annotations

import pytest
from agentloop_support import EnvFactory, check_invariant, events

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.lifecycle import ExecutionSuspended, PermissionQuestion
from agentrig.tools import tool

pytestmark = pytest.mark.anyio


class Waits:
    @agentrig.hookimpl
    async def permission_approver(self, payload: PermissionQuestion) -> str:
        raise ExecutionSuspended(f"waiting for an answer on call {payload.call_id!r}")


@tool(risk="inspect")
def look(key: str) -> str:
    """Read something."""
    return f"looked at {key}"


@tool(risk="inspect")
def approve_me(key: str) -> str:
    """Something a person approves first."""
    return f"approved {key}"


async def test_without_a_journal_the_pending_calls_are_settled_and_the_next_prompt_works(
    env: EnvFactory,
) -> None:
    calls = (
        ScriptedCall("look", {"key": "a"}, id="call_a"),
        ScriptedCall("approve_me", {"key": "b"}, id="call_b"),
        ScriptedCall("look", {"key": "c"}, id="call_c"),
    )
    script: list[Reply | str] = [Reply(tool_calls=calls), "next answer"]
    async with env(
        script,
        tools=[look, approve_me],
        plugins={"waits": Waits()},
        config={"permissions": {"mode": "default", "ask": ["approve_me"]}},
    ) as e:
        assert not e.agent.journaled
        with pytest.raises(ExecutionSuspended):
            await e.agent.run("go")
        results = [r.message for r in events(e.agent, "tool/result")]
        assert [(m.call_id, m.status) for m in results] == [
            ("call_a", "ok"),
            ("call_b", "not_executed"),
            ("call_c", "not_executed"),
        ]
        assert "without an execution journal" in results[1].text
        end = events(e.agent, "turn/end")[-1]
        assert (end.reason, end.error) == ("suspended", None)
        assert "call_b" in str(end.detail)
        check_invariant(e.agent)
        result = await e.agent.run("and now?")
        assert result.value == "next answer"
        check_invariant(e.agent)
