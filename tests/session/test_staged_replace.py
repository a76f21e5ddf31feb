"""``OwnerOnlyStore.write_many``: several files replaced as one step, under injected faults.

(It lives beside the session-store fault tests because it uses the same libc shim.)  The
child process replaces three files in two folders while ``faultinject.c`` fails a staging
write, fails a rename part-way, or kills the process inside each rename; a trace of the
real calls shows every staged file flushed before the first rename.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _faults import build_shim

from agentrig.host import OwnerOnlyStore, OwnerStoreError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="LD_PRELOAD shim")

OLD = {"keys/a.key": b"old a", "keys/b.key": b"old b", "index.json": b'{"old": true}'}
NEW = {"keys/a.key": b"new a " * 50, "keys/b.key": b"new b " * 50, "index.json": b'{"n": 1}'}


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


def _store(tmp_path: Path) -> OwnerOnlyStore:
    store = OwnerOnlyStore(tmp_path / "state")
    for rel, data in OLD.items():
        store.write_bytes(rel, data)
    return store


def _contents(store: OwnerOnlyStore) -> dict[str, bytes]:
    return {rel: store.read_bytes(rel) for rel in OLD}


def _temps(store: OwnerOnlyStore) -> list[str]:
    return sorted(str(p) for p in store.root.rglob("*.tmp"))


_CHILD = """
import json, os, sys
from agentrig.host import OwnerOnlyStore, PartialReplaceError
store = OwnerOnlyStore(sys.argv[1])
files = {rel: data.encode() for rel, data in json.loads(sys.argv[2]).items()}
os.environ["FAULT_ARMED"] = "1"
try:
    store.write_many(files)
except PartialReplaceError as exc:
    print(json.dumps({"partial": [list(exc.replaced), list(exc.not_replaced)], "code": exc.code}))
except OSError as exc:
    print(json.dumps({"error": exc.errno, "type": type(exc).__name__}))
else:
    print(json.dumps({"ok": True}))
"""


def _child(
    shim: Path, store: OwnerOnlyStore, fault: dict[str, str]
) -> tuple[int, dict[str, object]]:
    files = json.dumps({rel: data.decode() for rel, data in NEW.items()})
    env = {**os.environ, "LD_PRELOAD": str(shim), "FAULT_MATCH": str(store.root), **fault}
    env.pop("FAULT_ARMED", None)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(store.root), files],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, (json.loads(lines[0]) if lines else {})


def test_several_files_are_replaced_owner_only_and_nothing_is_left_over(tmp_path: Path) -> None:
    store = _store(tmp_path)
    paths = store.write_many(NEW)
    assert [str(p) for p in paths] == [str(store.root / rel) for rel in NEW]
    assert _contents(store) == NEW
    for path in paths:
        assert os.stat(path).st_mode & 0o777 == 0o600
    assert _temps(store) == []


def test_the_same_file_twice_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(OwnerStoreError, match="same file twice"):
        store.write_many({"keys/a.key": b"1", "keys/./a.key": b"2"})
    assert _contents(store) == OLD


@pytest.mark.subprocess
@pytest.mark.parametrize("after", [0, 1, 2])
def test_a_disk_full_while_staging_leaves_every_old_file(
    shim: Path, tmp_path: Path, after: int
) -> None:
    store = _store(tmp_path)
    fault = {"FAULT_OP": "write", "FAULT_MODE": "short", "FAULT_AFTER": str(after)}
    fault["FAULT_ERRNO"] = str(errno.ENOSPC)
    code, outcome = _child(shim, store, fault)
    assert code == 0
    assert outcome == {"error": errno.ENOSPC, "type": "OSError"}
    assert _contents(store) == OLD
    assert _temps(store) == []


@pytest.mark.subprocess
@pytest.mark.parametrize("after", [1, 2])
def test_a_rename_failing_part_way_says_what_is_replaced_and_what_is_not(
    shim: Path, tmp_path: Path, after: int
) -> None:
    store = _store(tmp_path)
    fault = {"FAULT_OP": "rename", "FAULT_AFTER": str(after), "FAULT_ERRNO": str(errno.EIO)}
    code, outcome = _child(shim, store, fault)
    assert code == 0
    rels = list(NEW)
    assert outcome == {
        "partial": [
            [str(store.root / r) for r in rels[:after]],
            [str(store.root / r) for r in rels[after:]],
        ],
        "code": "store.partial_replace",
    }
    assert _contents(store) == {r: (NEW if i < after else OLD)[r] for i, r in enumerate(rels)}
    assert _temps(store) == []


@pytest.mark.subprocess
def test_a_first_rename_failing_leaves_every_old_file(shim: Path, tmp_path: Path) -> None:
    store = _store(tmp_path)
    fault = {"FAULT_OP": "rename", "FAULT_AFTER": "0", "FAULT_ERRNO": str(errno.EIO)}
    code, outcome = _child(shim, store, fault)
    assert (code, outcome) == (0, {"error": errno.EIO, "type": "OSError"})
    assert _contents(store) == OLD
    assert _temps(store) == []


@pytest.mark.subprocess
@pytest.mark.parametrize("boundary", [0, 1, 2])
def test_a_crash_at_any_rename_leaves_each_file_whole_old_or_new(
    shim: Path, tmp_path: Path, boundary: int
) -> None:
    store = _store(tmp_path)
    fault = {"FAULT_OP": "rename", "FAULT_MODE": "kill", "FAULT_AFTER": str(boundary)}
    code, _outcome = _child(shim, store, fault)
    assert code == -signal.SIGKILL
    rels = list(NEW)
    expected = {r: (NEW if i < boundary else OLD)[r] for i, r in enumerate(rels)}
    assert _contents(OwnerOnlyStore(store.root)) == expected


@pytest.mark.subprocess
def test_every_file_is_flushed_before_the_first_rename(shim: Path, tmp_path: Path) -> None:
    store = _store(tmp_path)
    trace = tmp_path / "trace.txt"
    code, outcome = _child(shim, store, {"FAULT_OP": "none", "FAULT_TRACE": str(trace)})
    assert (code, outcome) == (0, {"ok": True})
    steps = [line.split(" ", 1) for line in trace.read_text().splitlines()]
    renames = [i for i, (op, _path) in enumerate(steps) if op == "rename"]
    flushed = [i for i, (op, path) in enumerate(steps) if op == "fsync" and path.endswith(".tmp")]
    assert len(renames) == 3
    assert len(flushed) == 3
    assert max(flushed) < min(renames)
    # and the directories are flushed after the renames
    assert any(op == "fsync" and i > max(renames) for i, (op, _path) in enumerate(steps))
