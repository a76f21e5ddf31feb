"""The inbox: followup / steer / inject delivery, durable splices, duplicate ids and the
effect of cancel() on queued input."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from agentloop_support import (
    EnvFactory,
    Gate,
    check_invariant,
    events,
    request_texts,
    texts,
)

import agentrig
from agentrig.agent import Agent, Inbox, InboxError
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptExhaustedError
from agentrig.lifecycle import TurnStopping
from agentrig.llm import UserMessage
from agentrig.session import InboxSpliced

pytestmark = pytest.mark.anyio


def turn_triggers(agent: Agent) -> list[str]:
    return [t.trigger for t in events(agent, "turn/start")]


def boundaries(agent: Agent) -> list[str]:
    return [
        f"{e.type}:{e.data.turn}"
        for e in agent.session.events
        if e.type in ("turn/start", "turn/end")
    ]


async def test_followup_queues_its_own_turn_after_the_current_one(env: EnvFactory) -> None:
    gate = Gate()
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("gate"),)),
        "first answer",
        "followup answer",
    ]
    async with env(script, tools=[gate.tool]) as e:
        agent = e.agent
        async with anyio.create_task_group() as tg:
            results: list[str] = []

            async def run() -> None:
                results.append((await agent.run("first")).value)

            tg.start_soon(run)
            await gate.entered.wait()
            message_id = agent.followup("and then this")
            assert agent.inbox.pending("next-turn")[0].id == message_id
            gate.release.set()
        await agent.when_idle()
        assert results == ["first answer"]
        assert turn_triggers(agent) == ["prompt", "followup"]
        # its own turn, strictly after the first one closed
        assert boundaries(agent) == ["turn/start:1", "turn/end:1", "turn/start:2", "turn/end:2"]
        assert len(e.provider.requests) == 3
        assert request_texts(e.provider.requests[2])[-2:] == [
            "assistant:first answer",
            "user:and then this",
        ]
        assert not agent.inbox.has("next-turn")
        check_invariant(agent)


async def test_followup_on_an_idle_agent_starts_a_turn(env: EnvFactory) -> None:
    async with env(["answer"]) as e:
        e.agent.followup("hello")
        assert e.agent.status == "running"
        await e.agent.when_idle()
        assert turn_triggers(e.agent) == ["followup"]
        assert texts(e.agent.session.derive_messages()) == ["user:hello", "assistant:answer"]


async def test_a_failed_queued_turn_is_logged_and_the_agent_goes_on(
    env: EnvFactory, caplog: pytest.LogCaptureFixture
) -> None:
    # nobody awaits a followup's turn: its failure must not vanish
    async with env([]) as e:  # an empty script: the followup's model call fails
        with caplog.at_level(logging.WARNING, logger="agentrig.agent"):
            e.agent.followup("first")
            await e.agent.when_idle()
        (record,) = [r for r in caplog.records if r.name == "agentrig.agent"]
        assert record.getMessage() == "agent 'assistant': a queued followup turn failed"
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], ScriptExhaustedError)
        assert events(e.agent, "turn/end")[-1].reason == "failed"
        e.provider.add("second answer")
        result = await e.agent.run("again")  # the agent is not stuck
        assert result.value == "second answer"


async def test_followups_run_in_order_each_as_its_own_turn(env: EnvFactory) -> None:
    async with env(["one", "two", "three"]) as e:
        for text in ("a", "b", "c"):
            e.agent.followup(text)
        await e.agent.when_idle()
        assert turn_triggers(e.agent) == ["followup"] * 3
        assert texts(e.agent.session.derive_messages()) == [
            "user:a",
            "assistant:one",
            "user:b",
            "assistant:two",
            "user:c",
            "assistant:three",
        ]


async def test_steer_during_a_turn_enters_at_the_next_step(env: EnvFactory) -> None:
    gate = Gate()
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("gate"),)), "steered answer"]
    async with env(script, tools=[gate.tool]) as e:
        agent = e.agent
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run, "start")
            await gate.entered.wait()
            agent.steer("focus on X")
            gate.release.set()
        # one turn; the steer entered its second step, after the tool result
        assert turn_triggers(agent) == ["prompt"]
        assert request_texts(e.provider.requests[1])[-3:] == [
            "assistant:[gate]",
            "tool:gate=opened",
            "user:focus on X",
        ]
        steering = events(agent, "steering/message")
        assert [s.message.text for s in steering] == ["focus on X"]
        types = [ev.type for ev in agent.session.events]
        steer_at = types.index("steering/message")
        assert types[steer_at - 1] == "step/start"
        assert not agent.inbox.has("next-step")
        check_invariant(agent)


class SteerOnStop:
    """A turn_stopping listener that steers the agent ``times`` times."""

    def __init__(self, times: int = 1) -> None:
        self.times = times
        self.calls: list[tuple[int, str | None]] = []

    @agentrig.hookimpl
    async def turn_stopping(self, payload: TurnStopping) -> None:
        last = payload.last_message.text if payload.last_message is not None else None
        self.calls.append((payload.turn, last))
        await anyio.lowlevel.checkpoint()
        if len(self.calls) <= self.times:
            payload.agent.steer(f"keep going {len(self.calls)}")


@pytest.mark.parametrize("times", [0, 1, 2])
async def test_turn_stopping_steer_runs_another_step_and_redrains(
    env: EnvFactory, times: int
) -> None:
    listener = SteerOnStop(times)
    answers = [f"answer {i}" for i in range(times + 1)]
    async with env(answers, plugins={"steer": listener}) as e:
        result = await e.agent.run("go")
        assert result.value == answers[-1]
        # awaited once per stopping point; each steer ran one more step in the same turn
        assert listener.calls == [(1, a) for a in answers]
        assert len(e.provider.requests) == times + 1
        assert turn_triggers(e.agent) == ["prompt"]
        assert len(events(e.agent, "step/start")) == times + 1
        assert [s.message.text for s in events(e.agent, "steering/message")] == [
            f"keep going {i}" for i in range(1, times + 1)
        ]
        assert e.agent.status == "idle"


async def test_steer_landing_after_the_last_drain_still_gets_a_turn(env: EnvFactory) -> None:
    # A steer can arrive at any instant while the agent runs -- including after the turn's
    # final steering drain.  It must not be stranded in the inbox of an idle agent.
    async with env(["first", "second"]) as e:
        agent = e.agent
        steered: list[str] = []

        def on_event(event: Any) -> None:
            if event.type == "turn/end" and not steered:
                steered.append(agent.steer("late steer"))

        agent.session.subscribe(on_event)
        assert (await agent.run("go")).value == "first"
        await agent.when_idle()
        assert steered
        assert not agent.inbox.has("next-step")
        assert turn_triggers(agent) == ["prompt", "steer"]
        assert texts(agent.session.derive_messages())[-2:] == [
            "user:late steer",
            "assistant:second",
        ]


async def test_inject_seeds_context_without_starting_a_turn(env: EnvFactory) -> None:
    async with env(["answer"]) as e:
        agent = e.agent
        message_id = agent.inject("the user's name is Ada")
        assert agent.status == "idle"
        await anyio.lowlevel.checkpoint()
        assert agent.status == "idle"
        assert events(agent, "turn/start") == []
        assert e.provider.requests == []
        assert [m.id for m in agent.inbox.pending("next-step")] == [message_id]
        await agent.run("what is my name?")
        sent = request_texts(e.provider.requests[0])
        assert "user:the user's name is Ada" in sent
        assert "user:what is my name?" in sent
        assert not agent.inbox.has("next-step")
        assert turn_triggers(agent) == ["prompt"]


def _ops() -> list[tuple[str, Callable[[Inbox, list[UserMessage]], Any], dict[str, Any]]]:
    return [
        (
            "replace",
            lambda inbox, m: inbox.replace(m[1].id, m[3]),
            {"target": "next-step", "removed": ("m1",), "inserted": ("m3",)},
        ),
        (
            "remove",
            lambda inbox, m: inbox.remove(m[0].id),
            {"target": "next-turn", "removed": ("m0",), "inserted": ()},
        ),
        (
            "clear",
            lambda inbox, m: inbox.clear("next-step"),
            {"target": "next-step", "removed": ("m1", "m2"), "inserted": ()},
        ),
        (
            "claim",
            lambda inbox, m: inbox.claim(turn_boundary=False),
            {"target": "next-step", "removed": ("m1", "m2"), "inserted": ()},
        ),
        (
            "prepend",
            lambda inbox, m: inbox.prepend("next-turn", m[3]),
            {"target": "next-turn", "removed": (), "inserted": ("m3",)},
        ),
    ]


@pytest.mark.parametrize(("cause", "op", "expected"), _ops(), ids=[o[0] for o in _ops()])
async def test_each_inbox_mutation_logs_a_splice(
    env: EnvFactory,
    cause: str,
    op: Callable[[Inbox, list[UserMessage]], Any],
    expected: dict[str, Any],
) -> None:
    async with env() as e:
        agent = e.agent
        inbox = agent.inbox
        msgs = [UserMessage(id=f"m{i}", content=UserMessage.of(f"t{i}").content) for i in range(4)]
        inbox.append("next-turn", msgs[0])
        inbox.append("next-step", msgs[1])
        inbox.append("next-step", msgs[2])
        before = len(events(agent, "agent/inbox/spliced"))
        op(inbox, msgs)
        splices = events(agent, "agent/inbox/spliced")[before:]
        assert len(splices) == 1
        splice = splices[0]
        assert isinstance(splice, InboxSpliced)
        assert splice.cause == cause
        assert splice.target == expected["target"]
        assert splice.removed == expected["removed"]
        assert tuple(m.id for m in splice.inserted) == expected["inserted"]
        # the pending queues can be rebuilt from the splices alone
        rebuilt = Inbox(lambda _event: None)
        for event in events(agent, "agent/inbox/spliced"):
            rebuilt.restore(event)
        for target in ("next-turn", "next-step"):
            assert rebuilt.pending(target) == inbox.pending(target)  # type: ignore[arg-type]


async def test_claim_at_a_turn_boundary_takes_one_next_turn_message_first(env: EnvFactory) -> None:
    async with env() as e:
        inbox = e.agent.inbox
        a, b, s = UserMessage.of("a"), UserMessage.of("b"), UserMessage.of("s")
        inbox.append("next-turn", a)
        inbox.append("next-turn", b)
        inbox.append("next-step", s)
        assert inbox.claim(turn_boundary=True) == (a, s)
        assert inbox.pending("next-turn") == (b,)
        assert inbox.claim(turn_boundary=False) == ()


async def test_duplicate_pending_id_is_refused(env: EnvFactory) -> None:
    async with env() as e:
        agent = e.agent
        message = UserMessage.of("once")
        agent.inject(message)
        spliced = len(events(agent, "agent/inbox/spliced"))
        for deliver in (agent.inject, agent.followup, agent.steer):
            with pytest.raises(InboxError, match="already pending"):
                deliver(message)
        with pytest.raises(InboxError):
            agent.inbox.append("next-turn", message)
        other = UserMessage.of("other")
        agent.inbox.append("next-step", other)
        with pytest.raises(InboxError):
            agent.inbox.replace(other.id, message)
        assert agent.inbox.pending("next-step") == (message, other)
        assert agent.inbox.pending("next-turn") == ()
        # refusals log nothing
        assert len(events(agent, "agent/inbox/spliced")) == spliced + 1
        assert agent.status == "idle"
        with pytest.raises(InboxError, match="not pending"):
            agent.inbox.remove("msg-unknown")


@pytest.mark.parametrize("keep_queued", [False, True])
async def test_cancel_discards_queued_input_unless_kept(env: EnvFactory, keep_queued: bool) -> None:
    gate = Gate()
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("gate"),)), "queued answer"]
    async with env(script, tools=[gate.tool]) as e:
        agent = e.agent
        results: list[Any] = []

        async def run() -> None:
            results.append(await agent.run("first"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await gate.entered.wait()
            agent.followup("queued turn")
            agent.inject("queued context")
            assert agent.cancel("user pressed stop", keep_queued=keep_queued) is True
        await agent.when_idle()
        assert results[0].interrupted
        causes = [s.cause for s in events(agent, "agent/inbox/spliced")]
        if keep_queued:
            assert "clear" not in causes
            # the queued turn survived and ran afterwards (carrying the injected context)
            assert turn_triggers(agent) == ["prompt", "followup"]
            assert request_texts(e.provider.requests[-1])[-2:] == [
                "user:queued turn",
                "user:queued context",
            ]
        else:
            assert "clear" in causes
            assert turn_triggers(agent) == ["prompt"]
            assert len(e.provider.requests) == 1
        assert len(agent.inbox) == 0
        check_invariant(agent)


async def test_cancel_on_an_idle_agent_clears_the_inbox(env: EnvFactory) -> None:
    async with env() as e:
        e.agent.inject("stale")
        assert e.agent.cancel() is False  # nothing was running
        assert len(e.agent.inbox) == 0
        assert events(e.agent, "agent/inbox/spliced")[-1].cause == "clear"


async def test_steer_on_an_idle_agent_starts_a_turn(env: EnvFactory) -> None:
    async with env(["steered"]) as e:
        e.agent.steer("look at this")
        assert e.agent.status == "running"
        await e.agent.when_idle()
        assert turn_triggers(e.agent) == ["steer"]
        assert [s.message.text for s in events(e.agent, "steering/message")] == ["look at this"]
        assert texts(e.agent.session.derive_messages()) == [
            "user:look at this",
            "assistant:steered",
        ]
