"""The sealer port: seal and open stored artifacts bound to their kind and owner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from agentrig.catalog import CatalogKey
from agentrig.ids import EntryId

__all__ = [
    "Appender",
    "SEALERS",
    "Sealer",
]


@runtime_checkable
class Appender(Protocol):
    """Seals the records of one writer of an ``append`` kind under one data key.

    Each sealed record carries everything needed to open it on its own (the wrapped data
    key included), so any record opens alone with :meth:`Sealer.open`; a reader that opens
    many records of the same writer unwraps their shared key once.
    """

    @property
    def kind(self) -> str: ...

    @property
    def owner_id(self) -> str: ...

    def seal_record(self, plaintext: bytes) -> bytes:
        """One sealed record, bound to this appender's kind and owner id."""
        ...


@runtime_checkable
class Sealer(Protocol):
    """Seals artifacts to an owner's public key and opens them with the secret key.

    Contract (checked by :mod:`agentrig.testing.conformance_sealer`):

    * **Binding.**  An artifact is bound to its kind and its owner's id as authenticated
      data: opened as another kind or for another owner (a sealed file moved to another
      owner's path) it raises :class:`~agentrig.sealing.CorruptError`.  Opening proves that
      binding and that nothing changed since sealing -- *not* who sealed it.
    * **Public-key sealing.**  :meth:`seal` and :meth:`open_appender` need only the public
      key, so a locked process still writes -- and so can any program that can read the
      public key.  :meth:`open` needs the secret key; without it (locked, or public key
      only) it raises :class:`~agentrig.sealing.LockedError` for an artifact whose framing
      is intact.
    * **Data keys.**  Every whole artifact gets its own data key (nothing on disk links two
      of them); the records of one :class:`Appender` share one data key.
    * **Classification.**  Every kind is classified ``whole`` or ``append`` in an
      :class:`~agentrig.sealing.ArtifactKinds` registry; an unclassified kind is refused
      (:class:`~agentrig.sealing.UnclassifiedKindError`), and a kind used against its class
      too (:class:`~agentrig.sealing.KindClassError`).
    * **Authorship.**  Only unlocked keys make and check authorship tags: ``seal(...,
      author_tag=True)`` and :meth:`verify_author` raise ``LockedError`` while locked.
      :attr:`unlocked` says whether they are, and :meth:`on_unlock` tells a writer when they
      become so, so it can re-seal with a tag what it wrote while they were locked.
    * **Errors.**  ``LockedError`` and ``CorruptError`` carry no plaintext, key or path.
    * **Framing.**  Output uses :mod:`agentrig.sealing.framing`, so a reader without keys
      tells a sealed artifact from a damaged one or from plaintext.
    * **Grants.**  Handing sealing to another process is an optional extension,
      :class:`~agentrig.sealing.GrantingSealer`: offered only when the grant carries no
      secret and the key it seals to outlives the sealing process; any other sealer
      offers none.
    """

    #: The sealer's kind, e.g. ``"sodium"``.
    name: str

    def describe(self) -> str:
        """A one-line description: suite and lock state (never a key or a path)."""
        ...

    @property
    def unlocked(self) -> bool:
        """Whether the secret keys are available (open, make and check authorship tags)."""
        ...

    def on_unlock(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` when the keys unlock (at once if they already are).

        Returns a function that removes the callback.
        """
        ...

    def seal(
        self, kind: str, owner_id: str, plaintext: bytes, *, author_tag: bool = False
    ) -> bytes:
        """Seal one whole artifact of ``kind`` (a ``whole`` kind) for ``owner_id``."""
        ...

    def open_appender(self, kind: str, owner_id: str, *, author_tag: bool = False) -> Appender:
        """An appender for the records one writer appends to an ``append`` kind."""
        ...

    def open(self, kind: str, owner_id: str, sealed: bytes) -> bytes:
        """The plaintext of a whole artifact or of one record; see the error contract."""
        ...

    def verify_author(self, kind: str, owner_id: str, sealed: bytes) -> bool:
        """Open ``sealed`` and say whether it carries a valid authorship tag of these keys.

        ``False`` for an intact artifact without one (or with another key's tag);
        ``CorruptError`` when it does not open; ``LockedError`` while locked.
        """
        ...


SEALERS: CatalogKey[EntryId, Sealer] = CatalogKey("sealers")
"""The runtime's sealers by ``[sealers.<id>]``."""
