"""``agentrig plugins``: the plugin report (every discovered entry and its status)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentrig.cli._common import (
    EXIT_OK,
    Subparsers,
    load_plugin_settings,
    plugin_index,
    warning_line,
)

if TYPE_CHECKING:
    from agentrig.cli._plugin_report import PluginRow

__all__ = ["register", "render_table", "run"]

_HELP = """\
List every plugin entry discovered from the installed distributions' entry points.
Every entry that is not disabled is imported and checked against its kind's contract, so
the status is real: loaded, disabled or failed (with the error).  A name that two
distributions register is shown once per distribution with status 'conflict' -- until
[plugins.prefer] in the config (--config) chooses one; the other is then 'overridden'.
The exit code is 0 even when a plugin failed: the report itself is the answer.
"""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "plugins",
        help="list discovered plugins and their status",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print a JSON array of objects (kind, id, distribution, version, group, value, "
        "status, error, replaces, conflicts)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="apply the plugin settings of this agentrig.toml (disabled, prefer, ...)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from agentrig.cli._plugin_report import plugin_report

    index = plugin_index(load_plugin_settings(args.config))
    for issue in index.setting_issues():  # a [plugins.prefer] entry that chooses nothing
        print(warning_line("plugins", issue.code, f"{args.config}: {issue}"), file=sys.stderr)
    rows = plugin_report(index, check=True)
    if args.json:
        json.dump([row.to_dict() for row in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(rows))
    return EXIT_OK


def render_table(rows: Sequence[PluginRow]) -> str:
    """The report as an aligned text table, failures' errors on their own lines."""
    if not rows:
        return "no agentrig plugins installed\n"
    header = ("KIND", "ID", "STATUS", "DISTRIBUTION", "VERSION")
    body = [(r.kind, r.id, r.status, r.distribution or "-", r.version or "-") for r in rows]
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(len(header))]
    lines = []
    for row, cells in zip((None, *rows), (header, *body), strict=True):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        if row is not None and row.error:
            lines.append(f"    error: {row.error}")
        if row is not None and row.replaces:
            lines.append(f"    replaces: {row.replaces}")
        if row is not None and row.status == "overridden":
            lines.extend(f"    overridden by: {other}" for other in row.conflicts)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return "\n".join(lines) + f"\n\n{len(rows)} entries: {summary}\n"
