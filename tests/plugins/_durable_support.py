"""Shared helpers of the agentrig-dbos tests and their child processes.

A durable composition whose scripted model answers by round (round 1 calls ``effect`` with
``one``, round 2 with ``two``, round 3 answers ``done``): the reply depends only on the
request, so a restarted process continues a run exactly where the journal says it stands.
The ``effect`` tool's effect is one line ``<live agent id>:<label>`` in a marker file.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agentrig import hookimpl
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.ids import SessionId
from agentrig.kernel import MemorySource, Runtime, open_runtime
from agentrig.lifecycle import ExecutionControlError
from agentrig.llm import ModelRequest
from agentrig.session import Session, SessionStore, ToolCallEvent, ToolResultEvent
from agentrig.tools import ToolContext, tool

__all__ = [
    "ByRound",
    "Delegating",
    "Killer",
    "config",
    "durable_runtime",
    "effect_tool",
    "marker_lines",
    "session_problems",
    "wait_for_host",
    "output_of",
]

LABELS = ("one", "two")


def die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class ByRound(ScriptedProvider):
    """Answers by the number of tool results in the request (restart-proof)."""

    def __init__(
        self,
        kill_in_round: int | None = None,
        delay: float = 0.0,
        *,
        labels: tuple[str, ...] = LABELS,
        log: Path | None = None,
    ) -> None:
        super().__init__()
        self.kill_in_round = kill_in_round
        self.delay = delay  # seconds per reply: keeps runs in flight for the chaos tests
        self.labels = labels
        self.log = log  # a line "<pid>" per request made (to count them over processes)

    def _take(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
        # only effects that are known to have happened count: a call the host settled as
        # "not executed" is asked for again (a new call id)
        done = sum(1 for m in request.messages if m.role == "tool" and m.text.startswith("wrote"))
        if self.kill_in_round == done + 1:
            die()  # the model intent of this round is journaled; its response never is
        if done < len(self.labels):
            label = self.labels[done]
            tries = sum(1 for m in request.messages if m.role == "tool") - done
            call_id = f"call_{label}" + (f"_{tries}" if tries else "")
            call = ScriptedCall("effect", {"label": label}, id=call_id)
            return Reply(tool_calls=(call,), delay=self.delay)
        return Reply(text="done", delay=self.delay)


class Delegating(ScriptedProvider):
    """The parent of the delegation tests: delegates to ``reviewer`` once (call
    ``call_rev``), then answers ``done: <the reviewer's answer>``; ``handoff``: hands the
    conversation to ``reviewer`` instead."""

    def __init__(self, *, handoff: bool = False) -> None:
        super().__init__()
        self.handoff = handoff

    def _take(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        results = [m for m in request.messages if m.role == "tool"]
        if self.handoff:
            return Reply(tool_calls=(ScriptedCall("transfer_to_reviewer", {}, id="call_t"),))
        if not results:
            call = ScriptedCall("delegate_reviewer", {"prompt": "review it"}, id="call_rev")
            return Reply(tool_calls=(call,))
        return Reply(text=f"done: {results[-1].text}")


def delegation_extra() -> dict[str, Any]:
    """The ``extra`` settings of the delegation tests: ``assistant`` delegates to
    ``reviewer``, whose model (``review``) calls ``effect`` with ``c1``, then ``c2``."""
    return {
        "providers": {"review": {"kind": "scripted"}},
        "agents": {
            "assistant": {
                "provider": "local",
                "model": "m1",
                "session_store": "store",
                "subagents": ["reviewer"],
            },
            "reviewer": {
                "provider": "review",
                "model": "m2",
                "tools": ["effect"],
                "session_store": "store",
                "description": "Reviews, writing two marker lines.",
            },
        },
    }


def effect_tool(marker: Path, *, die_after: str | None = None, idempotent: bool = False) -> Any:
    """A tool whose effect is one line in ``marker``; ``die_after`` kills the process right
    after that label's effect, before its result is journaled.  It is declared not
    idempotent (its effect must happen exactly once) unless ``idempotent``: then a crash
    mid-effect runs it again."""

    def effect(label: str, ctx: ToolContext) -> str:
        with marker.open("a", encoding="utf-8") as handle:
            handle.write(f"{ctx.agent.id}:{label}\n")
            handle.flush()
            os.fsync(handle.fileno())
        with marker.with_name("pids.txt").open("a", encoding="utf-8") as handle:
            handle.write(f"{ctx.agent.id} {os.getpid()} {time.time():.2f}\n")  # who, when
        if die_after == label:
            die()
        return f"wrote {label}"

    effect.__doc__ = "Append the label to the marker file."
    return tool(id="effect", risk="inspect", idempotent=idempotent)(effect)


class Killer:
    """A listener that kills the process at a named point: ``before-step:1`` (the turn is
    in the session, its prompt is not), ``before-model:<round>`` (before anything of that
    round is journaled) or ``after-tool:<label>`` (after its result is) -- or, at
    ``fail-after-tool:<label>``, fails the run there once (an execution-control error, as a
    journal that cannot write raises; ``<tmp>/failed`` marks that it did)."""

    def __init__(self, point: str, tmp: Path | None = None) -> None:
        self.point = point
        self.rounds = 0
        self.tmp = tmp

    @hookimpl(tryfirst=True)
    async def pre_step(self, payload: Any, next: Any) -> Any:
        if self.point == "before-step:1" and self.rounds == 0:
            die()  # the turn started in the session; its prompt is not written yet
        return await next(payload)

    @hookimpl(tryfirst=True)
    async def request_config(self, payload: Any, next: Any) -> Any:
        self.rounds += 1
        if self.point == f"before-model:{self.rounds}":
            die()
        return await next(payload)

    @hookimpl(tryfirst=True)
    async def turn_stopping(self, payload: Any) -> None:
        if self.point == "child-stopping" and str(payload.agent.id).startswith("reviewer."):
            die()  # the child's answer is journaled; its parent's call is not settled

    @hookimpl(tryfirst=True)
    async def tool_execution(self, payload: Any, next: Any) -> Any:
        if self.point == f"before-call:{payload.call.name}":
            die()  # the model asked for the call; nothing of it is journaled
        result = await next(payload)
        label = payload.call.arguments.get("label")
        if self.point == f"after-tool:{label}":
            die()
        if self.point == f"fail-after-tool:{label}" and self.tmp is not None:
            flag = self.tmp / "failed"
            if not flag.exists():
                flag.touch()
                raise ExecutionControlError(f"the run fails after effect {label} (a test)")
        return result


def config(tmp: Path, dbos: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "session_stores": {
            "store": {"kind": "jsonl", "options": {"directory": str(tmp / "sessions")}}
        },
        "tools": {"effect": {}},
        "permissions": {"mode": "bypass"},
        "agents": {
            "assistant": {
                "provider": "local",
                "model": "m1",
                "tools": ["effect"],
                "session_store": "store",
            }
        },
        "dbos": {"state_dir": str(tmp / "state"), **(dbos or {})},
        **extra,
    }


@asynccontextmanager
async def durable_runtime(
    tmp: Path,
    *,
    point: str = "none",
    dbos: dict[str, Any] | None = None,
    plugins: Sequence[tuple[str, object]] = (),
    extra: dict[str, Any] | None = None,
) -> AsyncIterator[Runtime]:
    memory = MemorySource()
    die_after = point.removeprefix("in-effect:") if point.startswith("in-effect:") else None
    kill_round = int(point.removeprefix("in-model:")) if point.startswith("in-model:") else None
    shared = tmp / "settings.json"  # what every process of one test shares (a database)
    given: dict[str, Any] = {}
    if shared.exists():
        given = json.loads(shared.read_text(encoding="utf-8"))
        dbos = {**given.get("dbos", {}), **(dbos or {})}
        extra = {**given.get("extra", {}), **(extra or {})}
    idempotent = bool(given.get("idempotent"))  # settings.json "idempotent": true
    effect = effect_tool(tmp / "marker.txt", die_after=die_after, idempotent=idempotent)
    memory.add("tools", "effect", effect)
    settings = config(tmp, dbos)
    for key, value in (extra or {}).items():
        settings[key] = {**settings.get(key, {}), **value}
    overrides: list[tuple[str, str, object]] = [
        ("providers", "local", ByRound(kill_round, given.get("delay", 0.0)))
    ]
    if given.get("delegation"):  # the parent delegates (or hands off); the child's effects
        child = ByRound(kill_round, labels=("c1", "c2"), log=tmp / "child_requests.txt")
        parent = Delegating(handoff=given.get("delegation") == "handoff")
        overrides = [("providers", "local", parent), ("providers", "review", child)]
    async with open_runtime(
        settings,
        memory=memory,
        overrides=overrides,
        plugins=[("killer", Killer(point, tmp)), *plugins],
        environ={},
    ) as rt:
        yield rt


def marker_lines(tmp: Path) -> list[str]:
    marker = tmp / "marker.txt"
    return marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []


async def session_problems(store: SessionStore, session_id: str) -> list[str]:
    """What is inconsistent in a stored session log (empty: consistent)."""
    report = await store.load(session_id)
    problems = [f"damaged: {report.detail}"] if report.damaged else []
    session = Session(SessionId(session_id))
    session.load(report.events)
    calls: dict[str, int] = {}
    results: dict[str, int] = {}
    for event in report.events:
        if isinstance(event.data, ToolCallEvent):
            calls[event.data.call.id] = calls.get(event.data.call.id, 0) + 1
        elif isinstance(event.data, ToolResultEvent):
            call = event.data.message.call_id
            results[call] = results.get(call, 0) + 1
    for call, count in sorted(calls.items()):
        if count != 1 or results.get(call) != 1:
            problems.append(f"call {call}: {count} call event(s), {results.get(call, 0)} result(s)")
    problems += [f"result without call {c}" for c in sorted(set(results) - set(calls))]
    prompts = [m for m in session.derive_messages() if m.role == "user"]
    if len(prompts) != 1:
        problems.append(f"{len(prompts)} user messages in the model's view (expected 1)")
    return problems


async def wait_for_host(durable: Any, run_id: str) -> tuple[str, ...]:
    """The effects a resumed run waits for the host to settle, once it waits (60 s at most)."""
    import anyio

    waiting: tuple[str, ...] = ()
    with anyio.fail_after(60):
        while not waiting:
            waiting = await durable.waiting_for(run_id)
            await anyio.sleep(0.1)
    return waiting


async def output_of(process: Any) -> str:
    """All a child process printed, once it exited with 0 (60 s at most)."""
    import anyio

    assert process.stdout is not None
    with anyio.fail_after(60):
        out = b"".join([chunk async for chunk in process.stdout]).decode()
        assert await process.wait() == 0
    return out
