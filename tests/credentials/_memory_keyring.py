"""Tiny keyring backends for the keyring plugin's tests (no OS keychain needed)."""

from __future__ import annotations

from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked, PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """Keeps passwords in a dict, like a keychain that is always unlocked."""

    priority = 0.5  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.items[(service, username)]
        except KeyError:
            raise PasswordDeleteError("not found") from None


class LockedKeyring(KeyringBackend):
    """A keychain that stays locked: every operation fails."""

    priority = 0.1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("the keychain is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("the keychain is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("the keychain is locked")
