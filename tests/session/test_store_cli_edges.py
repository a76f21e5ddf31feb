"""The sessions folder at the CLI's edge: unreadable, read-only, open to others, a database
that is not one, a log that is not one -- each is one ``error [code]: ...`` line naming the
path and the fix, never a traceback.

Run as root, the tests cannot make a folder unreadable with ``chmod``; the fault shim
(``faultinject.c``) makes the real ``open``/``mkdir`` calls under the folder fail with
``EACCES`` or ``EROFS`` instead, in the real ``agentrig`` process.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _faults import build_shim

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(sys.platform != "linux", reason="LD_PRELOAD shim and /proc/self/fd"),
]

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


def _config(tmp_path: Path, kind: str = "jsonl") -> Path:
    option = (
        f"options.directory = {json.dumps(str(tmp_path / 'sessions'))}"
        if kind == "jsonl"
        else f"options.path = {json.dumps(str(tmp_path / 'sessions' / 'db.sqlite3'))}"
    )
    path = tmp_path / "agentrig.toml"
    path.write_text(
        f"""\
[providers.local]
kind = "scripted"
options.script = [{{ text = "answer" }}]

[agents.assistant]
provider = "local"
model = "scripted-1"
session_store = "main"

[session_stores.main]
kind = "{kind}"
{option}
""",
        encoding="utf-8",
    )
    return path


def _agentrig(
    *args: str, fault: dict[str, str] | None = None, shim: Path | None = None
) -> tuple[int, str]:
    env = dict(os.environ)
    if fault is not None and shim is not None:
        env.update({"LD_PRELOAD": str(shim), "FAULT_ARMED": "1", **fault})
    done = subprocess.run(
        [AGENTRIG, *args], input="", capture_output=True, text=True, timeout=60, env=env
    )
    err = "".join(
        line for line in done.stderr.splitlines(keepends=True) if not line.startswith("faultinj")
    )
    return done.returncode, err


def _one_error_line(err: str, code: str) -> str:
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert f"error [{code}]: " in lines[0], err
    return lines[0]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir(mode=0o700)
    return folder


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_an_unreadable_sessions_folder_is_one_error_line_with_the_fix(
    tmp_path: Path, shim: Path, kind: str
) -> None:
    folder = _folder(tmp_path)
    fault = {"FAULT_OP": "open", "FAULT_MATCH": str(folder), "FAULT_ERRNO": str(errno.EACCES)}
    code, err = _agentrig("run", "-c", str(_config(tmp_path, kind)), "hi", fault=fault, shim=shim)
    line = _one_error_line(err, "session.store")
    assert code != 0
    assert str(folder) in line
    assert "this user cannot read or write" in line
    assert "mode 700" in line


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_a_read_only_sessions_folder_is_one_error_line_with_the_fix(
    tmp_path: Path, shim: Path, kind: str
) -> None:
    folder = _folder(tmp_path)
    fault = {
        "FAULT_OP": "open",
        "FAULT_OPEN_WRITES": "1",
        "FAULT_MATCH": str(folder),
        "FAULT_ERRNO": str(errno.EROFS),
    }
    code, err = _agentrig("run", "-c", str(_config(tmp_path, kind)), "hi", fault=fault, shim=shim)
    line = _one_error_line(err, "session.store")
    assert code != 0
    assert str(folder) in line
    assert "read-only filesystem" in line
    assert ("options.directory" if kind == "jsonl" else "options.path") in line


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_a_sessions_folder_open_to_others_is_one_error_line_with_the_fix(
    tmp_path: Path, kind: str
) -> None:
    folder = _folder(tmp_path)
    folder.chmod(0o755)
    code, err = _agentrig("run", "-c", str(_config(tmp_path, kind)), "hi")
    line = _one_error_line(err, "session.store")
    assert code != 0
    assert f"{folder} has mode 0755" in line
    assert f"chmod 700 {folder}" in line
    assert os.listdir(folder) == []


def test_a_sqlite_file_that_is_not_a_database_is_one_error_line_with_the_fix(
    tmp_path: Path,
) -> None:
    database = _folder(tmp_path) / "db.sqlite3"
    database.write_bytes(b"not a database at all\n" * 100)
    database.chmod(0o600)
    code, err = _agentrig("run", "-c", str(_config(tmp_path, "sqlite")), "hi")
    line = _one_error_line(err, "session.not_a_log")
    assert code != 0
    assert f"{database} is not a SQLite database" in line
    assert "options.path" in line


def test_chat_refuses_to_resume_a_file_that_is_not_a_session_log(tmp_path: Path) -> None:
    log = _folder(tmp_path) / "ses_notes.jsonl"
    log.write_bytes(b"my shopping list\neggs\n")
    log.chmod(0o600)
    code, err = _agentrig("chat", "-c", str(_config(tmp_path)), "--session", "ses_notes")
    line = _one_error_line(err, "session.not_a_log")
    assert code != 0
    assert f"{log} is not a session log" in line
    assert log.read_bytes() == b"my shopping list\neggs\n"
