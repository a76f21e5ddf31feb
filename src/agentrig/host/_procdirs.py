"""Process-scoped directories: scratch space that lives exactly as long as its process.

A directory ``<state_root>/proc-<pid>-<token>`` is created owner-only and its owner record
(``owner.json``) is written into it before anything else; it is removed when the process
exits (the exit registry) and, if the process died without cleaning up (SIGKILL, power
loss), by a later :func:`sweep`.

Why the sweep decides by identity and never by age: an idle session's directory is old and
still in use.  A directory is removed only when :func:`~agentrig.host.owner_state` says its
owner is provably ``gone``; ``alive`` and ``unknown`` owners are kept -- on a state root shared
between machines or containers, the directories of other machines and other pid namespaces
are therefore never touched.  The sweep also only considers real directories (not
symlinks) owned by the current user whose name has the exact scoped form.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
from pathlib import Path
from typing import Final

import attrs
import pydantic

from agentrig.host._errors import AlreadyExistsError
from agentrig.host._exit import exit_registry
from agentrig.host._owner_store import OwnerOnlyStore
from agentrig.host._paths import StrPath, canonical_path
from agentrig.host._process import OwnerRecord, OwnerState, current_owner, owner_state

__all__ = [
    "OWNER_FILE",
    "ProcessDirInfo",
    "SweepReport",
    "create_process_dir",
    "inspect",
    "remove_process_dir",
    "sweep",
]

OWNER_FILE: Final = "owner.json"
_NAME: Final = re.compile(r"proc-([1-9][0-9]{0,9})-([0-9a-f]{16})")
_PURPOSE: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_MAX_RECORD = 64 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class _OwnerFile(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    owner: OwnerRecord
    purpose: str


@attrs.frozen(slots=True)
class ProcessDirInfo:
    """One scoped directory as a sweep or inspection judged it."""

    path: Path
    state: OwnerState
    reason: str
    owner: OwnerRecord | None = None
    purpose: str | None = None


@attrs.frozen(slots=True)
class SweepReport:
    """What a sweep removed and what it kept (with the reason for each kept directory)."""

    removed: tuple[Path, ...]
    kept: tuple[ProcessDirInfo, ...]


def create_process_dir(state_root: StrPath, purpose: str) -> Path:
    """Create this process's scoped directory under ``state_root`` and return its path.

    The owner record is written (flushed, create-only) before the path is returned, and the
    directory is registered for removal at exit.  ``purpose`` is a short lower-case tag
    recorded beside the owner (``tool-spill``, ``checkpoints``...).
    """
    if not _PURPOSE.fullmatch(purpose):
        raise ValueError(f"purpose {purpose!r} must match {_PURPOSE.pattern}")
    store = OwnerOnlyStore(state_root)
    owner = current_owner()
    while True:
        name = f"proc-{owner.pid}-{secrets.token_hex(8)}"
        try:
            path = store.make_dir(name)
        except AlreadyExistsError:  # pragma: no cover - 64 random bits collided
            continue
        break
    record = _OwnerFile(owner=owner, purpose=purpose).model_dump_json().encode()
    try:
        store.create_bytes(f"{name}/{OWNER_FILE}", record)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    exit_registry().register(("process-dir", str(path)), lambda: _remove_tree(path))
    return path


def _remove_tree(path: Path) -> None:
    # rmtree refuses a symlinked top directory and (on Linux) walks with directory
    # descriptors, so a link planted inside cannot redirect the removal.
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(path)


def remove_process_dir(path: StrPath) -> None:
    """Remove a directory made by :func:`create_process_dir` now, and forget it at exit."""
    canonical = Path(os.path.abspath(os.fspath(path)))
    exit_registry().unregister(("process-dir", str(canonical)))
    _remove_tree(canonical)


def _read_owner(root_fd: int, name: str) -> _OwnerFile | None:
    try:
        dir_fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root_fd)
    except OSError:
        return None
    try:
        fd = os.open(OWNER_FILE, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _MAX_RECORD + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_RECORD:
        return None
    try:
        return _OwnerFile.model_validate_json(data)
    except pydantic.ValidationError:
        return None


def _judge(root: Path, root_fd: int, entry: os.DirEntry[str]) -> ProcessDirInfo | None:
    match = _NAME.fullmatch(entry.name)
    if match is None:
        return None
    path = root / entry.name
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return ProcessDirInfo(path, "unknown", "cannot be examined")
    if stat.S_ISLNK(info.st_mode):
        return ProcessDirInfo(path, "unknown", "a symlink, not a directory")
    if not stat.S_ISDIR(info.st_mode):
        return ProcessDirInfo(path, "unknown", "not a directory")
    if info.st_uid != os.geteuid():
        return ProcessDirInfo(path, "unknown", f"owned by uid {info.st_uid}")
    record = _read_owner(root_fd, entry.name)
    if record is None:
        return ProcessDirInfo(path, "unknown", "no readable owner record")
    if record.owner.pid != int(match.group(1)):
        return ProcessDirInfo(
            path, "unknown", "owner record does not match the name", record.owner, record.purpose
        )
    state = owner_state(record.owner)
    return ProcessDirInfo(path, state, f"owner is {state}", record.owner, record.purpose)


def _scan(state_root: StrPath, *, remove: bool) -> SweepReport:
    root = canonical_path(state_root)
    try:
        root_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return SweepReport((), ())
    removed: list[Path] = []
    kept: list[ProcessDirInfo] = []
    try:
        with os.scandir(root_fd) as entries:
            judged = [j for j in (_judge(root, root_fd, e) for e in entries) if j is not None]
        for item in sorted(judged, key=lambda j: j.path.name):
            if remove and item.state == "gone":
                try:
                    shutil.rmtree(item.path.name, dir_fd=root_fd)
                except OSError as exc:
                    if exc.errno != errno.ENOENT:
                        kept.append(attrs.evolve(item, reason=f"removal failed: {exc}"))
                        continue
                removed.append(item.path)
            else:
                kept.append(item)
    finally:
        os.close(root_fd)
    return SweepReport(tuple(removed), tuple(kept))


def sweep(state_root: StrPath) -> SweepReport:
    """Remove the scoped directories under ``state_root`` whose owner is provably gone."""
    return _scan(state_root, remove=True)


def inspect(state_root: StrPath) -> tuple[ProcessDirInfo, ...]:
    """Judge every scoped directory under ``state_root`` without removing anything."""
    return _scan(state_root, remove=False).kept
