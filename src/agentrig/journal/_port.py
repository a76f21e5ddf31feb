"""The ExecutionJournal port, the shared record discipline, and the in-memory backend."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import anyio

from agentrig.ids import AgentId, RunId, SessionId
from agentrig.journal._errors import JournalError, JournalWriteError
from agentrig.journal._records import (
    ExecutionRecord,
    ExecutionState,
    JournalRecordType,
    ModelIntent,
    ModelSettlement,
    ToolIntent,
    ToolSettlement,
)

__all__ = ["ExecutionJournal", "MemoryJournal", "RecordJournal"]


@runtime_checkable
class ExecutionJournal(Protocol):
    """A durable record of an execution's boundaries, owned exclusively by the host.

    Every write returns only once the record is durable; a write that cannot be made durable
    raises :class:`~agentrig.journal.JournalWriteError`.  Reads rebuild an execution's state.
    """

    async def begin_execution(self, record: ExecutionRecord) -> None:
        """Record an execution (idempotent for an equal record of the same run)."""
        ...

    async def model_intent(self, intent: ModelIntent) -> None:
        """Record a model call about to be made (before the provider is called)."""
        ...

    async def model_result(self, settlement: ModelSettlement) -> None:
        """Record how that call settled."""
        ...

    async def tool_intent(self, intent: ToolIntent) -> None:
        """Record an effect about to start (before it starts)."""
        ...

    async def tool_result(self, settlement: ToolSettlement) -> None:
        """Record the effect's settled result."""
        ...

    async def load(self, run_id: RunId) -> ExecutionState | None:
        """The execution ``run_id`` as the journal proves it (None when unknown)."""
        ...

    async def executions(
        self, *, agent_id: AgentId | None = None, session_id: SessionId | None = None
    ) -> tuple[ExecutionRecord, ...]:
        """The recorded executions, oldest first, optionally of one agent/session."""
        ...

    async def aclose(self) -> None:
        """Release the backend (idempotent)."""
        ...


class RecordJournal(abc.ABC):
    """The record discipline every built-in backend shares.

    A backend supplies three primitives -- append one record atomically and durably, read an
    execution's records in order, list execution records -- and this class enforces the
    order: an intent needs its execution, a result needs its intent, and no record is ever
    written twice.  Any failure of the backend becomes :class:`JournalWriteError`.  Writes
    are shielded from cancellation, so a cancelled run never leaves a write half-awaited.
    """

    def __init__(self) -> None:
        self._states: dict[str, ExecutionState] = {}
        self._lock = anyio.Lock()
        self._closed = False

    # ---- backend primitives ------------------------------------------------------------------
    @abc.abstractmethod
    async def _append(self, record: JournalRecordType) -> None:
        """Write one record atomically and durably."""

    @abc.abstractmethod
    async def _read(self, run_id: str) -> list[JournalRecordType]:
        """The records of one execution, in write order."""

    @abc.abstractmethod
    async def _read_executions(self) -> list[ExecutionRecord]:
        """Every execution record."""

    async def _close(self) -> None:
        return None

    # ---- the port --------------------------------------------------------------------------------
    async def begin_execution(self, record: ExecutionRecord) -> None:
        await self._write(record)

    async def model_intent(self, intent: ModelIntent) -> None:
        await self._write(intent)

    async def model_result(self, settlement: ModelSettlement) -> None:
        await self._write(settlement)

    async def tool_intent(self, intent: ToolIntent) -> None:
        await self._write(intent)

    async def tool_result(self, settlement: ToolSettlement) -> None:
        await self._write(settlement)

    async def load(self, run_id: RunId) -> ExecutionState | None:
        state = self._states.get(run_id)
        if state is None:
            state = ExecutionState.rebuild(await self._read(run_id))
            if state is not None:
                self._states[run_id] = state
        return state

    def forget(self, run_id: RunId) -> None:
        """Drop this object's cached state of ``run_id``: the next read rebuilds it from the
        backend.  Reads are cached per journal object, so a host whose executions move
        between processes (a durable run continued by another worker, then back here)
        calls this before continuing one another process may have written."""
        self._states.pop(run_id, None)

    async def executions(
        self, *, agent_id: AgentId | None = None, session_id: SessionId | None = None
    ) -> tuple[ExecutionRecord, ...]:
        return tuple(
            r
            for r in await self._read_executions()
            if (agent_id is None or r.agent_id == agent_id)
            and (session_id is None or r.session_id == session_id)
        )

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._close()

    # ---- the discipline --------------------------------------------------------------------------
    def _refuse(self, record: JournalRecordType, why: str) -> JournalWriteError:
        return JournalWriteError(
            f"journal refused {record.kind} {record.run_id}/{record.key}: {why}",
            record=f"{record.kind}:{record.run_id}/{record.key}",
        )

    def _check(self, state: ExecutionState | None, record: JournalRecordType) -> bool:
        """Raise when ``record`` breaks the order; False when it is already there (equal)."""
        if isinstance(record, ExecutionRecord):
            if state is None:
                return True
            same = state.record.model_dump(exclude={"at"}) == record.model_dump(exclude={"at"})
            if same:
                return False
            raise self._refuse(record, "a different execution record exists for this run")
        if state is None:
            raise self._refuse(record, "no execution record for this run")
        if isinstance(record, ModelIntent):
            if state.call(record.call_id) is not None:
                raise self._refuse(record, "this model call was already journaled")
        elif isinstance(record, ModelSettlement):
            call = state.call(record.call_id)
            if call is None:
                raise self._refuse(record, "no intent was journaled for this model call")
            if call.result is not None:
                raise self._refuse(record, "this model call already settled")
        elif isinstance(record, ToolIntent):
            if record.attempt == 1:
                if record.invocation_id in state.effects:
                    raise self._refuse(record, "this effect was already journaled as started")
            else:
                self._check_rerun(state, record)
        else:
            effect = state.effects.get(record.invocation_id)
            if effect is None:
                raise self._refuse(record, "no intent was journaled for this effect")
            if effect.result is not None:
                raise self._refuse(record, "this effect already settled")
        return True

    def _check_rerun(self, state: ExecutionState, record: ToolIntent) -> None:
        """A re-run (attempt >= 2) follows the previous attempt of an unsettled effect."""
        effect = state.effects.get(record.effect_id)
        if effect is None:
            raise self._refuse(record, f"no effect {record.effect_id} was journaled to run again")
        if effect.result is not None:
            raise self._refuse(record, "this effect already settled: it is never run again")
        if record.attempt != effect.attempt + 1:
            raise self._refuse(
                record, f"the effect was started {effect.attempt} time(s), not {record.attempt - 1}"
            )

    async def _write(self, record: JournalRecordType) -> None:
        if self._closed:
            raise self._refuse(record, "the journal is closed")
        with anyio.CancelScope(shield=True):
            async with self._lock:
                try:
                    state = await self.load(record.run_id)
                except JournalError:
                    raise
                except Exception as exc:
                    raise JournalWriteError(
                        f"journal could not read execution {record.run_id}: {exc}",
                        record=f"{record.kind}:{record.run_id}/{record.key}",
                        cause=exc,
                    ) from exc
                if not self._check(state, record):
                    return
                try:
                    await self._append(record)
                except JournalError:
                    raise
                except Exception as exc:
                    raise JournalWriteError(
                        f"journal write of {record.kind} {record.run_id}/{record.key} "
                        f"failed: {exc}",
                        record=f"{record.kind}:{record.run_id}/{record.key}",
                        cause=exc,
                    ) from exc
                if isinstance(record, ExecutionRecord):
                    self._states[record.run_id] = ExecutionState(record)
                elif state is not None:
                    state.apply(record)


class MemoryJournal(RecordJournal):
    """An in-memory journal (tests, and hosts that only want the in-process record).

    Nothing survives the process; ``records`` shows what was written, in order.
    """

    def __init__(self) -> None:
        super().__init__()
        self._records: list[JournalRecordType] = []

    @property
    def records(self) -> Sequence[JournalRecordType]:
        return tuple(self._records)

    async def _append(self, record: JournalRecordType) -> None:
        self._records.append(record)

    async def _read(self, run_id: str) -> list[JournalRecordType]:
        return [r for r in self._records if r.run_id == run_id]

    async def _read_executions(self) -> list[ExecutionRecord]:
        return [r for r in self._records if isinstance(r, ExecutionRecord)]
