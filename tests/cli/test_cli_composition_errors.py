"""`run` and `chat` report a composition failure as one `error [code]:` line per problem --
a factory that raises included -- and never a traceback (issue 11, point 6)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main

CONFIG = """\
[providers.local]
kind = "moon"

[agents.assistant]
provider = "local"
model = "m"
"""


@pytest.fixture(autouse=True)
def moon_provider(install_dist: Any) -> None:
    install_dist(
        "moon-provider",
        {"agentrig.providers": {"moon": "moon_mod:factory"}},
        {
            "moon_mod": """
                def factory(config):
                    raise ConnectionError("moon gateway unreachable on port 4242")
            """
        },
    )


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_raising_factory_is_one_error_line_exit_2(
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    argv = [command, "-c", str(config)] + (["hi"] if command == "run" else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(
        f"agentrig {command}: error [config.factory_failed]: {config}: providers.local: "
        "the providers factory 'moon' (moon-provider 1.2.3: entry point"
    )
    assert line.endswith("raised ConnectionError: moon gateway unreachable on port 4242")


def test_config_check_constructs_it_and_reports_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(CONFIG, encoding="utf-8")
    assert main(["config", "check", str(config)]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(
        f"agentrig config: error [config.factory_failed]: {config}: providers.local: "
        "the providers factory 'moon'"
    )
    assert "ConnectionError: moon gateway unreachable on port 4242" in line
