"""Big tool results: over ``tool_result_max_bytes`` the model sees the first bytes and a note;
the whole result is kept owner-only in the state directory and linked from the log."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, check_invariant, events

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.llm import ToolMessage
from agentrig.tools import tool

pytestmark = pytest.mark.anyio

LIMIT = 1000


@tool(risk="inspect")
def produce(size: int, char: str = "x") -> str:
    """Return ``size`` characters."""
    return char * size


def asks(size: int, char: str = "x") -> list[Reply | str]:
    return [Reply(tool_calls=(ScriptedCall("produce", {"size": size, "char": char}),)), "ok"]


def settings(tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {"tool_result_max_bytes": LIMIT, "state_dir": str(tmp_path / "state"), **more}


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


async def test_a_result_at_the_limit_is_left_whole(env: EnvFactory, tmp_path: Path) -> None:
    async with env(asks(LIMIT), tools=[produce], **settings(tmp_path)) as e:
        await e.agent.run("go")
        (result,) = events(e.agent, "tool/result")
        assert result.message.text == "x" * LIMIT
        assert events(e.agent, "tool/result/stored") == []
        assert not (tmp_path / "state").exists()


async def test_one_byte_over_is_cut_with_a_note_and_kept_whole_owner_only(
    env: EnvFactory, tmp_path: Path
) -> None:
    async with env(asks(LIMIT + 1), tools=[produce], **settings(tmp_path)) as e:
        result = await e.agent.run("go")
        assert result.value == "ok"
        (logged,) = events(e.agent, "tool/result")
        (stored,) = events(e.agent, "tool/result/stored")
        # the log links the call to the whole result
        assert stored.call_id == logged.message.call_id
        assert stored.invocation_id == logged.invocation_id
        assert (stored.size_bytes, stored.shown_bytes) == (LIMIT + 1, LIMIT)
        session_dir = tmp_path / "state" / e.agent.session_id
        path = Path(stored.path)
        assert path == session_dir.resolve() / "results" / f"{logged.invocation_id}.txt"
        assert await anyio.Path(path).read_bytes() == b"x" * (LIMIT + 1)
        assert mode(path) == 0o600
        for directory in (tmp_path / "state", session_dir, session_dir / "results"):
            assert mode(directory) == 0o700
        # what the model saw: the first LIMIT bytes, then the note saying so and where
        text = logged.message.text
        assert text.startswith("x" * LIMIT + "\n\n[agentrig: this tool result was cut")
        assert f"it is {LIMIT + 1} bytes long and only the first {LIMIT} bytes" in text
        assert f"saved in the file {path};" in text
        seen = [m for m in e.provider.requests[1].messages if isinstance(m, ToolMessage)]
        assert seen[0].text == text
        # the event order: the cut result, then its link
        kinds = [ev.type for ev in e.agent.session.events]
        at = kinds.index("tool/result")
        assert kinds[at + 1] == "tool/result/stored"
        check_invariant(e.agent)


async def test_a_cut_never_splits_a_character(env: EnvFactory, tmp_path: Path) -> None:
    # "é" is two bytes: 1000 bytes end in the middle of the 500th... of 501 characters
    async with env(asks(501, "é"), tools=[produce], **settings(tmp_path)) as e:
        await e.agent.run("go")
        (stored,) = events(e.agent, "tool/result/stored")
        assert (stored.size_bytes, stored.shown_bytes) == (1002, 1000)
        (logged,) = events(e.agent, "tool/result")
        assert logged.message.text.startswith("é" * 500 + "\n\n[agentrig:")


async def test_zero_keeps_every_result_whole(env: EnvFactory, tmp_path: Path) -> None:
    big = 200_000
    config = settings(tmp_path, tool_result_max_bytes=0)
    async with env(asks(big), tools=[produce], **config) as e:
        await e.agent.run("go")
        (result,) = events(e.agent, "tool/result")
        assert len(result.message.text) == big
        assert not (tmp_path / "state").exists()


async def test_the_default_limit_is_64_kib(env: EnvFactory, tmp_path: Path) -> None:
    script: list[Reply | str] = [*asks(65536)[:1], *asks(65537)[:1], "ok"]
    async with env(script, tools=[produce], state_dir=str(tmp_path / "state")) as e:
        await e.agent.run("go")
        first, second = events(e.agent, "tool/result")
        assert first.message.text == "x" * 65536
        assert "this tool result was cut" in second.message.text
        (stored,) = events(e.agent, "tool/result/stored")
        assert stored.size_bytes == 65537


async def test_a_result_that_cannot_be_kept_is_still_cut_and_says_why(
    env: EnvFactory, tmp_path: Path
) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the directory should be")
    async with env(asks(LIMIT * 2), tools=[produce], **settings(tmp_path)) as e:
        result = await e.agent.run("go")
        assert result.value == "ok"
        (logged,) = events(e.agent, "tool/result")
        assert logged.message.text.startswith("x" * LIMIT + "\n\n[agentrig: this tool result")
        assert "The whole result could not be kept (" in logged.message.text
        assert events(e.agent, "tool/result/stored") == []


async def test_a_relative_state_dir_is_taken_from_the_config_files_directory(
    env: EnvFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # composed from a mapping (no config file): the working directory is the base
    monkeypatch.chdir(tmp_path)
    config = settings(tmp_path, state_dir="rel-state")
    async with env(asks(LIMIT + 5), tools=[produce], **config) as e:
        await e.agent.run("go")
        (stored,) = events(e.agent, "tool/result/stored")
        assert Path(stored.path).is_relative_to((tmp_path / "rel-state").resolve())


def jsonl(tmp_path: Path) -> dict[str, Any]:
    directory = str(tmp_path / "sessions")
    return {"session_stores": {"disk": {"kind": "jsonl", "options": {"directory": directory}}}}


async def test_a_resumed_session_replays_the_cut_form(env: EnvFactory, tmp_path: Path) -> None:
    agent_settings: dict[str, Any] = {
        "provider": "local",
        "model": "m1",
        "session_store": "disk",
        "tools": [produce],
        **settings(tmp_path),
    }
    async with env(asks(LIMIT * 3), tools=[produce], config=jsonl(tmp_path)) as e:
        agent = await e.rt.agents.create(AgentId("writer"), **agent_settings)
        await agent.run("go")
        session_id = agent.session_id
        (cut,) = [m.text for m in agent.session.derive_messages() if isinstance(m, ToolMessage)]

    async with env(["again"], tools=[produce], config=jsonl(tmp_path)) as e:
        resumed = await e.rt.agents.resume(session_id, agent_id=AgentId("writer"), **agent_settings)
        replayed = [m for m in resumed.session.derive_messages() if isinstance(m, ToolMessage)]
        assert [m.text for m in replayed] == [cut]
        assert "this tool result was cut" in cut
        (stored,) = events(resumed, "tool/result/stored")
        assert await anyio.Path(stored.path).read_bytes() == b"x" * (LIMIT * 3)
        await resumed.run("more")
        sent = [m for m in e.provider.requests[0].messages if isinstance(m, ToolMessage)]
        assert [m.text for m in sent] == [cut]


async def test_a_relative_state_dir_is_taken_from_the_config_files_directory_when_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    await anyio.Path(project).mkdir()
    await anyio.Path(project / "agentrig.toml").write_text(
        "[providers.local]\nkind = 'scripted'\n\n[agents.assistant]\nprovider = 'local'\n"
        "model = 'm1'\ntools = ['produce']\ntool_result_max_bytes = 1000\n"
        "state_dir = 'kept'\n\n[permissions]\nmode = 'bypass'\n"
    )
    monkeypatch.chdir(tmp_path)  # elsewhere: the file's directory decides, not this one
    memory = agentrig.MemorySource()
    memory.add("tools", "produce", produce)
    provider = ScriptedProvider(asks(LIMIT + 1))
    async with agentrig.open_runtime(
        str(project / "agentrig.toml"),
        memory=memory,
        overrides=[("providers", "local", provider)],
        environ={},
    ) as rt:
        agent = rt.agent(AgentId("assistant"))
        await agent.run("go")
        (stored,) = events(agent, "tool/result/stored")
    assert Path(stored.path).is_relative_to((project / "kept").resolve())
