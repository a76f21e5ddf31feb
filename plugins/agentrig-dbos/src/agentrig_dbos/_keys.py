"""The service key of durable runs (importing it does not import DBOS)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.plugin import ServiceKey

if TYPE_CHECKING:
    from agentrig_dbos._host import Durable

__all__ = ["DURABLE"]

DURABLE: ServiceKey[Durable] = ServiceKey("agentrig-dbos.durable")
"""The durable-runs service (``rt.services.require(DURABLE).submit(agent, prompt)``)."""
