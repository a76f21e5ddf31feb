"""``$STORE:<store-id>:<service>/<account>`` references to secrets held in a credential store.

Syntax: the literal prefix ``$STORE:``, the id of a configured credential store (letters,
digits, ``_ . -``; no ``:``), a ``:``, then the service and the account separated by the
FIRST ``/``.  The service therefore contains no ``/``; the account may (``$STORE:keys:
github/org/bot`` is service ``github``, account ``org/bot``).  Neither part may be empty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from agentrig.credentials._errors import CredentialReferenceError
from agentrig.credentials._port import CredentialStore

__all__ = ["STORE_PREFIX", "StoreReference", "parse_store_reference", "resolve_store_reference"]

STORE_PREFIX = "$STORE:"

_STORE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")


@attrs.frozen(slots=True)
class StoreReference:
    """A parsed ``$STORE:`` reference."""

    store: str
    service: str
    account: str

    def __str__(self) -> str:
        return f"{STORE_PREFIX}{self.store}:{self.service}/{self.account}"


def parse_store_reference(value: str) -> StoreReference | None:
    """Parse ``value``: ``None`` when it is not a ``$STORE:`` reference at all.

    A value that starts with ``$STORE:`` but breaks the syntax raises
    :class:`~agentrig.credentials.CredentialReferenceError` saying what is wrong.  Nothing is
    looked up, so ``config check`` can call this without touching any store.
    """
    if not value.startswith(STORE_PREFIX):
        return None
    body = value[len(STORE_PREFIX) :]
    store, colon, key = body.partition(":")
    if not colon:
        raise CredentialReferenceError(
            f"{value!r}: expected $STORE:<store-id>:<service>/<account> (no ':' after the "
            "store id)",
            reference=value,
        )
    if not _STORE_ID.fullmatch(store):
        raise CredentialReferenceError(
            f"{value!r}: invalid store id {store!r} (letters, digits, '_', '.', '-'; starts "
            "with a letter or digit)",
            reference=value,
        )
    service, slash, account = key.partition("/")
    if not slash or not service or not account:
        raise CredentialReferenceError(
            f"{value!r}: expected <service>/<account> after the store id, both non-empty",
            reference=value,
        )
    return StoreReference(store=store, service=service, account=account)


async def resolve_store_reference(value: str, stores: Mapping[str, CredentialStore]) -> str:
    """Resolve a ``$STORE:`` reference through ``stores`` (store id -> store).

    A value that is not a ``$STORE:`` reference is returned unchanged, so a composition can
    pass every credential value through this.  A malformed reference, an unknown store id or
    a secret the store does not hold raises
    :class:`~agentrig.credentials.CredentialReferenceError`; a store that cannot be read
    raises :class:`~agentrig.credentials.CredentialStoreError` (it is never taken for
    "absent").
    """
    reference = parse_store_reference(value)
    if reference is None:
        return value
    store = stores.get(reference.store)
    if store is None:
        known = ", ".join(sorted(stores)) or "none configured"
        raise CredentialReferenceError(
            f"{value!r}: no credential store {reference.store!r} (known: {known})",
            reference=value,
        )
    secret = await store.get(reference.service, reference.account)
    if secret is None:
        raise CredentialReferenceError(
            f"{value!r}: store {reference.store!r} holds no secret for service "
            f"{reference.service!r}, account {reference.account!r}",
            reference=value,
        )
    return secret
