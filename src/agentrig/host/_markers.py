"""Process markers: an exclusive, named claim shared by every process using one directory.

A marker gives one record one writer across processes.  It is a small owner-only file
``<name>.marker`` holding the owner record (see :mod:`agentrig.host._process`) and a random
token.  Rules:

* it is published create-only -- a flushed temp file linked into place -- so a crash leaves
  it complete or absent, never an empty marker that would read "unknown" forever;
* a second acquirer is refused with :class:`MarkerHeldError` naming the owner, while that
  owner is ``alive`` or ``unknown``; only a marker whose owner is provably ``gone`` is broken;
* a handle recognises its marker by the token it remembers publishing, never by liveness
  (where no start time can be read, even this process is "unknown");
* every transition (acquire, break, release) and every :meth:`ProcessMarker.guard`\\ed
  mutation holds an ``flock`` on ``.markers.lock`` in the same directory.  The kernel drops
  that lock when its holder dies, so it is crash-released and never stolen because time
  passed.

A marker is a coordination device between cooperating processes of the same user, not a
trust anchor: any process of that user can plant or delete one (a planted marker is a
denial of service, reported with whatever owner it claims).
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import attrs
import pydantic

from agentrig.host._errors import AlreadyExistsError, MarkerHeldError, MarkerLostError
from agentrig.host._exit import exit_registry
from agentrig.host._owner_store import OwnerOnlyStore
from agentrig.host._paths import StrPath
from agentrig.host._process import OwnerRecord, OwnerState, current_owner, owner_state

__all__ = ["MarkerInfo", "ProcessMarker", "read_marker"]

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_LOCK_FILE: Final = ".markers.lock"
_SUFFIX: Final = ".marker"


class _MarkerFile(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    owner: OwnerRecord
    token: str


@attrs.frozen(slots=True)
class MarkerInfo:
    """What a marker file says and how its owner is judged (``owner`` is ``None`` when the
    file cannot be parsed; its state is then ``unknown``)."""

    path: Path
    owner: OwnerRecord | None
    state: OwnerState


def _file_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"marker name {name!r} must match {_NAME.pattern}")
    return name + _SUFFIX


@contextlib.contextmanager
def _transition_lock(store: OwnerOnlyStore) -> Iterator[None]:
    import fcntl  # POSIX only, like the store itself

    with store.open_append(_LOCK_FILE) as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _read(store: OwnerOnlyStore, file_name: str) -> _MarkerFile | None:
    try:
        data = store.read_bytes(file_name)
    except FileNotFoundError:
        raise
    except OSError:
        return None
    try:
        return _MarkerFile.model_validate_json(data)
    except pydantic.ValidationError:
        return None


def read_marker(directory: StrPath, name: str) -> MarkerInfo | None:
    """Report the marker ``name`` in ``directory`` without changing it (``None``: absent)."""
    store = OwnerOnlyStore(directory)
    file_name = _file_name(name)
    try:
        content = _read(store, file_name)
    except FileNotFoundError:
        return None
    owner = content.owner if content is not None else None
    return MarkerInfo(store.path(file_name), owner, owner_state(owner) if owner else "unknown")


class ProcessMarker:
    """A held marker.  Create with :meth:`acquire`; end with :meth:`release`."""

    def __init__(self, store: OwnerOnlyStore, file_name: str, content: _MarkerFile) -> None:
        self._store = store
        self._file_name = file_name
        self._content = content
        self._released = False

    @property
    def path(self) -> Path:
        return self._store.path(self._file_name)

    @property
    def owner(self) -> OwnerRecord:
        return self._content.owner

    @classmethod
    def acquire(cls, directory: StrPath, name: str) -> ProcessMarker:
        """Publish the marker ``name`` in ``directory`` for this process.

        Raises :class:`MarkerHeldError` (with the owner record and its state) when another
        live or unknown owner holds it -- this process included, for a second acquire.  A
        marker whose owner is provably gone is broken and replaced.  The marker is released
        at process exit if still held.
        """
        store = OwnerOnlyStore(directory)
        file_name = _file_name(name)
        content = _MarkerFile(owner=current_owner(), token=secrets.token_hex(16))
        payload = content.model_dump_json().encode()
        with _transition_lock(store):
            try:
                store.create_bytes(file_name, payload)
            except AlreadyExistsError:
                existing = _read_or_none(store, file_name)
                owner = existing.owner if existing is not None else None
                state: OwnerState = owner_state(owner) if owner is not None else "unknown"
                if state != "gone":
                    raise MarkerHeldError(
                        f"marker {name!r} in {store.root} is held by {_describe(owner)} ({state})",
                        path=str(store.path(file_name)),
                        owner=owner,
                        state=state,
                    ) from None
                # Under the lock nobody else can publish, so what was judged gone is what
                # is removed here.
                store.remove(file_name)
                store.create_bytes(file_name, payload)
        marker = cls(store, file_name, content)
        exit_registry().register(("marker", id(marker)), marker.release)
        return marker

    def _is_ours_locked(self) -> bool:
        current = _read_or_none(self._store, self._file_name)
        return current is not None and current.token == self._content.token

    def is_held(self) -> bool:
        """Whether the marker on disk is still the one this handle published."""
        if self._released:
            return False
        with _transition_lock(self._store):
            return self._is_ours_locked()

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Hold the transition lock and prove the marker is still ours, for one mutation.

        Raises :class:`MarkerLostError` (and runs nothing) if it is not.  Do not acquire or
        release markers of the same directory inside the block: the lock is not re-entrant.
        """
        with _transition_lock(self._store):
            if self._released or not self._is_ours_locked():
                raise MarkerLostError(f"marker {self.path} is no longer held", path=str(self.path))
            yield

    def release(self) -> bool:
        """Remove the marker if it is still ours; ``False`` if it was lost or released."""
        if self._released:
            return False
        self._released = True
        exit_registry().unregister(("marker", id(self)))
        with _transition_lock(self._store):
            if not self._is_ours_locked():
                return False
            self._store.remove(self._file_name)
            return True

    def __enter__(self) -> ProcessMarker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _read_or_none(store: OwnerOnlyStore, file_name: str) -> _MarkerFile | None:
    try:
        return _read(store, file_name)
    except FileNotFoundError:
        return None


def _describe(owner: OwnerRecord | None) -> str:
    if owner is None:
        return "an unreadable owner record"
    return f"pid {owner.pid} on {owner.host}"
