"""API keys with their own limits: from the config, and made by ``agentrig serve keys``.

A key made by the CLI is shown once and kept only as its SHA-256 digest (keys are 256 random
bits, so a fast digest is enough to make the file useless to a reader) in ``keys.json`` of
the server's owner-only state directory, with its limits and whether it was revoked.  The
server re-reads that file when it changes, so a key added or revoked while it runs takes
effect on the next request.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import attrs
from pydantic import ValidationError

from agentrig.errors import AgentrigError
from agentrig.host import OwnerOnlyStore
from agentrig_server._settings import KeyLimits, ServerSettings

if sys.platform != "win32":
    import fcntl

__all__ = [
    "KEYS_FILE",
    "KeyFile",
    "KeyFileError",
    "KeyPolicy",
    "StoredKey",
    "digest",
    "new_secret",
    "state_root",
]

KEYS_FILE = "keys.json"
_LOCK_FILE = "keys.lock"  # held while a command reads, changes and replaces KEYS_FILE
_PREFIX = "sk-agentrig-"


def digest(secret: str) -> bytes:
    """The SHA-256 digest a key is kept and compared as."""
    return hashlib.sha256(secret.encode("utf-8")).digest()


def new_secret() -> str:
    """A fresh key: a recognisable prefix and 256 random bits."""
    return _PREFIX + secrets.token_urlsafe(32)


def state_root(settings: ServerSettings, base_dir: Path) -> Path:
    """``server.state_dir``, relative to the config file's directory."""
    path = Path(settings.state_dir).expanduser()
    return path if path.is_absolute() else base_dir / path


@attrs.frozen(slots=True)
class KeyPolicy:
    """A verified key's id, where it comes from and what it may do."""

    key_id: str
    source: Literal["config", "cli", "api_keys"]
    limits: KeyLimits = attrs.field(factory=KeyLimits)
    created_at: float | None = None

    def allows(self, model: str) -> bool:
        models = self.limits.models
        return models is None or model in models


@attrs.frozen(slots=True)
class StoredKey:
    """One key of ``keys.json``: its digest (hex), limits and dates."""

    key_id: str
    sha256: str
    limits: KeyLimits
    created_at: float
    revoked_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            **self.limits.model_dump(exclude_none=True),
        }

    @classmethod
    def from_json(cls, key_id: str, data: dict[str, Any]) -> StoredKey:
        fields = {k: v for k, v in data.items() if k not in ("sha256", "created_at", "revoked_at")}
        return cls(
            key_id=key_id,
            sha256=str(data["sha256"]),
            limits=KeyLimits.model_validate(fields),
            created_at=float(data["created_at"]),
            revoked_at=None if data.get("revoked_at") is None else float(data["revoked_at"]),
        )


class KeyFileError(AgentrigError):
    """``keys.json`` could not be read, or a key operation on it was refused."""

    code = "server.key_file"
    category = "user"


class KeyFile:
    """``keys.json`` in the owner-only state directory (made on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._path = str(root / KEYS_FILE)  # stat on every request: built once
        self._store: OwnerOnlyStore | None = None

    def store(self) -> OwnerOnlyStore:
        if self._store is None:
            self._store = OwnerOnlyStore(self.root)  # created 0700, or verified owner-only
        return self._store

    def signature(self) -> tuple[int, int, int] | None:
        """What changes when the file is replaced (None: there is none)."""
        try:
            info = os.stat(self._path)
        except OSError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def load(self) -> dict[str, StoredKey]:
        """The stored keys (none when there is no file); a broken file is an error."""
        if not (self.root / KEYS_FILE).exists():
            return {}
        raw = self.store().read_bytes(KEYS_FILE)  # refuses a file that is not owner-only
        try:
            data = json.loads(raw)
            return {k: StoredKey.from_json(k, v) for k, v in dict(data["keys"]).items()}
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            raise KeyFileError(f"{self.root / KEYS_FILE}: not a key file ({exc})") from None

    def save(self, keys: dict[str, StoredKey]) -> None:
        body = {"version": 1, "keys": {k: v.to_json() for k, v in sorted(keys.items())}}
        data = json.dumps(body, indent=1).encode()
        self.store().write_bytes(KEYS_FILE, data, durable=True)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, StoredKey]]:
        """The stored keys, to change and save, with every other change waiting.

        ``keys.json`` is read, changed and replaced whole, so two commands at once would
        each save their own change over the other's: a key whose secret was shown would be
        gone.  An advisory ``flock`` on ``keys.lock`` (beside it, owner-only) orders them;
        the kernel drops it when its holder exits, however it exits.
        """
        root = self.store().root  # the state directory, created owner-only or verified
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
        fd = os.open(root / _LOCK_FILE, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the store refuses Windows: POSIX only here
            yield self.load()
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def add(self, key_id: str, limits: KeyLimits) -> str:
        """Make a key ``key_id``; returns its secret (shown once, never stored)."""
        with self._changing() as keys:
            if key_id in keys:
                raise KeyFileError(
                    f"a key {key_id!r} exists already (revoke it or pick another id)"
                )
            secret = new_secret()
            keys[key_id] = StoredKey(key_id, digest(secret).hex(), limits, time.time())
            self.save(keys)
        return secret

    def revoke(self, key_id: str) -> StoredKey:
        with self._changing() as keys:
            found = keys.get(key_id)
            if found is None:
                raise KeyFileError(f"no key {key_id!r} made by 'agentrig serve keys add'")
            if found.revoked_at is None:
                found = attrs.evolve(found, revoked_at=time.time())
                keys[key_id] = found
                self.save(keys)
        return found
