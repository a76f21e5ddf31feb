"""Handoff: ``[agents.x] handoffs`` offers ``transfer_to_<target>``; the target takes over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentrig.agent import DelegationError, Lineage
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.errors import ConfigError
from agentrig.kernel import Runtime
from agentrig.llm import TextDelta, ToolMessage, Usage, UserMessage
from agentrig.session import SessionLineage, TurnEnd
from agentrig.testing import Overrides, RuntimeFactory

pytestmark = pytest.mark.anyio

TRIAGE = {"provider": "front", "model": "m", "handoffs": ["billing"]}
BILLING = {
    "provider": "back",
    "model": "m",
    "description": "Answers questions about invoices.",
    "system_prompt": "You handle billing.",
}


def _config(**agents: dict[str, Any]) -> dict[str, Any]:
    return {
        "providers": {"front": {"kind": "scripted"}, "back": {"kind": "scripted"}},
        "agents": agents or {"triage": TRIAGE, "billing": BILLING},
        "permissions": {"mode": "bypass"},
    }


def _transfer(target: str = "billing", usage: Usage | None = None) -> Reply:
    return Reply(tool_calls=(ScriptedCall(f"transfer_to_{target}", {}),), usage=usage)


@asynccontextmanager
async def _runtime(
    factory: RuntimeFactory,
    overrides: Overrides,
    front: ScriptedProvider,
    back: ScriptedProvider,
    config: dict[str, Any] | None = None,
) -> AsyncIterator[Runtime]:
    overrides.set("providers", "front", front)
    overrides.set("providers", "back", back)
    async with factory(config or _config()) as rt:
        yield rt


async def test_the_target_takes_over_the_conversation_and_answers_the_run(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    front = ScriptedProvider([_transfer(usage=Usage(prompt=5, completion=1, total=6))])
    back = ScriptedProvider(
        [Reply(text="Refunded the second charge.", usage=Usage(prompt=9, completion=4, total=13))]
    )
    async with _runtime(agentrig_runtime, agentrig_overrides, front, back) as rt:
        triage = rt.agent("triage")
        offered = {str(tool.id): tool for tool in triage.offered_tools()}
        assert "Answers questions about invoices." in offered["transfer_to_billing"].description
        result = await triage.run("I was charged twice")
        assert result.value == "Refunded the second charge."
        record = result.invocation
        assert record.agent_id == "triage"
        assert record.handoff is not None
        assert record.final_agent == record.handoff.agent_id == "billing-1"
        assert record.total_usage == Usage(prompt=14, completion=5, total=19)
        # the target saw the whole conversation: the user's words and the transfer
        (request,) = back.requests
        assert request.messages[0].role == "system"
        assert request.messages[0].text == "You handle billing."
        assert any(
            isinstance(m, UserMessage) and m.text == "I was charged twice" for m in request.messages
        )
        transfer = [m for m in request.messages if isinstance(m, ToolMessage)]
        assert [m.text for m in transfer] == ["Transferred to billing; it answers from here."]
        # triage's turn ended at the transfer; the target is live and holds the conversation
        assert isinstance(triage.session.events[-1].data, TurnEnd)
        billing = rt.agents.get(record.final_agent)
        assert billing is not None
        assert billing.lineage == Lineage(
            origin="handoff",
            parent_agent=triage.id,
            parent_session=triage.session_id,
            depth=1,
            configured_as=billing.lineage.configured_as,
            fork_point=billing.lineage.fork_point,
        )
        assert billing.lineage.configured_as == "billing"
        lineage = [e.data for e in billing.session.events if isinstance(e.data, SessionLineage)]
        assert [x.origin for x in lineage] == ["handoff"]
        # the conversation goes on with the agent that took over
        back.add("You are welcome.")
        assert (await billing.run("Thanks")).value == "You are welcome."


async def test_a_streamed_run_streams_the_targets_answer(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    front = ScriptedProvider([_transfer()])
    back = ScriptedProvider(["Refunded the second charge."])
    async with _runtime(agentrig_runtime, agentrig_overrides, front, back) as rt:
        stream = rt.agent("triage").stream("I was charged twice")
        texts = [chunk.text async for chunk in stream if isinstance(chunk, TextDelta)]
        assert "".join(texts) == "Refunded the second charge."
        assert stream.result is not None
        assert stream.result.value == "Refunded the second charge."


async def test_a_handoff_chain_is_bounded_by_max_depth(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    config = _config(triage=TRIAGE, billing={**BILLING, "handoffs": ["triage"]})
    config["delegation"] = {"max_depth": 1}
    front = ScriptedProvider([_transfer()])
    # billing tries to hand back: too deep, so the call is refused and billing answers
    back = ScriptedProvider([_transfer("triage"), "I will handle it myself."])
    async with _runtime(agentrig_runtime, agentrig_overrides, front, back, config) as rt:
        result = await rt.agent("triage").run("I was charged twice")
        assert result.value == "I will handle it myself."
        refused = [m for m in back.requests[-1].messages if isinstance(m, ToolMessage)]
        assert "delegation.depth" in refused[-1].text
        assert "triage -> billing -> triage" in refused[-1].text
        assert refused[-1].status == "error"


async def test_a_structured_run_refuses_to_hand_off(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        text: str

    front = ScriptedProvider([_transfer()])
    back = ScriptedProvider(["never asked"])
    async with _runtime(agentrig_runtime, agentrig_overrides, front, back) as rt:
        with pytest.raises(DelegationError) as caught:
            await rt.agent("triage").run("I was charged twice", output_type=Answer)
        assert caught.value.code == "delegation.handoff_structured"
        assert back.requests == []


async def test_an_unknown_handoff_target_is_refused_at_its_key_path(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    config = _config(triage={**TRIAGE, "handoffs": ["billin"]}, billing=BILLING)
    with pytest.raises(ConfigError) as caught:
        async with _runtime(
            agentrig_runtime, agentrig_overrides, ScriptedProvider([]), ScriptedProvider([]), config
        ) as rt:
            rt.agent("triage")
    assert "agents.triage.handoffs[0]" in str(caught.value)
    assert "did you mean 'billing'?" in str(caught.value)


async def test_a_stored_target_session_starts_with_the_conversation_and_its_lineage(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides, tmp_path: Path
) -> None:
    config = _config(
        triage={**TRIAGE, "session_store": "store"}, billing={**BILLING, "session_store": "store"}
    )
    config["session_stores"] = {"store": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}}
    front = ScriptedProvider([_transfer()])
    back = ScriptedProvider(["Refunded."])
    async with _runtime(agentrig_runtime, agentrig_overrides, front, back, config) as rt:
        triage = rt.agent("triage")
        result = await triage.run("I was charged twice")
        billing = rt.agents.get(result.invocation.final_agent)
        assert billing is not None
        sid = billing.session_id
        await rt.agents.dispose(billing.id)
        resumed = await rt.agents.resume(sid, agent_id="billing-again", config=billing.config)
        assert resumed.lineage.origin == "handoff"
        assert resumed.lineage.parent_session == triage.session_id
        texts = [m.text for m in resumed.session.derive_messages() if m.role != "system"]
        assert texts[0] == "I was charged twice"
        assert texts[-1] == "Refunded."


async def test_turn_observations_name_the_agent_that_handed_over(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    from agentrig import hookimpl

    class Turns:
        def __init__(self) -> None:
            self.seen: list[dict[str, Any]] = []

        @hookimpl
        def observe(self, payload: Any) -> None:
            if payload.kind == "turn":
                self.seen.append(dict(payload.data))

    turns = Turns()
    agentrig_overrides.set("providers", "front", ScriptedProvider([_transfer()]))
    agentrig_overrides.set("providers", "back", ScriptedProvider(["Refunded."]))
    async with agentrig_runtime(_config(), plugins={"turns": turns}) as rt:
        triage = rt.agent("triage")
        await triage.run("I was charged twice")
    lineages = [(t["origin"], t["parent_agent"], t["parent_session"]) for t in turns.seen]
    assert lineages == [("created", None, None), ("handoff", "triage", triage.session_id)]


async def test_a_queued_turn_hands_off_too_and_a_later_run_is_not_taken_over(
    agentrig_runtime: RuntimeFactory, agentrig_overrides: Overrides
) -> None:
    front = ScriptedProvider(["Hello.", _transfer(), "Still me."])
    back = ScriptedProvider(["Billing here."])
    async with _runtime(agentrig_runtime, agentrig_overrides, front, back) as rt:
        triage = rt.agent("triage")
        await triage.run("Hi")
        triage.followup("I was charged twice")  # a queued turn: it transfers
        await triage.when_idle()
        billing = rt.agents.get("billing-1")
        assert billing is not None  # the target took over the queued turn's conversation
        assert billing.session.derive_messages()[-1].text == "Billing here."
        # the handoff was used up by the queued turn: the next run is triage's own
        assert (await triage.run("Anyone there?")).value == "Still me."
