"""The errors of :mod:`agentrig.credentials`.

::

    AgentrigError
     └── CredentialError                credentials.error        system
          ├── CredentialStoreError      credentials.store_failed system  (.store)
          └── CredentialReferenceError  credentials.reference    user    (.reference)

A store that cannot be read (or written) raises :class:`CredentialStoreError`; it never
answers "absent" for a secret it could not look up.  A ``$STORE:`` reference that is
malformed, names an unknown store, or points at a secret that is not there raises
:class:`CredentialReferenceError`.  No error carries a secret value.
"""

from __future__ import annotations

from agentrig.errors import AgentrigError, Category

__all__ = ["CredentialError", "CredentialReferenceError", "CredentialStoreError"]


class CredentialError(AgentrigError):
    """Base of the credential-store errors."""

    code = "credentials.error"


class CredentialStoreError(CredentialError):
    """A credential store could not be read or written; the secret's presence is unknown.

    ``store`` describes the store (its ``describe()``), never the secret.  The underlying
    cause (an OS error, a keyring backend error, a JSON error) is chained as ``__cause__``.
    """

    code = "credentials.store_failed"

    def __init__(self, message: str, *, store: str) -> None:
        super().__init__(message)
        self.store = store


class CredentialReferenceError(CredentialError, LookupError):
    """A ``$STORE:<store-id>:<service>/<account>`` reference cannot be resolved.

    Raised for a malformed reference, an unknown store id, or a secret the store reports
    absent.  ``reference`` is the reference text (which holds no secret).
    """

    code = "credentials.reference"
    category: Category = "user"

    def __init__(self, message: str, *, reference: str) -> None:
        super().__init__(message)
        self.reference = reference
