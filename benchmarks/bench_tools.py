"""Tool governance costs, each against a floor measured in the same run.

    python benchmarks/bench_tools.py [--quick]

* permission evaluation per call with 100 rules (deny, ask and allow lists) vs the same
  call with no rules -- what the rule lists add;
* tool dispatch overhead per call -- validation + permission gate + ``tool_execution``
  hooks + execute of a no-op tool through ``agent.call_tool`` -- vs calling the function
  directly;
* a ``command`` hook's round trip vs a bare subprocess spawn of the same script (when the
  command strategy is installed; target: at most 2x -- the hook runs under a subreaper
  forked by the reaper launcher, plus pipes, JSON on stdin and the decoded outcome);
* parallel tool calls: a run whose one reply makes five calls of a 100 ms async read-only
  tool vs the same run making one call (target: at most 1.3x).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_per_call_ns, compare, emit, gc_paused

import agentrig
from agentrig.permissions import (
    PermissionArg,
    PermissionCall,
    PermissionContext,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
)
from agentrig.testing import Reply, ScriptedCall, ScriptedProvider
from agentrig.tools import tool


def report(name: str, value: float, floor: float, unit: str) -> None:
    """A comparison the issue asks to quote without a target ratio."""
    emit(name, value, unit, floor=round(floor, 3), ratio=round(value / floor, 3), target=None)


def permission_rules(count: int) -> PermissionRules:
    tools = {"Bash": ToolPermissions("Bash", "execute", PermissionArg("command", "command"))}
    third = count // 3
    deny = [f"Bash(tool{i} push:*)" for i in range(third)]
    ask = [f"Bash(tool{i} deploy:*)" for i in range(third)]
    allow = [f"Bash(tool{i} status)" for i in range(count - 2 * third)]
    return PermissionRules.parse(allow=allow, deny=deny, ask=ask, tools=tools)


def bench_permissions(calls: int, repeats: int) -> None:
    tool_perm = ToolPermissions("Bash", "execute", PermissionArg("command", "command"))
    call = PermissionCall(tool_perm, {"command": "git status && ls -la"})
    workspace = tempfile.gettempdir()
    with_rules = PermissionContext(workspace_root=workspace, rules=permission_rules(100))
    without = PermissionContext(workspace_root=workspace, rules=PermissionRules.parse())

    def batch(ctx: PermissionContext) -> Any:
        def run(n: int) -> None:
            for _ in range(n):
                evaluate_permission(call, ctx)

        return run

    with gc_paused():
        value = best_per_call_ns(batch(with_rules), calls, repeats)
        floor = best_per_call_ns(batch(without), calls, repeats)
    report(
        "permission evaluation, 100 rules vs no rules",
        value / 1000,
        floor / 1000,
        "us/call",
    )


@tool(risk="inspect")
def noop(value: int = 0) -> int:
    """Return the value."""
    return value


async def bench_dispatch(calls: int, repeats: int) -> None:
    memory = agentrig.MemorySource()
    memory.add("tools", "noop", noop)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["noop"]}},
    }
    async with agentrig.open_runtime(
        config, memory=memory, overrides=[("providers", "local", ScriptedProvider())], environ={}
    ) as rt:
        agent = rt.agent("a")
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter_ns()
            for _ in range(calls):
                await agent.call_tool("noop", {"value": 1})
            best = min(best, (time.perf_counter_ns() - start) / calls)
    function = noop.function

    def direct(n: int) -> None:
        for _ in range(n):
            function(value=1)

    floor = best_per_call_ns(direct, calls * 10, repeats)
    report(
        "tool dispatch (validate + gate + hooks + execute) vs direct call",
        best / 1000,
        floor / 1000,
        "us/call",
    )
    emit("tool dispatch overhead per call", (best - floor) / 1000, "us/call")


@tool(risk="inspect")
async def slow_read(key: str) -> str:
    """Read something that takes 100 ms to arrive."""
    await anyio.sleep(0.1)
    return key


async def bench_parallel_tools(repeats: int) -> None:
    memory = agentrig.MemorySource()
    memory.add("tools", "slow_read", slow_read)

    async def best_run(calls: int) -> float:
        reply = Reply(
            tool_calls=tuple(ScriptedCall("slow_read", {"key": str(i)}) for i in range(calls))
        )
        provider = ScriptedProvider([reply, "done"] * repeats)
        config = {
            "providers": {"local": {"kind": "scripted"}},
            "agents": {"a": {"provider": "local", "model": "m", "tools": ["slow_read"]}},
        }
        best = float("inf")
        async with agentrig.open_runtime(
            config, memory=memory, overrides=[("providers", "local", provider)], environ={}
        ) as rt:
            agent = rt.agent("a")
            for _ in range(repeats):
                start = time.perf_counter()
                await agent.run("go")
                best = min(best, time.perf_counter() - start)
        return best * 1000

    floor = await best_run(1)
    five = await best_run(5)
    compare(
        "five 100 ms read-only tool calls in one reply vs one call",
        five,
        floor,
        "ms/run",
        target=1.3,
    )


async def bench_command_hook(runs: int) -> None:
    try:
        from agentrig.builtins._hook_command import factory
        from agentrig.hooks import HookEvent
    except ImportError:
        print('{"name": "command hook round trip", "skipped": "command strategy not installed"}')
        return
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "hook.sh"
        script.write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
        os.chmod(script, 0o700)
        hook = factory({"options": {"command": [str(script)], "timeout": 10}})
        event = HookEvent(name="PreToolUse", payload={"tool_name": "Bash", "tool_input": {}})
        signal = agentrig.CancelSignal()
        best_hook = float("inf")
        best_bare = float("inf")
        await hook.run(event, signal=signal)  # the reaper launcher starts with the first hook
        for _ in range(runs):
            start = time.perf_counter_ns()
            await hook.run(event, signal=signal)
            best_hook = min(best_hook, time.perf_counter_ns() - start)
            start = time.perf_counter_ns()
            process = await anyio.open_process([str(script)])
            async with process:
                assert process.stdin is not None
                await process.stdin.aclose()
                await process.wait()
            best_bare = min(best_bare, time.perf_counter_ns() - start)
    compare(
        "command hook round trip vs bare subprocess spawn",
        best_hook / 1e6,
        best_bare / 1e6,
        "ms/call",
        target=2.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="finish in well under a minute")
    args = parser.parse_args()
    calls, repeats = (2_000, 3) if args.quick else (20_000, 5)
    bench_permissions(calls, repeats)
    anyio.run(bench_dispatch, calls // 4, repeats)
    anyio.run(bench_command_hook, 10 if args.quick else 50)
    anyio.run(bench_parallel_tools, 3 if args.quick else 5)


if __name__ == "__main__":
    main()
