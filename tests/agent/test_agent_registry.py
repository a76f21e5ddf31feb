"""Agents: creation (minted or caller-supplied session ids), the setup transaction and its
rollback, lifecycle notifications, config-declared agents and disposal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, WatchedProvider, check_invariant, events

import agentrig
from agentrig.agent import Agent
from agentrig.builtins._scripted import Reply
from agentrig.errors import ConfigError, DuplicateIdError, HookError
from agentrig.ids import AgentId, EntryId, SessionId
from agentrig.lifecycle import AgentCreated, AgentDisposed, AgentStatusChanged, SessionStart
from agentrig.plugin import SESSION_STORES

pytestmark = pytest.mark.anyio


class Recorder:
    """Records the lifecycle notifications it receives."""

    def __init__(self) -> None:
        self.created: list[Any] = []
        self.started: list[str] = []
        self.statuses: list[tuple[str, str]] = []
        self.disposed: list[tuple[str, str]] = []

    @agentrig.hookimpl
    def agent_created(self, payload: AgentCreated) -> None:
        agent = payload.agent
        assert isinstance(agent, Agent)
        self.created.append((agent.id, tuple(m.text for m in agent.inbox.pending("next-step"))))

    @agentrig.hookimpl
    def session_start(self, payload: SessionStart) -> None:
        self.started.append(payload.agent.id)

    @agentrig.hookimpl
    def agent_status(self, payload: AgentStatusChanged) -> None:
        self.statuses.append((payload.agent.id, payload.status))

    @agentrig.hookimpl
    def agent_disposed(self, payload: AgentDisposed) -> None:
        self.disposed.append((payload.agent_id, payload.session_id))


class SyncVeto:
    @agentrig.hookimpl
    def agent_created(self, payload: AgentCreated) -> None:
        if payload.agent.id == "vetoed":
            raise RuntimeError("no agents named vetoed")


class AsyncFailure:
    def __init__(self) -> None:
        self.ran = anyio.Event()

    @agentrig.hookimpl
    async def agent_created(self, payload: AgentCreated) -> None:
        if payload.agent.id == "late":
            self.ran.set()
            raise RuntimeError("async listener failed")


def store_config(tmp_path: Path) -> dict[str, Any]:
    return {"session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}}}


async def test_config_declared_agents_exist_after_open(env: EnvFactory) -> None:
    async with env(["hi"]) as e:
        assert e.rt.agents.ids() == ("assistant",)
        agent = e.rt.agent(AgentId("assistant"))
        assert agent.status == "idle"
        assert agent.session_id.startswith("ses_")
        assert (await agent.run("hello")).value == "hi"


@pytest.mark.parametrize(
    "session_id", [None, SessionId("caller-chosen-1")], ids=["minted", "supplied"]
)
async def test_create_with_minted_or_caller_supplied_session_id(
    env: EnvFactory, session_id: SessionId | None
) -> None:
    async with env() as e:
        e.provider.add("created")
        agent = await e.rt.agents.create(
            AgentId("helper"), provider="local", model="m1", session_id=session_id
        )
        assert e.rt.agents.get(AgentId("helper")) is agent
        if session_id is None:
            assert agent.session_id.startswith("ses_")
            other = await e.rt.agents.create(AgentId("helper2"), provider="local", model="m1")
            assert other.session_id != agent.session_id
        else:
            assert agent.session_id == session_id
        assert (await agent.run("hi")).invocation.session_id == agent.session_id


async def test_duplicate_agent_id_is_refused(env: EnvFactory) -> None:
    async with env() as e:
        first = e.rt.agent(AgentId("assistant"))
        with pytest.raises(DuplicateIdError, match="assistant"):
            await e.rt.agents.create(AgentId("assistant"), provider="local", model="m1")
        assert e.rt.agent(AgentId("assistant")) is first
        await e.rt.agents.create(AgentId("second"), provider="local", model="m1")
        with pytest.raises(DuplicateIdError):
            await e.rt.agents.create(AgentId("second"), provider="local", model="m1")


@pytest.mark.parametrize(
    ("settings", "key", "what"),
    [
        ({"max_rounds": -1}, "max_rounds", "greater than or equal to 0"),
        ({"temperature": "hot"}, "temperature", "valid number"),
        ({"max_round": 3}, "max_round", "did you mean 'max_rounds'"),
    ],
    ids=["max_rounds-negative", "temperature-not-a-number", "unknown-keyword"],
)
async def test_invalid_settings_are_a_config_error_naming_the_keyword(
    env: EnvFactory, settings: dict[str, Any], key: str, what: str
) -> None:
    async with env(["made after all"]) as e:
        with pytest.raises(ConfigError) as info:
            await e.rt.agents.create(AgentId("bad"), provider="local", model="m1", **settings)
        assert info.value.code == "config.invalid"
        assert [issue.path for issue in info.value.issues] == [(key,)]
        assert f"agents.create('bad'): {key}: " in str(info.value)
        assert what in str(info.value)
        assert "bad" not in e.rt.agents.ids()  # nothing half-created
        agent = await e.rt.agents.create(AgentId("bad"), provider="local", model="m1")
        assert (await agent.run("hi")).value == "made after all"


async def test_setup_runs_before_publication(env: EnvFactory) -> None:
    recorder = Recorder()
    order: list[str] = []

    def setup(agent: Agent) -> Any:
        order.append(f"setup published={agent.id in agentrig_ids()}")
        agent.inject("seeded by setup")

        def commit() -> None:
            order.append(f"commit published={agent.id in agentrig_ids()}")

        return commit

    rt_holder: list[Any] = []

    def agentrig_ids() -> tuple[str, ...]:
        ids: tuple[str, ...] = rt_holder[0].agents.ids()
        return ids

    async with env(plugins={"rec": recorder}) as e:
        rt_holder.append(e.rt)
        agent = await e.rt.agents.create(
            AgentId("worker"), provider="local", model="m1", setup=setup
        )
        # the setup's registration was visible to agent_created listeners
        assert ("worker", ("seeded by setup",)) in recorder.created
        assert order == ["setup published=False", "commit published=False"]
        assert e.rt.agents.get(AgentId("worker")) is agent


async def test_async_setup_is_awaited(env: EnvFactory) -> None:
    seen: list[str] = []

    async def setup(agent: Agent) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(agent.id)

    async with env() as e:
        await e.rt.agents.create(AgentId("worker"), provider="local", model="m1", setup=setup)
        assert seen == ["worker"]


def failing_setup(agent: Agent) -> None:
    agent.inject("never published")
    raise ValueError("setup failed")


def failing_commit(agent: Agent) -> Any:
    def commit() -> None:
        raise ValueError("commit failed")

    return commit


@pytest.mark.parametrize(
    ("agent_id", "setup", "error"),
    [
        ("worker", failing_setup, ValueError),
        ("worker", failing_commit, ValueError),
        ("vetoed", None, HookError),
    ],
    ids=["setup-raises", "commit-raises", "sync-listener-vetoes"],
)
async def test_failed_creation_rolls_back(
    env: EnvFactory, tmp_path: Path, agent_id: str, setup: Any, error: type[Exception]
) -> None:
    recorder = Recorder()
    async with env(
        ["second try"], plugins={"veto": SyncVeto(), "rec": recorder}, config=store_config(tmp_path)
    ) as e:
        with pytest.raises(error):
            await e.rt.agents.create(
                AgentId(agent_id),
                provider="local",
                model="m1",
                session_store="disk",
                session_id=SessionId("ses-rollback"),
                setup=setup,
            )
        assert agent_id not in e.rt.agents.ids()
        assert e.rt.agents.get(AgentId(agent_id)) is None
        assert agent_id not in recorder.started  # nothing was published
        # the writer was released and nothing was persisted: the same session can be created
        agent = await e.rt.agents.create(
            AgentId(agent_id + "2"),
            provider="local",
            model="m1",
            session_store="disk",
            session_id=SessionId("ses-rollback"),
        )
        assert (await agent.run("hi")).value == "second try"
        check_invariant(agent)
        assert [ev.message.text for ev in events(agent, "user/message")] == ["hi"]


async def test_async_agent_created_failure_is_only_reported(env: EnvFactory) -> None:
    listener = AsyncFailure()
    async with env(plugins={"async-fail": listener}) as e:
        agent = await e.rt.agents.create(AgentId("late"), provider="local", model="m1")
        await listener.ran.wait()
        assert e.rt.agents.get(AgentId("late")) is agent
        failures = [f for f in e.rt.hook_failures() if f.hook == "agent_created"]
        assert len(failures) == 1
        assert failures[0].plugin == "async-fail"
        assert "async listener failed" in failures[0].info.message


async def test_session_start_is_notified_once(env: EnvFactory) -> None:
    recorder = Recorder()
    async with env(["one", "two"], plugins={"rec": recorder}) as e:
        assert recorder.started == ["assistant"]  # the config-declared agent
        await e.agent.run("a")
        await e.agent.run("b")
        assert recorder.started == ["assistant"]
        e.provider.add("three")
        worker = await e.rt.agents.create(AgentId("worker"), provider="local", model="m1")
        await worker.run("c")
        assert recorder.started == ["assistant", "worker"]


async def test_agent_status_goes_idle_running_idle(env: EnvFactory) -> None:
    recorder = Recorder()
    async with env(["one", "two"], plugins={"rec": recorder}) as e:
        assert e.agent.status == "idle"
        assert recorder.statuses == []
        await e.agent.run("a")
        assert recorder.statuses == [("assistant", "running"), ("assistant", "idle")]
        assert e.agent.status == "idle"
        await e.agent.run("b")
        assert recorder.statuses == [("assistant", "running"), ("assistant", "idle")] * 2


async def test_status_is_running_while_a_run_is_in_flight(env: EnvFactory) -> None:
    recorder = Recorder()
    provider = WatchedProvider([Reply(text="slow", delay=3600)])
    async with env(provider=provider, plugins={"rec": recorder}) as e:
        signal = agentrig.CancelSignal()
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: e.agent.run("a", signal=signal))
            await provider.received(1)
            assert e.agent.status == "running"
            assert recorder.statuses == [("assistant", "running")]
            signal.cancel("done")
        assert e.agent.status == "idle"
        assert recorder.statuses[-1] == ("assistant", "idle")


async def test_runtime_close_disposes_agents(env: EnvFactory) -> None:
    recorder = Recorder()
    async with env(plugins={"rec": recorder}) as e:
        worker = await e.rt.agents.create(AgentId("worker"), provider="local", model="m1")
        sessions = {"assistant": e.agent.session_id, "worker": worker.session_id}
        assert recorder.disposed == []
    assert sorted(recorder.disposed) == sorted(sessions.items())
    assert len(e.rt.agents) == 0


async def test_a_disposed_agent_refuses_new_work(env: EnvFactory) -> None:
    from agentrig.errors import RuntimeClosedError

    async with env() as e:
        agent = e.agent
    with pytest.raises(RuntimeClosedError):
        await agent.run("too late")
    with pytest.raises(RuntimeClosedError):
        agent.followup("too late")
    assert agent.status == "idle"


async def test_disposal_keeps_pending_input_and_starts_no_new_turn(env: EnvFactory) -> None:
    from agentloop_support import Gate

    from agentrig.builtins._scripted import ScriptedCall

    gate = Gate()
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("gate"),)), "unused", "unused"]
    async with env(script, tools=[gate.tool]) as e:
        agent = e.agent
        agent.followup("first, blocked at the gate")
        later = agent.followup("second, still queued")
        await gate.entered.wait()
        await e.rt.aclose(cancel_running=True)  # closing as leaving through an error does
    # the running turn was cancelled; the queued one never started and was not discarded
    assert [m.id for m in agent.inbox.pending("next-turn")] == [later]
    assert "clear" not in [s.cause for s in events(agent, "agent/inbox/spliced")]
    assert len(e.provider.requests) == 1
    assert [t.reason for t in events(agent, "turn/end")] == ["interrupted"]
    assert agent.status == "idle"
    check_invariant(agent)


async def test_closing_normally_awaits_the_running_turn(env: EnvFactory) -> None:
    from agentloop_support import Gate

    from agentrig.builtins._scripted import ScriptedCall

    gate = Gate()
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("gate"),)),
        "finished after the gate",
    ]
    async with env(script, tools=[gate.tool]) as e:
        agent = e.agent
        agent.followup("go")
        await gate.entered.wait()

        async def open_gate_later() -> None:
            await anyio.sleep(0.05)
            gate.release.set()

        e.rt.spawn(open_gate_later)
    # leaving the block waited for the turn: it completed instead of being interrupted
    assert [t.reason for t in events(agent, "turn/end")] == ["completed"]
    assert agent.session.derive_messages()[-1].text == "finished after the gate"
    check_invariant(agent)


async def test_history_seeded_by_setup_is_stored_once_in_order(
    env: EnvFactory, tmp_path: Path
) -> None:
    from agentrig.llm import AssistantMessage, TextBlock, UserMessage
    from agentrig.session import AssistantMessageEvent, UserMessageEvent

    def seed(agent: Agent) -> None:
        agent.session.append(UserMessageEvent(message=UserMessage.of("earlier question")))
        agent.inject("queued note")  # an inbox splice: queued for the next write
        reply = AssistantMessage(content=(TextBlock(text="earlier answer"),))
        agent.session.append(AssistantMessageEvent(message=reply))

    async with env(["now"], config=store_config(tmp_path)) as e:
        agent = await e.rt.agents.create(
            AgentId("worker"), provider="local", model="m1", session_store="disk", setup=seed
        )
        await agent.run("next")
        written = [event.seq for event in agent.session.events]
        store = e.rt.catalog(SESSION_STORES).require(EntryId("disk"))
        report = await store.load(agent.session_id)
    assert not report.damaged, report.detail
    assert [event.seq for event in report.events] == written
    assert [ev.data.message.text for ev in report.events if ev.type == "user/message"][:1] == [
        "earlier question"
    ]
