"""The errors of :mod:`agentrig.sealing`.

::

    AgentrigError
     └── SealerError                     sealing.error              system
          ├── LockedError                sealing.locked             system  recoverable
          ├── CorruptError               sealing.corrupt            system
          │    └── UnsupportedFramingError  sealing.unsupported_framing  system  (.version)
          ├── UnclassifiedKindError      sealing.unclassified_kind  user    (.kind)
          ├── KindClassError             sealing.kind_class         user    (.kind, .storage)
          ├── SealerKeyError             sealing.keys               system
          └── GrantError                 sealing.grant              user

Opening fails in exactly two ways, on purpose:

* :class:`LockedError` -- the artifact is intact as far as its framing shows, and this
  process cannot open it *now*: its keys are locked, or it holds only the public key.
* :class:`CorruptError` -- the artifact does not open here: it is not sealed in a framing
  this build reads (:class:`UnsupportedFramingError` for a newer version), it was damaged or
  truncated, or it is bound to another owner or kind (or sealed to another key).

Neither carries plaintext, key material or a filesystem path -- not in the message, not in
``args``, not in attributes, and not through a chained cause (they are raised ``from None``).
"""

from __future__ import annotations

from agentrig.errors import AgentrigError, Category

__all__ = [
    "CorruptError",
    "GrantError",
    "KindClassError",
    "LockedError",
    "SealerError",
    "SealerKeyError",
    "UnclassifiedKindError",
    "UnsupportedFramingError",
]


class SealerError(AgentrigError):
    """Base of the sealer errors."""

    code = "sealing.error"


class LockedError(SealerError):
    """The artifact is intact but this process cannot open it (or tag) now.

    Its keys are locked, or it holds only the public key and only the owner's process
    reads the artifact.  Recoverable: unlocking the keys (or asking the owner) opens it.
    """

    code = "sealing.locked"
    recoverable = True


class CorruptError(SealerError):
    """The artifact does not open here: unknown framing, damaged, or bound elsewhere."""

    code = "sealing.corrupt"


class UnsupportedFramingError(CorruptError):
    """A sealed artifact in a framing version this build does not read (a newer build's).

    It is still a sealed artifact -- never plaintext -- just not one this build opens.
    """

    code = "sealing.unsupported_framing"

    def __init__(self, message: str, *, version: int) -> None:
        super().__init__(message)
        self.version = version


class UnclassifiedKindError(SealerError, LookupError):
    """An artifact kind that no one classified as ``whole`` or ``append`` was used."""

    code = "sealing.unclassified_kind"
    category: Category = "user"

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class KindClassError(SealerError, ValueError):
    """A kind was used against its class (``seal`` of an append kind, or the reverse), or
    registered again with another class."""

    code = "sealing.kind_class"
    category: Category = "user"

    def __init__(self, message: str, *, kind: str, storage: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.storage = storage


class SealerKeyError(SealerError):
    """A sealer's keys are missing, unreadable or inconsistent (configuration, not data)."""

    code = "sealing.keys"


class GrantError(SealerError):
    """A sealing grant is not one this sealer can use (malformed, another sealer or suite)."""

    code = "sealing.grant"
    category = "user"
