"""Durable agentrig runs on DBOS: runs that survive crashes, queues and workers.

Add a ``[dbos]`` table to a composition and its runs can be durable::

    from agentrig_dbos import DURABLE

    durable = rt.services.require(DURABLE)
    result = await durable.run("assistant", "summarise the report")   # in this process
    run_id = await durable.submit("assistant", "summarise the report")  # for a worker
    print((await durable.result(run_id)).text)

Durable runs are asyncio-only.  See ``docs/durable.md``.
"""

from typing import TYPE_CHECKING

from agentrig.plugin import lazy_exports
from agentrig_dbos._errors import (
    DurableBackendError,
    DurableDatabaseError,
    DurableError,
    DurableSetupError,
    NotFailedError,
    NotWaitingError,
    UnknownRunError,
)
from agentrig_dbos._keys import DURABLE

# on first use, not by ``import agentrig_dbos`` (which every autoloaded run does): DBOS,
# and the [dbos] table's models
_LAZY: dict[str, str] = {
    "DbosSection": "agentrig_dbos._config",
    "QueueSettings": "agentrig_dbos._config",
    "Durable": "agentrig_dbos._host",
    "DurableResult": "agentrig_dbos._host",
}

__all__ = [
    "DURABLE",
    "DbosSection",
    "Durable",
    "DurableBackendError",
    "DurableDatabaseError",
    "DurableError",
    "DurableResult",
    "DurableSetupError",
    "NotFailedError",
    "NotWaitingError",
    "QueueSettings",
    "UnknownRunError",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from agentrig_dbos._config import DbosSection, QueueSettings
    from agentrig_dbos._host import Durable, DurableResult
