"""The ``keyring`` credential store plugin, loaded through its entry point."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any

import keyring
import keyring.backends.chainer
import keyring.backends.fail
import keyring.backends.null
import pytest
from _memory_keyring import LockedKeyring, MemoryKeyring

from agentrig.credentials import CredentialStore, CredentialStoreError
from agentrig.kernel import check_factory
from agentrig.testing.conformance_credentials import CredentialStoreConformance, assert_unreadable

pytestmark = pytest.mark.anyio

Factory = Callable[[dict[str, Any]], CredentialStore]


@pytest.fixture
def keyring_factory() -> Factory:
    factory: Factory = entry_points(group="agentrig.credential_stores")["keyring"].load()
    return factory


@pytest.fixture
def current_keyring() -> Iterator[Callable[[keyring.backend.KeyringBackend], None]]:
    """Set keyring's process-wide backend for one test, restoring the previous one after."""
    previous = keyring.get_keyring()
    yield keyring.set_keyring
    keyring.set_keyring(previous)


class TestKeyringStoreConformance(CredentialStoreConformance):
    @pytest.fixture
    def credential_store(self, keyring_factory: Factory) -> CredentialStore:
        return keyring_factory({"options": {"backend": "_memory_keyring.MemoryKeyring"}})


class TestKeyringStoreOverDefaultBackend(CredentialStoreConformance):
    @pytest.fixture
    def credential_store(
        self, keyring_factory: Factory, current_keyring: Callable[[Any], None]
    ) -> CredentialStore:
        current_keyring(MemoryKeyring())
        return keyring_factory({})


def test_entry_point_passes_the_factory_contract(keyring_factory: Factory) -> None:
    check_factory(keyring_factory)
    assert keyring_factory.options_model.__name__ == "KeyringOptions"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "backend", ["keyring.backends.null.Keyring", "keyring.backends.fail.Keyring"]
)
def test_null_and_fail_backends_are_refused_by_name(keyring_factory: Factory, backend: str) -> None:
    with pytest.raises(CredentialStoreError, match=backend.replace(".", r"\.")):
        keyring_factory({"options": {"backend": backend}})


@pytest.mark.parametrize("backend", [keyring.backends.null.Keyring, keyring.backends.fail.Keyring])
def test_null_and_fail_default_backends_are_refused(
    keyring_factory: Factory,
    current_keyring: Callable[[Any], None],
    backend: type[keyring.backend.KeyringBackend],
) -> None:
    current_keyring(backend())
    with pytest.raises(CredentialStoreError, match="cannot keep secrets"):
        keyring_factory({})


def test_chainer_with_nothing_to_chain_is_refused(
    keyring_factory: Factory, current_keyring: Callable[[Any], None]
) -> None:
    class EmptyChainer(keyring.backends.chainer.ChainerBackend):
        backends = ()  # type: ignore[assignment]

    current_keyring(EmptyChainer())
    with pytest.raises(CredentialStoreError, match="chains no usable backend"):
        keyring_factory({})


def test_unknown_backend_is_a_store_error(keyring_factory: Factory) -> None:
    with pytest.raises(CredentialStoreError, match=r"no\.such\.Backend") as info:
        keyring_factory({"options": {"backend": "no.such.Backend"}})
    assert info.value.__cause__ is not None


def test_describe_names_the_backend(keyring_factory: Factory) -> None:
    store = keyring_factory({"options": {"backend": "_memory_keyring.MemoryKeyring"}})
    assert store.name == "keyring"
    assert "_memory_keyring.MemoryKeyring" in store.describe()


async def test_a_failing_backend_raises_never_absent(keyring_factory: Factory) -> None:
    store = keyring_factory({"options": {"backend": "_memory_keyring.LockedKeyring"}})
    error = await assert_unreadable(store)
    assert isinstance(error.__cause__, keyring.errors.KeyringLocked)
    assert "_memory_keyring.LockedKeyring" in str(error)
    with pytest.raises(CredentialStoreError):
        await store.set("svc", "acct", "secret")
    with pytest.raises(CredentialStoreError):
        await store.delete("svc", "acct")


def test_locked_backend_is_not_refused_at_construction(keyring_factory: Factory) -> None:
    # a locked keychain may unlock later: it is not one of the backends refused up front
    assert isinstance(
        keyring_factory({"options": {"backend": "_memory_keyring.LockedKeyring"}}), CredentialStore
    )
    assert LockedKeyring.priority > 0
