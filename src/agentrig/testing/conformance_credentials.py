"""Conformance suite for :class:`~agentrig.credentials.CredentialStore` implementations.

Inherit :class:`CredentialStoreConformance` in a test class of your own and provide a
``credential_store`` pytest fixture that returns a store (fresh or shared: every test uses
keys of its own and removes what it wrote)::

    import pytest
    from agentrig.testing.conformance_credentials import CredentialStoreConformance

    class TestMyStore(CredentialStoreConformance):
        @pytest.fixture
        def credential_store(self, tmp_path):
            return MyStore(tmp_path / "secrets")

The inherited ``test_*`` methods are coroutines that request anyio's ``anyio_backend``
fixture, so anyio's pytest plugin (installed with anyio) runs them on whichever backends
your ``anyio_backend`` fixture names.  What the suite cannot check generically -- that an
*unreadable* store raises :class:`~agentrig.credentials.CredentialStoreError` instead of
answering "absent" -- is for your own tests, since only you know how to break your store;
:func:`assert_unreadable` helps.

Importing this module has no side effect: it registers no plugin or fixture and does not
import pytest.
"""

from __future__ import annotations

import secrets as _secrets
import string
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentrig.credentials import CredentialStore, CredentialStoreError

__all__ = ["DIFFICULT_CHARS", "UNICODE_CHARS", "CredentialStoreConformance", "assert_unreadable"]

DIFFICULT_CHARS = string.whitespace + string.punctuation
#: Letters outside ASCII from several scripts (Hebrew, Greek, Cyrillic, CJK) and an emoji.
UNICODE_CHARS = "זהכיףסתםξεσκεπάζωСъешьжеещё漢字かな🔑"


def _random(length: int = 12, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_secrets.choice(alphabet) for _ in range(length))


async def assert_unreadable(
    store: CredentialStore, service: str = "svc", account: str = "acct"
) -> CredentialStoreError:
    """Assert that ``store.get`` raises ``CredentialStoreError`` (not ``None``); return it."""
    try:
        value = await store.get(service, account)
    except CredentialStoreError as exc:
        return exc
    raise AssertionError(
        f"an unreadable store must raise CredentialStoreError, but get() returned {value!r}"
    )


class _Keys:
    """Unique keys for one test, and the cleanup of whatever it stored."""

    def __init__(self, store: CredentialStore) -> None:
        self.store = store
        self.created: set[tuple[str, str]] = set()

    def service(self, alphabet: str | None = None) -> str:
        return "agentrig-conformance-" + _random(12, alphabet or string.ascii_letters)

    async def set(self, service: str, account: str, secret: str) -> None:
        self.created.add((service, account))
        await self.store.set(service, account, secret)


class CredentialStoreConformance:
    """The credential-store contract as tests.  Provide a ``credential_store`` fixture."""

    @asynccontextmanager
    async def _keys(self, store: CredentialStore) -> AsyncIterator[_Keys]:
        keys = _Keys(store)
        try:
            yield keys
        finally:
            for service, account in keys.created:
                await store.delete(service, account)

    async def _check_round_trip(self, keys: _Keys, service: str, account: str, secret: str) -> None:
        store = keys.store
        got = await store.get(service, account)
        assert got is None, f"a key never written must read as None, got {got!r}"
        await keys.set(service, account, secret)
        got = await store.get(service, account)
        assert got == secret, f"get() after set() returned {got!r}"
        await keys.set(service, account, "")
        got = await store.get(service, account)
        assert got == "", f"the empty string is a valid secret; get() returned {got!r}"

    async def test_conformance_is_a_credential_store(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        assert isinstance(credential_store, CredentialStore), (
            f"{type(credential_store).__name__} does not implement the CredentialStore protocol"
        )
        assert isinstance(credential_store.name, str)
        assert credential_store.name, "a store needs a non-empty name"
        description = credential_store.describe()
        assert isinstance(description, str)
        assert description.strip(), "describe() must say something"

    async def test_conformance_set_get(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            await self._check_round_trip(keys, keys.service(), _random(), _random(40))

    async def test_conformance_difficult_chars(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            service = keys.service() + _random(8, DIFFICULT_CHARS.replace("/", ""))
            account = _random(12, DIFFICULT_CHARS)
            await self._check_round_trip(keys, service, account, _random(30, DIFFICULT_CHARS))

    async def test_conformance_unicode(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            service = keys.service() + _random(8, UNICODE_CHARS)
            account = _random(12, UNICODE_CHARS + string.ascii_letters)
            await self._check_round_trip(keys, service, account, _random(30, UNICODE_CHARS))

    async def test_conformance_long_secret(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            service, secret = keys.service(), _random(2048)
            await keys.set(service, "acct", secret)
            assert await credential_store.get(service, "acct") == secret

    async def test_conformance_replace(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            service = keys.service()
            await keys.set(service, "acct", "first")
            await keys.set(service, "acct", "second")
            assert await credential_store.get(service, "acct") == "second"

    async def test_conformance_keys_are_independent(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            one, two = keys.service(), keys.service()
            await keys.set(one, "alice", "s1")
            await keys.set(one, "bob", "s2")
            await keys.set(two, "alice", "s3")
            assert await credential_store.get(one, "alice") == "s1"
            assert await credential_store.get(one, "bob") == "s2"
            assert await credential_store.get(two, "alice") == "s3"
            assert await credential_store.get(two, "bob") is None

    async def test_conformance_delete_present(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            service = keys.service()
            await keys.set(service, "acct", "secret")
            assert await credential_store.delete(service, "acct") is True
            assert await credential_store.get(service, "acct") is None

    async def test_conformance_delete_absent(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            assert await credential_store.delete(keys.service(), "nobody") is False

    async def test_conformance_delete_one_of_a_service(
        self, credential_store: CredentialStore, anyio_backend: str
    ) -> None:
        async with self._keys(credential_store) as keys:
            service = keys.service()
            await keys.set(service, "alice", "s1")
            await keys.set(service, "bob", "s2")
            assert await credential_store.delete(service, "alice") is True
            assert await credential_store.get(service, "alice") is None
            assert await credential_store.get(service, "bob") == "s2"
            assert await credential_store.delete(service, "alice") is False
