"""The runtime's agent registry: ``create`` and ``resume`` with a setup transaction.

Creating an agent composes everything it needs *before* it is published: its tools, its
session (fresh, or loaded from a store), its store writer, and whatever the caller's
``setup`` registers.  Only then do ``agent_created`` listeners run -- a synchronous failure
there vetoes the creation -- and the agent becomes visible.  Any failure rolls the whole
transaction back: nothing is published, the writer is released.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, final

from pydantic import ValidationError

from agentrig.agent._agent import Agent
from agentrig.agent._config import AgentConfig, agent_configs
from agentrig.agent._delegation import Delegations, Lineage, check_subagents, delegation_tool
from agentrig.agent._dispatch import Gate
from agentrig.agent._handoff import handoff_tool
from agentrig.agent._port import AgentPort
from agentrig.errors import (
    AgentrigError,
    ConfigError,
    DuplicateIdError,
    HookError,
    UnknownIdError,
    closest_match,
    did_you_mean,
)
from agentrig.ids import AgentId, ToolId, new_session_id
from agentrig.ids import agent_id as _check_agent_id
from agentrig.ids import session_id as _check_session_id
from agentrig.kernel import issues_from_validation
from agentrig.lifecycle import SESSION_END_REASONS, AgentCreated, AgentDisposed, SessionStart
from agentrig.llm import PROVIDERS, ToolSpec, request_option_issues
from agentrig.session import (
    SESSION_STORES,
    InboxSpliced,
    Session,
    SessionStore,
    SessionWriter,
    find_cut_off_turn,
)
from agentrig.tools import TOOLS, TOOLSETS, Tool, check_tool_contribution
from agentrig.tools import tool as make_tool

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["AgentRegistry", "AgentSetup"]

AgentSetup = Callable[[Agent], Callable[[], None] | Awaitable[Callable[[], None] | None] | None]
"""Composes an agent's scoped world before publication; may return a commit callable."""


_FLAT = frozenset((str, int, float, bool, type(None)))
_CONFIGS_MAX = 256


@final
class AgentRegistry:
    """The live agents of one runtime."""

    def __init__(self, runtime: Runtime, *, gate: Gate | None = None) -> None:
        self.runtime = runtime
        self.gate = gate
        self._agents: dict[AgentId, Agent] = {}
        self._made: dict[Callable[..., Any], Tool] = {}
        # configs built from keyword settings, shared by the agents given the same ones
        # (a server making an agent per request keeps one config, not one each)
        # (the base config's id, the flat settings) -> (that base, the config built): the
        # entry holds its base and is used only for that very object, so a new config born
        # at a dead one's address never gets the dead one's result
        self._configs: dict[tuple[Any, ...], tuple[AgentConfig | None, AgentConfig]] = {}
        self._tool_specs: dict[str, tuple[Tool, ToolSpec, int]] = {}
        # each configured child's delegation tool and child config, made once per config
        self._children: dict[AgentId, tuple[AgentConfig, Tool, AgentConfig]] = {}
        self._handoffs: dict[AgentId, tuple[AgentConfig, Tool]] = {}
        self._child_count = 0

    def __iter__(self) -> Iterator[Agent]:
        return iter(tuple(self._agents.values()))

    def __len__(self) -> int:
        return len(self._agents)

    def ids(self) -> tuple[AgentId, ...]:
        return tuple(self._agents)

    def get(self, agent_id: str) -> Agent | None:
        """The agent named ``agent_id`` (a plain string, validated), or None."""
        return self._agents.get(_check_agent_id(agent_id))

    def require(self, agent_id: str) -> Agent:
        """The agent named ``agent_id`` (a plain string, validated); ``UnknownIdError``
        (with the closest name) when there is none."""
        agent_id = _check_agent_id(agent_id)
        agent = self._agents.get(agent_id)
        if agent is None:
            known = sorted(self._agents)
            hint = did_you_mean(agent_id, known)
            raise UnknownIdError(
                f"no agent {agent_id!r}{hint} (agents: {', '.join(known) or 'none'})",
                id=agent_id,
                known=known,
                suggestion=closest_match(agent_id, known),
            )
        return agent

    def _tools(self, config: AgentConfig) -> list[Tool]:
        catalog = self.runtime.catalog(TOOLS)
        tools: list[Tool] = []
        toolsets = self.runtime.catalog(TOOLSETS)
        for name in config.tools:
            # a name is a toolset's, or else a tool's id (a missing one: UnknownIdError)
            members = toolsets.get(name) or (ToolId(name),)
            for tool_name in members:
                tools.append(catalog.require(tool_name))
        return tools

    def _as_tool(self, item: Tool | Callable[..., Any]) -> Tool:
        """A tool as given, or a plain function made one as ``@agentrig.tool`` makes it (the
        same function is the same tool every time)."""
        if isinstance(item, Tool):
            return item
        if not (inspect.isfunction(item) or inspect.ismethod(item)):
            return check_tool_contribution(item)[0]  # refused, saying what a tool is
        made = self._made.get(item)
        if made is None:
            made = self._made[item] = make_tool(item)
        return made

    def _given_tools(self, given: Sequence[Tool | Callable[..., Any]]) -> list[Tool]:
        """Tools passed to ``create(tools=...)``: one ID, one tool -- a second tool with an id
        already taken (in the list, or by a different tool of the runtime) is refused."""
        catalog = self.runtime.catalog(TOOLS)
        chosen: dict[ToolId, tuple[int, Tool]] = {}
        for position, tool in enumerate(self._as_tool(item) for item in given):
            if tool.id in chosen and chosen[tool.id][1] is not tool:
                raise DuplicateIdError(
                    f"tool id {tool.id!r} is given twice to agents.create(tools=...) by two "
                    f"different tools (items {chosen[tool.id][0]} and {position}); "
                    "one ID, one tool"
                )
            registered = catalog.get(tool.id)
            if registered is not None and registered is not tool:
                origin = self.runtime.registry(TOOLS).source_of(tool.id) or "the runtime"
                raise DuplicateIdError(
                    f"tool id {tool.id!r} given to agents.create(tools=...) is already the id "
                    f"of a different tool of this runtime (from {origin}); one ID, one tool -- "
                    "rename one, or pass the runtime's tool (rt.catalog(TOOLS).require(id))"
                )
            chosen.setdefault(tool.id, (position, tool))
        return [tool for _, tool in chosen.values()]

    def _child(self, child: AgentId) -> tuple[Tool, AgentConfig]:
        """``child``'s delegation tool and the config its delegated agents get (named as
        the configured agent they are), built once per configured ``[agents.<child>]``."""
        base = agent_configs(self.runtime.loaded)[child]
        made = self._children.get(child)
        if made is None or made[0] is not base:
            config = base if base.name is not None else base.model_copy(update={"name": child})
            made = self._children[child] = (base, delegation_tool(child, base), config)
        return made[1], made[2]

    def _delegation_tools(self, agent_id: AgentId, config: AgentConfig) -> list[Tool]:
        configured = agent_configs(self.runtime.loaded)
        check_subagents(agent_id, config, configured, self.runtime.loaded.source)
        tools = [self._child(child)[0] for child in config.subagents]
        return tools + [self._handoff_tool(target) for target in config.handoffs]

    def _handoff_tool(self, target: AgentId) -> Tool:
        """``target``'s ``transfer_to_`` tool, built once per configured ``[agents.<id>]``."""
        base = agent_configs(self.runtime.loaded)[target]
        made = self._handoffs.get(target)
        if made is None or made[0] is not base:
            made = self._handoffs[target] = (base, handoff_tool(target, base))
        return made[1]

    def _child_id(self, child: AgentId) -> AgentId:
        """A fresh id for a delegated ``child`` (``reviewer-3``): one agent per delegation."""
        while True:
            self._child_count += 1
            candidate = f"{child}-{self._child_count}"
            if len(candidate) > 128:
                candidate = f"subagent-{self._child_count}"
            if candidate not in self._agents:
                return _check_agent_id(candidate)

    def _configured(self, lineage: Lineage, verb: str) -> tuple[AgentId, AgentConfig]:
        """The configured agent ``lineage`` names and the config its agents get."""
        self.runtime.ensure_open()
        name = lineage.configured_as
        if name is None or name not in agent_configs(self.runtime.loaded):
            raise UnknownIdError(
                f"no configured agent {name!r} to {verb}",
                id=str(name),
                known=tuple(agent_configs(self.runtime.loaded)),
                suggestion=None,
            )
        return name, self._child(name)[1]

    async def create_child(
        self, lineage: Lineage, *, agent_id: str | None = None, session_id: str | None = None
    ) -> Agent:
        """A delegated agent for ``lineage.configured_as``: a fresh session that records its
        lineage, published like any other agent (see :mod:`agentrig.agent._delegation`).

        ``agent_id`` / ``session_id`` (default: ``<child>-<n>`` and a minted id) let a plugin
        that runs children durably name them after the call that made them.
        """
        child, config = self._configured(lineage, "delegate to")
        config = self._selected(config)

        async def record(port: AgentPort) -> None:
            await port.log(lineage.event())  # the session's first event, before setup's

        return await self._publish(
            self._child_id(child) if agent_id is None else _check_agent_id(agent_id),
            config,
            Session(new_session_id() if session_id is None else _check_session_id(session_id)),
            self._store(config),
            None,
            None,
            prepare=record,
            delegations=Delegations(lineage),
        )

    async def create_handoff(
        self,
        parent: Agent,
        lineage: Lineage,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> Agent:
        """The agent ``parent`` hands the conversation to (``lineage.configured_as``): a new
        session that starts as a copy of ``parent``'s log, then records its lineage
        (``handoff``); published like any other agent (see :mod:`agentrig.agent._handoff`).

        ``agent_id`` / ``session_id`` (default: ``<target>-<n>`` and a minted id) let a
        plugin that runs handoffs durably name the target after the call that asked for it.
        """
        target, config = self._configured(lineage, "hand off to")
        config = self._selected(config)
        events = list(parent.session.events)
        session = Session(new_session_id() if session_id is None else _check_session_id(session_id))
        session.load(events)

        async def seed(port: AgentPort) -> None:
            if port.writer is not None and events:
                await port.writer.append(events)  # the conversation so far, as it was logged
            await port.log(lineage.event())

        return await self._publish(
            self._child_id(target) if agent_id is None else _check_agent_id(agent_id),
            config,
            session,
            self._store(config),
            None,
            None,
            prepare=seed,
            delegations=Delegations(lineage),
        )

    def _store(self, config: AgentConfig) -> SessionStore | None:
        if config.session_store is None:
            return None
        return self.runtime.catalog(SESSION_STORES).require(config.session_store)

    async def create(
        self,
        agent_id: str,
        config: AgentConfig | None = None,
        *,
        session_id: str | None = None,
        setup: AgentSetup | None = None,
        tools: Sequence[Tool | Callable[..., Any]] | None = None,
        **settings: Any,
    ) -> Agent:
        """Create and publish an agent with a fresh session (caller-supplied or minted id).

        ``config`` defaults to the ``[agents.<agent_id>]`` entry; keyword ``settings``
        (``provider=``, ``model=``, ``system_prompt=`` ...) build or override it.  ``tools``
        replaces the config's tools: tools, or plain functions (made tools as
        ``@agentrig.tool`` makes them).  ``agent_id`` and ``session_id`` may be plain strings:
        they are validated (``InvalidIdError`` names a malformed one) and branded.
        """
        self.runtime.ensure_open()
        agent_id = _check_agent_id(agent_id)
        sid = _check_session_id(session_id) if session_id is not None else new_session_id()
        resolved = self._selected(self._config(agent_id, config, settings))
        store = self._store(resolved)
        if store is not None and await store.exists(sid):
            raise DuplicateIdError(
                f"session {sid!r} already exists in store {resolved.session_store!r}; "
                "use resume() to continue it"
            )
        return await self._publish(agent_id, resolved, Session(sid), store, setup, tools)

    async def resume(
        self,
        session_id: str,
        *,
        agent_id: str,
        config: AgentConfig | None = None,
        setup: AgentSetup | None = None,
        tools: Sequence[Tool | Callable[..., Any]] | None = None,
        **settings: Any,
    ) -> Agent:
        """Rebuild an agent from a stored session (its log is loaded, its inbox restored);
        the ids may be plain strings (validated and branded)."""
        agent_id = _check_agent_id(agent_id)
        session_id = _check_session_id(session_id)
        resolved, store = self._stored(agent_id, config, settings, "resume")
        report = await store.load(session_id)
        session = Session(session_id)
        session.load(report.events)
        lineage = Lineage.of_session(session)

        async def restore(port: AgentPort) -> None:
            # inside the setup transaction: a failure here publishes nothing
            agent = port.agent
            agent.load_report = report
            for event in report.events:
                if isinstance(event.data, InboxSpliced):
                    agent.inbox.restore(event.data)
            await self._close_cut_off_turn(port)

        return await self._publish(
            agent_id,
            resolved,
            session,
            store,
            setup,
            tools,
            prepare=restore,
            delegations=Delegations(lineage),
        )

    async def fork(
        self,
        session_id: str,
        *,
        agent_id: str,
        up_to: int | None = None,
        config: AgentConfig | None = None,
        setup: AgentSetup | None = None,
        tools: Sequence[Tool | Callable[..., Any]] | None = None,
        **settings: Any,
    ) -> Agent:
        """A new agent on a new session that starts as a copy of stored ``session_id``'s log
        up to event ``up_to`` (its ``seq``; default: all of it).

        The copy keeps the events' ``seq`` and times, so the new agent sees exactly that
        history; a ``session/lineage`` event (origin ``forked``) follows it, and a turn the
        cut leaves open is closed as a resume closes one.  The source is not changed.
        """
        agent_id = _check_agent_id(agent_id)
        source = _check_session_id(session_id)
        resolved, store = self._stored(agent_id, config, settings, "fork")
        events = list((await store.load(source)).events)
        if up_to is not None:
            if not any(event.seq == up_to for event in events):
                last = events[-1].seq if events else 0
                raise UnknownIdError(
                    f"session {source!r} has no event {up_to} (its events: 1..{last})",
                    id=str(up_to),
                    known=(),
                    suggestion=None,
                )
            events = [event for event in events if event.seq <= up_to]
        session = Session(new_session_id())
        session.load(events)
        point = events[-1].seq if events else 0
        lineage = Lineage(origin="forked", parent_session=source, fork_point=point)

        async def seed(port: AgentPort) -> None:
            if port.writer is not None and events:
                await port.writer.append(events)  # the copy, as stored in the source
            await port.log(lineage.event())
            await self._close_cut_off_turn(port)

        return await self._publish(
            agent_id,
            resolved,
            session,
            store,
            setup,
            tools,
            prepare=seed,
            delegations=Delegations(lineage),
        )

    def _stored(
        self, agent_id: AgentId, config: AgentConfig | None, settings: dict[str, Any], what: str
    ) -> tuple[AgentConfig, SessionStore]:
        """The config and session store of an agent ``what`` (resume, fork) rebuilds from a
        stored log; ``UnknownIdError`` when it has no store."""
        self.runtime.ensure_open()
        resolved = self._selected(self._config(agent_id, config, settings))
        store = self._store(resolved)
        if store is None:
            raise UnknownIdError(
                f"agent {agent_id!r} has no session_store configured; {what} needs one",
                id=agent_id,
                known=(),
                suggestion=None,
            )
        return resolved, store

    async def _close_cut_off_turn(self, port: AgentPort) -> None:
        """Close a turn the stopped process left open, before anything new is sent.

        Every call without a result gets "not executed: the process stopped" and the turn
        ends ``interrupted``, so the next request never carries a call without its result.
        A journaled runtime keeps that authority with its journal (continuation settles
        what it can prove), so nothing is invented in the transcript there.
        """
        cut = find_cut_off_turn(port.session.events)
        if cut is None or port.agent.journaled:
            return
        for data in cut.closing_events():
            await port.log(data)
        port.agent.cut_off = cut

    def _selected(self, config: AgentConfig) -> AgentConfig:
        """``config`` on the runtime's default model selection when it follows it
        (``use_selection``) and one is selected now; checked like a saved one."""
        if not config.use_selection:
            return config
        service = self.runtime.model_selection
        found = service.lookup()
        if found is None:
            return config
        selection = service.check(found[0])
        effort = selection.reasoning_effort or config.reasoning_effort
        update = {"provider": selection.provider, "model": selection.model}
        return config.model_copy(update={**update, "reasoning_effort": effort})

    def _config(
        self, agent_id: AgentId, config: AgentConfig | None, settings: dict[str, Any]
    ) -> AgentConfig:
        _check_agent_id(agent_id)
        if agent_id in self._agents:
            raise DuplicateIdError(f"an agent named {agent_id!r} already exists in this runtime")
        base = config or agent_configs(self.runtime.loaded).get(agent_id)
        if base is None:
            if not settings:
                raise UnknownIdError(
                    f"no [agents.{agent_id}] in the config and no settings given",
                    id=agent_id,
                    known=tuple(agent_configs(self.runtime.loaded)),
                    suggestion=None,
                )
            return self._built(agent_id, None, settings)
        if settings:
            return self._built(agent_id, base if config is None else None, settings, config)
        return base

    def _built(
        self,
        agent_id: AgentId,
        base: AgentConfig | None,
        settings: dict[str, Any],
        given: AgentConfig | None = None,
    ) -> AgentConfig:
        """``settings`` over ``base`` (or ``given``), validated; equal flat settings over the
        same configured base give the one shared (frozen) config.  Invalid settings are a
        ``ConfigError`` naming each keyword, raised before anything is registered."""
        key: tuple[Any, ...] | None = None
        if given is None and all(type(v) in _FLAT for v in settings.values()):
            # the type is part of the key: 1, 1.0 and True are equal but validate apart
            key = (id(base), *sorted((k, type(v), v) for k, v in settings.items()))
            hit = self._configs.get(key)
            if hit is not None and hit[0] is base:
                return hit[1]
        origin = base or given
        values = {**origin.model_dump(), **settings} if origin is not None else settings
        try:
            built = AgentConfig.model_validate(values)
        except ValidationError as exc:
            issues = issues_from_validation(exc, AgentConfig)
            raise ConfigError(issues, source=f"agents.create({agent_id!r})") from None
        if key is not None:
            if len(self._configs) >= _CONFIGS_MAX:
                self._configs.clear()
            self._configs[key] = (base, built)
        return built

    async def _publish(
        self,
        agent_id: AgentId,
        config: AgentConfig,
        session: Session,
        store: SessionStore | None,
        setup: AgentSetup | None,
        tools: Sequence[Tool | Callable[..., Any]] | None,
        *,
        prepare: Callable[[AgentPort], Awaitable[None]] | None = None,
        delegations: Delegations | None = None,
    ) -> Agent:
        provider = self.runtime.catalog(PROVIDERS).require(config.provider)
        # options the provider would not send refuse the agent now, not at its first request
        refused = request_option_issues(
            provider, config.options, where=("agents", agent_id, "options")
        )
        if refused:
            raise ConfigError(refused, source=self.runtime.loaded.source)
        agent_tools = self._given_tools(tools) if tools is not None else self._tools(config)
        if config.subagents or config.handoffs:
            agent_tools += self._delegation_tools(agent_id, config)
        writer: SessionWriter | None = None
        if store is not None:
            writer = await store.open_writer(session.id)
        port = AgentPort(
            self.runtime,
            config,
            session,
            tools=agent_tools,
            writer=writer,
            gate=self.gate,
            tool_specs=self._tool_specs,
            delegations=delegations,
        )
        agent = Agent(port, agent_id)
        try:
            await self._set_up(agent, port, writer, setup, prepare)
        except BaseException:
            port.disposed = True
            if writer is not None:
                await writer.aclose()
            raise
        self._agents[agent_id] = agent
        self.runtime.hooks.notify("session_start", SessionStart(agent=agent, runtime=self.runtime))
        return agent

    async def _set_up(
        self,
        agent: Agent,
        port: AgentPort,
        writer: SessionWriter | None,
        setup: AgentSetup | None,
        prepare: Callable[[AgentPort], Awaitable[None]] | None,
    ) -> None:
        """Run the setup steps and every check before publication; store what setup wrote."""
        session, agent_id = port.session, agent.id
        commit: Any = None
        if prepare is not None:
            await prepare(port)  # writes what it records itself
        written = len(session)
        if setup is not None:
            commit = setup(agent)
            if inspect.isawaitable(commit):
                commit = await commit
        # the runtime may have closed while setup ran: never publish into a closed one
        # (its registry was already disposed and would never close this agent)
        self.runtime.ensure_open()
        if agent_id in self._agents:
            raise DuplicateIdError(f"an agent named {agent_id!r} was created meanwhile")
        veto = self.runtime.hooks.notify_vetoable("agent_created", AgentCreated(agent=agent))
        if veto is not None:
            raise HookError(f"agent_created listener vetoed agent {agent_id!r}: {veto!r}") from veto
        if callable(commit):
            commit()
        if writer is not None and len(session) > written:
            # what setup appended (seeded history, and inbox splices already queued) is
            # part of the log: stored once, in order, as one batch, after every check
            # passed (a refused creation persists nothing) and before publication
            port.pending = list(session.events[written:])
            await port.flush()
            self.runtime.ensure_open()  # closed while the batch was written

    async def dispose(
        self, agent_id: str, *, cancel_running: bool = False, reason: str = "other"
    ) -> None:
        """Settle the agent's runs (or cancel the running one), close its writer, remove it
        and notify; ``reason`` is why its session ended (``SessionEnd`` hooks get it)."""
        if reason not in SESSION_END_REASONS:
            known = ", ".join(sorted(SESSION_END_REASONS))
            raise AgentrigError(
                f"unknown session end reason {reason!r} (known: {known})", code="agent.end_reason"
            )
        agent_id = _check_agent_id(agent_id)
        agent = self._agents.get(agent_id)
        if agent is None:
            return
        await agent.aclose(cancel_running=cancel_running)
        del self._agents[agent_id]
        self.runtime.hooks.notify(
            "agent_disposed",
            AgentDisposed(agent_id=agent_id, session_id=agent.session_id, reason=reason),
        )

    async def aclose(self) -> None:
        errors: list[BaseException] = []
        for agent_id in reversed(list(self._agents)):
            try:
                await self.dispose(agent_id, cancel_running=self.runtime.cancel_running)
            except Exception as exc:  # every agent is disposed; failures are reported together
                errors.append(exc)
        if errors:
            raise AgentrigError(
                f"{len(errors)} agent(s) failed to dispose: {errors!r}", code="agent.dispose"
            )
