"""Durable runs: each run is a DBOS workflow whose model and tool calls are journaled.

DBOS keeps the *run* durable: it is recorded before it starts, a process that dies leaves it
pending, and the next launch with the same executor id (or any worker, for a queued run)
takes it up again.  The execution journal keeps the *steps* durable: every model call and
tool effect is journaled before and after it crosses the boundary.  A recovered workflow
never replays the loop: it asks the journal and continues with
:func:`~agentrig.journal.continue_execution`, which reuses every settled result and refuses
what it cannot prove -- so no session event is appended twice and no effect runs twice.

A run that needs a person's approval holds no worker capacity while it waits: the durable
approver raises :class:`~agentrig_dbos._errors.RunSuspended` (the call stays pending, as a
crash would leave it), the workflow *finishes* with the question in its output, and the
answer enqueues the next link of the run -- a workflow with the deterministic id
``<run id>.a<n>`` that continues the run through the journal with the decision.  ``result``,
``status``, ``question`` and ``events`` by the run's id follow the chain.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, runtime_checkable

import anyio
from dbos import DBOS, DBOSClient, SetWorkflowID, WorkflowHandleAsync
from dbos import error as dbos_error

from agentrig.agent import Agent, AgentConfig, RunOptions, agent_configs
from agentrig.cancel import CancelSignal
from agentrig.errors import UnknownIdError, closest_match, did_you_mean
from agentrig.ids import AgentId, EntryId, InvocationId, RunId, SessionId, agent_id, new_run_id
from agentrig.ids import session_id as check_session_id
from agentrig.journal import (
    ExecutionJournal,
    ExecutionState,
    ReconciliationRequired,
    RecordJournal,
    continue_execution,
    reconcile_model,
    reconcile_tool,
)
from agentrig.llm import ToolMessage, UserMessage
from agentrig.plugin import PermissionQuestion, Runtime, hookimpl
from agentrig.session import (
    SESSION_STORES,
    SessionEvent,
    SessionStore,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)
from agentrig_dbos._children import DurableChildren, handed_off
from agentrig_dbos._config import DbosSection
from agentrig_dbos._database import check_reachable
from agentrig_dbos._errors import (
    DurableError,
    DurableSetupError,
    NotFailedError,
    NotWaitingError,
    RunSuspended,
    UnknownRunError,
)
from agentrig_dbos._executors import ExecutorLease, Watcher
from agentrig_dbos._executors import take as take_lease
from agentrig_dbos._fingerprint import composition_fingerprint
from agentrig_dbos._schemas import checked_output, read_input, versioned, workflow_input

__all__ = ["WORKFLOW", "Durable", "DurableApprover", "DurableResult"]

WORKFLOW = "agentrig.durable_run"
#: DBOS statuses of a run that will write no more events
FINISHED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})
#: DBOS status of a run whose latest link finished waiting for a person's answer
WAITING = "WAITING"
#: DBOS statuses of a link that stopped without finishing the run: ``retry`` takes it up
FAILED = frozenset({"ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})
#: the suffix of the link that retries a failed one (``<link id>.r``)
RETRY = ".r"


class _Changes(Protocol):
    async def next(self) -> int: ...


@runtime_checkable
class _Announcing(Protocol):
    """A session store that announces its commits (``agentrig-postgres``: LISTEN/NOTIFY)."""

    def changes(self, session_id: str) -> AbstractAsyncContextManager[_Changes]: ...


#: the host whose runtime executes this process's workflows (DBOS is one per process)
_ACTIVE: Durable | None = None


@dataclass(frozen=True)
class DurableResult:
    """A finished durable run: its id, the agent and session it ran in, its answer."""

    run_id: str
    agent: str
    session_id: str
    text: str


@DBOS.workflow(name=WORKFLOW)
async def _durable_run(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """One link of a durable run: the run itself (``origin`` None), or its continuation
    number ``link`` after an answer (``decisions``: the answers not used yet).

    Its arguments are what DBOS stored: the versioned input envelope (older releases'
    positional arguments are migrated; a newer envelope is refused by name).
    """
    host = _ACTIVE
    workflow_id = DBOS.workflow_id
    if host is None or workflow_id is None:
        raise DurableSetupError("no durable runtime is launched in this process")
    given = read_input(args, kwargs)
    return await host.execute(
        workflow_id, given.agent, given.prompt, given.origin, given.decisions, given.link
    )


def _waiting(value: Any) -> bool:
    """Whether a link's output says the run waits for a person's answer or for the host.

    Every read of a stored output passes here: one of a newer version than this plugin
    raises :class:`~agentrig.schemas.SchemaTooNewError`.
    """
    value = checked_output(value)
    return isinstance(value, dict) and (
        value.get("waiting") is not None or value.get("unproven") is not None
    )


def _same_call(decision: dict[str, Any], question: dict[str, Any]) -> bool:
    return all(decision.get(key) == question[key] for key in ("call_id", "tool", "arguments"))


def _new_run_id() -> str:
    return f"dr-{secrets.token_hex(8)}"


def session_of(run_id: str) -> SessionId:
    """The session a durable run writes: one per run, named after it."""
    return check_session_id(f"ses-{run_id}")


def live_agent_id(agent: str, run_id: str) -> AgentId:
    """The live agent of one run (several runs of one agent may execute at once)."""
    return agent_id(f"{agent}.{run_id}")


class Durable:
    """The durable-runs service of one runtime (``rt.services.require(DURABLE)``)."""

    def __init__(self, rt: Runtime, section: DbosSection, url: str, journal: ExecutionJournal):
        self.rt = rt
        self.section = section
        self.system_database_url = url
        self.journal = journal
        self._launched = False
        self._client: DBOSClient | None = None
        self._executor: str | None = None
        self._lease: ExecutorLease | None = None
        self._fingerprint: str | None = None
        self._watcher: Watcher | None = None
        #: the answers each executing link (by workflow id) has not used yet
        self._decisions: dict[str, list[dict[str, Any]]] = {}
        #: the live agents executing durable runs (or their children), by their run's key
        self._keys: dict[AgentId, str] = {}
        #: handoff targets of the runs executing here (disposed when the run's link ends)
        self._adopted: dict[AgentId, str] = {}
        #: the runtime's CHILD_RUNS: a durable run's children are journaled steps of it
        self.children = DurableChildren(self)

    # ---- lifecycle ----------------------------------------------------------------------------
    @property
    def launched(self) -> bool:
        """Whether this process executes durable runs (after :meth:`launch`)."""
        return self._launched

    @property
    def fingerprint(self) -> str:
        """The fingerprint of this runtime's composition: the runs it submits are taken
        only by workers composed the same (see :mod:`agentrig_dbos._fingerprint`)."""
        if self._fingerprint is None:
            self._fingerprint = composition_fingerprint(self.rt)
        return self._fingerprint

    @property
    def executor(self) -> str:
        """This process's executor id (runs it leaves pending resume under the same id)."""
        return self._executor or self.section.executor_id or "local"

    async def launch(self, *, executor_id: str | None = None) -> None:
        """Start executing durable runs in this process: runs this executor left pending
        resume, and the configured queues (``[dbos] queues`` and ``default_queue``) -- only
        those -- are served.  Idempotent."""
        global _ACTIVE
        if self._launched:
            return
        self._executor = executor_id
        if _ACTIVE is not None:
            raise DurableSetupError(
                "another runtime of this process already executes durable runs; DBOS runs "
                "one per process"
            )
        config: Any = {
            "name": self.section.app_name,
            "system_database_url": self.system_database_url,
            "run_admin_server": False,
            "log_level": "WARNING",
        }
        config["executor_id"] = self.executor
        config["application_version"] = self.fingerprint  # DBOS dequeues by version
        url, app, executor = self.system_database_url, self.section.app_name, self.executor
        await anyio.to_thread.run_sync(lambda: check_reachable(url))
        # one live worker per executor id (refused, saying so, before DBOS takes its runs)
        self._lease = await anyio.to_thread.run_sync(lambda: take_lease(url, app, executor))
        _ACTIVE = self
        try:
            DBOS(config=config)
            # a worker serves the queues its [dbos] table names (DBOS would take from every
            # queue any process registered in the shared database)
            DBOS.listen_queues(sorted(self._queues()))
            DBOS.launch()  # on this loop's thread: DBOS runs its async workflows on this loop
            for name, queue in self._queues().items():
                await DBOS.register_queue_async(
                    name,
                    global_concurrency=queue[0],
                    worker_concurrency=queue[1],
                    polling_interval_sec=0.1,
                )
            self._watcher = Watcher(
                await self._client_of(),
                url,
                app,
                executor,
                self.section.recover_after,
                self.section.default_queue,
                own=self._lease,
            )
            self._watcher.start()
        except BaseException:
            _ACTIVE = None
            await anyio.to_thread.run_sync(DBOS.destroy)
            await self._release()
            raise
        self._launched = True

    async def _release(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            await anyio.to_thread.run_sync(watcher.stop)
        lease, self._lease = self._lease, None
        if lease is not None:
            await anyio.to_thread.run_sync(lease.release)

    @property
    def recovered(self) -> int:
        """How many runs of gone executors this worker put back on their queues."""
        return self._watcher.recovered if self._watcher is not None else 0

    def _queues(self) -> dict[str, tuple[int | None, int | None]]:
        queues = {n: (q.concurrency, q.worker_concurrency) for n, q in self.section.queues.items()}
        queues.setdefault(self.section.default_queue, (None, None))
        return queues

    async def aclose(self) -> None:
        """Stop executing runs here (unfinished ones stay pending for the next launch)."""
        global _ACTIVE
        watcher, self._watcher = self._watcher, None
        if watcher is not None:  # before the client it uses is destroyed
            await anyio.to_thread.run_sync(watcher.stop)
        client, self._client = self._client, None
        if client is not None:
            await anyio.to_thread.run_sync(client.destroy)
        if self._launched:
            self._launched = False
            _ACTIVE = None
            await anyio.to_thread.run_sync(DBOS.destroy)
        await self._release()  # the id is free once DBOS stopped taking runs

    # ---- starting and awaiting runs ----------------------------------------------------------
    def _check_agent(self, agent: str) -> AgentConfig:
        config = agent_configs(self.rt.loaded).get(
            AgentId(agent)
        )  # a lookup: a miss is refused below
        if config is None:
            known = tuple(sorted(agent_configs(self.rt.loaded)))
            hint = did_you_mean(agent, known)
            raise UnknownIdError(
                f"no agent {agent!r} is declared in [agents]; a durable run names a declared "
                f"agent (declared: {', '.join(known) or 'none'}){hint}",
                id=agent,
                known=known,
                suggestion=closest_match(agent, known),
            )
        if config.session_store is None:
            raise DurableSetupError(
                f"agent {agent!r} has no session_store: a durable run resumes its session "
                f"after a crash, so set [agents.{agent}] session_store"
            )
        return config

    async def run(self, agent: str, prompt: str, *, run_id: str | None = None) -> DurableResult:
        """Run ``agent`` on ``prompt`` durably in this process and return its result.

        A run with the id of one that already exists is not started again: its result is
        awaited.
        """
        self._check_agent(agent)
        await self.launch()
        wid = run_id or _new_run_id()
        session_of(wid)
        with SetWorkflowID(wid):
            handle = await DBOS.start_workflow_async(_durable_run, workflow_input(agent, prompt))
        value = await handle.get_result()  # this process's own workflow: no polling
        if not _waiting(value):
            return self._result(wid, value)
        return await self.result(wid)  # through its waits: answered from anywhere

    async def submit(
        self, agent: str, prompt: str, *, queue: str | None = None, run_id: str | None = None
    ) -> str:
        """Queue a durable run for a worker and return its id at once."""
        self._check_agent(agent)
        name = queue or self.section.default_queue
        if name not in self._queues():
            raise DurableSetupError(
                f"no queue {name!r} is configured (configured: {', '.join(self._queues())})"
            )
        wid = run_id or _new_run_id()
        session_of(wid)
        client = await self._client_of()
        options: Any = {
            "workflow_name": WORKFLOW,
            "queue_name": name,
            "workflow_id": wid,
            "app_version": self.fingerprint,  # only a worker composed the same takes it
        }
        await client.enqueue_async(options, workflow_input(agent, prompt))
        return wid

    async def result(self, run_id: str, *, poll: float = 0.2) -> DurableResult:
        """Wait for the durable run ``run_id`` (started by any process) to finish -- through
        its waits for approval (the answer's continuation is awaited as the same run)."""
        wid = run_id
        while True:
            try:
                value = await (await self._handle(wid)).get_result(polling_interval_sec=poll)
            except Exception:
                if await self._exists(wid + RETRY):  # failed, and retried: follow the retry
                    wid += RETRY
                    continue
                raise
            if not _waiting(value):
                return self._result(run_id, value)
            wid = str(value["next"])
            while True:  # until somebody answers: the link exists once an answer queued it
                if await self._exists(wid):
                    break
                await anyio.sleep(poll)

    async def _exists(self, wid: str) -> bool:
        try:
            await self._handle(wid)
        except UnknownRunError:
            return False
        return True

    async def _tip(self, run_id: str) -> tuple[str, str, Any]:
        """The run's latest link: its workflow id, DBOS status and (when finished) output."""
        wid = run_id
        while True:
            handle = await self._handle(wid)
            status = str((await handle.get_status()).status)
            value: Any = await handle.get_result() if status == "SUCCESS" else None
            if _waiting(value) and await self._exists(str(value["next"])):
                wid = str(value["next"])
                continue
            if status == "ERROR" and await self._exists(wid + RETRY):
                wid += RETRY
                continue
            return wid, status, value

    async def _handle(self, run_id: str) -> WorkflowHandleAsync[Any]:
        client = await self._client_of()
        try:
            return await client.retrieve_workflow_async(run_id)
        except dbos_error.DBOSNonExistentWorkflowError:
            raise UnknownRunError(f"no durable run {run_id!r}") from None

    async def status(self, run_id: str) -> str:
        """The run's status: its latest link's DBOS status (``ENQUEUED``, ``PENDING``,
        ``SUCCESS``, ``ERROR`` ...), or ``WAITING`` while it waits for a person's answer."""
        found = await self.statuses([run_id])
        if run_id not in found:
            raise UnknownRunError(f"no durable run {run_id!r}")
        return found[run_id]

    async def statuses(self, run_ids: Sequence[str]) -> dict[str, str]:
        """:meth:`status` of many runs in a few queries (one, plus one per approval link);
        an id with no durable run is left out."""
        client = await self._client_of()
        tips = {run_id: run_id for run_id in run_ids}
        found: dict[str, str] = {}
        while tips:
            rows = await client.list_workflows_async(
                workflow_ids=sorted(set(tips.values())), load_input=False
            )
            by_id = {row.workflow_id: row for row in rows}
            following: dict[str, str] = {}
            for run_id, wid in tips.items():
                row = by_id.get(wid)
                if row is None:
                    continue  # unknown run (or a link nobody queued: handled below)
                status, output = str(row.status), cast(Any, row.output)
                if status == "SUCCESS" and _waiting(output):
                    following[run_id] = str(output["next"])
                    found[run_id] = WAITING
                else:
                    found[run_id] = status
                    if status == "ERROR":
                        following[run_id] = wid + RETRY
            tips = following
            if tips:  # a link that exists replaces WAITING (ERROR) with its own status
                queued = await client.list_workflows_async(
                    workflow_ids=sorted(set(tips.values())), load_input=False, load_output=False
                )
                present = {row.workflow_id for row in queued}
                tips = {r: w for r, w in tips.items() if w in present}
        return found

    async def _finished(self, run_id: str) -> bool:
        _wid, status, value = await self._tip(run_id)
        return status in FINISHED and not _waiting(value)

    async def events(self, run_id: str, *, poll: float = 0.2) -> AsyncGenerator[SessionEvent, None]:
        """The run's session events, from the first, following its session log in the
        store until the run has finished -- from any process that shares the run's database
        and session store.  A store that announces its commits (``agentrig-postgres``) wakes
        the follower as each batch commits; the run's status -- and a store that announces
        nothing -- is checked every ``poll`` seconds."""
        await self._handle(run_id)  # an unknown run is refused, not followed forever
        sid = session_of(run_id)
        stores = {
            str(config.session_store)
            for config in agent_configs(self.rt.loaded).values()
            if config.session_store is not None
        }
        catalog = self.rt.catalog(SESSION_STORES)
        candidates = [catalog.require(EntryId(name)) for name in sorted(stores)]
        seen = 0
        store: SessionStore | None = None
        listen: AbstractAsyncContextManager[_Changes | None] = contextlib.nullcontext()
        if len(candidates) == 1 and isinstance(candidates[0], _Announcing):
            listen = candidates[0].changes(sid)  # entered before the first read: nothing missed
        async with listen as changes:
            while True:
                finished = await self._finished(run_id)  # read before the log: no loss
                if store is None:
                    for candidate in candidates:
                        if await candidate.exists(sid):
                            store = candidate
                            break
                if store is not None:
                    events = (await store.load(sid)).events
                    for event in events[seen:]:
                        yield event
                    seen = max(seen, len(events))
                if finished:
                    return
                if changes is None:
                    await anyio.sleep(poll)
                else:
                    with anyio.move_on_after(poll):
                        await changes.next()

    async def _client_of(self) -> DBOSClient:
        if self._client is None:
            url = self.system_database_url
            self._client = await anyio.to_thread.run_sync(lambda: _client(url))
        return self._client

    def _result(self, run_id: str, value: Any) -> DurableResult:
        if not isinstance(value, dict):
            raise DurableError(f"durable run {run_id!r} returned {value!r}, not a run result")
        return DurableResult(
            run_id=run_id,
            agent=str(value["agent"]),
            session_id=str(value["session_id"]),
            text=str(value["text"]),
        )

    # ---- executing (inside the workflow) -------------------------------------------------------
    async def execute(
        self,
        workflow_id: str,
        agent: str,
        prompt: str,
        origin: str | None,
        decisions: list[dict[str, Any]],
        link: int,
    ) -> dict[str, Any]:
        """The workflow's body: continue what the journal holds, or start the run.  A
        question nobody answered yet ends it "waiting" (the output names the next link)."""
        config = self._check_agent(agent)
        run_id = origin or workflow_id
        sid = session_of(run_id)
        aid = live_agent_id(agent, run_id)
        self._decisions[workflow_id] = [dict(d) for d in decisions]
        try:
            with self.running(aid, run_id):
                text = await self.execute_agent(aid, sid, config, prompt)
        except RunSuspended as suspended:
            return versioned(
                {
                    "agent": agent,
                    "session_id": sid,
                    "text": "",
                    "waiting": suspended.question,
                    "unproven": suspended.unproven,
                    "next": f"{run_id}.a{link + 1}",
                    "decisions": self._decisions.get(workflow_id, []),
                }
            )
        finally:
            self._decisions.pop(workflow_id, None)
            await self._dispose_adopted(run_id)
            if self.rt.agents.get(aid) is not None:
                await self.rt.agents.dispose(aid)
        return versioned({"agent": agent, "session_id": sid, "text": text})

    def decide(self, workflow_id: str, question: dict[str, Any]) -> bool | None:
        """The answer given for ``question`` to the link ``workflow_id`` (used once), or
        None when it has none."""
        left = self._decisions.get(workflow_id, [])
        for index, decision in enumerate(left):
            if _same_call(decision, question):
                del left[index]
                return bool(decision["allow"])
        return None

    def run_key(self, aid: AgentId) -> str | None:
        """The key of the durable run (or run's child) live agent ``aid`` executes, or None
        when it executes none."""
        return self._keys.get(aid)

    def adopt(self, aid: AgentId, key: str) -> None:
        """Live agent ``aid`` -- a handoff's target -- executes the durable run ``key`` until
        the run's link ends (then it is disposed)."""
        self._keys[aid] = key
        self._adopted[aid] = key

    async def _dispose_adopted(self, run_id: str) -> None:
        for aid, key in list(self._adopted.items()):
            if key == run_id or key.startswith(run_id + "."):
                del self._adopted[aid]
                self._keys.pop(aid, None)
                if self.rt.agents.get(aid) is not None:
                    await self.rt.agents.dispose(aid)

    @contextlib.contextmanager
    def running(self, aid: AgentId, key: str) -> Iterator[None]:
        """While the block runs, live agent ``aid`` executes the durable run ``key``."""
        self._keys[aid] = key
        try:
            yield
        finally:
            self._keys.pop(aid, None)

    async def has_state(self, aid: AgentId, sid: SessionId, config: AgentConfig) -> bool:
        """Whether the journal or the session store already holds anything of ``aid``."""
        if await self.journal.executions(agent_id=aid, session_id=sid):
            return True
        return await self._store_of(config).exists(sid)

    def _store_of(self, config: AgentConfig) -> SessionStore:
        return self.rt.catalog(SESSION_STORES).require(EntryId(str(config.session_store)))

    async def execute_agent(
        self,
        aid: AgentId,
        sid: SessionId,
        config: AgentConfig,
        prompt: str,
        create: Callable[[], Awaitable[Agent]] | None = None,
        *,
        handoff: bool = False,
    ) -> str:
        """Run ``aid`` on ``prompt``, or go on with what the journal and its session hold
        of that run (``create``: how a fresh agent is made; default a plain one;
        ``handoff``: a handoff's target, which continues its conversation: no prompt)."""
        executions = await self.journal.executions(agent_id=aid, session_id=sid)
        if executions:
            if isinstance(self.journal, RecordJournal):
                # the run's previous link (or the process before a crash) may have run in
                # another process: read the journal, not what this process cached earlier
                for record in executions:
                    self.journal.forget(record.run_id)
            return await self._continue(aid, sid, config)
        if handoff:
            if await self._store_of(config).exists(sid):
                target = await self.rt.agents.resume(sid, agent_id=aid, config=config)
            else:
                assert create is not None
                target = await create()
            return await self._taken_over(target, config)
        if await self._store_of(config).exists(sid):
            return await self._started(aid, sid, config, prompt)
        if create is None:
            agent = await self.rt.agents.create(aid, config, session_id=sid)
        else:
            agent = await create()
        result = await agent.run(prompt)
        return str(result.value)

    async def _started(self, aid: AgentId, sid: SessionId, config: AgentConfig, prompt: str) -> str:
        """The session holds the run's turn but the journal nothing of it: the crash came
        before the first model call was journaled, so nothing crossed a boundary.  The
        turn goes on from its recorded prompt (not appended again) -- or, when the crash
        came before the prompt was written, from the run's prompt, written now."""
        agent = await self.rt.agents.resume(sid, agent_id=aid, config=config)
        found = _open_turn(agent)
        if found is None:
            raise DurableError(
                f"session {sid!r} holds no open turn and the journal no execution of it: "
                "the run cannot be continued"
            )
        run_id, prompted = found
        options = RunOptions(
            run_id=RunId(run_id),
            max_rounds=config.max_rounds,
            tool_only_completion=config.tool_only_completion,
        )
        async with agent.continue_run(CancelSignal()) as run:
            if not prompted:
                await run.record(UserMessageEvent(message=UserMessage.of(prompt, source="user")))
            outcome = await run.continue_turn(options)
        return str(outcome.text)

    async def _taken_over(self, agent: Agent, config: AgentConfig) -> str:
        """A handoff's target whose journal holds nothing yet (the crash came before its
        first model call): it answers now, in the turn it had opened or a new one."""
        found = _open_turn(agent)
        options = RunOptions(
            run_id=RunId(found[0]) if found is not None else new_run_id(),
            max_rounds=config.max_rounds,
            tool_only_completion=config.tool_only_completion,
        )
        async with agent.continue_run(CancelSignal()) as run:
            outcome = await run.continue_turn(options)
        further = handed_off(agent)
        if further is not None:  # it handed the conversation on in turn
            return await self.children.continue_handoff(agent, *further)
        return str(outcome.text)

    async def _continue(self, aid: AgentId, sid: SessionId, config: AgentConfig) -> str:
        while True:
            try:
                result = await continue_execution(
                    self.rt, self.journal, agent_id=aid, session_id=sid, config=config
                )
            except ReconciliationRequired as exc:
                if self._reask(exc):
                    for item in exc.items:
                        await reconcile_model(self.journal, exc.run_id, InvocationId(item.id))
                elif all(item.kind == "tool_effect" for item in exc.items):
                    # a delegation call's child goes on from the journal; any other effect
                    # is for the host to settle (reconcile); meanwhile the run holds no slot
                    effects = sorted(await self.children.settle(exc, aid, sid))
                    if effects:
                        raise RunSuspended(
                            unproven={"execution": exc.run_id, "effects": effects}
                        ) from None
                else:
                    raise
                if self.rt.agents.get(aid) is not None:
                    await self.rt.agents.dispose(aid)
                continue
            found = handed_off(result.agent)
            if found is not None:  # the answer is the agent's it handed the conversation to
                return await self.children.continue_handoff(result.agent, *found)
            return result.text

    # ---- approvals (from any process) -------------------------------------------------------
    async def question(self, run_id: str) -> dict[str, Any] | None:
        """The permission question run ``run_id`` waits on (``call_id``, ``tool``,
        ``arguments``, ``reason``), or None."""
        _wid, _status, value = await self._tip(run_id)
        return dict(value["waiting"]) if _waiting(value) and value["waiting"] else None

    async def approve(self, run_id: str, call_id: str, *, allow: bool) -> None:
        """Answer run ``run_id``'s question about ``call_id``: the run's next link is queued
        (on the run's queue) and goes on where it stopped, in whichever worker takes it.

        Raises :class:`NotWaitingError` when the run waits on no question or on another
        call -- also for a second answer to the same question (the first one counts).
        """
        _wid, status, value = await self._tip(run_id)
        if not _waiting(value) or not value["waiting"]:
            raise NotWaitingError(
                f"durable run {run_id!r} waits on no question (it is {status}); an answer "
                "it waited for may have been given already"
            )
        question = dict(value["waiting"])
        if question["call_id"] != call_id:
            raise NotWaitingError(
                f"durable run {run_id!r} waits on call {question['call_id']!r}, not {call_id!r}"
            )
        await self._next_link(run_id, value, [*value["decisions"], {**question, "allow": allow}])

    async def _next_link(
        self, run_id: str, value: dict[str, Any], decisions: list[dict[str, Any]]
    ) -> None:
        """Queue the link that continues a waiting run (on the run's queue)."""
        origin = await (await self._handle(run_id)).get_status()
        queue = origin.queue_name or self.section.default_queue
        next_id = str(value["next"])
        link = int(next_id.rsplit(".a", 1)[1])
        client = await self._client_of()
        options: Any = {
            "workflow_name": WORKFLOW,
            "queue_name": queue,
            "workflow_id": next_id,
            "app_version": origin.app_version or self.fingerprint,  # the run's composition
        }
        # the id is derived from the run's: a second answer cannot start a second link
        envelope = workflow_input(value["agent"], "", origin=run_id, decisions=decisions, link=link)
        await client.enqueue_async(options, envelope)

    # ---- a run that failed (from any process) ---------------------------------------------------
    async def retry(self, run_id: str) -> str:
        """Take up run ``run_id`` again after it failed (``ERROR``, e.g. its database was
        down for longer than the stores retry), or after DBOS gave it up (``CANCELLED``,
        ``MAX_RECOVERY_ATTEMPTS_EXCEEDED``); returns the id of the link that goes on.

        The run continues from its journal in whichever worker takes it: what settled is
        reused, no effect runs twice, and an effect the failure cut off waits for the host
        as after a crash.  A failed link is retried by a new link on the run's queue with
        the id ``<link id>.r`` (derived: a second ``retry`` of the same failure starts
        nothing more); a given-up one is put back on its queue.  Raises
        :class:`NotFailedError` for a run that has not failed.
        """
        wid, status, _value = await self._tip(run_id)
        if status not in FAILED:
            raise NotFailedError(
                f"durable run {run_id!r} has not failed (it is {status}); only a run that "
                f"ended {' or '.join(sorted(FAILED))} is retried"
            )
        handle = await self._handle(wid)
        found = await handle.get_status()
        queue = found.queue_name or self.section.default_queue
        client = await self._client_of()
        if status != "ERROR":  # DBOS can take it up again where it stands
            await client.resume_workflow_async(wid, queue_name=queue)
            return wid
        stored = found.input or {"args": (), "kwargs": {}}
        given = read_input(tuple(stored["args"]), dict(stored["kwargs"]))
        retry_id = wid + RETRY
        envelope = workflow_input(
            given.agent,
            given.prompt,
            origin=given.origin or run_id,
            decisions=given.decisions,
            link=given.link,
        )
        options: Any = {
            "workflow_name": WORKFLOW,
            "queue_name": queue,
            "workflow_id": retry_id,
            "app_version": found.app_version or self.fingerprint,  # the run's composition
        }
        await client.enqueue_async(options, envelope)
        return retry_id

    # ---- reconciliation (from any process) -----------------------------------------------------
    async def waiting_for(self, run_id: str) -> tuple[str, ...]:
        """The tool effects (``m<n>/<call>``) the run waits for the host to settle (empty
        when it waits for nothing now).  Such a run holds no worker slot meanwhile."""
        _wid, _status, value = await self._tip(run_id)
        if not _waiting(value) or not value["unproven"]:
            return ()
        return tuple(value["unproven"]["effects"])

    async def reconcile(
        self,
        run_id: str,
        invocation_id: str,
        text: str,
        *,
        status: Literal["ok", "error"] = "ok",
    ) -> None:
        """Tell run ``run_id`` what the effect ``invocation_id`` did (after checking the
        world): it is recorded in the journal as that call's result (never re-running it),
        and once every effect the run waits for is settled the run goes on (its next link
        is queued).  Raises :class:`NotWaitingError` for an effect the run does not wait for.
        """
        _wid, _status, value = await self._tip(run_id)
        unproven = value["unproven"] if _waiting(value) else None
        if not unproven or invocation_id not in unproven["effects"]:
            raise NotWaitingError(
                f"durable run {run_id!r} does not wait for the host to settle {invocation_id!r}"
                f" (it waits for: {', '.join(unproven['effects']) if unproven else 'nothing'})"
            )
        execution = RunId(str(unproven["execution"]))
        state = await self.fresh(execution)
        effect = state.effects.get(invocation_id) if state else None
        if effect is not None and effect.result is None:  # else: answered already
            message = ToolMessage.of(effect.intent.call_id, effect.intent.tool, text, status)
            await reconcile_tool(self.journal, execution, InvocationId(invocation_id), message)
            state = await self.fresh(execution)
        settled = state is not None and all(
            (found := state.effects.get(i)) is not None and found.result is not None
            for i in unproven["effects"]
        )
        if settled:
            await self._next_link(run_id, value, list(value["decisions"]))

    async def fresh(self, execution: RunId) -> ExecutionState | None:
        """The journal's state of ``execution`` as stored now (not as cached here)."""
        if isinstance(self.journal, RecordJournal):
            self.journal.forget(execution)  # the worker that ran it wrote it, not this object
        return await self.journal.load(execution)

    def _reask(self, exc: ReconciliationRequired) -> bool:
        """Whether every unproven item is a model call the config lets us ask again."""
        return (
            self.section.reask_interrupted_model_calls
            and exc.run_id is not None
            and bool(exc.items)
            and all(item.kind == "model_call" for item in exc.items)
        )


class DurableApprover:
    """Listener: a durable run's permission question suspends the run (no worker capacity
    held while a person decides); the answer (:meth:`Durable.approve`, ``agentrig
    approve``) continues it in a new link, where this approver gives that answer."""

    @hookimpl(tryfirst=True)
    async def permission_approver(self, payload: PermissionQuestion) -> str | None:
        workflow_id = DBOS.workflow_id
        host = _ACTIVE
        if workflow_id is None or payload.call_id is None or host is None:
            return None  # not a durable run: other approvers decide
        question = {
            "call_id": payload.call_id,
            "tool": payload.tool,
            "arguments": dict(payload.arguments),
            "reason": payload.reason,
        }
        allowed = host.decide(workflow_id, question)
        if allowed is None:
            raise RunSuspended(question)
        return "allow" if allowed else "deny"


def _open_turn(agent: Agent) -> tuple[str, bool] | None:
    """The run id of the session's last turn when it is still open, and whether its prompt
    (a user message) was written."""
    prompted = False
    for event in reversed(agent.session.events):
        if isinstance(event.data, TurnEnd):
            return None
        if isinstance(event.data, UserMessageEvent):
            prompted = True
        if isinstance(event.data, TurnStart):
            run_id = event.data.run_id
            return (run_id, prompted) if run_id is not None else None
    return None


def _client(url: str) -> DBOSClient:
    check_reachable(url)  # one line naming the database, not DBOS's traceback and Exit
    DBOS.migrate(url)  # a client never creates the schema itself
    return DBOSClient(system_database_url=url)
