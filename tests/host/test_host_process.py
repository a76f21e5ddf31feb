"""Owner records, the three-valued owner rule, scoped directories, sweep and inspect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.host import (
    OwnerRecord,
    create_process_dir,
    current_owner,
    exit_registry,
    inspect,
    owner_state,
    process_start_time,
    remove_process_dir,
    sweep,
)

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs procfs")

TOKEN = "0123456789abcdef"


def dead_pid_record() -> OwnerRecord:
    """The record of a process that really ran here and is now reaped."""
    child = subprocess.Popen(["sleep", "60"])
    start = process_start_time(child.pid)
    child.kill()
    child.wait()
    return current_owner().model_copy(update={"pid": child.pid, "start_time": start})


def test_current_owner_is_complete_and_alive() -> None:
    me = current_owner()
    assert me.pid == os.getpid()
    assert me.host
    assert me.start_time is not None
    assert me.boot_id is not None
    assert me.pid_namespace is not None
    assert me.pid_namespace.startswith("pid:")
    assert owner_state(me) == "alive"
    assert OwnerRecord.from_json(me.to_json()) == me


@pytest.mark.subprocess
def test_dead_pid_is_gone() -> None:
    assert owner_state(dead_pid_record()) == "gone"


def test_recycled_pid_with_another_start_time_is_gone() -> None:
    me = current_owner()
    assert me.start_time is not None
    assert owner_state(me.model_copy(update={"start_time": me.start_time + 1})) == "gone"


def test_other_machines_are_unknown() -> None:
    me = current_owner()
    for update in (
        {"host": "elsewhere"},
        {"machine_id": "f" * 32},
        {"machine_id": None},  # a record that does not name its machine
        {"pid_namespace": "pid:[1]"},
        {"pid_namespace": None},
    ):
        if me.machine_id is None and update.get("machine_id", 1) is None:
            continue
        assert owner_state(me.model_copy(update=update)) == "unknown", update


def test_earlier_boot_on_this_machine_is_gone() -> None:
    me = current_owner()
    assert owner_state(me.model_copy(update={"boot_id": "00000000-dead"})) == "gone"
    # ... but only when both sides know their boot.
    no_boot = me.model_copy(update={"boot_id": None})
    assert owner_state(me.model_copy(update={"boot_id": "x"}), me=no_boot) == "unknown"
    # A different boot on *another* machine proves nothing.
    other = me.model_copy(update={"boot_id": "x", "machine_id": "e" * 32})
    assert owner_state(other) == "unknown"


def test_without_start_time_a_live_pid_is_unknown() -> None:
    me = current_owner()
    assert owner_state(me.model_copy(update={"start_time": None})) == "unknown"


@pytest.mark.subprocess
def test_without_start_time_a_dead_pid_is_gone() -> None:
    assert owner_state(dead_pid_record().model_copy(update={"start_time": None})) == "gone"


def test_record_parsing_is_strict() -> None:
    data = json.loads(current_owner().to_json())
    for bad in ({**data, "extra": 1}, {**data, "pid": "1"}, {**data, "pid": 0}, {"host": "h"}):
        with pytest.raises(ValueError, match="validation error"):
            OwnerRecord.from_json(json.dumps(bad))


# -- process-scoped directories ---------------------------------------------------------


def plant(root: Path, name: str, owner: OwnerRecord | None, *, purpose: str = "t") -> Path:
    path = root / name
    path.mkdir(mode=0o700, parents=True)
    if owner is not None:
        doc = {"owner": json.loads(owner.to_json()), "purpose": purpose}
        (path / "owner.json").write_text(json.dumps(doc))
    return path


def test_create_process_dir_records_its_owner_first(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = create_process_dir(state, "tool-spill")
    try:
        assert path.parent == state
        assert path.name.startswith(f"proc-{os.getpid()}-")
        assert os.stat(path).st_mode & 0o777 == 0o700
        assert os.listdir(path) == ["owner.json"]
        assert os.stat(path / "owner.json").st_mode & 0o777 == 0o600
        doc = json.loads((path / "owner.json").read_text())
        assert OwnerRecord.model_validate(doc["owner"]) == current_owner()
        assert doc["purpose"] == "tool-spill"
        assert ("process-dir", str(path)) in exit_registry()
    finally:
        remove_process_dir(path)
    assert not path.exists()
    assert ("process-dir", str(path)) not in exit_registry()
    with pytest.raises(ValueError, match="purpose"):
        create_process_dir(state, "Bad Purpose")


@pytest.mark.subprocess
def test_sweep_keeps_everything_not_provably_gone(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    me = current_owner()
    dead = dead_pid_record()
    live = create_process_dir(state, "live")
    # fake pids for the planted directories, never the dead child's (a fresh container
    # hands out pids in this range, and a clash made two plants one directory)
    p42, p43, p44, p45, p46, p47 = [p for p in range(4242, 4262) if p != dead.pid][:6]
    gone = plant(state, f"proc-{dead.pid}-{TOKEN}", dead)
    foreign = plant(
        state, f"proc-{p42}-{TOKEN}", me.model_copy(update={"host": "other", "pid": p42})
    )
    other_ns = plant(
        state, f"proc-{p43}-{TOKEN}", me.model_copy(update={"pid_namespace": "pid:[9]", "pid": p43})
    )
    no_record = plant(state, f"proc-{p44}-{TOKEN}", None)
    mismatch = plant(state, f"proc-{p45}-{TOKEN}", dead)
    wrong_name = plant(state, f"proc-{dead.pid}-nothex", dead)
    also_wrong = plant(state, f"scratch-{dead.pid}-{TOKEN}", dead)
    target = plant(tmp_path / "elsewhere", "victim", dead)
    os.symlink(target, state / f"proc-{p46}-{TOKEN}")
    file_named = state / f"proc-{p47}-{TOKEN}"
    file_named.write_text("not a dir")

    before = {i.path.name: i.state for i in inspect(state)}
    assert before[gone.name] == "gone"
    assert before[live.name] == "alive"
    assert gone.exists()  # inspect removes nothing

    report = sweep(state)
    assert report.removed == (gone,)
    assert not gone.exists()
    kept = {i.path.name: i for i in report.kept}
    assert kept[live.name].state == "alive"
    for path in (foreign, other_ns, no_record, mismatch):
        assert kept[path.name].state == "unknown", kept[path.name]
        assert path.exists()
    assert "symlink" in kept[f"proc-{p46}-{TOKEN}"].reason
    assert "not a directory" in kept[file_named.name].reason
    assert wrong_name.name not in kept
    assert wrong_name.exists()
    assert also_wrong.exists()
    assert target.exists()
    assert (target / "owner.json").exists()
    remove_process_dir(live)


@pytest.mark.subprocess
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_sweep_keeps_other_users_directories(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    dead = dead_pid_record()
    theirs = plant(state, f"proc-{dead.pid}-{TOKEN}", dead)
    os.chown(theirs, 12345, 12345)
    report = sweep(state)
    assert report.removed == ()
    assert "uid 12345" in report.kept[0].reason
    assert theirs.exists()


def test_sweep_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    report = sweep(tmp_path / "none")
    assert (report.removed, report.kept) == ((), ())


CHILD_EXITS = """
import sys
from agentrig.host import create_process_dir
print(create_process_dir(sys.argv[1], "child"), flush=True)
"""


@pytest.mark.subprocess
def test_process_dir_is_removed_at_normal_exit(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD_EXITS, str(tmp_path / "state")],
        capture_output=True,
        text=True,
        check=True,
    )
    path = Path(done.stdout.strip())
    assert path.parent == tmp_path / "state"
    assert not path.exists()
