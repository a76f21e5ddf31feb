"""Delegation: ``[agents.x] subagents`` offers ``delegate_<child>`` tools, ``agent.delegate``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentrig.agent import DelegationError, Lineage, agent_configs
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.ids import AgentId
from agentrig.kernel import Runtime
from agentrig.llm import ModelRequest, ToolMessage, Usage, UserMessage
from agentrig.session import SessionLineage
from agentrig.testing import Overrides, RuntimeFactory

pytestmark = pytest.mark.anyio


def _config(**agents: dict[str, Any]) -> dict[str, Any]:
    return {
        "providers": {"lead_llm": {"kind": "scripted"}, "child_llm": {"kind": "scripted"}},
        "agents": agents,
        "permissions": {"mode": "bypass"},
    }


LEAD = {"provider": "lead_llm", "model": "m", "subagents": ["reviewer"]}
REVIEWER = {"provider": "child_llm", "model": "m", "description": "Reviews a change."}


@asynccontextmanager
async def _runtime(
    factory: RuntimeFactory,
    overrides: Overrides,
    lead: ScriptedProvider,
    child: ScriptedProvider,
    config: Mapping[str, Any] | None = None,
) -> AsyncIterator[Runtime]:
    overrides.set("providers", "lead_llm", lead)
    overrides.set("providers", "child_llm", child)
    async with factory(config or _config(lead=LEAD, reviewer=REVIEWER)) as rt:
        yield rt


def _call(name: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=(ScriptedCall(name, arguments),))


def _tool_texts(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if isinstance(m, ToolMessage)]


def _prompt(request: ModelRequest) -> str:
    return [m for m in request.messages if isinstance(m, UserMessage)][-1].text


async def test_the_delegation_tool_runs_the_child_and_answers_its_final_text(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    lead = ScriptedProvider([_call("delegate_reviewer", prompt="review the patch"), "shipped"])
    child = ScriptedProvider(["looks good"])
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child) as rt:
        result = await rt.agent("lead").run("ship it")
        assert result.value == "shipped"
        assert _prompt(child.requests[0]) == "review the patch"
        assert _tool_texts(lead.requests[1]) == ["looks good"]
        spec = next(t for t in lead.requests[0].tools if t.name == "delegate_reviewer")
        assert "Reviews a change." in spec.description
        assert "prompt" in spec.parameters["properties"]
        assert rt.agents.ids() == ("lead", "reviewer")  # the child was disposed


async def test_delegate_returns_the_childs_run_result_from_a_separate_session(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    lead, child = ScriptedProvider(), ScriptedProvider(["one", "two"])
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child) as rt:
        parent = rt.agent("lead")
        first = await parent.delegate("reviewer", "first task")
        second = await parent.delegate("reviewer", "second task")
        assert (first.value, second.value) == ("one", "two")
        assert first.invocation.agent_id != second.invocation.agent_id
        assert first.invocation.agent_id.startswith("reviewer-")
        sessions = {first.invocation.session_id, second.invocation.session_id}
        assert parent.session_id not in sessions
        assert len(sessions) == 2
        assert len(parent.session) == 0  # the parent's own log is untouched
        assert len(child.requests[1].messages) == len(child.requests[0].messages)  # fresh


async def test_delegating_to_an_agent_not_listed_is_refused_with_a_hint(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    async with _runtime(
        agentrig_runtime, agentrig_overrides, ScriptedProvider(), ScriptedProvider()
    ) as rt:
        with pytest.raises(DelegationError, match="did you mean 'reviewer'") as caught:
            await rt.agent("lead").delegate("reviwer", "x")
        assert caught.value.code == "delegation.unknown_subagent"
        with pytest.raises(DelegationError, match="subagents: none"):
            await rt.agent("reviewer").delegate("lead", "x")


async def test_an_unknown_subagent_in_the_config_is_refused_naming_the_key(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    config = _config(lead={**LEAD, "subagents": ["reviewr"]}, reviewer=REVIEWER)
    with pytest.raises(ConfigError) as caught:
        async with _runtime(
            agentrig_runtime, agentrig_overrides, ScriptedProvider(), ScriptedProvider(), config
        ):
            pass
    (issue,) = caught.value.issues
    assert issue.path == ("agents", "lead", "subagents", 0)
    assert "did you mean 'reviewer'?" in issue.message


async def test_a_recursion_is_bounded_by_depth_and_reported_to_the_model(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    # a -> b -> a -> (b refused: depth 3 > 2); one provider answers all, in order
    llm = ScriptedProvider(
        [
            _call("delegate_b", prompt="p1"),  # a (depth 0)
            _call("delegate_a", prompt="p2"),  # b (depth 1)
            _call("delegate_b", prompt="p3"),  # a (depth 2): refused
            "a2 gave up",
            "b done",
            "a done",
        ]
    )
    config = _config(
        a={"provider": "lead_llm", "model": "m", "subagents": ["b"]},
        b={"provider": "lead_llm", "model": "m", "subagents": ["a"]},
    )
    config["delegation"] = {"max_depth": 2}
    async with _runtime(
        agentrig_runtime, agentrig_overrides, llm, ScriptedProvider(), config
    ) as rt:
        result = await rt.agent("a").run("go")
    assert result.value == "a done"
    (refusal,) = _tool_texts(llm.requests[3])
    assert "a -> b -> a -> b" in refusal
    assert "max_depth is 2" in refusal
    assert _tool_texts(llm.requests[4]) == ["a2 gave up"]
    assert _tool_texts(llm.requests[5]) == ["b done"]


class _Rendezvous(ScriptedProvider):
    """Answers ``re:<prompt>`` -- only once ``hold`` requests are in flight at the same time
    (sequential children would never get there); ``hold=0`` answers at once."""

    def __init__(self, hold: int, *, forever: bool = False) -> None:
        super().__init__()
        self.hold = hold
        self.forever = forever
        self.arrived = anyio.Event()
        self.cancelled = 0

    def _take(self, request: ModelRequest) -> Reply:
        return Reply(text=f"re:{_prompt(request)}")

    async def stream(self, request: ModelRequest, *, signal: Any) -> AsyncIterator[Any]:
        self.requests.append(request)
        if len(self.requests) >= self.hold:
            self.arrived.set()
        try:
            with signal.scope():
                await self.arrived.wait()
                if self.forever:
                    await anyio.sleep_forever()
            signal.raise_if_cancelled()
        except BaseException:  # the child's run was cancelled (by its signal or its scope)
            self.cancelled += 1
            raise
        async for chunk in super().stream(request, signal=signal):
            yield chunk


def _three_calls() -> Reply:
    return Reply(
        tool_calls=tuple(
            ScriptedCall("delegate_reviewer", {"prompt": p}, f"call-{p}") for p in "abc"
        )
    )


async def test_parallel_delegations_run_concurrently_and_answer_in_call_order(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    lead = ScriptedProvider([_three_calls(), "all reviewed"])
    child = _Rendezvous(hold=3)
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child) as rt:
        with anyio.fail_after(10):
            result = await rt.agent("lead").run("review three")
        assert result.value == "all reviewed"
        assert _tool_texts(lead.requests[1]) == ["re:a", "re:b", "re:c"]
        assert rt.agents.ids() == ("lead", "reviewer")


async def test_cancelling_the_parent_mid_way_cancels_three_parallel_children(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    lead = ScriptedProvider([_three_calls(), "never"])
    child = _Rendezvous(hold=3, forever=True)
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child) as rt:
        parent = rt.agent("lead")
        async with anyio.create_task_group() as tg:

            async def cancel_when_all_run() -> None:
                await child.arrived.wait()
                parent.cancel("user left")

            tg.start_soon(cancel_when_all_run)
            with anyio.fail_after(10):
                result = await parent.run("review three")
        assert result.interrupted
        assert child.cancelled == 3
        calls = [m for m in parent.session.derive_messages() if isinstance(m, ToolMessage)]
        assert [m.call_id for m in calls] == ["call-a", "call-b", "call-c"]
        assert rt.agents.ids() == ("lead", "reviewer")


async def test_a_childs_session_records_its_lineage_and_resume_restores_it(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    config = _config(lead=LEAD, reviewer={**REVIEWER, "session_store": "disk"})
    config["session_stores"] = {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}}
    lead, child = ScriptedProvider(), ScriptedProvider(["fine"])
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child, config) as rt:
        parent = rt.agent("lead")
        assert parent.lineage == Lineage()
        done = await parent.delegate("reviewer", "look")
        resumed = await rt.agents.resume(
            done.invocation.session_id,
            agent_id="again",
            config=agent_configs(rt.loaded)[AgentId("reviewer")],
        )
        first = resumed.session.events[0].data
        assert isinstance(first, SessionLineage)
        assert resumed.lineage == Lineage(
            origin="delegated",
            parent_agent=parent.id,
            parent_session=parent.session_id,
            depth=1,
            configured_as=AgentId("reviewer"),
        )


def test_a_lineage_is_consistent() -> None:
    with pytest.raises(ValueError, match="names its parent"):
        Lineage(origin="delegated", depth=1)
    with pytest.raises(ValueError, match="names its parent"):
        Lineage(parent_agent=AgentId("x"), depth=0)


async def test_usage_rolls_up_to_the_parents_record_and_stays_per_child(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    calls = Reply(
        tool_calls=(
            ScriptedCall("delegate_reviewer", {"prompt": "one"}, "c1"),
            ScriptedCall("delegate_reviewer", {"prompt": "two"}, "c2"),
        ),
        usage=Usage.of(100, 10),
    )
    lead = ScriptedProvider([calls, Reply(text="ok", usage=Usage.of(200, 20))])
    child = ScriptedProvider([Reply(text="r", usage=Usage.of(7, 3))] * 2)
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child) as rt:
        record = (await rt.agent("lead").run("go")).invocation
    assert record.usage is not None
    assert (record.usage.prompt, record.usage.completion) == (300, 30)  # its own
    assert len(record.subagents) == 2
    for sub in record.subagents:
        assert sub.usage is not None
        assert (sub.usage.prompt, sub.usage.completion) == (7, 3)
    total = record.total_usage
    assert total is not None
    assert (total.prompt, total.completion) == (314, 36)


async def test_fan_out_beyond_max_children_is_an_error_result_for_that_call_only(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    lead = ScriptedProvider([_three_calls(), "two of three"])
    child = _Rendezvous(hold=2)
    config = _config(lead=LEAD, reviewer=REVIEWER)
    config["delegation"] = {"max_children": 2}
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child, config) as rt:
        with anyio.fail_after(10):
            result = await rt.agent("lead").run("review three")
        assert result.value == "two of three"
        first, second, third = _tool_texts(lead.requests[1])
        assert (first, second) == ("re:a", "re:b")
        assert "max_children is 2" in third
        assert rt.agent("lead").delegations.active == 0


async def test_cancelling_delegate_s_signal_interrupts_the_child_and_disposes_it(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    child = _Rendezvous(hold=1, forever=True)
    async with _runtime(agentrig_runtime, agentrig_overrides, ScriptedProvider(), child) as rt:
        signal = CancelSignal()
        async with anyio.create_task_group() as tg:

            async def cancel_when_running() -> None:
                await child.arrived.wait()
                signal.cancel("enough")

            tg.start_soon(cancel_when_running)
            with anyio.fail_after(10):
                result = await rt.agent("lead").delegate("reviewer", "slow task", signal=signal)
        assert result.interrupted
        assert child.cancelled == 1
        assert rt.agents.ids() == ("lead", "reviewer")
        assert rt.agent("lead").delegations.running == set()


async def test_a_child_past_its_own_deadline_is_a_timeout_error_for_the_parent(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    lead = ScriptedProvider([_call("delegate_reviewer", prompt="review"), "went on"])
    child = ScriptedProvider([Reply(text="never arrives", delay=3600)])
    reviewer = {**REVIEWER, "deadline": "50ms"}
    config = _config(lead=LEAD, reviewer=reviewer)
    async with _runtime(agentrig_runtime, agentrig_overrides, lead, child, config) as rt:
        with anyio.fail_after(10):
            result = await rt.agent("lead").run("ship it")
        assert result.value == "went on"
        assert result.invocation.outcome == "completed"  # the parent's own run went on
        (text,) = _tool_texts(lead.requests[1])
        assert text.startswith("delegation.timeout: delegation to 'reviewer' ended timeout")
        (child_record,) = result.invocation.subagents
        assert child_record.outcome == "timeout"
