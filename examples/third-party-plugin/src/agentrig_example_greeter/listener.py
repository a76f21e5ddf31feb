"""A lifecycle listener (entry point ``agentrig.plugins: greeter``).

A listener plugin is any module or object with ``@agentrig.hookimpl`` functions named after
agentrig's hooks.  This one counts the runtimes it saw start and the notifications it got.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import agentrig

#: How many times each hook reached this listener (module state: one per process).
SEEN: Counter[str] = Counter()


@agentrig.hookimpl
def runtime_started(payload: Any) -> None:
    """Notify hook: the runtime composed and sealed its catalogs."""
    SEEN["runtime_started"] += 1


@agentrig.hookimpl
def agent_status(payload: Any) -> None:
    """Notify hook: an agent went idle <-> running."""
    SEEN[f"agent_status:{payload.status}"] += 1


@agentrig.hookimpl(trylast=True)
async def request_config(payload: Any, next: Any) -> Any:
    """Waterfall hook: observe every model request's configuration, change nothing."""
    SEEN["request_config"] += 1
    return await next(payload)
