"""``agentrig run``: one prompt through a scripted agent, its output forms and exit codes."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main

SCRIPTED = """\
[providers.local]
kind = "scripted"
options.script = [
  { tool_calls = [{ name = "missing_tool", arguments = { q = 1 } }] },
  { text = "The answer is 42.", usage = { prompt = 1200, completion = 300 } },
]

[agents.assistant]
provider = "local"
model = "scripted-demo"
"""


def _write(tmp_path: Path, text: str, name: str = "agentrig.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_run_prints_the_final_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(tmp_path, SCRIPTED)

    assert main(["run", "-c", str(config), "What is the answer?"]) == 0

    captured = capsys.readouterr()
    assert captured.out == "The answer is 42.\n"  # the answer alone; tool activity on stderr
    assert captured.err.startswith('[tool] missing_tool({"q": 1})\n[tool] missing_tool -> skipped')


def test_run_json_prints_value_invocation_usage_and_unknown_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(tmp_path, SCRIPTED)

    assert main(["run", "--config", str(config), "--json", "question"]) == 0

    data = json.loads(capsys.readouterr().out)
    assert data["value"] == "The answer is 42."
    invocation = data["invocation"]
    assert invocation["agent_id"] == "assistant"
    assert invocation["outcome"] == "completed"
    assert invocation["rounds"] == 2
    assert invocation["model"] == "scripted-demo"
    assert invocation["session_id"].startswith("ses_")
    assert invocation["usage"]["prompt"] == 1200
    assert invocation["usage"]["completion"] == 300
    assert invocation["usage"]["total"] == 1500
    assert invocation["cost_usd"] is None  # nobody published a price for this model


SLOW = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "too late", delay = 3600 }]

[agents.assistant]
provider = "local"
model = "scripted-demo"
deadline = "50ms"
"""


def test_a_run_past_its_deadline_reports_timeout_as_its_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(tmp_path, SLOW)

    assert main(["run", "-c", str(config), "--json", "question"]) == 0
    captured = capsys.readouterr()
    invocation = json.loads(captured.out)["invocation"]
    assert invocation["outcome"] == "timeout"
    assert invocation["stop_reason"] == "the run passed its deadline of 0.05s"

    assert main(["run", "-c", str(config), "question"]) == 0
    assert "[timeout] the run passed its deadline of 0.05s\n" in capsys.readouterr().err


REFUSING = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "I can't help with that.", stop_reason = "refusal" }]

[agents.assistant]
provider = "local"
model = "scripted-demo"
classify_model_responses = true
"""


def test_a_classified_refusal_is_the_outcome_and_a_stderr_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(tmp_path, REFUSING)

    assert main(["run", "-c", str(config), "--json", "question"]) == 0
    invocation = json.loads(capsys.readouterr().out)["invocation"]
    assert invocation["outcome"] == "model_response_failure"
    failure = invocation["response_failure"]
    assert (failure["kind"], failure["text"]) == ("refusal", "I can't help with that.")

    assert main(["run", "-c", str(config), "question"]) == 0
    captured = capsys.readouterr()
    assert "[refusal] the model's reply reported a refusal: I can't help with that.\n" in (
        captured.err
    )


PRICING_PLUGIN = """
import agentrig
from agentrig.llm import ModelInfo, Pricing

@agentrig.hookimpl
def runtime_started(payload):
    payload.runtime.models.register(
        ModelInfo(
            model="scripted-demo",
            context_window=100_000,
            pricing=Pricing(input="2.50", output="10.00"),
        )
    )
"""


def test_run_json_reports_cost_from_the_model_registry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], install_dist: Any
) -> None:
    install_dist(
        "agentrig-test-pricing",
        {"agentrig.plugins": {"test_pricing": "test_pricing_plugin"}},
        {"test_pricing_plugin": PRICING_PLUGIN},
    )
    config = _write(tmp_path, SCRIPTED)

    assert main(["run", "-c", str(config), "--json", "question"]) == 0

    invocation = json.loads(capsys.readouterr().out)["invocation"]
    # 1200 prompt tokens at $2.50/M + 300 completion tokens at $10.00/M
    assert invocation["cost_usd"] == pytest.approx(0.003 + 0.003)


def test_run_streams_plain_text_and_tool_activity_on_a_no_color_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NO_COLOR: plain text as it arrives (Markdown rendering is tests/cli/test_cli_terminal.py)
    monkeypatch.setenv("NO_COLOR", "1")

    class Terminal(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.writes: list[str] = []

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> int:
            self.writes.append(text)
            return super().write(text)

    out, err = Terminal(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    config = _write(
        tmp_path,
        SCRIPTED.replace("usage = { prompt = 1200, completion = 300 }", "chunk_size = 4"),
    )

    assert main(["run", "-c", str(config), "question"]) == 0

    assert out.getvalue() == "The answer is 42.\n"
    assert out.writes[:3] == ["The ", "answ", "er i"]  # delta by delta, as it arrives
    assert '[tool] missing_tool({"q": 1})' in err.getvalue()
    assert "[tool] missing_tool -> skipped" in err.getvalue()


def test_the_only_agent_is_the_default_and_several_need_a_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = SCRIPTED + '\n[agents.other]\nprovider = "local"\nmodel = "scripted-demo"\n'
    config = _write(tmp_path, two)

    assert main(["run", "-c", str(config), "question"]) == 2
    err = capsys.readouterr().err
    assert "declares 2 agents (assistant, other)" in err
    assert "-a AGENT" in err

    assert main(["run", "-c", str(config), "-a", "other", "question"]) == 0
    assert capsys.readouterr().out == "The answer is 42.\n"

    assert main(["run", "-c", str(config), "-a", "nobody", "question"]) == 2
    assert "no agent 'nobody' (agents: assistant, other)" in capsys.readouterr().err


def test_a_config_without_agents_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(tmp_path, '[providers.local]\nkind = "scripted"\n')
    assert main(["run", "-c", str(config), "question"]) == 2
    assert "declares no agents" in capsys.readouterr().err


def test_missing_and_invalid_configs_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "-c", str(tmp_path / "nope.toml"), "question"]) == 2
    assert "no such file" in capsys.readouterr().err

    bad = _write(tmp_path, SCRIPTED.replace('model = "scripted-demo"', "model = 3"), "bad.toml")
    assert main(["run", "-c", str(bad), "question"]) == 2
    assert "agents.assistant.model" in capsys.readouterr().err

    unknown_kind = _write(tmp_path, SCRIPTED.replace('"scripted"', '"nonexistent"'), "u.toml")
    assert main(["run", "-c", str(unknown_kind), "question"]) == 2
    assert "providers.local.kind" in capsys.readouterr().err

    assert main(["run", "question"]) == 2  # -c is required
    assert "-c/--config" in capsys.readouterr().err


def test_secrets_come_from_the_environment_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_secret = SCRIPTED.replace(
        'kind = "scripted"\n', 'kind = "scripted"\ncredentials.api_key = "$ENV:AGENTRIG_TEST_KEY"\n'
    )
    config = _write(tmp_path, with_secret)
    monkeypatch.delenv("AGENTRIG_TEST_KEY", raising=False)

    assert main(["run", "-c", str(config), "question"]) == 2
    err = capsys.readouterr().err
    assert "providers.local.credentials.api_key" in err
    assert "AGENTRIG_TEST_KEY is not set" in err

    monkeypatch.setenv("AGENTRIG_TEST_KEY", "sk-test")
    assert main(["run", "-c", str(config), "question"]) == 0
    assert capsys.readouterr().out == "The answer is 42.\n"


def test_a_failed_run_exits_1_with_its_error_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = SCRIPTED.replace(
        "options.script = [",
        'options.script = [\n  { error = { status = 401, message = "bad key" } },',
    )
    config = _write(tmp_path, failing)

    assert main(["run", "-c", str(config), "question"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("agentrig run: error [provider.")
    assert "bad key" in captured.err

    assert main(["run", "-c", str(config), "--json", "question"]) == 1
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert error["code"].startswith("provider.")
    assert error["category"] == "provider"


def test_an_exhausted_script_is_a_run_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(
        tmp_path,
        '[providers.local]\nkind = "scripted"\n[agents.a]\nprovider = "local"\nmodel = "m"\n',
    )
    assert main(["run", "-c", str(config), "question"]) == 1
    assert "error [scripted.exhausted]" in capsys.readouterr().err


@pytest.mark.subprocess
def test_the_installed_console_script_runs_a_prompt(tmp_path: Path) -> None:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    config = _write(tmp_path, SCRIPTED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}

    done = subprocess.run(
        [script, "run", "-c", str(config), "--json", "What is the answer?"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["value"] == "The answer is 42."
    assert data["invocation"]["usage"]["total"] == 1500

    plain = subprocess.run(
        [script, "run", "-c", str(config), "again"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert (plain.returncode, plain.stdout) == (0, "The answer is 42.\n")


HANGING = """\
[providers.local]
kind = "scripted"
options.script = [{ text = "never arrives", delay = 3600 }]

[session_stores.files]
kind = "jsonl"
options.directory = "sessions"

[agents.assistant]
provider = "local"
model = "scripted-demo"
session_store = "files"
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("json_output", [False, True], ids=["plain", "json"])
def test_sigint_exits_130_when_the_output_is_piped(tmp_path: Path, json_output: bool) -> None:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    config = _write(tmp_path, HANGING)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    argv = [script, "run", "-c", str(config), *(["--json"] if json_output else []), "hi"]
    with subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,  # piped: the non-streaming path
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        try:
            # the request header is logged right before the provider is called
            sessions = tmp_path / "sessions"
            for _ in range(600):
                logged = [p.read_text(encoding="utf-8") for p in sessions.glob("**/*.jsonl")]
                if any("request/header" in text for text in logged):
                    break
                assert process.poll() is None, process.communicate()
                time.sleep(0.1)
            else:
                pytest.fail("the run never reached its model call")
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, (out, err)
    assert "never arrives" not in out
    assert "Traceback" not in err
    logs = "".join(p.read_text(encoding="utf-8") for p in sessions.glob("**/*.jsonl"))
    assert '"interrupted"' in logs  # the run was recorded interrupted before exiting
