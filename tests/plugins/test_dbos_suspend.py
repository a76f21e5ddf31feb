"""agentrig-dbos: a durable run that suspends for an approval lets the calls already running
beside the waiting one finish (real DBOS on its SQLite default, in this process).

One reply makes three calls: A (read-only, still running when B is asked about), B (an
``ask`` rule: the durable approver suspends the run) and C (read-only, gated after B: not
started).  While the run waits, A's result is saved in the journal and the session, B and C
have none, and the turn ended ``suspended``; the approval's link runs B and C exactly once.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from _durable_support import config, session_problems
from agentrig_dbos import DURABLE, UnknownRunError

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import EntryId
from agentrig.kernel import MemorySource, open_runtime
from agentrig.lifecycle import PermissionQuestion
from agentrig.plugin import SESSION_STORES
from agentrig.tools import tool

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # durable runs are asyncio-only (DBOS)


class Asked:
    """Sees each permission question before the durable approver answers (or suspends)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.event = anyio.Event()

    @agentrig.hookimpl(tryfirst=True)
    def permission_approver(self, payload: PermissionQuestion) -> None:
        self.calls.append(str(payload.call_id))
        self.event.set()


def tools(release: anyio.Event, ran: list[str]) -> list[Any]:
    @tool(id="slow", risk="inspect")
    async def slow(key: str) -> str:
        """Read something slowly."""
        ran.append(f"slow:{key}")
        await release.wait()
        return f"slow {key} done"

    @tool(id="approve_me", risk="inspect")
    def approve_me(key: str) -> str:
        """Something a person approves first."""
        ran.append(f"approve_me:{key}")
        return f"approved {key} ran"

    @tool(id="after", risk="inspect")
    def after(key: str) -> str:
        """Runs after the waiting call."""
        ran.append(f"after:{key}")
        return f"after {key} ran"

    return [slow, approve_me, after]


async def wait_for_question(durable: Any, run_id: str) -> dict[str, Any]:
    with anyio.fail_after(60):
        while True:
            with contextlib.suppress(UnknownRunError):  # not started yet
                question = await durable.question(run_id)
                if question is not None:
                    return dict(question)
            await anyio.sleep(0.1)


@pytest.mark.slow
async def test_a_waiting_call_lets_its_running_sibling_finish_and_the_rest_run_once(
    tmp_path: Path,
) -> None:
    release = anyio.Event()
    ran: list[str] = []
    memory = MemorySource()
    made = tools(release, ran)
    for item in made:
        memory.add("tools", item.id, item)
    settings = config(tmp_path, permissions={"mode": "default", "ask": ["approve_me"]})
    settings["tools"] = {item.id: {} for item in made}
    settings["agents"]["assistant"]["tools"] = [item.id for item in made]
    calls = (
        ScriptedCall("slow", {"key": "a"}, id="call_a"),
        ScriptedCall("approve_me", {"key": "b"}, id="call_b"),
        ScriptedCall("after", {"key": "c"}, id="call_c"),
    )
    provider = ScriptedProvider([Reply(tool_calls=calls), Reply(text="done")])
    asked = Asked()
    async with open_runtime(
        settings, memory=memory, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        asked = Asked()
        rt.add_plugin("asked", asked)  # after the durable approver: asked before it
        durable = rt.services.require(DURABLE)
        store = rt.catalog(SESSION_STORES).require(EntryId("store"))
        finished: list[str] = []
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:

                async def run() -> None:
                    finished.append((await durable.run("assistant", "go", run_id="s1")).text)

                async def free_a_once_b_is_asked() -> None:
                    await asked.event.wait()  # B's question: the run suspends while A runs
                    release.set()

                tg.start_soon(run)
                tg.start_soon(free_a_once_b_is_asked)
                question = await wait_for_question(durable, "s1")
                assert question["call_id"] == "call_b"
                assert await durable.status("s1") == "WAITING"
                await check_waiting(durable, store, ran)
                await durable.approve("s1", "call_b", allow=True)
        assert finished == ["done"]
        assert ran == ["slow:a", "approve_me:b", "after:c"]  # each exactly once
        assert asked.calls == ["call_b", "call_b"]  # asked again in the link, answered
        assert await session_problems(store, "ses-s1") == []
        events = (await store.load("ses-s1")).events
        assert [e.data.reason for e in events if e.type == "turn/end"] == [
            "suspended",
            "completed",
        ]


async def check_waiting(durable: Any, store: Any, ran: list[str]) -> None:
    """While the run waits: A finished and is saved; B and C are pending; turn suspended."""
    assert ran == ["slow:a"]
    events = (await store.load("ses-s1")).events
    results = {
        e.data.message.call_id: e.data.message.text for e in events if e.type == "tool/result"
    }
    assert results == {"call_a": "slow a done"}
    started = [e.data.call.id for e in events if e.type == "tool/call"]
    assert started == ["call_a", "call_b"]  # C never started
    ends = [e.data for e in events if e.type == "turn/end"]
    assert [(end.reason, end.error) for end in ends] == [("suspended", None)]
    assert "call_b" in str(ends[0].detail)
    [execution] = await durable.journal.executions()
    state = await durable.journal.load(execution.run_id)
    assert state is not None
    settled = {i: e.result.message.text for i, e in state.effects.items() if e.result}
    assert settled == {"m1/call_a": "slow a done"}
    assert set(state.effects) == {"m1/call_a"}  # no effect of B or C started
