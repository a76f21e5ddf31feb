"""The artifact-kind registry: every kind is classified ``whole`` or ``append``.

``whole`` artifacts (a checkpoint, a spilled tool result) are written and read one at a
time; each gets its own data key, so nothing on disk links two of them.  ``append`` kinds
(session records, log lines) are written and read back in bulk; the records of one writer
share one data key, because a public-key operation per record is too slow to read back.
A sealer refuses any kind not classified here, so a new kind cannot slip in unclassified.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from typing import Literal

import attrs

from agentrig.sealing._errors import KindClassError, UnclassifiedKindError

__all__ = ["BUILTIN_KINDS", "ArtifactKind", "ArtifactKinds", "Storage", "artifact_kinds"]

Storage = Literal["whole", "append"]

_KIND_NAME = re.compile(r"[a-z][a-z0-9_]*(?:[./-][a-z][a-z0-9_]*)*")


def _check_name(_instance: object, _attribute: object, value: str) -> None:
    if not _KIND_NAME.fullmatch(value) or len(value) > 128:
        raise ValueError(
            f"invalid artifact kind name {value!r}: lowercase words separated by '.', '/' "
            "or '-', at most 128 characters"
        )


def _check_storage(_instance: object, _attribute: object, value: str) -> None:
    if value not in ("whole", "append"):
        raise ValueError(f"artifact storage must be 'whole' or 'append', not {value!r}")


@attrs.frozen(slots=True)
class ArtifactKind:
    """One classified kind of sealed artifact."""

    name: str = attrs.field(validator=_check_name)
    storage: Storage = attrs.field(validator=_check_storage)
    description: str = ""


#: The kinds agentrig itself writes.
BUILTIN_KINDS: tuple[ArtifactKind, ...] = (
    ArtifactKind("session.event", "append", "one event of a session's append-only log"),
    ArtifactKind("log.line", "append", "one line of a diagnostic or audit log"),
    ArtifactKind("checkpoint", "whole", "a checkpoint or pre-image file"),
    ArtifactKind("tool.spill", "whole", "a tool result spilled to disk"),
)


class ArtifactKinds:
    """A registry of classified kinds; registration is thread-safe and additive.

    Registering a kind again with the same class is harmless; with another class it is
    refused (:class:`~agentrig.sealing.KindClassError`), because artifacts already written
    under the old class would then be read under the wrong one.
    """

    def __init__(self, kinds: Iterable[ArtifactKind] = BUILTIN_KINDS) -> None:
        self._lock = threading.Lock()
        self._kinds: dict[str, ArtifactKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: ArtifactKind) -> ArtifactKind:
        """Classify ``kind``; returns the registered definition."""
        with self._lock:
            known = self._kinds.get(kind.name)
            if known is not None:
                if known.storage != kind.storage:
                    raise KindClassError(
                        f"artifact kind {kind.name!r} is already classified "
                        f"{known.storage!r}; it cannot be re-registered as {kind.storage!r}",
                        kind=kind.name,
                        storage=known.storage,
                    )
                return known
            self._kinds[kind.name] = kind
            return kind

    def classify(self, name: str) -> ArtifactKind:
        """The kind called ``name``; :class:`~agentrig.sealing.UnclassifiedKindError` if none."""
        kind = self._kinds.get(name)
        if kind is None:
            known = ", ".join(sorted(self._kinds)) or "none"
            raise UnclassifiedKindError(
                f"artifact kind {name!r} is not classified; register it as 'whole' or "
                f"'append' first (known kinds: {known})",
                kind=name,
            )
        return kind

    def require(self, name: str, storage: Storage) -> ArtifactKind:
        """Classify ``name`` and check it is of class ``storage``."""
        kind = self.classify(name)
        if kind.storage != storage:
            use = "open_appender" if kind.storage == "append" else "seal"
            raise KindClassError(
                f"artifact kind {name!r} is classified {kind.storage!r}; use {use}() for it",
                kind=name,
                storage=kind.storage,
            )
        return kind

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._kinds))

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[ArtifactKind]:
        return iter(tuple(self._kinds.values()))

    def __len__(self) -> int:
        return len(self._kinds)

    def __repr__(self) -> str:
        return f"ArtifactKinds({', '.join(self.names())})"


#: The process-wide registry sealers use unless given another one.  Packages that write a
#: new kind register it here at import (``artifact_kinds.register(ArtifactKind(...))``).
artifact_kinds = ArtifactKinds()
