"""A real PostgreSQL server for tests: initdb in a temporary directory, loopback only.

PostgreSQL refuses to run as root, so when the tests run as root (CI) the server runs as the
``postgres`` system user (Debian's package creates it) or, failing that, ``nobody``.  The
server binaries come from Debian's ``postgresql`` package, which ``dev.py setup`` installs
when they are missing.  Nothing here is mocked; the server is stopped and its directory
removed afterwards.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PostgresServer", "postgres_server"]


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError(
        "PostgreSQL server binaries (initdb, postgres) were not found; "
        "`python3 dev.py setup` installs Debian's postgresql package when run as root"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class PostgresServer:
    """A running server; ``dsn`` connects as its superuser ``agentrig`` (trust auth)."""

    def __init__(self, base: Path, port: int, process: subprocess.Popen[bytes]) -> None:
        self.base = base
        self.port = port
        self.process = process

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://agentrig@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        """A fresh database; returns its DSN."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    bindir = _bindir()
    user: str | None = None
    if os.geteuid() == 0:
        for candidate in ("postgres", "nobody"):
            with contextlib.suppress(KeyError):
                pwd.getpwnam(candidate)
                user = candidate
                break
    base = Path(tempfile.mkdtemp(prefix="agentrig-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(base, entry.pw_uid, entry.pw_gid)
    data = base / "data"
    subprocess.run(
        [
            bindir / "initdb",
            "-D",
            data,
            "-U",
            "agentrig",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
        user=user,
        cwd=base,
    )
    port = _free_port()
    log = (base / "server.log").open("wb")
    process = subprocess.Popen(
        [
            bindir / "postgres",
            "-D",
            data,
            "-p",
            str(port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={base}",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=200",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        user=user,
        cwd=base,
        start_new_session=True,
    )
    server = PostgresServer(base, port, process)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    "PostgreSQL did not start: " + (base / "server.log").read_text(errors="replace")
                )
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                import psycopg

                try:
                    psycopg.connect(server.dsn(), connect_timeout=2).close()
                    break
                except psycopg.OperationalError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL did not accept connections within 60 s")
            time.sleep(0.1)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        shutil.rmtree(base, ignore_errors=True)
