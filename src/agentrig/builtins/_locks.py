"""Per-session writer locks shared by the built-in session stores.

An advisory ``flock`` on a lock file: the kernel releases it when the holding process dies,
so a crashed writer never blocks its session forever.  ``flock`` locks belong to an open
file description, so two writers in the *same* process conflict too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentrig.session import WriterConflictError

__all__ = ["WriterLock"]

if sys.platform != "win32":
    import fcntl


class WriterLock:
    """An exclusive, crash-released lock on ``path`` (created owner-only)."""

    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if sys.platform != "win32":
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover - exercised on Windows only
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            os.close(fd)
            raise WriterConflictError(
                f"session {session_id!r} already has a writer (lock {path} is held); "
                "close the other agent or process first"
            ) from None
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the lock
