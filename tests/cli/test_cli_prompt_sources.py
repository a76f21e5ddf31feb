"""Prompts from anywhere, through the real ``agentrig run``: ``--file`` (``--prompt-file`` is
its old name) and ``-`` (stdin) carry a 5 MB prompt whole into the session; a file that is
not UTF-8 is a usage error before anything runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
BIG = ("ünïcode prompt line of some length, repeated\n" * 120_000)[: 5 * 1024 * 1024]


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(
        """\
[providers.local]
kind = "scripted"
options.script = [{ text = "read it" }]

[agents.assistant]
provider = "local"
model = "scripted-1"
session_store = "main"

[session_stores.main]
kind = "jsonl"
options.directory = "sessions"
""",
        encoding="utf-8",
    )
    return path


#: an installed listener plugin that gives the scripted model a context window 5 MB fit in
#: (the loop refuses a request larger than the window before sending it)
PLUGIN = """\
import agentrig
from agentrig.llm import ModelInfo


class BigWindow:
    @agentrig.hookimpl
    def runtime_started(self, payload):
        payload.runtime.models.register(ModelInfo(model="scripted-1", context_window=10**8))


plugin = BigWindow()
"""


def _install_plugin(site: Path) -> None:
    info = site / "big_window-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: big-window\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentrig.plugins]\nbig = big_window:plugin\n")
    (site / "big_window.py").write_text(PLUGIN, encoding="utf-8")


def _agentrig(*args: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    site = cwd / "site"
    if not site.exists():
        _install_plugin(site)
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [AGENTRIG, *args], cwd=cwd, env=env, input=stdin, capture_output=True, timeout=300
    )


def _stored_prompts(tmp_path: Path) -> list[str]:
    folder = tmp_path / "sessions"
    if not folder.exists():
        return []
    prompts = []
    for file in sorted(folder.glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)["data"]
            if data["type"] == "user/message":
                prompts.append(data["message"]["content"][0]["text"])
    return prompts


@pytest.mark.parametrize("option", ["--file", "--prompt-file", "-f"])
def test_a_5mb_prompt_file_reaches_the_session_whole(tmp_path: Path, option: str) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(BIG, encoding="utf-8")
    done = _agentrig("run", "-c", str(_config(tmp_path)), option, str(prompt), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, b"read it\n")
    assert re.fullmatch(rb"session ses_[0-9a-f]{32}\n", done.stderr)  # stored: its id
    assert _stored_prompts(tmp_path) == [BIG]


def test_a_5mb_prompt_on_stdin_reaches_the_session_whole(tmp_path: Path) -> None:
    done = _agentrig(
        "run", "-c", str(_config(tmp_path)), "-", cwd=tmp_path, stdin=BIG.encode("utf-8")
    )
    assert (done.returncode, done.stdout) == (0, b"read it\n")
    assert re.fullmatch(rb"session ses_[0-9a-f]{32}\n", done.stderr)  # stored: its id
    assert _stored_prompts(tmp_path) == [BIG]


def test_a_file_that_is_not_utf8_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(BIG.encode("utf-8")[:1000] + b"caf\xe9")
    done = _agentrig("run", "-c", str(_config(tmp_path)), "--file", str(prompt), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        f"agentrig run: error [cli.not_utf8]: the prompt from the file {prompt} is not valid "
        "UTF-8 (byte 0xe9 at offset 1003); convert it to UTF-8 first (e.g. iconv -t UTF-8)"
    ]
    assert not (tmp_path / "sessions").exists()
