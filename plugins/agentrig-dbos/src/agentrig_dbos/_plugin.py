"""The ``dbos`` listener plugin: a composition step that makes a ``[dbos]`` runtime durable.

With a ``[dbos]`` table the step (phase ``stores``, after the providers are built):

* opens the execution journal next to the DBOS system database (SQLite in the owner-only
  state directory, or the same PostgreSQL database through ``agentrig-postgres``);
* attaches it through the public journal port: the journal's listener plugin, and every
  provider of the catalog wrapped so its calls are journaled;
* provides the :data:`~agentrig_dbos.DURABLE` service, closed with the runtime, the
  kernel's run queue (:data:`~agentrig.plugin.RUN_QUEUE`: ``rt.agent(NAME).submit(prompt)``)
  and its child runs (:data:`~agentrig.plugin.CHILD_RUNS`: a durable run's sub-agents are
  journaled steps of it, see ``_children``).

Without a ``[dbos]`` table it does nothing: installing the distribution changes no runtime.
``register_commands`` adds ``agentrig submit``, ``agentrig worker`` and ``agentrig result``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, final

import sniffio

from agentrig.errors import ConfigError, Issue
from agentrig.plugin import (
    CHILD_RUNS,
    PROVIDERS,
    RUN_QUEUE,
    Commands,
    Composition,
    Runtime,
    compose_step,
    hookimpl,
)
from agentrig_dbos import _cli
from agentrig_dbos._errors import DurableBackendError
from agentrig_dbos._keys import DURABLE

if TYPE_CHECKING:
    # the journal and the host's store are imported by a [dbos] composition only: every
    # `agentrig` command autoloads this plugin, and most compositions have no [dbos] table
    from agentrig.journal import ExecutionJournal
    from agentrig_dbos._config import DbosSection

__all__ = ["DbosPlugin", "plugin"]


def _journal(rt: Runtime, section: DbosSection) -> tuple[str, ExecutionJournal]:
    from agentrig.host import OwnerOnlyStore
    from agentrig.journal import SqliteJournal  # sqlite3: only when [dbos] is configured

    url = section.system_database_url
    postgres = url is not None and url.startswith(("postgresql://", "postgres://"))
    if not postgres and "journal_retry_for" in section.model_fields_set:
        raise ConfigError(
            [
                Issue(
                    "config.invalid",
                    "journal_retry_for applies to a PostgreSQL system database only (a SQLite "
                    "journal meets no server restarts); remove it or set system_database_url",
                    ("dbos", "journal_retry_for"),
                )
            ]
        )
    if url is None:
        state = Path(section.state_dir)
        if not state.is_absolute():
            state = rt.loaded.base_dir / state
        store = OwnerOnlyStore(state)  # created 0700, or verified owner-only
        store.open_append("dbos.sqlite3").close()  # created 0600 before SQLite opens it
        root = store.root
        return f"sqlite:///{root / 'dbos.sqlite3'}", SqliteJournal(root / "journal.sqlite3")
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from agentrig_postgres import PostgresJournal
        except ImportError:
            raise ConfigError(
                [
                    Issue(
                        "config.invalid",
                        "a PostgreSQL system database needs the agentrig-postgres "
                        "distribution for the journal (pip install 'agentrig-dbos[postgres]')",
                        ("dbos", "system_database_url"),
                    )
                ]
            ) from None
        journal = PostgresJournal(
            url, schema="agentrig_journal", retry_for=section.journal_retry_for
        )
        return url, journal
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        return url, SqliteJournal(path.with_name(f"{path.stem}.journal.sqlite3"))
    raise ConfigError(
        [
            Issue(
                "config.invalid",
                f"system_database_url must be a sqlite:/// or postgresql:// URL, not {url!r}",
                ("dbos", "system_database_url"),
            )
        ]
    )


@final
class DbosPlugin:
    """Listener plugin of ``agentrig-dbos`` (entry point ``agentrig.plugins: dbos``)."""

    @compose_step("stores")
    def compose(self, payload: Composition) -> None:
        rt = payload.runtime
        if "dbos" not in rt.loaded.sections:  # the section's model too is for [dbos] only
            return
        from agentrig_dbos._config import DbosSection

        section = rt.config_section("dbos", DbosSection)
        if section is None:
            return
        try:
            backend = sniffio.current_async_library()
        except sniffio.AsyncLibraryNotFoundError:
            backend = "none"
        if backend != "asyncio":
            raise DurableBackendError(
                f"durable runs ([dbos]) run on asyncio only (DBOS runs its workflows on an "
                f"asyncio event loop); this runtime was opened on {backend}"
            )
        from agentrig.journal import JournaledProvider, attach_journal

        url, journal = _journal(rt, section)
        attached = attach_journal(journal)
        providers = rt.registry(PROVIDERS)
        for pid, provider in list(providers.entries()):
            if not isinstance(provider, JournaledProvider):
                providers.register(attached.wrap(provider), id=pid, replace=True, source="dbos")
        for name, listener in attached.plugins:
            rt.add_plugin(f"dbos-{name}", listener)
        attached.listener.compose(payload)  # provides the journal service (its step ran)
        from agentrig_dbos._host import Durable, DurableApprover  # imports DBOS: [dbos] only

        rt.add_plugin("dbos-approver", DurableApprover())
        durable = Durable(rt, section, url, journal)
        rt.services.provide(DURABLE, durable, source="agentrig-dbos")
        rt.services.provide(RUN_QUEUE, durable, source="agentrig-dbos")  # rt.agent(N).submit
        # a durable run's children: named after their call, recovered from the journal
        rt.services.provide(CHILD_RUNS, durable.children, source="agentrig-dbos")
        rt.on_close("dbos", durable.aclose)
        rt.own("dbos-journal", journal)

    @hookimpl
    def register_commands(self, payload: Commands) -> None:
        _cli.register(payload)


plugin = DbosPlugin()
