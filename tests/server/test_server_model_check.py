"""``agentrig serve --validate-models`` (and ``[server] validate_models``): before it listens,
each configured model is looked up in its endpoint's model list -- the OpenAI provider against
a loopback server answering ``GET /v1/models`` as OpenAI's reference describes -- and a model
that is not listed refuses the start, one error line per model."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentrig.cli import main
from agentrig.testing import MockProviderServer, MockReply, MockRequest

LISTED = ("gpt-known", "gpt-other")


def openai_models(request: MockRequest) -> MockReply:
    if request.path.rstrip("/").endswith("/models"):
        data = [{"id": m, "object": "model", "created": 1, "owned_by": "me"} for m in LISTED]
        return MockReply(body={"object": "list", "data": data})
    return MockReply(status=404, body={"error": {"type": "not_found", "message": "no"}})


def _config(tmp_path: Path, url: str, *models: str, validate: bool | None = None) -> Path:
    text = (
        '[providers.main]\nkind = "openai"\n'
        f'options = {{ base_url = "{url}/v1", allow_private_base_url = true, max_retries = 0 }}\n'
        'credentials.api_key = "$ENV:OPENAI_API_KEY"\n'
    )
    for number, model in enumerate(models):
        text += f'[agents.a{number}]\nprovider = "main"\nmodel = "{model}"\n'
    text += "[server]\nport = 0\n"
    if validate is not None:
        text += f"validate_models = {str(validate).lower()}\n"
    text += "[server.agents.a0]\n"
    path = tmp_path / "agentrig.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("how", ["flag", "config"])
def test_an_unlisted_model_refuses_the_start_one_line_per_model(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockProviderServer(openai_models) as server:
        config = _config(
            tmp_path, server.url, "gpt-known", "gpt-typo", "gpt-gone",
            validate=True if how == "config" else None,
        )  # fmt: skip
        argv = ["serve", "-c", str(config)] + (["--validate-models"] if how == "flag" else [])
        assert main(argv) == 1
    err = capsys.readouterr().err
    errors = sorted(line for line in err.splitlines() if "error [" in line)
    assert errors == [
        "agentrig serve: error [model.not_listed]: agents.a1.model: "
        "model 'gpt-typo' is not listed by provider 'main''s endpoint",
        "agentrig serve: error [model.not_listed]: agents.a2.model: "
        "model 'gpt-gone' is not listed by provider 'main''s endpoint",
    ]
    assert "listening" not in err
    assert [r.path for r in server.requests] == ["/v1/models"]  # asked once


@pytest.mark.subprocess
@pytest.mark.integration
def test_listed_models_start_the_server(tmp_path: Path) -> None:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    env["OPENAI_API_KEY"] = "sk-test"
    with MockProviderServer(openai_models) as server:
        config = _config(tmp_path, server.url, "gpt-known", "gpt-other")
        process = subprocess.Popen(
            [script, "serve", "-c", str(config), "--validate-models"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        watchdog = threading.Timer(120, process.kill)  # a hang fails the test (EOF)
        watchdog.start()
        try:
            assert process.stderr is not None
            line = process.stderr.readline()
            while line and "listening on" not in line:
                line = process.stderr.readline()
            assert "agentrig serve: listening on http://127.0.0.1:" in line
            assert [r.path for r in server.requests] == ["/v1/models"]
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 130
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
