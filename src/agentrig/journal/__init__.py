"""The execution journal: recoverable runs, and continuation after a crash.

A host that owns a journal exclusively makes its runs recoverable: every model call and
every tool effect is journaled durably *before* the runtime crosses it (the intent) and
again once it settled (the result), so after a restart nothing is repeated and nothing is
hidden.  :func:`continue_execution` resumes an execution from its latest settled model
response, reusing every settlement, and refuses with :class:`ReconciliationRequired`
whatever the journal cannot prove.

::

    journal = SqliteJournal(".agentrig/private/journal.sqlite3")
    attached = attach_journal(journal)
    async with open_runtime(cfg, plugins=attached.plugins,
                            overrides=attached.overrides({"main": provider})) as rt:
        await rt.agent("assistant").run("...")            # journaled
    # after a crash, in a new process:
        result = await continue_execution(rt, journal, agent_id="assistant", session_id=sid)

See ``docs/journal.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

# name -> defining module, imported on first use: a plugin that names the journal types
# at import time (agentrig-dbos) must not load sqlite3 into every command
_LAZY: dict[str, str] = {
    "ContinuationResult": "agentrig.journal._continue",
    "ExecutionJournal": "agentrig.journal._port",
    "ExecutionLimits": "agentrig.journal._records",
    "ExecutionRecord": "agentrig.journal._records",
    "ExecutionState": "agentrig.journal._records",
    "JOURNAL": "agentrig.journal._listener",
    "JOURNAL_RECORD_CODEC": "agentrig.journal._records",
    "JOURNAL_RECORD_SCHEMA": "agentrig.journal._records",
    "JournalAttachment": "agentrig.journal._attach",
    "JournalError": "agentrig.journal._errors",
    "JournalListener": "agentrig.journal._listener",
    "JournalRecord": "agentrig.journal._records",
    "JournalWriteError": "agentrig.journal._errors",
    "JournaledProvider": "agentrig.journal._provider",
    "MemoryJournal": "agentrig.journal._port",
    "MigratableJournal": "agentrig.journal._migrate",
    "RecordCodec": "agentrig.journal._migrate",
    "journal_report": "agentrig.journal._migrate",
    "rewritten_record": "agentrig.journal._migrate",
    "ModelCall": "agentrig.journal._records",
    "ModelIntent": "agentrig.journal._records",
    "ModelSettlement": "agentrig.journal._records",
    "ReconciliationRequired": "agentrig.journal._errors",
    "RecordJournal": "agentrig.journal._port",
    "SqliteJournal": "agentrig.journal._sqlite",
    "ToolEffect": "agentrig.journal._records",
    "ToolIntent": "agentrig.journal._records",
    "ToolSettlement": "agentrig.journal._records",
    "UnknownExecutionError": "agentrig.journal._errors",
    "Unproven": "agentrig.journal._errors",
    "UnprovenKind": "agentrig.journal._errors",
    "attach_journal": "agentrig.journal._attach",
    "continue_execution": "agentrig.journal._continue",
    "journaled_runtime": "agentrig.journal._attach",
    "reconcile_model": "agentrig.journal._continue",
    "reconcile_tool": "agentrig.journal._continue",
    "dump_record": "agentrig.journal._records",
    "parse_record": "agentrig.journal._records",
    "request_digest": "agentrig.journal._records",
}

__all__ = [
    "ContinuationResult",
    "ExecutionJournal",
    "ExecutionLimits",
    "ExecutionRecord",
    "ExecutionState",
    "JOURNAL",
    "JOURNAL_RECORD_CODEC",
    "JOURNAL_RECORD_SCHEMA",
    "JournalAttachment",
    "JournalError",
    "JournalListener",
    "JournalRecord",
    "JournalWriteError",
    "JournaledProvider",
    "MemoryJournal",
    "MigratableJournal",
    "ModelCall",
    "ModelIntent",
    "ModelSettlement",
    "ReconciliationRequired",
    "RecordCodec",
    "RecordJournal",
    "SqliteJournal",
    "ToolEffect",
    "ToolIntent",
    "ToolSettlement",
    "UnknownExecutionError",
    "Unproven",
    "UnprovenKind",
    "attach_journal",
    "continue_execution",
    "journal_report",
    "journaled_runtime",
    "reconcile_model",
    "reconcile_tool",
    "rewritten_record",
    "dump_record",
    "parse_record",
    "request_digest",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig.journal._attach import JournalAttachment, attach_journal, journaled_runtime
    from agentrig.journal._continue import (
        ContinuationResult,
        continue_execution,
        reconcile_model,
        reconcile_tool,
    )
    from agentrig.journal._errors import (
        JournalError,
        JournalWriteError,
        ReconciliationRequired,
        UnknownExecutionError,
        Unproven,
        UnprovenKind,
    )
    from agentrig.journal._listener import JOURNAL, JournalListener
    from agentrig.journal._migrate import (
        MigratableJournal,
        RecordCodec,
        journal_report,
        rewritten_record,
    )
    from agentrig.journal._port import ExecutionJournal, MemoryJournal, RecordJournal
    from agentrig.journal._provider import JournaledProvider
    from agentrig.journal._records import (
        JOURNAL_RECORD_CODEC,
        JOURNAL_RECORD_SCHEMA,
        ExecutionLimits,
        ExecutionRecord,
        ExecutionState,
        JournalRecord,
        ModelCall,
        ModelIntent,
        ModelSettlement,
        ToolEffect,
        ToolIntent,
        ToolSettlement,
        dump_record,
        parse_record,
        request_digest,
    )
    from agentrig.journal._sqlite import SqliteJournal
