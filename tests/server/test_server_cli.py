"""``agentrig serve`` from the installed distribution's entry point, as a user runs it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import openai
import pytest

pytestmark = [pytest.mark.subprocess, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "serve" / "agentrig.toml"


def agentrig_command() -> list[str]:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is installed with the package"
    return [script]


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}


def start_serve(*args: str) -> tuple[subprocess.Popen[str], threading.Timer]:
    """``agentrig serve ARGS``, with a watchdog that kills it if it hangs (cancel it)."""
    process = subprocess.Popen(
        [*agentrig_command(), "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    # a server that never prints the line must fail the test, not hang it: kill it (EOF)
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    return process, watchdog


def listening_line(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    line = process.stderr.readline()
    while line and "listening on" not in line:  # anything printed before it
        line = process.stderr.readline()
    return line


def test_serve_listens_answers_and_stops_on_interrupt() -> None:
    process, watchdog = start_serve("-c", str(EXAMPLE), "--port", "0", "--ui")
    try:
        line = listening_line(process)
        watchdog.cancel()
        found = re.fullmatch(r"agentrig serve: listening on (http://127\.0\.0\.1:\d+)\n", line)
        assert found is not None, line
        base = found[1]
        sdk = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        answer = sdk.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "2 + 3?"}]
        )
        assert answer.choices[0].message.content == "2 + 3 = 5. Anything else?"
        assert httpx.get(base + "/").status_code == 200  # --ui turned the page on
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130  # the CLI's exit code for an interrupt
        assert process.stderr is not None
        assert "Traceback" not in process.stderr.read()
        assert process.stdout is not None
        assert process.stdout.read() == ""  # status lines are on stderr
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_refuses_a_public_bind_without_keys_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*agentrig_command(), "serve", "-c", str(EXAMPLE), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()  # one line per problem, with the problem's own code
    assert line.startswith("agentrig serve: error [server.unauthenticated_bind]: server.host: ")
    assert "server.host: refusing to listen on '0.0.0.0' without authentication" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_names_a_bad_server_key_with_its_file(tmp_path: Path) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(EXAMPLE.read_text().replace("[server]\n", "[server]\nmax_sesions = 3\n"))
    done = subprocess.run(
        [*agentrig_command(), "serve", "-c", str(config)],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert str(config) in done.stderr
    assert "server.max_sesions: unknown key 'max_sesions'" in done.stderr
    assert "did you mean 'max_sessions'?" in done.stderr
    assert "Traceback" not in done.stderr


def test_config_check_validates_the_server_table(tmp_path: Path) -> None:
    ok = subprocess.run(
        [*agentrig_command(), "config", "check", str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    config = tmp_path / "agentrig.toml"
    config.write_text(EXAMPLE.read_text().replace("port = 8400", "port = 8400\nuii = true"))
    bad = subprocess.run(
        [*agentrig_command(), "config", "check", str(config)],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=False,
    )
    assert bad.returncode == 1
    assert "server.uii" in bad.stdout + bad.stderr
    assert "did you mean 'ui'" in bad.stdout + bad.stderr


def test_a_5xx_error_id_is_logged_with_its_exception_on_stderr(tmp_path: Path) -> None:
    """Point 10 of issue 28: the id a client is shown leads to the exception in the log."""
    config = tmp_path / "agentrig.toml"
    config.write_text(
        "[providers.local]\n"
        'kind = "scripted"\n'
        'options.script = [{ error = { status = 500, message = "upstream detail 7f3a" } }]\n'
        '[agents.assistant]\nprovider = "local"\nmodel = "m"\n'
        "[server.agents.assistant]\n"
    )
    process, watchdog = start_serve("-c", str(config), "--port", "0")
    try:
        base = listening_line(process).rsplit(" ", 1)[1].strip()
        sdk = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.APIStatusError) as info:
            sdk.chat.completions.create(
                model="assistant", messages=[{"role": "user", "content": "x"}]
            )
        assert info.value.status_code == 502
        found = re.search(r"error id (err_[0-9a-f]+)", str(info.value))
        assert found is not None
        assert "7f3a" not in str(info.value)  # the upstream's words stay in the log
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        assert process.stderr is not None
        logged = process.stderr.read()
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
    (entry,) = [line for line in logged.splitlines() if found[1] in line]
    assert entry.startswith("ERROR agentrig.server: internal error " + found[1])
    assert "upstream detail 7f3a" in logged  # the exception, under that id


def test_serve_in_process_leaves_the_hosts_logging_level(tmp_path: Path) -> None:
    """``agentrig serve`` shows warnings on stderr while it runs; called in-process (an
    embedding host, a test) it puts back the agentrig logger's level with its handler."""
    import importlib
    import logging

    from agentrig.cli import main

    importlib.import_module("agentrig.diagnostics")  # its NullHandler is the logger's own

    logger = logging.getLogger("agentrig")
    before = (logger.level, list(logger.handlers))
    logger.setLevel(logging.DEBUG)
    try:
        config = tmp_path / "agentrig.toml"
        config.write_text("[agents.assistant]\nprovider = 'missing'\nmodel = 'm'\n")
        assert main(["serve", "-c", str(config), "--port", "0"]) != 0  # refuses to start
        assert logger.level == logging.DEBUG
        assert logger.handlers == before[1]
    finally:
        logger.setLevel(before[0])
