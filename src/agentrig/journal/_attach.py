"""Attaching a journal to a runtime: one listener plugin plus provider wrappers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import attrs

from agentrig.journal._listener import JournalListener
from agentrig.journal._port import ExecutionJournal
from agentrig.journal._provider import JournaledProvider
from agentrig.llm import Provider

__all__ = ["JournalAttachment", "attach_journal", "journaled_runtime"]


@attrs.frozen(slots=True)
class JournalAttachment:
    """What a runtime needs to be journaled: ``plugins`` and wrapped providers.

    ::

        attached = attach_journal(journal)
        async with open_runtime(
            config,
            plugins=attached.plugins,
            overrides=attached.overrides({"main": real_provider}),
        ) as rt: ...
    """

    journal: ExecutionJournal
    listener: JournalListener

    @property
    def plugins(self) -> tuple[tuple[str, object], ...]:
        """The listener plugin, for ``open_runtime(plugins=...)``."""
        return (("journal", self.listener),)

    def wrap(self, provider: Provider) -> JournaledProvider:
        """Wrap one real provider so its calls are journaled."""
        return JournaledProvider(provider, self.journal)

    def overrides(self, providers: Mapping[str, Provider]) -> tuple[tuple[str, str, object], ...]:
        """Catalog overrides replacing each provider id with its journaled wrapper."""
        return tuple(("providers", pid, self.wrap(p)) for pid, p in providers.items())


def attach_journal(journal: ExecutionJournal) -> JournalAttachment:
    """Prepare ``journal`` for a runtime (see :class:`JournalAttachment`)."""
    return JournalAttachment(journal, JournalListener(journal))


@asynccontextmanager
async def journaled_runtime(
    config: Any,
    journal: ExecutionJournal,
    *,
    providers: Mapping[str, Provider],
    plugins: Iterable[tuple[str, object]] = (),
    overrides: Iterable[tuple[str, str, object]] = (),
    **kwargs: Any,
) -> AsyncIterator[Any]:
    """``open_runtime`` with ``journal`` attached; ``providers`` maps each provider id of the
    config to the real provider to wrap (every provider an agent may use must be listed)."""
    from agentrig.kernel import open_runtime

    attached = attach_journal(journal)
    async with open_runtime(
        config,
        plugins=(*attached.plugins, *plugins),
        overrides=(*attached.overrides(providers), *overrides),
        **kwargs,
    ) as rt:
        yield rt
