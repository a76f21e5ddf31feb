"""``agentrig config check --online``: every configured model (and each fallback deployment's)
is looked up in its endpoint's model list, through the installed OpenAI and Anthropic
providers against loopback servers answering ``GET /v1/models`` as the vendors' references
describe (OpenAI: one ``list`` object; Anthropic: pages with ``has_more`` / ``last_id``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.testing import MockProviderServer, MockReply, MockRequest

OPENAI_MODELS = ("gpt-known", "gpt-other")


def openai_models(request: MockRequest) -> MockReply:
    if request.headers.get("authorization") != "Bearer sk-test":
        return MockReply(status=401, body={"error": {"type": "invalid_api_key", "message": "no"}})
    data = [{"id": m, "object": "model", "created": 1, "owned_by": "me"} for m in OPENAI_MODELS]
    return MockReply(body={"object": "list", "data": data})


def anthropic_models(request: MockRequest) -> MockReply:
    """Two pages: the second is asked for with ``after_id`` of the first's ``last_id``."""
    second = "after_id=claude-a" in request.path  # the path keeps its query

    def model(name: str) -> dict[str, Any]:
        return {"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01"}

    names = ["claude-b"] if second else ["claude-a"]
    return MockReply(
        body={
            "data": [model(n) for n in names],
            "has_more": not second,
            "first_id": names[0],
            "last_id": names[-1],
        }
    )


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _provider(name: str, kind: str, url: str) -> str:
    return (
        f'[providers.{name}]\nkind = "{kind}"\n'
        f'options = {{ base_url = "{url}", allow_private_base_url = true, max_retries = 0 }}\n'
        f'credentials.api_key = "$ENV:{kind.upper()}_API_KEY"\n'
    )


def test_online_check_lists_one_error_per_model_the_endpoint_does_not_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with MockProviderServer(openai_models) as oa, MockProviderServer(anthropic_models) as an:
        config = _write(
            tmp_path,
            _provider("main", "openai", f"{oa.url}/v1")
            + _provider("claude", "anthropic", an.url)
            + '[providers.smart]\nkind = "fallback"\n'
            'options = { deployments = ["main", "claude"], '
            'models = { main = "gpt-known", claude = "claude-gone" } }\n'
            '[agents.good]\nprovider = "main"\nmodel = "gpt-known"\n'
            '[agents.typo]\nprovider = "main"\nmodel = "gpt-knwon"\n'
            '[agents.paged]\nprovider = "claude"\nmodel = "claude-b"\n'
            '[agents.routed]\nprovider = "smart"\nmodel = "smart-model"\n',
        )
        # offline the file is valid: nothing is asked
        assert main(["config", "check", str(config)]) == 0
        assert oa.requests == []
        assert an.requests == []
        capsys.readouterr()

        assert main(["config", "check", "--online", str(config)]) == 1
        out = capsys.readouterr().out
        lines = sorted(out.splitlines())
        assert lines == [
            f"agentrig config: error [model.not_listed]: {config}: agents.typo.model: "
            "model 'gpt-knwon' is not listed by provider 'main''s endpoint",
            f"agentrig config: error [model.not_listed]: {config}: "
            "providers.smart.options.models.claude: "
            "model 'claude-gone' is not listed by provider 'claude''s endpoint",
        ]
    # each provider's endpoint asked once (Anthropic's in two pages)
    assert [r.path for r in oa.requests] == ["/v1/models"]
    assert [r.path.split("?")[0] for r in an.requests] == ["/v1/models", "/v1/models"]
    assert "limit=1000" in an.requests[0].path
    assert an.requests[0].headers.get("x-api-key") == "sk-ant-test"


def test_online_check_passes_and_reports_a_listing_that_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with MockProviderServer(openai_models) as oa:
        config = _write(
            tmp_path,
            _provider("main", "openai", f"{oa.url}/v1")
            + '[agents.good]\nprovider = "main"\nmodel = "gpt-known"\n'
            '[providers.local]\nkind = "scripted"\noptions.script = [{ text = "hi" }]\n'
            '[agents.scripted]\nprovider = "local"\nmodel = "scripted-1"\n',
        )
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        assert main(["config", "check", "--online", str(config)]) == 0
        captured = capsys.readouterr()
        assert captured.out.endswith(": ok\n")
        # a provider that cannot list its models is said to be unchecked, not passed
        assert "warning [model.unchecked]" in captured.err
        assert "provider 'local' cannot list its models: 'scripted-1' unchecked" in captured.err

        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
        assert main(["config", "check", "--online", str(config)]) == 1
        out = capsys.readouterr().out
        assert out.startswith("agentrig config: error [provider.auth]: ")
        assert "providers.main: listing the models of provider 'main' failed" in out
