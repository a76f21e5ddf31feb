"""The objects behind the pytest fixtures; usable without pytest too."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from agentrig.kernel import MemorySource, Runtime, SecretResolver, open_runtime

if TYPE_CHECKING:
    import httpx

__all__ = ["Overrides", "RuntimeFactory"]


class Overrides:
    """Catalog overrides by kind and ID, applied when a runtime is composed."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], object] = {}

    def set(self, kind: str, id: str, obj: object) -> None:
        """Use ``obj`` as catalog entry ``id`` of ``kind`` (e.g. ``"providers", "main"``)."""
        self._items[(kind, id)] = obj

    def remove(self, kind: str, id: str) -> None:
        self._items.pop((kind, id), None)

    def items(self) -> tuple[tuple[str, str, object], ...]:
        return tuple((kind, id, obj) for (kind, id), obj in self._items.items())


class RuntimeFactory:
    """Open runtimes for a test from config mappings, entries and overrides."""

    def __init__(self, entries: MemorySource, overrides: Overrides) -> None:
        self.entries = entries
        self.overrides = overrides
        self._open: list[Runtime] = []
        self._leaked: list[Runtime] = []

    @asynccontextmanager
    async def __call__(
        self,
        config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        *,
        installed: bool = True,
        resolver: SecretResolver | None = None,
        environ: Mapping[str, str] | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        plugins: Mapping[str, object] | None = None,
    ) -> AsyncIterator[Runtime]:
        """Compose a runtime.

        ``installed=False`` hides the installed entry points (only the core's composition
        steps and in-memory entries exist);
        ``environ`` defaults to an empty mapping so a developer's plugin switches do not
        leak into tests.
        """
        from agentrig.kernel import EntryPointSource, builtin_source

        sources = [EntryPointSource()] if installed else [builtin_source(["plugins"])]
        async with open_runtime(
            config,
            sources=sources,
            memory=self.entries,
            overrides=self.overrides.items(),
            resolver=resolver,
            environ={} if environ is None else environ,
            http_transport=http_transport,
            plugins=tuple((plugins or {}).items()),
        ) as rt:
            self._open.append(rt)
            try:
                yield rt
            except GeneratorExit:
                # Closed by garbage collection, not by leaving the ``async with`` block: the
                # test leaked it, even if the finalizer happened to run before teardown.
                self._leaked.append(rt)
                raise

    def check_closed(self) -> None:
        """Fail when a runtime opened by this factory was not closed by its ``async with``."""
        left = [rt for rt in self._open if not rt.closed or rt in self._leaked]
        if left:
            raise AssertionError(
                f"{len(left)} agentrig runtime(s) were not closed: use "
                "'async with agentrig_runtime(config) as rt:' so the runtime is disposed"
            )
