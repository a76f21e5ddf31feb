"""The errors raised by :mod:`agentrig.host`.

Policy *outcomes* (an egress rejection) are returned as values by the checking functions;
the exceptions below are for the places where a value cannot be returned (an httpx
transport, a filesystem write) and for genuine failures.  The tree::

    AgentrigError
     └── HostError                        host.error
          ├── EgressRejectedError         egress.rejected            user    (.rejection)
          ├── PathContainmentError        path.invalid               user    (.path, .root)
          │    └── PathEscapeError        path.escape                user
          ├── OwnerStoreError             store.error                system  (.path)
          │    ├── UnsafeExistingError    store.unsafe_existing      system  (.mode, .uid)
          │    ├── ModeNotEnforcedError   store.mode_not_enforced    system  (.mode)
          │    ├── AlreadyExistsError     store.exists               user
          │    └── InPlaceUnconfirmed     store.in_place_unconfirmed system
          │         └── PartialReplaceError  store.partial_replace  (.replaced, .not_replaced)
          └── MarkerError                 marker.error               system
               ├── MarkerHeldError        marker.held                system  (.owner, .state)
               └── MarkerLostError        marker.lost                system
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.errors import AgentrigError, Category

if TYPE_CHECKING:
    from agentrig.host._egress import EgressRejected
    from agentrig.host._process import OwnerRecord, OwnerState

__all__ = [
    "AlreadyExistsError",
    "EgressRejectedError",
    "HostError",
    "InPlaceUnconfirmed",
    "MarkerError",
    "MarkerHeldError",
    "MarkerLostError",
    "ModeNotEnforcedError",
    "OwnerStoreError",
    "PartialReplaceError",
    "PathContainmentError",
    "PathEscapeError",
    "UnsafeExistingError",
]


class HostError(AgentrigError):
    """Base of the errors of the OS-touching host services."""

    code = "host.error"


class EgressRejectedError(HostError):
    """The egress policy refused a request made through an egress client or transport.

    ``rejection`` is the :class:`~agentrig.host.EgressRejected` value the policy returned; its
    ``reason`` is the machine-readable cause (``address.blocked``, ``scheme.not_allowed``...).
    """

    code = "egress.rejected"
    category: Category = "user"

    def __init__(self, rejection: EgressRejected) -> None:
        super().__init__(f"egress refused ({rejection.reason}): {rejection.message}")
        self.rejection = rejection


class PathContainmentError(HostError, ValueError):
    """A path cannot be judged at all: it holds a NUL byte, a symlink loop, or is unreadable."""

    code = "path.invalid"
    category: Category = "user"

    def __init__(self, message: str, *, path: str, root: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.root = root


class PathEscapeError(PathContainmentError):
    """A path resolves (symlinks followed) to a place outside the root it must stay in."""

    code = "path.escape"


class OwnerStoreError(HostError, OSError):
    """An owner-only store operation failed; ``path`` names the file or directory."""

    code = "store.error"

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class UnsafeExistingError(OwnerStoreError):
    """Something already at the path is not owner-only: wider mode, other owner or a link.

    It is reported rather than adopted or silently tightened: whoever made it wide may
    already have read or replaced what it holds.
    """

    code = "store.unsafe_existing"

    def __init__(self, message: str, *, path: str, mode: int | None, uid: int | None) -> None:
        super().__init__(message, path=path)
        self.mode = mode
        self.uid = uid


class ModeNotEnforcedError(OwnerStoreError):
    """A file or directory was created owner-only but the filesystem reports another mode."""

    code = "store.mode_not_enforced"

    def __init__(self, message: str, *, path: str, mode: int) -> None:
        super().__init__(message, path=path)
        self.mode = mode


class AlreadyExistsError(OwnerStoreError, FileExistsError):
    """A create-only write found something already at the path; nothing was changed."""

    code = "store.exists"
    category: Category = "user"


class InPlaceUnconfirmed(OwnerStoreError):
    """The new content is in place but its durability could not be confirmed.

    Raised when a step *after* the new content became visible failed (typically the
    directory fsync after the rename).  Callers must not report "not written": the old
    content is gone from the path.
    """

    code = "store.in_place_unconfirmed"
    recoverable = True


class PartialReplaceError(InPlaceUnconfirmed):
    """A staged replace of several files stopped between renames.

    ``replaced`` already hold their new content (in place, unconfirmed); ``not_replaced``
    still hold their old content.  Every file was staged and flushed before the first
    rename, so what is in place is complete.
    """

    code = "store.partial_replace"

    def __init__(
        self, message: str, *, replaced: tuple[str, ...], not_replaced: tuple[str, ...]
    ) -> None:
        super().__init__(message, path=replaced[0] if replaced else "")
        self.replaced = replaced
        self.not_replaced = not_replaced


class MarkerError(HostError):
    """Base of process-marker failures."""

    code = "marker.error"


class MarkerHeldError(MarkerError):
    """Another owner holds the marker and is alive or cannot be proven gone."""

    code = "marker.held"
    recoverable = True

    def __init__(
        self, message: str, *, path: str, owner: OwnerRecord | None, state: OwnerState
    ) -> None:
        super().__init__(message)
        self.path = path
        self.owner = owner
        self.state = state


class MarkerLostError(MarkerError):
    """A marker this process published is no longer ours (removed or replaced)."""

    code = "marker.lost"

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path
