#!/usr/bin/env python3
"""Set up a development environment and run the demo or the whole test suite.

    python3 dev.py demo   # install what the demo needs, then run it (examples/quickstart)
    python3 dev.py setup  # install everything the tests need
    python3 dev.py test   # install everything, then lint, type-check and run every test

Needs only Python 3.11+, pip and git.  When no virtualenv is active, one is created in
``.venv`` inside the repository.  ``demo`` installs agentrig alone (editable, no extras, no
plugin, no system package): the demo runs offline on the core.  ``setup`` and ``test``
install agentrig with its dev extras and every first-party plugin in ``plugins/`` (editable)
and, on Linux as root, the system packages the tests use.  Either is re-installed only when
a ``pyproject.toml`` changed or when the environment holds less than asked for.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
STAMP_NAME = ".agentrig-dev-stamp"


def _python() -> Path:
    if os.environ.get("VIRTUAL_ENV") and sys.prefix != sys.base_prefix:
        return Path(sys.executable)
    env_dir = ROOT / ".venv"
    bindir = "Scripts" if os.name == "nt" else "bin"
    python = env_dir / bindir / ("python.exe" if os.name == "nt" else "python")
    if not python.exists():
        print(f"dev.py: creating virtualenv {env_dir}", flush=True)
        venv.EnvBuilder(with_pip=True).create(env_dir)
    return python


def _plugin_dirs() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in [ROOT / "pyproject.toml", *(d / "pyproject.toml" for d in _plugin_dirs())]:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(*cmd: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    code = subprocess.call([str(c) for c in cmd], cwd=ROOT, env={**os.environ, **(env or {})})
    if code != 0:
        raise SystemExit(code)


#: What the tests need from the system, as (why, is it there?, Debian packages to install).
#: Each is installed only when missing, on Linux with apt-get (CI runs as root).
SYSTEM_NEEDS: tuple[tuple[str, Callable[[], bool], tuple[str, ...]], ...] = (
    (
        "a C compiler for the session stores' fault-injection shim (tests/session/faultinject.c)",
        lambda: bool(shutil.which("cc") or shutil.which("gcc")),
        ("gcc", "libc6-dev"),
    ),
    (
        "a PostgreSQL server the agentrig-postgres tests start in a temporary directory",
        lambda: bool(glob.glob("/usr/lib/postgresql/*/bin/initdb") or shutil.which("initdb")),
        ("postgresql",),
    ),
    (
        "Debian's chromium for the chat page's browser tests (plugins/agentrig-server), driven "
        "by Playwright with the system executable -- never a browser download of its own",
        lambda: Path("/usr/bin/chromium").exists(),
        ("chromium",),
    ),
    (
        "bubblewrap (bwrap), the workspace toolset's sandbox backend for Bash (its tests run "
        "commands in it: no network, a read-only system, the workspace writable)",
        lambda: bool(shutil.which("bwrap")),
        ("bubblewrap",),
    ),
)


@dataclass(frozen=True)
class Plan:
    """What one command installs: the pip requirements and the system needs to check."""

    scope: str  # "demo" or "full": the stamp records it, "full" covers "demo"
    requirements: tuple[str, ...]  # pip install arguments after ``-e`` (relative paths)
    system_needs: tuple[tuple[str, Callable[[], bool], tuple[str, ...]], ...]


def plan(command: str) -> Plan:
    """The installation ``command`` needs: the core alone for the demo, everything else for
    the tests."""
    if command == "demo":
        return Plan("demo", (".",), ())
    plugins = tuple(str(d.relative_to(ROOT)) for d in _plugin_dirs())
    return Plan("full", (".[dev]", *plugins), SYSTEM_NEEDS)


def _system_packages(needs: tuple[tuple[str, Callable[[], bool], tuple[str, ...]], ...]) -> None:
    """Install the system packages of ``needs`` that are missing."""
    if not needs or not sys.platform.startswith("linux"):
        return
    missing = [(why, packages) for why, present, packages in needs if not present()]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        for why, packages in missing:
            print(f"dev.py: missing {why}; install {' '.join(packages)}", flush=True)
        return
    _run("apt-get", "update")
    _run("apt-get", "install", "-y", *(p for _, packages in missing for p in packages))


def _installed(stamp: Path, fingerprint: str, scope: str) -> bool:
    """Does the environment already hold ``scope`` at this ``fingerprint``?"""
    if not stamp.exists():
        return False
    recorded = stamp.read_text().split()
    if len(recorded) == 1:  # a stamp of before the scopes: everything was installed
        recorded = [recorded[0], "full"]
    return recorded[0] == fingerprint and recorded[1] in {scope, "full"}


def setup(command: str = "setup") -> Path:
    chosen = plan(command)
    _system_packages(chosen.system_needs)
    python = _python()
    stamp = python.parent.parent / STAMP_NAME
    fingerprint = _fingerprint()
    if _installed(stamp, fingerprint, chosen.scope):
        return python
    _run(python, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    args: list[str | Path] = [python, "-m", "pip", "install", "--quiet"]
    for requirement in chosen.requirements:
        args += ["-e", requirement]
    _run(*args)
    stamp.write_text(f"{fingerprint} {chosen.scope}")
    return python


def demo(python: Path) -> None:
    _run(python, ROOT / "examples" / "quickstart" / "run.py")


def worker_count() -> int:
    """How many pytest-xdist workers run the tests: twice the cores, at least 2, at most 8.

    Most tests wait on real servers and subprocesses (PostgreSQL, MCP servers, a browser, the
    CLI) rather than compute, so two workers per core keep the cores busy, and an idle worker
    takes tests queued on a busy one (``--dist worksteal``: a few slow files would otherwise
    keep one worker going long after the others). ``-n 0`` after ``dev.py test`` runs the
    suite in one process.
    """
    return max(2, min(8, 2 * (os.cpu_count() or 1)))


def _examples() -> list[tuple[list[str], list[str]]]:
    """Each example's Python files, and its ``src`` folders (its own importable modules).

    One mypy run per example: each has its own ``run.py``, and one run cannot hold two
    top-level modules of the same name.
    """
    found = []
    for example in sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir()):
        files = sorted(str(f.relative_to(ROOT)) for f in example.rglob("*.py"))
        paths = sorted(str(d) for d in example.rglob("src") if d.is_dir())
        if files:
            found.append((files, paths))
    return found


def test(python: Path, extra: list[str]) -> None:
    _run(python, "-m", "ruff", "check", ".")
    _run(python, "-m", "ruff", "format", "--check", ".")
    _run(python, "-m", "mypy")
    # the tests are a second codebase and type-check too (tests/mypy.ini says how); the
    # conftest files all share one module name, so each is checked on its own
    _run(python, "-m", "mypy", "--config-file", "tests/mypy.ini", "tests")
    for conftest in [ROOT / "conftest.py", *sorted((ROOT / "tests").glob("**/conftest.py"))]:
        _run(python, "-m", "mypy", "--config-file", "tests/mypy.ini", conftest.relative_to(ROOT))
    _run(python.parent / "lint-imports")  # the layering of DESIGN §3 ([tool.importlinter])
    plugin_src = [str(p / "src") for p in _plugin_dirs()]
    if plugin_src:
        _run(python, "-m", "mypy", "--strict", *plugin_src)
    for files, paths in _examples():  # what users copy type-checks as strictly as the core
        _run(python, "-m", "mypy", "--strict", *files, env={"MYPYPATH": os.pathsep.join(paths)})
    _run(python, "-m", "pytest", "-n", str(worker_count()), "--dist", "worksteal", *extra)


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in {"demo", "test", "setup"}:
        print(__doc__)
        raise SystemExit(2)
    python = setup(argv[0])
    if argv[0] == "demo":
        demo(python)
    elif argv[0] == "test":
        test(python, argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
