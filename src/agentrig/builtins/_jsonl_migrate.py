"""``agentrig migrate`` for the ``jsonl`` session store: one staged replace per session file.

Each session file that holds older events is first copied to the backup directory (kept if
a copy is already there: an earlier, interrupted run made it from the same old file), then
rewritten through :meth:`~agentrig.host.OwnerOnlyStore.write_bytes` -- a temp file flushed
and renamed over the old one -- under the session's writer lock.  A crash leaves every
file old or rewritten; running again rewrites the rest.  Lines that cannot be read (damage)
and a torn tail are kept byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.builtins._locks import WriterLock
from agentrig.host import OwnerOnlyStore
from agentrig.sealing import Appender, CorruptError
from agentrig.session import (
    SESSION_EVENT_VERSION,
    MigrationReport,
    count_versions,
    dump_event,
    parse_event,
    refuse_newer,
    stored_version,
)

if TYPE_CHECKING:
    from agentrig.builtins._jsonl_store import JsonlSessionStore

__all__ = ["jsonl_migrate", "jsonl_migration_report"]


def _lines(raw: bytes) -> tuple[list[bytes], bytes]:
    cut = raw.rfind(b"\n") + 1
    return raw[:cut].splitlines(keepends=True), raw[cut:]


def _plaintext(store: JsonlSessionStore, session_id: str, line: bytes) -> bytes | None:
    try:
        return store.plaintext(line.rstrip(b"\n"), session_id)
    except CorruptError:
        return None


def _versions(store: JsonlSessionStore, session_id: str, raw: bytes) -> list[int | None]:
    lines, _torn = _lines(raw)
    versions: list[int | None] = []
    for line in lines:
        if line.strip():
            text = _plaintext(store, session_id, line)
            versions.append(None if text is None else stored_version(text))
    return versions


async def jsonl_migration_report(store: JsonlSessionStore) -> MigrationReport:
    owner = store.existing_owner()
    sessions = []
    for session_id in await store.list_sessions():
        if owner is None:
            break
        raw = owner.read_bytes(f"{session_id}.jsonl")
        sessions.append(count_versions(session_id, _versions(store, session_id, raw)))
    return MigrationReport(tuple(sessions))


def _rewrite(
    store: JsonlSessionStore, session_id: str, raw: bytes, seal: Callable[[bytes], str] | None
) -> bytes:
    lines, torn = _lines(raw)
    out: list[bytes] = []
    for line in lines:
        text = _plaintext(store, session_id, line) if line.strip() else None
        version = None if text is None else stored_version(text)
        if text is None or version is None or version >= SESSION_EVENT_VERSION:
            out.append(line)
            continue
        try:
            event = dump_event(parse_event(text))
        except ValueError:  # does not fit its version: damage, kept as it is
            out.append(line)
            continue
        out.append(
            (event + "\n").encode("utf-8") if seal is None else seal(event.encode("utf-8")).encode()
        )
    return b"".join(out) + torn


async def jsonl_migrate(store: JsonlSessionStore, backup: Path | None) -> MigrationReport:
    report = await jsonl_migration_report(store)
    refuse_newer(report, str(store.directory))
    target = backup or Path(f"{store.directory}.pre-migrate")
    if not report.outdated:
        return MigrationReport(report.sessions, applied=True)
    owner = store.existing_owner()
    if owner is None:  # removed since the report was made: nothing to rewrite
        return MigrationReport((), applied=True)
    kept = OwnerOnlyStore(target)
    for session in report.outdated:
        name = f"{session.session_id}.jsonl"
        path = store.directory / name
        lock = WriterLock(path.with_suffix(".lock"), session.session_id, option=store.OPTION)
        try:
            raw = owner.read_bytes(name)
            if not kept.exists(name):
                kept.write_bytes(name, raw, durable=True)
            appender: Appender | None = store.appender(session.session_id)
            seal = None if appender is None else _sealer_of(appender)
            owner.write_bytes(name, _rewrite(store, session.session_id, raw, seal), durable=True)
        finally:
            lock.release()
    return MigrationReport(report.sessions, applied=True, backup=str(target))


def _sealer_of(appender: Appender) -> Callable[[bytes], str]:
    from agentrig.builtins._jsonl_store import sealed_line

    return lambda record: sealed_line(appender.seal_record(record))
