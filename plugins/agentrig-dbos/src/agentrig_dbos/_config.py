"""The ``[dbos]`` table: where durable runs keep their state, and their queues."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_QUEUE", "DbosSection", "QueueSettings"]

DEFAULT_QUEUE = "agentrig"


class QueueSettings(BaseModel):
    """``[dbos.queues.<name>]``: how many runs of the queue execute at once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: at most this many runs of the queue at once across every worker (None: no limit)
    concurrency: int | None = Field(default=None, ge=1)
    #: at most this many at once in one worker process (None: no limit)
    worker_concurrency: int | None = Field(default=None, ge=1)


class DbosSection(BaseModel):
    """``[dbos]``: present (even empty), it makes the composition's runs durable.

    With no ``system_database_url`` everything lives in SQLite files in ``state_dir``
    (owner-only, relative to the config file): one machine, no server.  A
    ``postgresql://`` URL shares the runs, queues and journal between worker processes on
    any number of machines (it needs the ``agentrig-postgres`` distribution).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_database_url: str | None = None
    state_dir: str = ".agentrig/durable"
    #: DBOS application name: 3-256 lowercase letters, digits, "-" or "_"
    app_name: str = Field(default="agentrig", pattern=r"^[a-z0-9_-]{3,256}$")
    #: this process's executor id: a restarted worker with the same id resumes its runs;
    #: a second live worker with the same id is refused
    executor_id: str | None = None
    #: seconds a run may stay pending under an executor id no live worker holds before a
    #: worker with another id puts it back on its queue
    recover_after: float = Field(default=30.0, gt=0)
    #: the queue ``submit`` uses when none is named
    default_queue: str = DEFAULT_QUEUE
    queues: dict[str, QueueSettings] = Field(default_factory=dict)
    #: seconds the journal on a PostgreSQL system database retries a transient failure
    #: (server restarting, connection lost) inside the step that met it; 0: never
    journal_retry_for: float = Field(default=60.0, ge=0)
    #: a model call cut off by a crash is asked again (it may be charged twice); false
    #: makes such a run fail with ``journal.reconciliation_required`` instead
    reask_interrupted_model_calls: bool = True
