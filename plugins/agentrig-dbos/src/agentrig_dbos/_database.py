"""The DBOS system database, checked before DBOS is handed it.

DBOS meets an unreachable PostgreSQL server with a logged warning, a traceback and a bare
``Exit``; a worker or a ``submit`` should say in one line which database it could not
reach.  So a PostgreSQL URL is tried first (one connection, closed at once): a server that
answers goes to DBOS -- also when the database itself is missing, which DBOS creates when
the role may -- and one that does not is :class:`DurableDatabaseError`, naming the database
(never the password).
"""

from __future__ import annotations

import psycopg
from psycopg.conninfo import conninfo_to_dict

from agentrig_dbos._errors import DurableDatabaseError

__all__ = ["check_reachable", "database_name"]


def database_name(url: str) -> str:
    """``database <name> on <host>:<port>`` (or the SQLite file), for a message."""
    if not url.startswith(("postgresql://", "postgres://")):
        return f"the SQLite database {url.removeprefix('sqlite:///')}"
    try:
        info = conninfo_to_dict(url)
    except psycopg.Error:
        return "the configured PostgreSQL database"
    host = info.get("host") or "localhost"
    return f"database {info.get('dbname') or '?'} on {host}:{info.get('port') or 5432}"


def check_reachable(url: str, *, timeout: float = 10.0) -> None:
    """Raise :class:`DurableDatabaseError` when a PostgreSQL system database's server does
    not answer (blocking: call it in a worker thread)."""
    if not url.startswith(("postgresql://", "postgres://")):
        return
    try:
        psycopg.connect(url, connect_timeout=max(2, round(timeout))).close()
    except psycopg.Error as exc:
        text = " ".join(str(exc).split())
        if "does not exist" in text and "database" in text:
            return  # the server answers: DBOS creates the database (or says why not)
        raise DurableDatabaseError(
            f"cannot reach the DBOS system database ({database_name(url)}): {text}; start "
            "the server or correct [dbos] system_database_url"
        ) from None
