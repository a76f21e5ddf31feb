"""Shared helpers for the agent-loop contract tests (imported by the test modules).

* :func:`assert_one_result_per_call` -- the loop's invariant: every tool call in the derived
  history has exactly one result, right after the assistant message that made it;
* :class:`WatchedProvider` -- the scripted provider, plus a way to wait until it received
  its *n*-th request (no sleeps needed to know a call is in flight);
* :class:`Env` / :func:`open_env` -- a runtime with one scripted agent and in-memory tools;
* a few small tools used across the suite.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

from agentrig.agent import Agent
from agentrig.builtins._scripted import Reply, ScriptedProvider
from agentrig.ids import AgentId
from agentrig.kernel import MemorySource, Runtime
from agentrig.llm import (
    AssistantMessage,
    Message,
    ModelRequest,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from agentrig.session import SessionEventData
from agentrig.testing import Overrides, RuntimeFactory
from agentrig.tools import ToolContext, tool

# ---- the invariant ------------------------------------------------------------------------


def assert_one_result_per_call(messages: Iterable[Any]) -> None:
    """Every tool call has exactly one result, and every result answers a call.

    Results must follow the assistant message that made the calls, before any other user or
    assistant message (the order every provider API requires).  Call ids are matched within
    one assistant message only: providers may reuse ids across turns.
    """
    pending: list[str] = []
    owner = -1
    for position, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            assert message.call_id in pending, (
                f"message {position}: tool result for {message.call_id!r} ({message.name}) "
                f"answers no open call (open: {pending}, opened by message {owner})"
            )
            pending.remove(message.call_id)
            continue
        assert not pending, (
            f"message {position} ({message.role}) arrived while calls {pending} of message "
            f"{owner} had no result"
        )
        if isinstance(message, AssistantMessage):
            pending = [call.id for call in message.tool_calls]
            owner = position
    assert not pending, f"calls {pending} of message {owner} never got a result"


def check_invariant(agent: Agent) -> None:
    """The invariant over the agent's derived history (call it after every scenario)."""
    assert_one_result_per_call(agent.session.derive_messages())


# ---- reading the log ------------------------------------------------------------------------


def events(agent: Agent, kind: str) -> list[Any]:
    """The payloads of every event of type ``kind`` in the agent's log, in order."""
    return [e.data for e in agent.session.events if e.type == kind]


def event_types(agent: Agent) -> list[str]:
    return [e.type for e in agent.session.events]


def texts(messages: Sequence[Message]) -> list[str]:
    """A compact rendering of a history: ``role:text`` per message."""
    out: list[str] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append(f"system:{message.text}")
        elif isinstance(message, ToolMessage):
            out.append(f"tool:{message.name}={message.text}")
        elif isinstance(message, AssistantMessage):
            calls = ",".join(c.name for c in message.tool_calls)
            out.append(f"assistant:{message.text}" + (f"[{calls}]" if calls else ""))
        else:
            assert isinstance(message, UserMessage)
            out.append(f"user:{message.text}")
    return out


def request_texts(request: ModelRequest) -> list[str]:
    return texts(list(request.messages))


def data_of(event_data: SessionEventData) -> dict[str, Any]:
    return event_data.model_dump()


# ---- the provider -------------------------------------------------------------------------


class WatchedProvider(ScriptedProvider):
    """A scripted provider that can be awaited until it received ``n`` requests."""

    def __init__(self, script: Iterable[Reply | str] = (), **kwargs: Any) -> None:
        super().__init__(script, **kwargs)
        self._waiters: list[tuple[int, anyio.Event]] = []

    def _take(self, request: ModelRequest) -> Reply:
        try:
            return super()._take(request)
        finally:
            for count, event in self._waiters:
                if len(self.requests) >= count:
                    event.set()

    async def received(self, count: int = 1) -> None:
        """Wait until ``count`` requests arrived (the provider is then answering)."""
        if len(self.requests) >= count:
            return
        event = anyio.Event()
        self._waiters.append((count, event))
        await event.wait()


# ---- tools ----------------------------------------------------------------------------------


@tool
def echo(text: str) -> str:
    """Repeat the text."""
    return f"echo:{text}"


@tool
def clock() -> str:
    """Tell the time."""
    return "12:00"


@tool
def explode(reason: str = "boom") -> str:
    """Always fails."""
    raise RuntimeError(reason)


class Gate:
    """A tool that blocks until released (or its run is cancelled); ``entered`` is set while
    it waits.  It answers ``opened`` or ``stopped: <reason>``."""

    def __init__(self, name: str = "gate") -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.calls = 0

        async def gate(ctx: ToolContext) -> str:
            self.calls += 1
            self.entered.set()
            with ctx.signal.scope():
                await self.release.wait()
            if ctx.signal.cancelled:
                return f"stopped: {ctx.signal.reason}"
            return "opened"

        gate.__doc__ = "Wait at the gate."
        self.tool = tool(id=name)(gate)


# ---- composing a runtime --------------------------------------------------------------------


class Env:
    """A runtime with one agent (``assistant``) answered by ``provider``."""

    def __init__(self, rt: Runtime, provider: WatchedProvider) -> None:
        self.rt = rt
        self.provider = provider

    @property
    def agent(self) -> Agent:
        return self.rt.agent(AgentId("assistant"))


def agent_config(tools: Iterable[Any] = (), **settings: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"provider": "local", "model": "m1"}
    config["tools"] = [t.id for t in tools]
    config.update(settings)
    return config


class EnvFactory:
    """``async with env(replies, tools=..., plugins=..., **agent settings) as e:``."""

    def __init__(self, factory: RuntimeFactory, entries: MemorySource, overrides: Overrides):
        self.factory = factory
        self.entries = entries
        self.overrides = overrides

    @asynccontextmanager
    async def __call__(
        self,
        replies: Iterable[Reply | str] = (),
        *,
        tools: Iterable[Any] = (),
        plugins: Mapping[str, object] | None = None,
        provider: WatchedProvider | None = None,
        config: Mapping[str, Any] | None = None,
        **settings: Any,
    ) -> AsyncIterator[Env]:
        tools = list(tools)
        for t in tools:
            self.entries.add("tools", t.id, t)
        prov = provider if provider is not None else WatchedProvider(replies)
        self.overrides.set("providers", "local", prov)
        cfg: dict[str, Any] = {
            "providers": {"local": {"kind": "scripted"}},
            "agents": {"assistant": agent_config(tools, **settings)},
            # the loop's contracts, not the permission policy: every test tool may run
            "permissions": {"mode": "bypass"},
        }
        if config:
            cfg.update(config)
        async with self.factory(cfg, plugins=plugins) as rt:
            yield Env(rt, prov)
