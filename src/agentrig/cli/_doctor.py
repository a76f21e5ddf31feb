"""``agentrig doctor``: what is installed and whether it loads."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from agentrig.cli._common import (
    EXIT_FAILURE,
    EXIT_OK,
    Subparsers,
    load_plugin_settings,
    plugin_index,
)

__all__ = ["register", "run", "stray_entry_points"]

_DEPENDENCIES = ("pluggy", "pydantic", "attrs", "anyio", "httpx")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="show the environment and check that every plugin loads",
        description="Show Python, platform, agentrig and dependency versions, then load every "
        "plugin that is not disabled and summarise the report: plugins that failed (with the "
        "reason), names two distributions register (conflicts), and entry points in "
        "'agentrig.*' groups agentrig does not read (with the closest known group); then the "
        "skills in the skill folders (refused ones with the reason) and the AGENTS.md / "
        "CLAUDE.md files added to system prompts; with --config, the session stores whose "
        "events are older (agentrig migrate) or newer than this code.  Exit code 1 when a "
        "problem was found.",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="apply the plugin settings of this agentrig.toml (disabled, prefer, ...)",
    )
    parser.set_defaults(handler=run)


def _version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _skills_and_instructions(out: TextIO, file: str | None) -> int:
    """Skill folders (entry-point skills are plugin rows above) and instruction files."""
    from pydantic import ValidationError

    from agentrig.builtins import describe_skills, instruction_sources
    from agentrig.kernel import load_config

    loaded = load_plugin_settings(file) or load_config(None)
    try:
        lines, problems = describe_skills(loaded)
        sources = instruction_sources(loaded)
    except ValidationError as exc:
        out.write(f"  CONFIG [skills] / [instructions]: {exc.errors()[0]['msg']}\n")
        return 1
    for line in lines:
        out.write(line + "\n")
    listed = ", ".join(sources) if sources else "none"
    out.write(f"instructions {len(sources)} file(s) added to every system prompt: {listed}\n")
    return problems


def run(args: argparse.Namespace) -> int:
    import platform  # here, not at the top: every command imports this module

    from agentrig import __version__
    from agentrig.cli._plugin_report import plugin_report
    from agentrig.kernel import DISABLE_AUTOLOAD_ENV, DISABLE_PLUGINS_ENV

    out = sys.stdout
    out.write(f"agentrig   {__version__}\n")
    out.write(f"python     {platform.python_version()} ({sys.executable})\n")
    out.write(f"platform   {platform.platform()}\n")
    for name in _DEPENDENCIES:
        out.write(f"{name:<10} {_version(name)}\n")
    index = plugin_index(load_plugin_settings(args.config))
    if index.disabled:
        out.write(f"disabled   {', '.join(sorted(index.disabled))} (from {DISABLE_PLUGINS_ENV})\n")
    if not index.autoload:
        out.write(f"autoload   off (from {DISABLE_AUTOLOAD_ENV})\n")
    rows = plugin_report(index, check=True)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none"
    out.write(f"plugins    {len(rows)} entries: {summary}\n")
    problems = 0
    for row in rows:
        if row.status == "failed":
            problems += 1
            out.write(f"  FAILED {row.kind}:{row.id} ({row.distribution or '?'}): {row.error}\n")
    for (kind, name), entries in sorted(index.merged().conflicts.items()):
        if index.is_disabled(kind, name):
            continue
        problems += 1
        dists = ", ".join(f"{e.distribution or '?'} {e.version or ''}".strip() for e in entries)
        out.write(
            f"  CONFLICT {kind}:{name} is registered by {dists}; choose one with "
            f'[plugins.prefer] "{kind}:{name}" = "<distribution>"\n'
        )
    for stray in stray_entry_points():
        problems += 1
        out.write(f"  UNKNOWN GROUP {stray}\n")
    problems += _skills_and_instructions(out, args.config)
    if args.config is not None:
        from agentrig.cli._migrate import doctor_lines

        lines, found = doctor_lines(args.config)
        for line in lines:
            out.write(line + "\n")
        problems += found
    if problems:
        out.write(f"{problems} problem(s) found; see 'agentrig plugins'\n")
        return EXIT_FAILURE
    out.write("everything loads\n")
    return EXIT_OK


def stray_entry_points() -> tuple[str, ...]:
    """Every installed entry point agentrig does not read, described, sorted by group: one in
    an ``agentrig.*`` group nobody reads (a misspelt group, with the closest known one), or
    another distribution's in a group only the core's own entries are read from (contracts,
    config formats and importers, seams) -- either would silently never load."""
    from agentrig._plugin_env import CORE_DISTRIBUTION
    from agentrig.errors import did_you_mean
    from agentrig.kernel import CORE_GROUPS, KIND_GROUPS, agentrig_entry_points

    stray = []
    for group, found in sorted(agentrig_entry_points().items()):
        if group in KIND_GROUPS:
            continue
        if group in CORE_GROUPS:
            why = f"is in {group}, which agentrig reads from its own distribution only"
        else:
            hint = did_you_mean(group, KIND_GROUPS, show=str)
            known = ", ".join(KIND_GROUPS)
            why = f"is in a group agentrig does not read{hint} (known groups: {known})"
        for entry, distribution, _version in sorted(found, key=lambda f: f.entry.name):
            if group in CORE_GROUPS and distribution == CORE_DISTRIBUTION:
                continue
            where = f"{distribution or '?'}: entry point {group}:{entry.name} = {entry.value}"
            stray.append(f"{where} {why}")
    return tuple(stray)
