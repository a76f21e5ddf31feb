"""docs/cli.md documents every command and every option; ``agentrig --help`` lists every
command, the installed plugins' too."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.cli import build_parser

CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
AGENTRIG = str(Path(sys.executable).with_name("agentrig"))


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for name, sub in _subcommands(parser).items():
        path = f"{prefix} {name}".strip()
        yield path, sub
        yield from _commands(sub, path)


def _table_commands() -> str:
    text = CLI_DOC.read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if line.startswith("| "))


@pytest.mark.subprocess
def test_help_lists_every_command_and_the_table_documents_each() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    done = subprocess.run(
        [AGENTRIG, "--help"], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    listed = re.findall(r"^    (\w[\w-]*)\s", done.stdout, flags=re.MULTILINE)
    core = [name for name, _ in _commands(build_parser(plugin_commands=False)) if " " not in name]
    assert set(core) <= set(listed)
    assert {"serve", "mcp"} <= set(listed)  # first-party plugins installed with the dev setup
    table = _table_commands()
    undocumented = [name for name in listed if f"`{name}" not in table and f" {name}`" not in table]
    assert not undocumented, f"commands missing from the table in docs/cli.md: {undocumented}"


def test_every_option_of_the_core_commands_is_documented() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    missing = []
    for path, parser in _commands(build_parser(plugin_commands=False)):
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help" and option not in text:
                    missing.append(f"{path} {option}")
    assert not missing, f"options missing from docs/cli.md: {missing}"
