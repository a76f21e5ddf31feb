"""agentrig.credentials: the credential-store port and ``$STORE:`` references.

* :class:`CredentialStore` -- the port: ``get`` / ``set`` / ``delete`` a secret string by
  ``(service, account)``, plus ``name`` and ``describe()``.  An owner-only file store is
  built in (entry point ``file``, :mod:`agentrig.builtins._credential_file`); the OS keychain
  comes with the ``agentrig-keyring`` plugin (entry point ``keyring``).
* :func:`resolve_store_reference` / :func:`parse_store_reference` -- provider credentials
  written as ``"$STORE:<store-id>:<service>/<account>"``; :func:`resolve_secret` -- those
  written as ``"$ENV:NAME"``, through the resolver the runtime's caller passed.
* Errors: :class:`CredentialStoreError` (the store cannot be read -- never "absent") and
  :class:`CredentialReferenceError`.

A conformance suite for third-party stores is in :mod:`agentrig.testing.conformance_credentials`.
"""

from __future__ import annotations

from agentrig.credentials._env import ENV_PREFIX, resolve_secret
from agentrig.credentials._errors import (
    CredentialError,
    CredentialReferenceError,
    CredentialStoreError,
)
from agentrig.credentials._port import CREDENTIAL_STORES, CredentialStore
from agentrig.credentials._reference import (
    STORE_PREFIX,
    StoreReference,
    parse_store_reference,
    resolve_store_reference,
)

__all__ = [
    "CREDENTIAL_STORES",
    "CredentialError",
    "CredentialReferenceError",
    "CredentialStore",
    "CredentialStoreError",
    "ENV_PREFIX",
    "STORE_PREFIX",
    "StoreReference",
    "parse_store_reference",
    "resolve_secret",
    "resolve_store_reference",
]
