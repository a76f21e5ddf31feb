"""``$STORE:<store-id>:<service>/<account>`` references."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.builtins._credential_file import FileCredentialStore
from agentrig.credentials import (
    CredentialReferenceError,
    CredentialStore,
    CredentialStoreError,
    StoreReference,
    parse_store_reference,
    resolve_store_reference,
)


class _BrokenStore:
    name = "broken"

    def describe(self) -> str:
        return "a store that cannot be read"

    async def get(self, service: str, account: str) -> str | None:
        raise CredentialStoreError("cannot read", store=self.describe())

    async def set(self, service: str, account: str, secret: str) -> None:
        raise CredentialStoreError("cannot write", store=self.describe())

    async def delete(self, service: str, account: str) -> bool:
        raise CredentialStoreError("cannot write", store=self.describe())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("$STORE:keys:api.openai.com/default", StoreReference("keys", "api.openai.com", "default")),
        ("$STORE:keys:github/org/bot", StoreReference("keys", "github", "org/bot")),
        (
            "$STORE:my-store.2:svc:with:colons/acct",
            StoreReference("my-store.2", "svc:with:colons", "acct"),
        ),
        ("$STORE:k:s/ä ccount", StoreReference("k", "s", "ä ccount")),
    ],
)
def test_parse(value: str, expected: StoreReference) -> None:
    parsed = parse_store_reference(value)
    assert parsed == expected
    assert str(parsed) == value


@pytest.mark.parametrize("value", ["plain-key", "$ENV:OPENAI_API_KEY", "", "$store:k:s/a"])
def test_values_that_are_not_store_references(value: str) -> None:
    assert parse_store_reference(value) is None


@pytest.mark.parametrize(
    "value",
    [
        "$STORE:",
        "$STORE:keys",
        "$STORE::svc/acct",
        "$STORE:bad id:svc/acct",
        "$STORE:keys:svc",
        "$STORE:keys:/acct",
        "$STORE:keys:svc/",
    ],
)
def test_malformed_references_are_errors(value: str) -> None:
    with pytest.raises(CredentialReferenceError) as info:
        parse_store_reference(value)
    assert info.value.reference == value
    assert info.value.category == "user"


@pytest.fixture
def file_store(tmp_path: Path) -> CredentialStore:
    return FileCredentialStore(tmp_path / "keys" / "credentials.json")


@pytest.mark.anyio
async def test_resolve_through_a_store(file_store: CredentialStore) -> None:
    await file_store.set("api.example.com", "team/bot", "tok-123")
    stores = {"keys": file_store}
    assert (
        await resolve_store_reference("$STORE:keys:api.example.com/team/bot", stores) == "tok-123"
    )
    assert await resolve_store_reference("literal", stores) == "literal"
    assert await resolve_store_reference("$ENV:X", stores) == "$ENV:X"


@pytest.mark.anyio
async def test_absent_secret_is_a_reference_error(file_store: CredentialStore) -> None:
    with pytest.raises(CredentialReferenceError, match="holds no secret") as info:
        await resolve_store_reference("$STORE:keys:svc/acct", {"keys": file_store})
    assert info.value.reference == "$STORE:keys:svc/acct"


@pytest.mark.anyio
async def test_unknown_store_lists_the_known_ones(file_store: CredentialStore) -> None:
    with pytest.raises(
        CredentialReferenceError, match=r"no credential store 'vault' \(known: keys\)"
    ):
        await resolve_store_reference("$STORE:vault:svc/acct", {"keys": file_store})


@pytest.mark.anyio
async def test_unreadable_store_is_not_taken_for_absent() -> None:
    with pytest.raises(CredentialStoreError):
        await resolve_store_reference("$STORE:broken:svc/acct", {"broken": _BrokenStore()})


@pytest.mark.anyio
async def test_errors_never_carry_the_secret(file_store: CredentialStore) -> None:
    await file_store.set("svc", "acct", "tok-SECRET")
    with pytest.raises(CredentialReferenceError) as info:
        await resolve_store_reference("$STORE:keys:svc/other", {"keys": file_store})
    assert "tok-SECRET" not in str(info.value)
