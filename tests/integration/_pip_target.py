"""Example distributions installed the way pip installs them, visible to this process only.

Installing into the test environment itself would let every test running beside these ones
(pytest-xdist workers share the environment) discover the examples' entry points -- a
conflicting ``greet`` tool would fail their compositions. ``pip install --target`` writes the
same files (modules, ``*.dist-info`` with ``entry_points.txt``) into a directory of this run;
put first on ``sys.path`` here and on ``PYTHONPATH`` for the ``agentrig`` CLI, it is discovered
exactly as an installed distribution is, and nothing else sees it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["installed_into"]


def _forget(prefixes: tuple[str, ...]) -> None:
    for name in [m for m in sys.modules if m.startswith(prefixes)]:
        del sys.modules[name]
    importlib.invalidate_caches()


@contextmanager
def installed_into(
    target: Path, *projects: Path, modules: tuple[str, ...]
) -> Iterator[dict[str, str]]:
    """pip-install ``projects`` into ``target``; yield the environment for CLI subprocesses.

    ``modules`` are the distributions' top-level packages, forgotten before and after so a
    test imports them from ``target``.
    """
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    subprocess.run(
        [
            sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install",
            "--no-deps", *isolation, "--target", str(target), *map(str, projects),
        ],
        check=True,
        timeout=600,
    )  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    environ["PYTHONPATH"] = os.pathsep.join(
        [str(target), *([environ["PYTHONPATH"]] if environ.get("PYTHONPATH") else [])]
    )
    sys.path.insert(0, str(target))
    _forget(modules)
    try:
        yield environ
    finally:
        sys.path.remove(str(target))
        _forget(modules)
