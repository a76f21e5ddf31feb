"""What a durable run needs from the worker that executes it: the composition it was
submitted with, as a fingerprint.

Workers on one queue may be composed differently (one lacks an agent, another has other
tools or another model).  A run is tagged with the fingerprint of the composition that
submitted it, as DBOS's application version, and a worker takes from a queue only runs
tagged with its own -- DBOS dequeues by version -- so a worker that could not serve a run
leaves it for one that can.  The fingerprint covers everything that shapes a run (agents,
providers, tools, stores, permissions, every plugin's table) except ``[dbos]``, which says
where and as whom a process works, not what a run does.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentrig.plugin import Runtime

__all__ = ["composition_fingerprint"]


def composition_fingerprint(rt: Runtime) -> str:
    """``agentrig-<16 hex digits>``: the same for the same composition in any process."""
    shape: dict[str, Any] = {
        "config": rt.config.model_dump(mode="json"),
        "sections": {k: v for k, v in rt.loaded.sections.items() if k != "dbos"},
    }
    text = json.dumps(shape, sort_keys=True, default=str)
    return "agentrig-" + hashlib.sha256(text.encode()).hexdigest()[:16]
