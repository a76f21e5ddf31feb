"""The ``file`` credential store: secrets in one owner-only JSON file.

The file (default ``.agentrig/credentials.json`` under the composition's base directory)
is read and written only through :class:`~agentrig.host.OwnerOnlyStore`, so:

* its directory is created 0700 and the file 0600 from the start, never tightened later;
* a file (or directory) that is a symlink, belongs to another user or grants anything to
  group/others is *reported* -- :class:`~agentrig.credentials.CredentialStoreError` caused
  by the host's :class:`~agentrig.host.UnsafeExistingError` (or
  :class:`~agentrig.host.PathEscapeError` for a link leading out of the directory) --
  never read, adopted or repaired;
* every change replaces the whole file durably (temp file flushed, renamed, directory
  flushed), so a crash leaves the old secrets or the new ones, never an empty file.  When
  only the final directory flush fails, the host's
  :class:`~agentrig.host.InPlaceUnconfirmed` propagates unchanged: the new content is in
  place, so the caller must not report "not written".

The file names its schema and version (``"format": "agentrig-credentials/1"``); a file of a
newer version is refused with :class:`~agentrig.schemas.SchemaTooNewError`, never read as
empty or rewritten.  A missing file is an empty store.  A file that cannot be read, is not
valid JSON or does not have the expected shape raises ``CredentialStoreError`` -- never
"absent".

Changes are read-modify-write of the whole file.  Within one store object they are
serialised; between processes (or two store objects over one file) they are not -- that
coordination is the caller's (see :class:`~agentrig.credentials.CredentialStore`).
The secrets are protected by file permissions only, not encrypted: anything running as the
same user (or as root) can read them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
from pydantic import BaseModel, ConfigDict

from agentrig.credentials import CredentialStoreError
from agentrig.host import HostError, InPlaceUnconfirmed, OwnerOnlyStore
from agentrig.kernel import with_options
from agentrig.schemas import SCHEMAS, MigrationFailedError

__all__ = ["CREDENTIAL_FILE_SCHEMA", "FileCredentialOptions", "FileCredentialStore", "factory"]

#: the persisted schema of the file; its ``format`` key says ``<schema>/<version>``
CREDENTIAL_FILE_SCHEMA = "agentrig-credentials"
_VERSION = 1
_FORMAT = f"{CREDENTIAL_FILE_SCHEMA}/{_VERSION}"

Secrets = dict[str, dict[str, str]]


def _check_secrets(payload: dict[str, Any]) -> None:
    """Version 1's shape; says what is wrong without quoting any value (they are secrets)."""
    secrets = payload.get("secrets")
    if not isinstance(secrets, dict) or not all(
        isinstance(accounts, dict) and all(isinstance(value, str) for value in accounts.values())
        for accounts in secrets.values()
    ):
        raise ValueError("malformed 'secrets' table")


SCHEMAS.define(CREDENTIAL_FILE_SCHEMA, 1, _check_secrets)


class FileCredentialOptions(BaseModel):
    """``[credential_stores.<id>] kind = "file"`` options."""

    model_config = ConfigDict(extra="forbid")

    #: The JSON file; relative paths are taken from the composition's base directory.
    path: str = ".agentrig/credentials.json"


class FileCredentialStore:
    """Secrets by ``(service, account)`` in one owner-only JSON file."""

    name = "file"

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path).absolute()
        self._lock = threading.Lock()
        self._store: OwnerOnlyStore | None = None

    @property
    def path(self) -> Path:
        """The JSON file holding the secrets."""
        return self._path

    def describe(self) -> str:
        return f"owner-only file {self._path}"

    # -- the port ------------------------------------------------------------------------

    async def get(self, service: str, account: str) -> str | None:
        secrets = await anyio.to_thread.run_sync(self._read_locked)
        return secrets.get(service, {}).get(account)

    async def set(self, service: str, account: str, secret: str) -> None:
        def change(secrets: Secrets) -> bool:
            secrets.setdefault(service, {})[account] = secret
            return True

        await anyio.to_thread.run_sync(self._update, change)

    async def delete(self, service: str, account: str) -> bool:
        def change(secrets: Secrets) -> bool:
            accounts = secrets.get(service)
            if accounts is None or account not in accounts:
                return False
            del accounts[account]
            if not accounts:
                del secrets[service]
            return True

        return await anyio.to_thread.run_sync(self._update, change)

    # -- file access (worker thread) -----------------------------------------------------

    def _fail(self, what: str, exc: BaseException | None = None) -> CredentialStoreError:
        detail = f": {exc}" if exc is not None else ""
        return CredentialStoreError(
            f"credential file {self._path} {what}{detail}", store=self.describe()
        )

    def _owner_store(self) -> OwnerOnlyStore:
        if self._store is None:
            try:
                self._store = OwnerOnlyStore(self._path.parent)
            except (HostError, OSError) as exc:
                raise self._fail(
                    "cannot be used: its directory is unsafe or unusable", exc
                ) from exc
        return self._store

    def _read_locked(self) -> Secrets:
        with self._lock:
            return self._read()

    def _read(self) -> Secrets:
        store = self._owner_store()
        try:
            raw = store.read_bytes(self._path.name)
        except FileNotFoundError:
            return {}
        except (HostError, OSError) as exc:  # unsafe mode, symlink, I/O
            raise self._fail("cannot be read", exc) from exc
        return self._parse(raw)

    def _parse(self, raw: bytes) -> Secrets:
        # Decoding errors are re-raised without their cause: a JSONDecodeError keeps the
        # whole document (every secret) in its ``doc`` attribute.
        try:
            document = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise self._fail("is not UTF-8 text") from None
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            raise self._fail(f"is not valid JSON ({exc.msg} at {where})") from None
        label = document.get("format") if isinstance(document, dict) else None
        prefix = CREDENTIAL_FILE_SCHEMA + "/"
        if not isinstance(label, str) or not label.startswith(prefix):
            raise self._fail(f"is not an agentrig credential file (expected format {_FORMAT})")
        version_text = label[len(prefix) :]
        version: object = int(version_text) if version_text.isdigit() else version_text
        try:
            # a newer version is refused by name (SchemaTooNewError), never guessed at
            payload = SCHEMAS.upgrade(
                CREDENTIAL_FILE_SCHEMA, version, {"secrets": document.get("secrets")}
            )
        except MigrationFailedError as exc:  # messages name no secret (see _check_secrets)
            raise self._fail(f"cannot be read: {exc}") from None
        secrets = payload["secrets"]
        return {service: dict(accounts) for service, accounts in secrets.items()}

    def _update(self, change: Callable[[Secrets], bool]) -> bool:
        with self._lock:
            secrets = self._read()
            changed = change(secrets)
            if changed:
                payload = json.dumps(
                    {"format": _FORMAT, "secrets": secrets}, ensure_ascii=False, indent=1
                ).encode("utf-8")
                try:
                    self._owner_store().write_bytes(self._path.name, payload, durable=True)
                except InPlaceUnconfirmed:
                    raise
                except (HostError, OSError) as exc:
                    raise self._fail("cannot be written", exc) from exc
            return changed


@with_options(FileCredentialOptions)
def factory(spec: dict[str, Any]) -> FileCredentialStore:
    """Entry point ``file`` of ``agentrig.credential_stores``."""
    options = FileCredentialOptions.model_validate(spec.get("options", {}))
    path = Path(options.path).expanduser()
    if not path.is_absolute():
        path = Path(spec.get("base_dir", ".")) / path
    return FileCredentialStore(path)
