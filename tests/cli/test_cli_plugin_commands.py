"""Plugins add ``agentrig`` subcommands through the ``register_commands`` hook."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

import agentrig
from agentrig.cli import main
from agentrig.kernel import open_runtime
from agentrig.plugin import Commands, RuntimeStarted

GREETER = """
import agentrig
from agentrig.errors import ConfigError, Issue


def greet(args):
    if args.name == "nobody":
        raise ConfigError([Issue("greet.nobody", "cannot greet nobody")])
    if args.name == "server":
        raise agentrig.AgentrigError("the server said:\\n  no\\n  never")
    if args.name == "crash":
        raise ValueError("first line\\nsecond line")
    print(f"hello {args.name}")
    return 0


@agentrig.hookimpl
def register_commands(payload):
    parser = payload.add("greet", help="say hello to someone", handler=greet)
    parser.add_argument("name")
"""

CLASHING = """
import agentrig


@agentrig.hookimpl
def register_commands(payload):
    payload.add("run", help="replace the core's run", handler=lambda args: 0)
"""

BROKEN = "raise RuntimeError('cannot import me')\n"


@pytest.fixture
def greeter(install_dist: Any) -> None:
    install_dist(
        "agentrig-greeter",
        {"agentrig.plugins": {"greeter": "greeter_mod"}},
        {"greeter_mod": GREETER},
    )


@pytest.mark.usefixtures("greeter")
def test_a_plugin_command_runs_and_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["greet", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "greet" in out
    assert "say hello to someone" in out
    assert main(["greet", "--help"]) == 0
    assert "usage: agentrig greet" in capsys.readouterr().out


def test_running_a_core_command_loads_no_plugin(
    install_dist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    install_dist(
        "agentrig-broken", {"agentrig.plugins": {"broken": "broken_mod"}}, {"broken_mod": BROKEN}
    )
    assert main(["plugins", "--help"]) == 0
    assert capsys.readouterr().err == ""  # the broken plugin was never imported


@pytest.mark.usefixtures("greeter")
def test_a_plugin_commands_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["greet", "nobody"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("agentrig greet: error [greet.nobody]:")  # the issue's own code
    assert "cannot greet nobody" in err
    assert "Traceback" not in err


@pytest.mark.usefixtures("greeter")
@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("server", "agentrig greet: error [agentrig.error]: the server said: no never"),
        ("crash", "agentrig greet: error [internal]: ValueError: first line second line"),
    ],
)
def test_a_multi_line_message_is_still_one_error_line(
    name: str, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["greet", name]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # scripts read one line per failure
    assert err.startswith(line)


@pytest.mark.usefixtures("greeter")
def test_a_disabled_plugin_adds_no_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTRIG_DISABLE_PLUGINS", "greeter")
    assert main(["greet", "world"]) == 2
    assert "invalid choice: 'greet'" in capsys.readouterr().err


def test_a_plugin_cannot_take_a_core_command(
    install_dist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    install_dist(
        "agentrig-clash", {"agentrig.plugins": {"clash": "clash_mod"}}, {"clash_mod": CLASHING}
    )
    assert main(["--help"]) == 0
    captured = capsys.readouterr()
    assert "run one prompt" in captured.out.lower()  # still the core's own
    assert "replace the core's run" not in captured.out
    clash = "agentrig: warning [catalog.duplicate]: plugin 'clash' could not add its commands"
    assert clash in captured.err
    assert "command 'run' already exists" in captured.err


@pytest.mark.usefixtures("greeter")
def test_a_broken_plugin_is_reported_and_the_others_still_work(
    install_dist: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    install_dist(
        "agentrig-broken", {"agentrig.plugins": {"broken": "broken_mod"}}, {"broken_mod": BROKEN}
    )
    assert main(["greet", "you"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "hello you\n"
    assert "agentrig: warning [plugin.load_failed]: plugin 'broken' not loaded:" in captured.err
    assert "cannot import me" in captured.err


def _both_handler(args: argparse.Namespace) -> int:
    return 7


@pytest.mark.anyio
async def test_a_commands_listener_also_registers_in_a_runtime() -> None:
    # register_commands is declared by the CLI, yet every plugin manager holds it: a plugin
    # that adds commands and listens to the runtime is one listener object, accepted by both
    class Both:
        def __init__(self) -> None:
            self.started = 0

        @agentrig.hookimpl
        def register_commands(self, payload: Commands) -> None:
            payload.add("both", help="a plugin that also listens", handler=_both_handler)

        @agentrig.hookimpl
        def runtime_started(self, payload: RuntimeStarted) -> None:
            self.started += 1

    plugin = Both()
    parser = argparse.ArgumentParser(prog="agentrig")
    sub = parser.add_subparsers()
    async with open_runtime(plugins=[("both", plugin)]) as rt:
        assert rt.hooks.pm.is_registered(plugin)
        rt.hooks.notify("register_commands", Commands(sub.add_parser, taken=()))
        assert not rt.hooks.failures()
    assert plugin.started == 1
    args = parser.parse_args(["both"])
    assert args.handler(args) == 7
