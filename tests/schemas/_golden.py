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
