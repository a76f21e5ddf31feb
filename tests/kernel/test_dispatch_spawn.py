"""Work a synchronous listener starts out of band runs on the runtime and fails on the record."""

from __future__ import annotations

import inspect
import typing

import anyio
import pytest

from agentrig.hooks import HookLifecycle
from agentrig.kernel import HookDispatcher

pytestmark = pytest.mark.anyio


async def test_spawned_work_runs_on_the_task_group_and_its_failure_is_recorded() -> None:
    ran = anyio.Event()

    async def fine() -> None:
        ran.set()

    async def broken() -> None:
        raise ValueError("boom")

    async with anyio.create_task_group() as tg:
        dispatcher = HookDispatcher(spawner=tg.start_soon)
        dispatcher.spawn("agent_status", "my-plugin", fine)
        dispatcher.spawn("agent_status", "my-plugin", broken)
    assert ran.is_set()
    (failure,) = dispatcher.failures()
    assert (failure.hook, failure.plugin) == ("agent_status", "my-plugin")
    assert "boom" in failure.info.message


def test_without_a_running_runtime_the_work_is_not_started_and_that_is_recorded() -> None:
    called = []

    async def work() -> None:
        called.append(1)

    dispatcher = HookDispatcher()
    dispatcher.spawn("agent_disposed", "my-plugin", work)
    assert called == []
    (failure,) = dispatcher.failures()
    assert "needs a running runtime" in failure.info.message


@pytest.mark.parametrize("name", ["agent_status", "agent_disposed"])
def test_the_hook_lifecycles_notify_listeners_have_one_shape(name: str) -> None:
    # plain synchronous listeners that return nothing: their out-of-band work goes through
    # the dispatcher, never as "an awaitable or None" handed back
    listener = getattr(HookLifecycle, name)
    assert not inspect.iscoroutinefunction(listener)
    assert typing.get_type_hints(listener)["return"] is type(None)
