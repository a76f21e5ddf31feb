"""Per-session writer locks and owner-only paths shared by the built-in session stores.

An advisory ``flock`` on a lock file: the kernel releases it when the holding process dies,
so a crashed writer never blocks its session forever (the next writer takes the lock and
removes the file when it closes).  ``flock`` locks belong to an open
file description, so two writers in the *same* process conflict too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from pathlib import Path

from agentrig.session import SessionStoreError, WriterConflictError

__all__ = ["WriterLock", "fix_hint", "open_private"]

if sys.platform != "win32":
    import fcntl


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def fix_hint(exc: BaseException, folder: Path, option: str) -> str:
    """What to do about an OS error met in a store's ``folder`` (configured by ``option``)."""
    number = exc.errno if isinstance(exc, OSError) else None
    if number is None and isinstance(exc.__cause__, OSError):
        number = exc.__cause__.errno
    if number in (errno.EACCES, errno.EPERM):
        return (
            f" -- this user cannot read or write {folder}: give it back to this user with "
            f"mode 700, or set {option} to another location"
        )
    if number == errno.EROFS:
        return f" -- {folder} is on a read-only filesystem: set {option} to a writable location"
    if number in (errno.ENOSPC, errno.EDQUOT):
        return f" -- the disk holding {folder} is full: free space or set {option} elsewhere"
    return ""


def open_private(path: Path, flags: int) -> int:
    """``os.open`` that creates ``path`` owner-only (exactly 0o600, whatever the umask) when
    it does not exist yet.

    A symlink at ``path`` is not followed, and an existing file that is not a regular file
    of this user granting nothing to group or others is refused with
    :class:`~agentrig.session.SessionStoreError` -- reported, never adopted or repaired.
    """
    try:
        fd, created = _open_or_create(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionStoreError(f"{path} is a symlink; refusing to follow it") from exc
        raise
    if sys.platform == "win32":  # pragma: no cover - no owner-only modes there
        return fd
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_uid != os.geteuid():
        problem = f"is owned by uid {info.st_uid}, not by this user"
    elif info.st_mode & 0o077:
        problem = (
            f"has mode {stat.S_IMODE(info.st_mode):04o}; it must grant nothing to group or "
            "others (reported, not repaired)"
        )
    elif created and stat.S_IMODE(info.st_mode) != 0o600:
        os.fchmod(fd, 0o600)  # the umask took the owner's own bits: give them back
    if problem is not None:
        os.close(fd)
        raise SessionStoreError(f"{path} {problem}")
    return fd


def _open_or_create(path: Path, flags: int) -> tuple[int, bool]:
    """``(descriptor, created)``; a file removed between the two opens is created afresh."""
    for _attempt in range(_ATTEMPTS):
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            return fd, True
        try:
            return os.open(path, flags | os.O_CLOEXEC | _NOFOLLOW), False
        except FileNotFoundError:
            continue
    raise SessionStoreError(f"{path} keeps appearing and disappearing; try again")


class WriterLock:
    """An exclusive, crash-released lock on ``path`` (created owner-only).

    :meth:`release` removes the lock file while still holding the lock, so locks of closed
    writers never accumulate.  A contender that opened the file just before it was removed
    would then hold a lock on an unlinked file, which guards nothing: after locking, the
    descriptor must still be the file at ``path``, or the contender opens it afresh.
    """

    def __init__(self, path: Path, session_id: str, *, option: str) -> None:
        self.path = path
        for _attempt in range(_ATTEMPTS):
            try:
                fd = open_private(path, os.O_RDWR)
            except OSError as exc:
                raise SessionStoreError(
                    f"cannot create the lock {path} of session {session_id!r}: "
                    f"{exc.strerror or exc}{fix_hint(exc, path.parent, option)}"
                ) from exc
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
            if _still_at(fd, path):
                self._fd: int | None = fd
                return
            os.close(fd)  # the holder removed it as we opened it: lock the new one
        raise WriterConflictError(
            f"the lock {path} of session {session_id!r} kept changing; another process is "
            "opening and closing the session -- try again"
        )

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                if sys.platform != "win32":
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self.path)
            finally:
                os.close(fd)  # closing the descriptor releases the lock


_ATTEMPTS = 16


def _still_at(fd: int, path: Path) -> bool:
    """Whether the open descriptor ``fd`` is (still) the file at ``path``."""
    if sys.platform == "win32":  # pragma: no cover - locks are never removed there
        return True
    try:
        current = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)
