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
from agentrig.journal._listener import JournalListener
from agentrig.journal._port import ExecutionJournal, MemoryJournal, RecordJournal
from agentrig.journal._provider import JournaledProvider
from agentrig.journal._records import (
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
    request_digest,
)
from agentrig.journal._sqlite import SqliteJournal

__all__ = [
    "ContinuationResult",
    "ExecutionJournal",
    "ExecutionLimits",
    "ExecutionRecord",
    "ExecutionState",
    "JournalAttachment",
    "JournalError",
    "JournalListener",
    "JournalRecord",
    "JournalWriteError",
    "JournaledProvider",
    "MemoryJournal",
    "ModelCall",
    "ModelIntent",
    "ModelSettlement",
    "ReconciliationRequired",
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
    "journaled_runtime",
    "reconcile_model",
    "reconcile_tool",
    "request_digest",
]
