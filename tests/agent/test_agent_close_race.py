"""Class: an agent still being set up when its runtime closes is never published into the
closed runtime (issue 28, point 14).

Setup is a window: ``create`` and ``resume`` await a session writer, a prepare step and the
caller's setup before the agent is published.  Whichever await the close falls into, the
creation fails with ``RuntimeClosedError``, the agent is not in the registry, no
``session_start`` is sent, and its session writer is released.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory

import agentrig
from agentrig.agent import Agent
from agentrig.errors import RuntimeClosedError
from agentrig.ids import AgentId, SessionId
from agentrig.lifecycle import SessionStart

pytestmark = pytest.mark.anyio


class Starts:
    def __init__(self) -> None:
        self.started: list[str] = []

    @agentrig.hookimpl
    def session_start(self, payload: SessionStart) -> None:
        self.started.append(payload.agent.id)


def _locks(directory: Path) -> list[Path]:
    return list(directory.glob("*.lock"))


def _store(tmp_path: Path) -> dict[str, Any]:
    return {"session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}}}


@pytest.mark.parametrize("stored", [False, True], ids=["memory", "jsonl"])
@pytest.mark.parametrize("kind", ["async-setup", "async-setup-commit", "async-setup-raises"])
async def test_a_runtime_closed_during_setup_publishes_nothing(
    env: EnvFactory, tmp_path: Path, kind: str, stored: bool
) -> None:
    entered, release = anyio.Event(), anyio.Event()
    starts = Starts()

    async def slow_setup(agent: Agent) -> Any:
        agent.inject("seeded")
        entered.set()
        await release.wait()
        if kind == "async-setup-raises":
            raise ValueError("the setup's own failure")
        return (lambda: None) if kind == "async-setup-commit" else None

    failures: list[BaseException] = []
    extra: dict[str, Any] = {"session_store": "disk"} if stored else {}
    config = _store(tmp_path) if stored else {}
    async with env(plugins={"starts": starts}, config=config) as e:
        rt = e.rt

        async def create() -> None:
            try:
                await rt.agents.create(
                    AgentId("late"),
                    provider="local",
                    model="m1",
                    session_id=SessionId("ses-late"),
                    setup=slow_setup,
                    **extra,
                )
            except BaseException as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(create)
            await entered.wait()
            await rt.aclose()  # the registry is disposed while the setup still runs
            release.set()
    assert len(failures) == 1
    expected = ValueError if kind == "async-setup-raises" else RuntimeClosedError
    assert isinstance(failures[0], expected), failures
    assert rt.agents.get(AgentId("late")) is None
    assert "late" not in rt.agents.ids()
    assert "late" not in starts.started
    if stored:
        assert not _locks(tmp_path)  # the writer's lock was released
