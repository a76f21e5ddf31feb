"""Trusted skills: the SHA-256 of each skill that passed the full review, kept owner-only.

A skill read from a folder is reviewed by the deterministic scanner and the model guard;
when both pass, its digest (over every file) is recorded in ``trusted_skills.json`` in the
owner-only state directory.  A later runtime skips only the model guard while the digest
still matches -- the scanner always runs -- and any change to the skill's files changes the
digest, which revokes the trust until the skill is reviewed again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal, final

from pydantic import BaseModel, ConfigDict, Field

from agentrig.errors import AgentrigError
from agentrig.schemas import SCHEMAS, PersistedSchemaError

__all__ = ["TRUST_FILE", "TRUST_SCHEMA", "TRUST_VERSION", "TrustStore", "TrustedSkillsV1"]

TRUST_FILE = "trusted_skills.json"
TRUST_SCHEMA = "agentrig.trusted_skills"
TRUST_VERSION = 1


class _TrustRecordV1(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    trusted_at: str


class TrustedSkillsV1(BaseModel):
    """Version 1 of ``trusted_skills.json``: trusted skills by their folder."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_name: Literal["agentrig.trusted_skills"] = Field(alias="schema")
    version: Literal[1]
    skills: dict[str, _TrustRecordV1]


# the persisted-schema registry knows the file (docs/migrations.md): a newer file is refused
# by name, an older one would be migrated forward
SCHEMAS.define(TRUST_SCHEMA, TRUST_VERSION, TrustedSkillsV1)


class TrustFileError(AgentrigError, code="skill.trust_file", category="user"):
    """The trust file exists but cannot be read as one."""


@final
class TrustStore:
    """``trusted_skills.json`` under an owner-only directory (created 0700, file 0600)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._records: dict[str, dict[str, Any]] | None = None

    def _store(self) -> Any:
        from agentrig.host import OwnerOnlyStore

        return OwnerOnlyStore(self.directory)

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._records is None:
            self._records = {}
            if (self.directory / TRUST_FILE).exists():
                raw = self._store().read_bytes(TRUST_FILE)
                self._records = _parse(raw, self.directory / TRUST_FILE)
        return self._records

    def is_trusted(self, source: str, digest: str) -> bool:
        record = self._load().get(source)
        return record is not None and record.get("sha256") == digest

    def trust(self, source: str, name: str, version: str, digest: str) -> None:
        records = self._load()
        records[source] = {
            "name": name,
            "version": version,
            "sha256": digest,
            "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self._write(records)

    def revoke(self, source: str) -> bool:
        """Forget ``source`` (its files changed); True when it was recorded."""
        records = self._load()
        if records.pop(source, None) is None:
            return False
        self._write(records)
        return True

    def _write(self, records: dict[str, dict[str, Any]]) -> None:
        document = {"schema": TRUST_SCHEMA, "version": TRUST_VERSION, "skills": records}
        data = json.dumps(document, indent=2, sort_keys=True).encode("utf-8")
        self._store().write_bytes(TRUST_FILE, data, durable=True)


def _parse(raw: bytes, path: Path) -> dict[str, dict[str, Any]]:
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise TrustFileError(f"{path} is not JSON ({exc}); remove it to review again") from None
    if not isinstance(document, dict) or document.get("schema") != TRUST_SCHEMA:
        raise TrustFileError(f"{path} is not a {TRUST_SCHEMA} file; remove it to review again")
    try:
        current = SCHEMAS.upgrade(TRUST_SCHEMA, document.get("version"), document)
    except PersistedSchemaError as exc:
        raise TrustFileError(f"{path}: {exc.message}", code=exc.code) from None
    skills: dict[str, dict[str, Any]] = current["skills"]
    return skills
