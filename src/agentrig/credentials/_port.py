"""The credential-store port: a secret string by a (service, account) key."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agentrig.catalog import CatalogKey
from agentrig.ids import EntryId

__all__ = [
    "CREDENTIAL_STORES",
    "CredentialStore",
]


@runtime_checkable
class CredentialStore(Protocol):
    """Keeps secrets by ``(service, account)``: read, written and removed -- nothing more.

    Contract (checked by :mod:`agentrig.testing.conformance_credentials`):

    * :meth:`get` returns the secret, or ``None`` only when the store was read and holds no
      such entry.  A store that cannot be read -- unreadable file, corrupt content, a locked
      or failing keychain -- raises :class:`~agentrig.credentials.CredentialStoreError`;
      it never reports "absent" for what it could not look up.
    * :meth:`set` stores (or replaces) the secret; the empty string is a valid secret.
    * :meth:`delete` removes the entry and says whether there was one.
    * ``service`` and ``account`` are arbitrary non-empty strings (unicode included); keys
      differing in either part are independent.

    **Coordination is the caller's.**  A store serialises nothing between processes: one
    refresh of a token, or one creator of a secret, at a time is for the caller to arrange
    (with a process marker or a lock of its own), because a keychain offers no atomic
    create-if-absent and the same lock must serve every backend.
    """

    #: The store's kind, e.g. ``"file"`` or ``"keyring"``.
    name: str

    def describe(self) -> str:
        """A one-line description of where secrets live (never a secret itself)."""
        ...

    async def get(self, service: str, account: str) -> str | None:
        """The secret for ``(service, account)``, or ``None`` when the store holds none."""
        ...

    async def set(self, service: str, account: str, secret: str) -> None:
        """Store ``secret`` for ``(service, account)``, replacing any previous one."""
        ...

    async def delete(self, service: str, account: str) -> bool:
        """Remove the entry; ``True`` if there was one, ``False`` if there was none."""
        ...


CREDENTIAL_STORES: CatalogKey[EntryId, CredentialStore] = CatalogKey("credential_stores")
"""The runtime's credential stores by ``[credential_stores.<id>]``."""
