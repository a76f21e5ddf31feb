"""`agentrig` command basics: --help, --version, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from agentrig import __version__
from agentrig.cli import SUBCOMMANDS, build_parser, main
from agentrig.cli._common import Subparsers


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agentrig {__version__}"


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["plugins", "--help"],
        ["config", "--help"],
        ["config", "check", "--help"],
        ["doctor", "--help"],
    ],
)
def test_help_everywhere_exits_zero(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: agentrig")


def test_top_level_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--help"])
    out = capsys.readouterr().out
    for name in ("plugins", "config", "doctor"):
        assert name in out


@pytest.mark.parametrize(
    "argv",
    [[], ["frobnicate"], ["plugins", "--bogus"], ["config"], ["config", "check"]],
    ids=["no-command", "unknown-command", "unknown-option", "no-action", "missing-file-arg"],
)
def test_usage_errors_exit_two(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage:" in err


def test_subcommand_registry_is_open_for_extension(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `run` / `chat` do: a module with register(subparsers) setting a handler.
    hello = types.ModuleType("agentrig_test_hello_command")

    def register(subparsers: Subparsers) -> None:
        parser = subparsers.add_parser("hello", help="say hello")
        parser.set_defaults(handler=lambda args: print("hello") or 0)

    vars(hello)["register"] = register
    monkeypatch.setitem(sys.modules, hello.__name__, hello)
    parser = build_parser()
    assert "hello" not in parser.format_help()
    import agentrig.cli as cli

    monkeypatch.setattr(cli, "SUBCOMMANDS", {**SUBCOMMANDS, "hello": hello.__name__})
    assert main(["hello"]) == 0
    assert capsys.readouterr().out == "hello\n"
    main(["--help"])
    assert "say hello" in capsys.readouterr().out


def test_a_core_command_builds_its_own_parser_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the other commands' modules are not even imported: a broken one cannot get in the way
    import agentrig.cli as cli

    broken = {name: "agentrig_test_no_such_module" for name in SUBCOMMANDS if name != "doctor"}
    monkeypatch.setattr(cli, "SUBCOMMANDS", {**broken, "doctor": SUBCOMMANDS["doctor"]})
    assert main(["doctor", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: agentrig doctor")


@pytest.mark.subprocess
def test_installed_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / ("agentrig.exe" if os.name == "nt" else "agentrig")
    assert script.exists(), "the console script is declared in pyproject: agentrig.cli:main"
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0
    assert version.stdout.strip() == f"agentrig {__version__}"
    bad = tmp_path / "agentrig.toml"
    bad.write_text("[agnets.a]\n", encoding="utf-8")
    checked = subprocess.run(
        [str(script), "config", "check", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 1
    assert f"{bad}: agnets: unknown key 'agnets'" in checked.stdout
    missing = subprocess.run(
        [str(script), "config", "check", str(tmp_path / "absent.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
