"""``agentrig doctor``: what is installed and whether it loads."""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import platform
import sys

from agentrig.cli._common import EXIT_FAILURE, EXIT_OK, Subparsers, plugin_index

__all__ = ["register", "run"]

_DEPENDENCIES = ("pluggy", "pydantic", "attrs", "anyio", "httpx", "typeguard")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="show the environment and check that every plugin loads",
        description="Show Python, platform, agentrig and dependency versions, then load every "
        "plugin that is not disabled and summarise the report.  Exit code 1 when a plugin "
        "failed to load.",
    )
    parser.set_defaults(handler=run)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def run(args: argparse.Namespace) -> int:
    from agentrig import __version__
    from agentrig.kernel import DISABLE_AUTOLOAD_ENV, DISABLE_PLUGINS_ENV

    out = sys.stdout
    out.write(f"agentrig   {__version__}\n")
    out.write(f"python     {platform.python_version()} ({sys.executable})\n")
    out.write(f"platform   {platform.platform()}\n")
    for name in _DEPENDENCIES:
        out.write(f"{name:<10} {_version(name)}\n")
    index = plugin_index()
    if index.disabled:
        out.write(f"disabled   {', '.join(sorted(index.disabled))} (from {DISABLE_PLUGINS_ENV})\n")
    if not index.autoload:
        out.write(f"autoload   off (from {DISABLE_AUTOLOAD_ENV})\n")
    rows = index.check_all()
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none"
    out.write(f"plugins    {len(rows)} entries: {summary}\n")
    failed = [row for row in rows if row.status == "failed"]
    for row in failed:
        out.write(f"  FAILED {row.kind}:{row.id} ({row.distribution or '?'}): {row.error}\n")
    if failed:
        out.write(f"{len(failed)} plugin(s) failed to load; see 'agentrig plugins'\n")
        return EXIT_FAILURE
    out.write("everything loads\n")
    return EXIT_OK
