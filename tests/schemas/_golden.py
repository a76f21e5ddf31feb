"""Copies of the golden stored data, owner-only as agentrig's stores require."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["GOLDEN", "copy_golden"]

GOLDEN = Path(__file__).parent / "golden"


def copy_golden(version: str, target: Path) -> Path:
    """``golden/<version>`` copied to ``target`` (directories 0700, files 0600)."""
    shutil.copytree(GOLDEN / version, target)
    for root, dirs, files in os.walk(target):
        os.chmod(root, 0o700)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
        for name in files:
            os.chmod(os.path.join(root, name), 0o600)
    return target


def fault_env(shim: Path, match: Path, kill_after: int | None = None) -> dict[str, str]:
    """The environment of a child under the libc shim (tests/session/faultinject.c) that
    watches writes to paths containing ``match``: counting them (``kill_after`` None; the
    count is on stderr, see :func:`counted_writes`), or SIGKILL inside write ``kill_after``."""
    return {
        "LD_PRELOAD": str(shim),
        "FAULT_ARMED": "1",
        "FAULT_MATCH": str(match),
        "FAULT_OP": "write",
        "FAULT_MODE": "fail" if kill_after is None else "kill",
        "FAULT_AFTER": str(10**9 if kill_after is None else kill_after),
    }


def counted_writes(stderr: str) -> int:
    """How many watched writes a counting child made (the shim's report on stderr)."""
    return int(stderr.split("faultinject: ")[1].split()[0])
