#!/usr/bin/env python3
"""Set up a development environment and run the demo or the whole test suite.

    python3 dev.py demo   # set everything up, then run the main demo (examples/quickstart)
    python3 dev.py test   # set everything up, then lint, type-check and run every test

Needs only Python 3.11+, pip and git.  When no virtualenv is active, one is created in
``.venv`` inside the repository; agentrig and every first-party plugin in ``plugins/`` are
installed into it (editable), and re-installed only when a ``pyproject.toml`` changed.
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


def _run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    code = subprocess.call([str(c) for c in cmd], cwd=ROOT)
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


def _system_packages() -> None:
    """Install the system packages of :data:`SYSTEM_NEEDS` that are missing."""
    if not sys.platform.startswith("linux"):
        return
    missing = [(why, packages) for why, present, packages in SYSTEM_NEEDS if not present()]
    if not missing:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        for why, packages in missing:
            print(f"dev.py: missing {why}; install {' '.join(packages)}", flush=True)
        return
    _run("apt-get", "update")
    _run("apt-get", "install", "-y", *(p for _, packages in missing for p in packages))


def setup() -> Path:
    _system_packages()
    python = _python()
    stamp = python.parent.parent / STAMP_NAME
    fingerprint = _fingerprint()
    if stamp.exists() and stamp.read_text() == fingerprint:
        return python
    _run(python, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    args: list[str | Path] = [python, "-m", "pip", "install", "--quiet", "-e", ".[dev]"]
    for plugin in _plugin_dirs():
        args += ["-e", str(plugin.relative_to(ROOT))]
    _run(*args)
    stamp.write_text(fingerprint)
    return python


def demo(python: Path) -> None:
    _run(python, ROOT / "examples" / "quickstart" / "run.py")


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
    _run(python, "-m", "pytest", *extra)


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in {"demo", "test", "setup"}:
        print(__doc__)
        raise SystemExit(2)
    python = setup()
    if argv[0] == "demo":
        demo(python)
    elif argv[0] == "test":
        test(python, argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
