"""A real PostgreSQL server for tests: initdb in a temporary directory, on a Unix socket.

It listens on no TCP port, so parallel test runs never meet.  PostgreSQL refuses to
run as root, so when the tests run as root (CI) the server runs as the
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

    def __init__(
        self, base: Path, port: int, bindir: Path, user: str | None, *, tcp: bool = False
    ) -> None:
        self.base = base
        self.tcp = tcp
        self.port = port
        self.bindir = bindir
        self.user = user
        self.process: subprocess.Popen[bytes] | None = None
        #: how many times :meth:`restart` stopped and started the server
        self.restarts = 0

    def dsn(self, dbname: str = "postgres") -> str:
        if self.tcp:
            return f"postgresql://agentrig@127.0.0.1:{self.port}/{dbname}"
        # a Unix socket in the server's own directory: no TCP port another test run could take
        return f"postgresql://agentrig@/{dbname}?host={self.base}&port={self.port}"

    def create_database(self, name: str) -> str:
        """A fresh database; returns its DSN."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        with (self.base / "server.log").open("ab") as log:
            self.process = subprocess.Popen(
                [
                    self.bindir / "postgres",
                    "-D",
                    self.base / "data",
                    "-p",
                    str(self.port),
                    "-c",
                    f"listen_addresses={'127.0.0.1' if self.tcp else ''}",
                    "-c",
                    f"unix_socket_directories={self.base}",
                    "-c",
                    "fsync=off",
                    "-c",
                    "max_connections=200",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self.user,
                cwd=self.base,
                start_new_session=True,
            )
        self.wait_ready()

    def wait_ready(self, timeout: float = 60) -> None:
        import psycopg

        process = self.process
        assert process is not None
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                log = (self.base / "server.log").read_text(errors="replace")
                raise RuntimeError("PostgreSQL did not start: " + log)
            if (self.base / f".s.PGSQL.{self.port}").exists():  # also made with tcp
                try:
                    psycopg.connect(self.dsn(), connect_timeout=2).close()
                    return
                except psycopg.OperationalError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not accept connections within {timeout} s")
            time.sleep(0.1)

    def stop(self, *, immediate: bool = False) -> None:
        """Stop the server: a fast shutdown, or (``immediate``) what ``pg_ctl stop -m
        immediate`` does -- SIGQUIT: every backend ends at once, nothing is flushed, and
        the next start runs crash recovery."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGQUIT if immediate else signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self, *, down_for: float = 0.0) -> None:
        """``pg_ctl restart -m immediate``: stop at once, stay down ``down_for`` seconds,
        start again (crash recovery) on the same socket."""
        self.stop(immediate=True)
        time.sleep(down_for)
        self.start()
        self.restarts += 1


@contextlib.contextmanager
def postgres_server(*, tcp: bool = False) -> Iterator[PostgresServer]:
    """A server on a Unix socket, or (``tcp``) also on a loopback port: DBOS 3.4 waits out
    a restart of a server it reaches over TCP ("connection refused"), but fails at once
    when a Unix socket's file is missing while the server is down."""
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
    subprocess.run(
        [
            bindir / "initdb",
            "-D",
            base / "data",
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
    server = PostgresServer(base, _free_port(), bindir, user, tcp=tcp)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
