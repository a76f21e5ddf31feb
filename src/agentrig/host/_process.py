"""Who owns a process-scoped resource, and whether that owner can still be running.

A pid alone identifies nothing: pids are recycled, every containerised CLI is pid 1, and
containers sharing a state root number their processes independently.  An
:class:`OwnerRecord` therefore names the machine (host name and machine id), the boot, the
pid namespace, and the pid together with its start time.

:func:`owner_state` is the one three-valued rule that process-scoped directories and process
markers share:

* ``alive`` -- same machine (every machine part either record carries is present and equal
  in both), same boot, same pid namespace, and the pid runs with the recorded start time;
* ``gone`` -- provably dead: same machine and a different (hence earlier) boot, or same
  machine, boot and namespace with the pid absent or started at another time;
* ``unknown`` -- everything else (another machine, another namespace, a part only one side
  could read, no start time to compare).  Callers keep what is unknown.
"""

from __future__ import annotations

import os
import socket
from typing import Literal

import pydantic

__all__ = ["OwnerRecord", "OwnerState", "current_owner", "owner_state", "process_start_time"]

OwnerState = Literal["alive", "gone", "unknown"]

_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"


class OwnerRecord(pydantic.BaseModel):
    """The identity of a process, as written into the resources it owns (JSON on disk)."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid", strict=True)

    version: Literal[1] = 1
    host: str
    machine_id: str | None = None
    boot_id: str | None = None
    pid_namespace: str | None = None
    pid: int = pydantic.Field(gt=0)
    start_time: int | None = None

    def to_json(self) -> str:
        """The record as compact JSON."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, data: str | bytes) -> OwnerRecord:
        """Parse a record; raises :class:`pydantic.ValidationError` for anything malformed."""
        return cls.model_validate_json(data)


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            value = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value or None


def process_start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22).

    ``None`` when the process does not exist or the platform has no procfs.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    # Field 2 (comm) is parenthesised and may hold spaces or ')'; fields resume after the
    # last ')', starting with field 3.
    tail = raw[raw.rfind(b")") + 1 :].split()
    try:
        return int(tail[22 - 3])
    except (IndexError, ValueError):
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


_cache: tuple[int, OwnerRecord] | None = None


def current_owner() -> OwnerRecord:
    """The owner record of this process (recomputed after a fork)."""
    global _cache
    pid = os.getpid()
    if _cache is not None and _cache[0] == pid:
        return _cache[1]
    machine_id = next(
        (v for v in (_read_text(p) for p in _MACHINE_ID_FILES) if v is not None), None
    )
    record = OwnerRecord(
        host=socket.gethostname(),
        machine_id=machine_id,
        boot_id=_read_text(_BOOT_ID_FILE),
        pid_namespace=_pid_namespace(),
        pid=pid,
        start_time=process_start_time(pid),
    )
    _cache = (pid, record)
    return record


def _both_equal(mine: str | None, theirs: str | None) -> bool | None:
    """``True``/``False`` when both sides carry the part, ``None`` when neither does."""
    if mine is None and theirs is None:
        return None
    if mine is None or theirs is None:
        return False
    return mine == theirs


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:  # pragma: no cover - e.g. an absurd pid value
        return False
    return True


def owner_state(record: OwnerRecord, *, me: OwnerRecord | None = None) -> OwnerState:
    """Judge whether the process a record names is ``alive``, ``gone`` or ``unknown``.

    ``me`` defaults to :func:`current_owner` (tests pass another to simulate machines).
    """
    here = me if me is not None else current_owner()
    if record.host != here.host or _both_equal(here.machine_id, record.machine_id) is False:
        return "unknown"
    boot = _both_equal(here.boot_id, record.boot_id)
    if boot is False:
        if here.boot_id is not None and record.boot_id is not None:
            return "gone"  # this machine, another (so earlier) boot
        return "unknown"  # only one side knows its boot
    if _both_equal(here.pid_namespace, record.pid_namespace) is False:
        return "unknown"
    if not _pid_exists(record.pid):
        return "gone"
    if record.start_time is None:
        return "unknown"  # the pid runs, but nothing proves it is the same process
    now = process_start_time(record.pid)
    if now is None:  # it exited since the check above, or there is no procfs
        return "gone" if not _pid_exists(record.pid) else "unknown"
    return "alive" if now == record.start_time else "gone"
