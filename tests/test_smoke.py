"""End-to-end smoke test of the kernel: compose, dispatch, report, dispose."""

from __future__ import annotations

import pytest

import agentrig
from agentrig.cli import plugin_report
from agentrig.kernel import MemorySource, RuntimeStarted, builtin_source


class _Listener:
    def __init__(self) -> None:
        self.started: list[RuntimeStarted] = []

    @agentrig.hookimpl
    def runtime_started(self, payload: RuntimeStarted) -> None:
        self.started.append(payload)


@pytest.mark.anyio
async def test_runtime_composes_notifies_and_closes() -> None:
    listener = _Listener()
    memory = MemorySource()
    memory.add("plugins", "listener", listener)
    async with agentrig.open_runtime(
        {}, sources=[builtin_source()], memory=memory, environ={}
    ) as rt:
        assert [r.status for r in plugin_report(rt.index) if r.distribution == "memory"] == [
            "loaded"
        ]
        assert listener.started
        assert listener.started[0].runtime is rt
    assert rt.closed
    assert rt.close_report == ()
    with pytest.raises(agentrig.RuntimeClosedError, match="closed"):
        rt.ensure_open()
