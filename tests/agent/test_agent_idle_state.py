"""What an agent keeps between runs stays small without changing what it does: the run
slot exists only while a run holds or waits for it, agents made from the same settings share
one config, agents share their tools' request definitions, and loaded deferred tools are
kept as (shared, empty until used) frozensets."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, Gate, clock, echo

from agentrig.agent import AgentConfig
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.ids import AgentId

pytestmark = pytest.mark.anyio


async def test_an_idle_agent_holds_no_run_slot_and_queued_runs_stay_in_order(
    env: EnvFactory,
) -> None:
    gate = Gate()
    replies: list[Reply | str] = [
        "r0",
        Reply(tool_calls=(ScriptedCall("gate", {}),)),
        "r1",
        "r2",
        "r3",
    ]
    async with env(replies, tools=[gate.tool]) as e:
        agent = e.agent
        assert agent._driver._slot is None  # before any run
        assert (await agent.run("first")).value == "r0"
        assert agent._driver._slot is None  # the run let it go
        answers: list[str] = []

        async def run(prompt: str) -> None:
            answers.append((await agent.run(prompt)).value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a")
            await gate.entered.wait()  # "a" holds the slot, waiting at the gate
            for prompt in ("b", "c"):  # they wait for the slot, in this order
                tg.start_soon(run, prompt)
                await anyio.wait_all_tasks_blocked()
            assert agent._driver._slot is not None
            assert agent._driver._slot.statistics().tasks_waiting == 2
            assert agent.status == "running"
            gate.release.set()
        assert answers == ["r1", "r2", "r3"]
        assert [m.text for m in agent.session.derive_messages() if m.role == "user"] == [
            "first",
            "a",
            "b",
            "c",
        ]
        assert agent._driver._slot is None
        assert agent.status == "idle"
        await e.rt.agents.dispose(agent.id)  # settling an idle agent takes a fresh slot
        assert agent._driver._slot is None


async def test_agents_given_the_same_settings_share_one_config(env: EnvFactory) -> None:
    async with env() as e:
        create = e.rt.agents.create
        a = await create(AgentId("a"), provider="local", model="m", max_rounds=3)
        b = await create(AgentId("b"), provider="local", model="m", max_rounds=3)
        assert a.config is b.config
        assert a.config.max_rounds == 3
        other = await create(AgentId("c"), provider="local", model="m", max_rounds=4)
        assert other.config is not a.config
        assert other.config.max_rounds == 4
        # equal values of other types validate apart (1 == True, but strict refuses a bool)
        with pytest.raises(ValueError, match="max_rounds"):
            await create(AgentId("d"), provider="local", model="m", max_rounds=True)
        with pytest.raises(ValueError, match="max_rounds"):  # refused every time
            await create(AgentId("d"), provider="local", model="m", max_rounds=True)
        # settings over a given config are built for that agent
        e1 = await create(AgentId("e1"), config=a.config, model="m2")
        e2 = await create(AgentId("e2"), config=a.config, model="m2")
        assert (e1.config.model, e1.config.max_rounds) == ("m2", 3)
        assert e1.config == e2.config
        assert e1.config is not e2.config
        # settings over the agent's configured entry: built over that entry, and shared
        entry = AgentId("assistant")
        await e.rt.agents.dispose(entry)
        first = await create(entry, max_rounds=7)
        assert (first.config.model, first.config.max_rounds) == ("m1", 7)
        await e.rt.agents.dispose(entry)
        assert (await create(entry, max_rounds=7)).config is first.config


async def test_agents_share_their_tools_request_definitions(env: EnvFactory) -> None:
    call = Reply(tool_calls=(ScriptedCall("echo", {"text": "x"}),))
    replies: list[Reply | str] = [call, "done", call, "done"]
    async with env(replies, tools=[echo]) as e:
        create = e.rt.agents.create
        a = await create(AgentId("a"), provider="local", model="m", tools=[echo])
        b = await create(AgentId("b"), provider="local", model="m", tools=[echo])
        assert (await a.run("go")).value == "done"
        assert (await b.run("go")).value == "done"
        (tool,) = a.all_tools()
        assert a.tool_spec(tool) is b.tool_spec(tool)
        first, _, third, _ = e.provider.requests
        assert first.tools == third.tools
        assert [t.name for t in first.tools] == ["echo"]


async def test_loading_deferred_tools_offers_them_from_then_on(env: EnvFactory) -> None:
    agent_entry = {
        "provider": "local",
        "model": "m1",
        "tools": ["echo", "clock", "tool_search"],
        "deferral": "on",
    }
    config = {
        "tools": {"tool_search": {}, "clock": {"deferred": False}},
        "agents": {"assistant": agent_entry},
    }
    async with env(tools=[echo, clock], config=config) as e:
        agent = e.agent
        assert [t.id for t in agent.withheld_tools()] == ["echo"]
        assert "echo" not in [t.id for t in agent.offered_tools()]
        agent.load_tools(["nope", "echo"])  # an unknown id is ignored
        assert [t.id for t in agent.offered_tools()] == ["echo", "clock", "tool_search"]
        assert agent.withheld_tools() == []
        agent.load_tools(["echo"])  # loaded already: nothing changes
        agent.replace_tools(agent.all_tools())  # still present: stays loaded
        assert agent.withheld_tools() == []
        every = agent.all_tools()
        agent.replace_tools([t for t in every if t.id != "echo"])
        agent.replace_tools(every)  # gone in between: deferred again
        assert [t.id for t in agent.withheld_tools()] == ["echo"]


async def test_a_shared_config_s_options_are_read_only(env: EnvFactory) -> None:
    table = {"style": {"tone": "terse"}, "tags": ["a", "b"]}
    entry = {"provider": "local", "model": "m1", "options": table}
    async with env(config={"agents": {"assistant": entry}}) as e:
        create = e.rt.agents.create
        await e.rt.agents.dispose(AgentId("assistant"))
        a = await create(AgentId("assistant"), max_rounds=7)
        await e.rt.agents.dispose(AgentId("assistant"))
        b = await create(AgentId("assistant"), max_rounds=7)
        assert a.config is b.config  # shared, so a mutation through one would reach both
        options: Any = a.config.options  # typed read-only; try what untyped code could
        with pytest.raises(TypeError):
            options["style"] = "loud"
        with pytest.raises(TypeError):
            options["style"]["tone"] = "loud"  # nested tables are read-only too
        with pytest.raises(AttributeError):
            options["tags"].append("c")
        assert b.config.options == {"style": {"tone": "terse"}, "tags": ("a", "b")}
        # serialisation is unchanged: plain tables and arrays, as configured
        assert b.config.model_dump()["options"] == table
        # a caller's table is copied, not kept: changing it later reaches no agent
        given = {"k": [1]}
        c = await create(
            AgentId("c"),
            config=AgentConfig.model_validate(
                {"provider": "local", "model": "m1", "options": given}
            ),
        )
        given["k"].append(2)
        assert c.config.options["k"] == (1,)


async def test_an_agents_options_reach_every_request_as_plain_data(env: EnvFactory) -> None:
    # accepted means working: [agents.<id>] options are the extra fields of each request
    table = {"top_p": 0.5, "metadata": {"team": "docs"}, "stop_words": ["x"]}
    async with env(["first", "second"], options=table) as e:
        await e.agent.run("one")
        await e.agent.run("two")
        sent = [request.options for request in e.provider.requests]
        assert sent == [table, table]
        # plain, writable data as a provider serialises it (the config keeps a read-only copy)
        assert type(sent[0]["metadata"]) is dict
        assert type(sent[0]["stop_words"]) is list


async def test_an_agent_without_options_sends_none(env: EnvFactory) -> None:
    async with env(["hi"]) as e:
        await e.agent.run("go")
        assert [request.options for request in e.provider.requests] == [{}]
