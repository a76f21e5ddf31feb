"""The credential store over a ``keyring`` backend (the OS keychain)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
import keyring
import keyring.backends.chainer
import keyring.backends.fail
import keyring.backends.null
import keyring.core
import keyring.errors
from keyring.backend import KeyringBackend

from agentrig.credentials import CredentialStoreError

__all__ = ["KeyringCredentialStore", "backend_name", "load_backend"]

_T = TypeVar("_T")

#: Backends that cannot keep a secret: the null keyring answers "absent" for everything and
#: the fail keyring raises only when used -- both would turn "no keychain" into a silent or
#: late failure, so they are refused when the store is built.
_REFUSED: tuple[type[KeyringBackend], ...] = (
    keyring.backends.null.Keyring,
    keyring.backends.fail.Keyring,
)


def backend_name(backend: KeyringBackend) -> str:
    """The dotted class name of a keyring backend (``keyring.backends.SecretService.Keyring``)."""
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _refusal(backend: KeyringBackend) -> str | None:
    if isinstance(backend, _REFUSED):
        return (
            f"keyring backend {backend_name(backend)} cannot keep secrets (it answers "
            "'absent' for everything or fails on use); install or select a real keychain "
            "backend (option 'backend', or keyring's own configuration)"
        )
    if isinstance(backend, keyring.backends.chainer.ChainerBackend):
        chained = [b for b in backend.backends if not isinstance(b, _REFUSED)]
        if not chained:
            return (
                f"keyring backend {backend_name(backend)} chains no usable backend (no OS "
                "keychain is available here); select one with the 'backend' option"
            )
    return None


def load_backend(name: str | None) -> KeyringBackend:
    """The backend class ``name`` (dotted path) instantiated, or keyring's current one."""
    try:
        return keyring.get_keyring() if name is None else keyring.core.load_keyring(name)
    except Exception as exc:
        what = "the default keyring backend" if name is None else f"keyring backend {name!r}"
        raise CredentialStoreError(
            f"cannot load {what}: {type(exc).__name__}: {exc}", store=f"keyring {name or ''}"
        ) from exc


class KeyringCredentialStore:
    """Secrets by ``(service, account)`` in a keyring backend.

    Construction refuses keyring's null and fail backends (and a chainer with nothing to
    chain), naming the backend.  Every backend call runs in a worker thread (keychains
    block on D-Bus, XPC or user prompts); any exception it raises becomes
    :class:`~agentrig.credentials.CredentialStoreError` with the backend's error chained, so
    a locked or failing keychain is never reported as "absent".  A call already running in
    its thread finishes even if the awaiting task is cancelled.
    """

    name = "keyring"

    def __init__(self, backend: KeyringBackend) -> None:
        refusal = _refusal(backend)
        if refusal is not None:
            raise CredentialStoreError(refusal, store=f"keyring backend {backend_name(backend)}")
        self._backend = backend

    @property
    def backend(self) -> KeyringBackend:
        return self._backend

    def describe(self) -> str:
        return f"keyring backend {backend_name(self._backend)} ({self._backend.name})"

    async def _call(self, what: str, func: Callable[[], _T]) -> _T:
        def guarded() -> _T:
            try:
                return func()
            except Exception as exc:
                raise CredentialStoreError(
                    f"{self.describe()} failed to {what}: {type(exc).__name__}: {exc}",
                    store=self.describe(),
                ) from exc

        return await anyio.to_thread.run_sync(guarded)

    async def get(self, service: str, account: str) -> str | None:
        return await self._call(
            "read a secret", lambda: self._backend.get_password(service, account)
        )

    async def set(self, service: str, account: str, secret: str) -> None:
        await self._call(
            "store a secret", lambda: self._backend.set_password(service, account, secret)
        )

    async def delete(self, service: str, account: str) -> bool:
        def delete() -> bool:
            if self._backend.get_password(service, account) is None:
                return False
            try:
                self._backend.delete_password(service, account)
            except keyring.errors.PasswordDeleteError:
                # gone in between (another process deleted it) -- or a real failure
                if self._backend.get_password(service, account) is None:
                    return False
                raise
            return True

        return await self._call("delete a secret", delete)
