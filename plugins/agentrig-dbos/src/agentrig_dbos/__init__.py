"""Durable agentrig runs on DBOS: runs that survive crashes, queues and workers.

Add a ``[dbos]`` table to a composition and its runs can be durable::

    from agentrig_dbos import DURABLE

    durable = rt.services.require(DURABLE)
    result = await durable.run("assistant", "summarise the report")   # in this process
    run_id = await durable.submit("assistant", "summarise the report")  # for a worker
    print((await durable.result(run_id)).text)

Durable runs are asyncio-only.  See ``docs/durable.md``.
"""

from typing import TYPE_CHECKING, Any

from agentrig_dbos._config import DbosSection, QueueSettings
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

if TYPE_CHECKING:
    from agentrig_dbos._host import Durable, DurableResult

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


def __getattr__(name: str) -> Any:
    # DBOS is imported on first use of these, not by ``import agentrig_dbos``
    if name in ("Durable", "DurableResult"):
        from agentrig_dbos import _host

        return getattr(_host, name)
    raise AttributeError(f"module 'agentrig_dbos' has no attribute {name!r}")
