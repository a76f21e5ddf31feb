"""Parallel tool calls: the calls of one reply that may overlap run concurrently.

A call may overlap when its tool is read-only (``risk="inspect"``) or declares
``concurrent=True``; maximal runs of consecutive such calls run together, any other call is a
barrier.  Concurrency is proven with checkpoints (``wait_all_tasks_blocked``: has the other
call started while this one waits?), never with wall-clock time.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, check_invariant, events

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.lifecycle import PermissionQuestion, ToolExecution
from agentrig.llm import ToolMessage
from agentrig.tools import ToolContext, tool

pytestmark = pytest.mark.anyio


class Probe:
    """Tools that record when they start and end, and what had started while they waited."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.overlapped: dict[str, list[str]] = {}

    def make(self, name: str, **options: Any) -> Any:
        async def body(key: str, ctx: ToolContext) -> str:
            self.log.append(f"start:{key}")
            # every other task runs until it blocks: a call running alongside has started
            await anyio.wait_all_tasks_blocked()
            self.overlapped[key] = [e[6:] for e in self.log if e.startswith("start:")]
            self.log.append(f"end:{key}")
            return f"{name}:{key}"

        body.__doc__ = f"Probe {name}."
        return tool(id=name, **options)(body)


def calls(*spec: tuple[str, str]) -> Reply:
    return Reply(
        tool_calls=tuple(
            ScriptedCall(name, {"key": key}, id=f"c{i}") for i, (name, key) in enumerate(spec)
        )
    )


async def test_read_only_calls_of_one_reply_run_together_and_results_keep_call_order(
    env: EnvFactory,
) -> None:
    probe = Probe()
    look = probe.make("look", risk="inspect")
    script: list[Reply | str] = [calls(("look", "a"), ("look", "b"), ("look", "c")), "done"]
    async with env(script, tools=[look]) as e:
        result = await e.agent.run("go")
        assert result.value == "done"
        # each call saw the others started before it finished: they overlapped
        assert all(sorted(seen) == ["a", "b", "c"] for seen in probe.overlapped.values())
        assert set(probe.log[:3]) == {"start:a", "start:b", "start:c"}  # trio starts in any order
        results = events(e.agent, "tool/result")
        assert [r.message.call_id for r in results] == ["c0", "c1", "c2"]
        assert [r.message.text for r in results] == ["look:a", "look:b", "look:c"]
        assert [c.call.id for c in events(e.agent, "tool/call")] == ["c0", "c1", "c2"]
        # the model sees the results in call order too
        second = e.provider.requests[1].messages
        tool_texts = [m.text for m in second if isinstance(m, ToolMessage)]
        assert tool_texts == ["look:a", "look:b", "look:c"]
        assert result.invocation.rounds == 2
        check_invariant(e.agent)


async def test_a_tool_that_may_change_things_is_a_barrier(env: EnvFactory) -> None:
    probe = Probe()
    look = probe.make("look", risk="inspect")
    write = probe.make("write", risk="modify")
    script: list[Reply | str] = [
        calls(("look", "a"), ("look", "b"), ("write", "w"), ("look", "c"), ("look", "d")),
        "done",
    ]
    async with env(script, tools=[look, write]) as e:
        await e.agent.run("go")
        # a and b overlap; w runs alone after both ended; c and d overlap after w ended
        log = probe.log
        assert set(log[:2]) == {"start:a", "start:b"}
        assert set(log[2:4]) == {"end:a", "end:b"}
        assert log[4:6] == ["start:w", "end:w"]
        assert set(log[6:8]) == {"start:c", "start:d"}
        assert set(log[8:]) == {"end:c", "end:d"}
        assert sorted(probe.overlapped["w"]) == ["a", "b", "w"]
        results = events(e.agent, "tool/result")
        assert [r.message.text for r in results] == [
            "look:a",
            "look:b",
            "write:w",
            "look:c",
            "look:d",
        ]
        check_invariant(e.agent)


async def test_concurrent_true_opts_a_tool_in_and_false_opts_an_inspect_tool_out(
    env: EnvFactory,
) -> None:
    probe = Probe()
    fetch = probe.make("fetch", concurrent=True)  # no risk class, declared concurrent
    solo = probe.make("solo", risk="inspect", concurrent=False)
    script: list[Reply | str] = [
        calls(("fetch", "a"), ("fetch", "b")),
        calls(("solo", "c"), ("solo", "d")),
        "ok",
    ]
    async with env(script, tools=[fetch, solo]) as e:
        await e.agent.run("go")
        assert sorted(probe.overlapped["a"]) == ["a", "b"]
        assert probe.log[4:] == ["start:c", "end:c", "start:d", "end:d"]


async def test_tools_without_a_risk_class_keep_running_one_at_a_time(env: EnvFactory) -> None:
    probe = Probe()
    plain = probe.make("plain")
    async with env([calls(("plain", "a"), ("plain", "b")), "ok"], tools=[plain]) as e:
        await e.agent.run("go")
        assert probe.log == ["start:a", "end:a", "start:b", "end:b"]


async def test_parallel_tool_calls_false_runs_every_call_in_order(env: EnvFactory) -> None:
    probe = Probe()
    look = probe.make("look", risk="inspect")
    script: list[Reply | str] = [calls(("look", "a"), ("look", "b")), "ok"]
    async with env(script, tools=[look], parallel_tool_calls=False) as e:
        await e.agent.run("go")
        assert probe.log == ["start:a", "end:a", "start:b", "end:b"]


async def test_an_unknown_tool_inside_a_group_is_skipped_without_splitting_it(
    env: EnvFactory,
) -> None:
    probe = Probe()
    look = probe.make("look", risk="inspect")
    script: list[Reply | str] = [calls(("look", "a"), ("nosuch", "x"), ("look", "b")), "ok"]
    async with env(script, tools=[look]) as e:
        await e.agent.run("go")
        assert sorted(probe.overlapped["a"]) == ["a", "b"]
        results = events(e.agent, "tool/result")
        assert [r.message.status for r in results] == ["ok", "skipped", "ok"]
        assert [c.call.id for c in events(e.agent, "tool/call")] == ["c0", "c2"]
        check_invariant(e.agent)


class Approver:
    """Answers permission questions; records that no two are open at once."""

    def __init__(self, probe: Probe, deny: str = "") -> None:
        self.probe = probe
        self.deny = deny
        self.open = 0
        self.most_open = 0
        self.asked: list[str] = []

    @agentrig.hookimpl
    async def permission_approver(self, payload: PermissionQuestion) -> str:
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        key = payload.arguments["key"]
        self.asked.append(key)
        self.probe.log.append(f"ask:{key}")
        await anyio.wait_all_tasks_blocked()  # a second question would have arrived by now
        self.open -= 1
        return "deny" if key == self.deny else "allow"


async def test_permission_questions_are_asked_one_at_a_time_in_call_order(
    env: EnvFactory,
) -> None:
    probe = Probe()
    look = probe.make("look", risk="inspect")
    approver = Approver(probe, deny="b")
    script: list[Reply | str] = [calls(("look", "a"), ("look", "b"), ("look", "c")), "ok"]
    async with env(
        script,
        tools=[look],
        plugins={"approver": approver},
        config={"permissions": {"mode": "default", "ask": ["look"]}},
    ) as e:
        await e.agent.run("go")
        assert approver.asked == ["a", "b", "c"]
        assert approver.most_open == 1
        # an allowed call starts at once, while the next one is being asked about
        assert probe.log.index("start:a") < probe.log.index("ask:c")
        results = events(e.agent, "tool/result")
        assert [r.message.status for r in results] == ["ok", "error", "ok"]
        assert "refused" in results[1].message.text
        check_invariant(e.agent)


class Around:
    """A tool_execution listener recording the hook's view of each call."""

    def __init__(self) -> None:
        self.before: list[str] = []
        self.after: list[str] = []

    @agentrig.hookimpl
    async def tool_execution(self, payload: ToolExecution, next: Any) -> ToolMessage:
        self.before.append(payload.call.id)
        message: ToolMessage = await next(payload)
        self.after.append(payload.call.id)
        return ToolMessage.of(message.call_id, message.name, message.text + " (seen)")


async def test_tool_execution_hooks_wrap_each_concurrent_call(env: EnvFactory) -> None:
    probe = Probe()
    look = probe.make("look", risk="inspect")
    around = Around()
    script: list[Reply | str] = [calls(("look", "a"), ("look", "b")), "ok"]
    async with env(script, tools=[look], plugins={"around": around}) as e:
        await e.agent.run("go")
        assert sorted(around.before) == ["c0", "c1"]
        assert sorted(around.after) == ["c0", "c1"]
        assert [r.message.text for r in events(e.agent, "tool/result")] == [
            "look:a (seen)",
            "look:b (seen)",
        ]


def quick_tool(started: list[str]) -> Any:
    @tool(risk="inspect")
    async def quick(key: str) -> str:
        """Answers at once."""
        started.append(key)
        return f"quick:{key}"

    return quick


async def test_cancel_mid_batch_gives_every_call_exactly_one_result(env: EnvFactory) -> None:
    release = anyio.Event()
    started: list[str] = []
    quick = quick_tool(started)

    @tool(risk="inspect")
    async def hang(key: str, ctx: ToolContext) -> str:
        """Waits until released or cancelled."""
        started.append(key)
        with ctx.signal.scope():
            await release.wait()
        return f"stopped: {ctx.signal.reason}" if ctx.signal.cancelled else "released"

    @tool(risk="modify")
    def after(key: str) -> str:
        """Behind the barrier: never reached."""
        started.append(key)
        return "ran"

    script: list[Reply | str] = [
        calls(("quick", "a"), ("hang", "b"), ("hang", "c"), ("after", "d"), ("quick", "e")),
        "unused",
    ]
    async with env(script, tools=[quick, hang, after]) as e:
        results: list[Any] = []

        async def run() -> None:
            results.append(await e.agent.run("go"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while len(started) < 3:
                await anyio.wait_all_tasks_blocked()
            e.agent.cancel("stop now")
        assert results[0].interrupted
        by_id = {r.message.call_id: r.message for r in events(e.agent, "tool/result")}
        assert [r.message.call_id for r in events(e.agent, "tool/result")] == [
            "c0",
            "c1",
            "c2",
            "c3",
            "c4",
        ]
        assert by_id["c0"].text == "quick:a"
        assert by_id["c1"].text == "stopped: stop now"
        assert by_id["c2"].text == "stopped: stop now"
        assert by_id["c3"].status == "not_executed"
        assert by_id["c4"].status == "not_executed"
        assert sorted(started) == ["a", "b", "c"]
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        check_invariant(e.agent)


async def test_a_caller_cancellation_mid_batch_settles_every_call_and_propagates(
    env: EnvFactory,
) -> None:
    started: list[str] = []
    quick = quick_tool(started)

    @tool(risk="inspect")
    async def forever(key: str) -> str:
        """Ignores the run's signal: only the caller's cancellation stops it."""
        started.append(key)
        await anyio.sleep_forever()
        return "never"

    script: list[Reply | str] = [calls(("quick", "a"), ("forever", "b"), ("quick", "c")), "unused"]
    async with env(script, tools=[quick, forever]) as e:
        with anyio.CancelScope() as scope:

            async def watch() -> None:
                while len(started) < 3:
                    await anyio.wait_all_tasks_blocked()
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                await e.agent.run("go")
        assert scope.cancelled_caught  # the caller's cancellation was not swallowed
        results = events(e.agent, "tool/result")
        assert [r.message.call_id for r in results] == ["c0", "c1", "c2"]
        assert results[0].message.text == "quick:a"
        assert results[1].message.status == "error"
        assert "cancelled by its caller" in results[1].message.text
        assert results[2].message.text == "quick:c"
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        check_invariant(e.agent)


# ---- synchronous tools run in worker threads when they run alongside others --------------------


async def test_sync_concurrent_calls_of_one_reply_overlap_in_worker_threads(
    env: EnvFactory,
) -> None:
    # each call waits until the other has started: on the event loop the first would block
    # the second from starting, and the barrier would break
    barrier = threading.Barrier(2, timeout=10)
    seen: list[tuple[str, bool, int]] = []

    def make(name: str, **options: Any) -> Any:
        def body(key: str, ctx: ToolContext) -> str:
            seen.append((key, ctx.alongside, threading.get_ident()))
            barrier.wait()
            return f"{name}:{key}"

        body.__doc__ = f"Sync probe {name}."
        return tool(id=name, **options)(body)

    look = make("look", risk="inspect")
    fetch = make("fetch", risk="execute", concurrent=True)
    script: list[Reply | str] = [calls(("look", "a"), ("fetch", "b")), "done"]
    async with env(script, tools=[look, fetch]) as e:
        result = await e.agent.run("go")
        assert result.value == "done"
        results = [ev.message for ev in events(e.agent, "tool/result")]
        assert [(m.status, m.text) for m in results] == [("ok", "look:a"), ("ok", "fetch:b")]
        check_invariant(e.agent)
    assert sorted(key for key, _, _ in seen) == ["a", "b"]
    assert all(alongside for _, alongside, _ in seen)
    assert threading.get_ident() not in {ident for _, _, ident in seen}
