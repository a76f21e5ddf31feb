"""Journal writes as execution-control outcomes, whatever backend the host supplied."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import anyio

from agentrig.journal._errors import JournalError, JournalWriteError

__all__ = ["durable"]

T = TypeVar("T")


async def durable(write: Awaitable[T], what: str) -> T:
    """Await one journal write, shielded from cancellation; any failure becomes
    :class:`JournalWriteError` (a host backend may raise anything)."""
    with anyio.CancelScope(shield=True):
        try:
            return await write
        except JournalError:
            raise
        except Exception as exc:
            raise JournalWriteError(
                f"journal write of {what} failed: {exc}", record=what, cause=exc
            ) from exc
    raise AssertionError("unreachable")  # pragma: no cover - a shield never swallows
