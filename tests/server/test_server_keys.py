"""Keys as LiteLLM users know them (issue 34, point 8), over HTTP with the official SDKs.

Each key has its own models, requests and tokens per minute, parallel requests and budgets
(USD, or tokens; per period or in all); its spend and usage are counted, readable at
``GET /key/info`` and with ``agentrig serve keys``, kept across a restart, and every failed
request leaves one line in the error log -- with the key's id, never the key.
"""

from __future__ import annotations

import json
import logging
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from server_support import KEY, RunningServer, held_run, scripted_config

from agentrig.cli import main
from agentrig.llm import ModelInfo, Pricing

pytestmark = pytest.mark.integration

CI_KEY = "sk-ci-key-0123456789abcdef"
OTHER_KEY = "sk-other-key-0123456789abcdef"
ENV = {"SERVER_KEY": KEY, "CI_KEY": CI_KEY, "OTHER_KEY": OTHER_KEY}
HI: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]
AN_HI: list[MessageParam] = [{"role": "user", "content": "Hi"}]  # the same, in Anthropic's terms
# every run: 7 prompt + 3 completion tokens
CONFIG = scripted_config(
    agents={
        "assistant": {"provider": "local", "model": "scripted-1"},
        "writer": {"provider": "local", "model": "scripted-1"},
    }
)


def settings(state: Path | None = None, **ci: Any) -> dict[str, Any]:
    table: dict[str, Any] = {
        "api_keys": ["$ENV:SERVER_KEY"],
        "agents": {"assistant": {}, "writer": {}},
        "keys": {
            "ci": {"key": "$ENV:CI_KEY", **ci},
            "other": {"key": "$ENV:OTHER_KEY"},
        },
    }
    if state is not None:
        table["state_dir"] = str(state)
    return table


def oa(srv: RunningServer, key: str = CI_KEY, retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=key, max_retries=retries)


def an(srv: RunningServer, key: str = CI_KEY) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=srv.base_url, api_key=key, max_retries=0)


def info(srv: RunningServer, key: str = CI_KEY) -> dict[str, Any]:
    answer = httpx.get(f"{srv.base_url}/key/info", headers={"authorization": f"Bearer {key}"})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def priced(srv: RunningServer, dollars_per_token: float) -> None:
    """Give the scripted model a price (USD per 1M tokens = per token * 1M)."""
    rate = dollars_per_token * 1_000_000

    async def register() -> None:
        pricing = Pricing(input=rate, output=rate)
        info = ModelInfo(model="scripted-1", context_window=100_000, pricing=pricing)
        srv.rt.models.register(info, replace=True)

    srv.call(register)


@pytest.fixture
def errors() -> Iterator[list[str]]:
    """The lines of the error log."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Keep()
    log = logging.getLogger("agentrig.server.errors")
    log.addHandler(handler)
    try:
        yield lines
    finally:
        log.removeHandler(handler)


def test_a_key_calls_only_its_models(errors: list[str]) -> None:
    with RunningServer(CONFIG, settings(models=["assistant"]), environ=ENV) as srv:
        ok = oa(srv).chat.completions.create(model="assistant", messages=HI)
        assert ok.choices[0].message.content == "Hello there!"
        assert [m.id for m in oa(srv).models.list()] == ["assistant"]
        with pytest.raises(openai.PermissionDeniedError) as chat:
            oa(srv).chat.completions.create(model="writer", messages=HI)
        with pytest.raises(anthropic.PermissionDeniedError):
            an(srv).messages.create(model="writer", max_tokens=64, messages=AN_HI)
        with pytest.raises(openai.PermissionDeniedError):
            oa(srv).models.retrieve("writer")
        # another key is not limited by it
        other = oa(srv, OTHER_KEY).chat.completions.create(model="writer", messages=HI)
        assert other.choices[0].message.content == "Hello there!"
    assert chat.value.code == "model_not_allowed"
    assert "may not call model 'writer'" in str(chat.value)
    refused = [line for line in errors if "/v1/chat/completions" in line]
    assert len(refused) == 1
    assert "key=ci" in refused[0]
    assert " 403 model_not_allowed" in refused[0]
    assert not any(CI_KEY in line for line in errors)  # the id, never the key


def test_requests_per_minute_are_the_keys_own() -> None:
    with RunningServer(CONFIG, settings(rpm_limit=2), environ=ENV) as srv:
        for _ in range(2):
            oa(srv).chat.completions.create(model="assistant", messages=HI)
        with pytest.raises(openai.RateLimitError) as limited:
            oa(srv).chat.completions.create(model="assistant", messages=HI)
        assert int(limited.value.response.headers["retry-after"]) >= 1
        oa(srv, OTHER_KEY).chat.completions.create(model="assistant", messages=HI)


def test_tokens_per_minute_are_counted_from_finished_runs() -> None:
    with RunningServer(CONFIG, settings(tpm_limit=15), environ=ENV) as srv:
        oa(srv).chat.completions.create(model="assistant", messages=HI)  # 10 tokens
        oa(srv).chat.completions.create(model="assistant", messages=HI)  # 20: over now
        with pytest.raises(openai.RateLimitError) as limited:
            oa(srv).chat.completions.create(model="assistant", messages=HI)
        with pytest.raises(anthropic.RateLimitError):
            an(srv).messages.create(model="assistant", max_tokens=64, messages=AN_HI)
    assert "token rate limit" in str(limited.value)
    assert 1 <= int(limited.value.response.headers["retry-after"]) <= 60


def test_parallel_requests_are_the_keys_own() -> None:
    slow = scripted_config([{"text": "slow " * 20, "delay": 0.1, "chunk_size": 5}])
    table = settings(max_parallel_requests=1)
    table["agents"] = {"assistant": {}}
    with (
        RunningServer(slow, table, environ=ENV) as srv,
        held_run(srv.base_url, CI_KEY, "assistant", HI),  # it holds the key's one slot
    ):
        with pytest.raises(openai.RateLimitError):
            oa(srv).chat.completions.create(model="assistant", messages=HI)
        oa(srv, OTHER_KEY).chat.completions.create(model="assistant", messages=HI)


def test_a_spent_usd_budget_refuses_in_each_sdks_terms_without_retries() -> None:
    with RunningServer(CONFIG, settings(max_budget=1.5), environ=ENV) as srv:
        priced(srv, 0.1)  # $1 a run
        oa(srv).chat.completions.create(model="assistant", messages=HI)
        oa(srv).chat.completions.create(model="assistant", messages=HI)  # started under budget
        sent: list[Any] = []
        counting = openai.DefaultHttpxClient(event_hooks={"request": [sent.append]})
        retrying = openai.OpenAI(
            base_url=f"{srv.base_url}/v1", api_key=CI_KEY, max_retries=2, http_client=counting
        )
        with pytest.raises(openai.RateLimitError) as spent:
            retrying.chat.completions.create(model="assistant", messages=HI)
        with pytest.raises(anthropic.PaymentRequiredError) as billing:
            an(srv).messages.create(model="assistant", max_tokens=64, messages=AN_HI)
        described = info(srv)
    assert len(sent) == 1  # x-should-retry: false -- the SDK does not retry a spent budget
    assert spent.value.code == "budget_exceeded"
    assert spent.value.type == "budget_exceeded"
    assert "spent $2 of its $1.5 budget" in str(spent.value)
    assert billing.value.status_code == 402
    body = billing.value.body  # the SDK types it as object: the parsed JSON of the answer
    assert isinstance(body, dict)
    assert body["error"]["type"] == "billing_error"
    assert described["key"] == "ci"
    assert described["info"]["spend"] == pytest.approx(2.0)
    assert described["info"]["max_budget"] == 1.5
    assert described["info"]["usage"]["requests"] == 5  # /key/info counts as a request too


def test_a_usd_budget_on_an_unpriced_model_is_refused_not_ignored() -> None:
    with (
        RunningServer(CONFIG, settings(max_budget=100.0), environ=ENV) as srv,
        pytest.raises(openai.PermissionDeniedError) as unpriced,
    ):
        oa(srv).chat.completions.create(model="assistant", messages=HI)
    assert unpriced.value.code == "budget_unpriced"
    assert "has no price" in str(unpriced.value)


def test_a_token_budget_starts_again_each_period() -> None:
    table = settings(max_budget_tokens=10, budget_duration="1s")
    with RunningServer(CONFIG, table, environ=ENV) as srv:
        oa(srv).chat.completions.create(model="assistant", messages=HI)
        with pytest.raises(openai.RateLimitError) as spent:
            oa(srv).chat.completions.create(model="assistant", messages=HI)
        assert spent.value.response.headers["retry-after"] == "1"
        assert spent.value.response.headers["x-should-retry"] == "false"
        before = info(srv)["info"]
        time.sleep(1.05)
        oa(srv).chat.completions.create(model="assistant", messages=HI)
        after = info(srv)["info"]
    assert before["budget_tokens_used"] == 10
    assert before["budget_reset_at"] is not None
    assert after["budget_tokens_used"] == 10  # the new period's run
    assert after["usage"]["total_tokens"] == 20  # lifetime


def test_key_info_describes_the_calling_key_only() -> None:
    with RunningServer(CONFIG, settings(models=["assistant"], rpm_limit=50), environ=ENV) as srv:
        oa(srv).chat.completions.create(model="assistant", messages=HI)
        mine = info(srv)
        theirs = info(srv, OTHER_KEY)
        plain = info(srv, KEY)
        v1 = httpx.get(f"{srv.base_url}/v1/key/info", headers={"x-api-key": CI_KEY}).json()
    assert mine["key"] == "ci"
    assert mine["info"]["models"] == ["assistant"]
    assert mine["info"]["rpm_limit"] == 50
    assert mine["info"]["usage"] == {
        "requests": 2,
        "prompt_tokens": 7,
        "completion_tokens": 3,
        "total_tokens": 10,
        "spend": 0.0,
    }
    assert theirs["key"] == "other"
    assert theirs["info"]["usage"]["total_tokens"] == 0
    assert plain["info"]["source"] == "api_keys"
    assert plain["key"].startswith("key-")
    assert v1["key"] == "ci"
    assert CI_KEY not in json.dumps(mine)


def test_totals_survive_a_restart_and_so_does_the_budget(tmp_path: Path) -> None:
    state = tmp_path / "state"
    table = settings(state, max_budget_tokens=25)
    with RunningServer(CONFIG, table, environ=ENV) as srv:
        for _ in range(3):
            oa(srv).chat.completions.create(model="assistant", messages=HI)
    usage = state / "usage.json"
    assert stat.S_IMODE(usage.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    with RunningServer(CONFIG, table, environ=ENV) as srv:
        with pytest.raises(openai.RateLimitError) as spent:
            oa(srv).chat.completions.create(model="assistant", messages=HI)
        described = info(srv)["info"]
    assert spent.value.code == "budget_exceeded"
    assert described["usage"]["total_tokens"] == 30
    assert described["usage"]["requests"] == 5


def test_concurrent_requests_are_all_counted(tmp_path: Path) -> None:
    with RunningServer(CONFIG, settings(tmp_path), environ=ENV) as srv:
        client = oa(srv)

        def ask() -> None:
            for _ in range(4):
                client.chat.completions.create(model="assistant", messages=HI)

        workers = [threading.Thread(target=ask) for _ in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        described = info(srv)["info"]
    assert described["usage"]["requests"] == 25
    assert described["usage"]["total_tokens"] == 240


def _cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["serve", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_keys_made_by_the_cli_work_at_once_and_revoke_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], errors: list[str]
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(
        "[providers.local]\nkind = 'scripted'\n"
        "options = { script = [{ text = 'Hi!', usage = { prompt = 7, completion = 3 } }], "
        "on_exhausted = 'repeat' }\n"
        "[agents.assistant]\nprovider = 'local'\nmodel = 'scripted-1'\n"
        "[agents.writer]\nprovider = 'local'\nmodel = 'scripted-1'\n"
        "[server.agents.assistant]\n[server.agents.writer]\n"
    )
    c = ("-c", str(config))
    code, secret, note = _cli("keys", "add", "laptop", "--model", "assistant", *c, capsys=capsys)
    assert code == 0
    assert "only time the key is shown" in note
    secret = secret.strip()
    state = tmp_path / ".agentrig" / "server"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "keys.json").stat().st_mode) == 0o600
    assert secret not in (state / "keys.json").read_text()  # kept as its digest only
    assert _cli("keys", "add", "laptop", *c, capsys=capsys)[0] == 1  # ids are unique
    code, _, err = _cli("keys", "add", "x", "--model", "asistant", *c, capsys=capsys)
    assert code == 1
    assert "did you mean 'assistant'" in err
    with RunningServer(config) as srv:
        answer = oa(srv, secret).chat.completions.create(model="assistant", messages=HI)
        assert answer.choices[0].message.content == "Hi!"
        with pytest.raises(openai.PermissionDeniedError):
            oa(srv, secret).chat.completions.create(model="writer", messages=HI)
        assert _cli("keys", "add", "late", *c, capsys=capsys)[0] == 0  # while serving
        assert _cli("keys", "revoke", "laptop", *c, capsys=capsys)[0] == 0
        with pytest.raises(openai.AuthenticationError):
            oa(srv, secret).chat.completions.create(model="assistant", messages=HI)
    code, out, _ = _cli("keys", "show", "laptop", "--json", *c, capsys=capsys)
    shown = json.loads(out)
    assert shown["status"] == "revoked"
    assert shown["usage"]["total_tokens"] == 10
    code, out, _ = _cli("keys", "list", *c, capsys=capsys)
    assert "laptop" in out
    assert "late" in out
    assert "revoked" in out
    assert any(" 401 invalid_api_key" in line for line in errors)


def test_a_key_made_while_serving_works_on_the_next_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agentrig.toml"
    config.write_text(
        "[providers.local]\nkind = 'scripted'\noptions = { script = [{ text = 'Hi!' }], "
        "on_exhausted = 'repeat' }\n[agents.assistant]\nprovider = 'local'\n"
        "model = 'scripted-1'\n[server]\nstate_dir = 'state'\n[server.agents.assistant]\n"
    )
    with RunningServer(config) as srv:
        # keyless: loopback callers need no key
        oa(srv, "anything").chat.completions.create(model="assistant", messages=HI)
        code, secret, _ = _cli("keys", "add", "first", "-c", str(config), capsys=capsys)
        assert code == 0
        # from now on the server has a key, so a key is needed
        with pytest.raises(openai.AuthenticationError):
            oa(srv, "anything").chat.completions.create(model="assistant", messages=HI)
        ok = oa(srv, secret.strip()).chat.completions.create(model="assistant", messages=HI)
        assert ok.choices[0].message.content == "Hi!"


def test_key_settings_are_checked_when_read() -> None:
    from agentrig_server import parse_settings

    import agentrig

    bad: list[tuple[dict[str, Any], str]] = [
        ({"key": "sk-literal"}, "must be a secret reference"),
        ({"key": "$ENV:K", "budget_duration": "1 month"}, "is not a budget period"),
        ({"key": "$ENV:K", "budget_duration": "30d"}, "no effect without max_budget"),
        ({"key": "$ENV:K", "rpm_limit": 0}, "greater than or equal to 1"),
        ({"key": "$ENV:K", "max_budget": float("inf")}, "finite"),
        ({"key": "$ENV:K", "models": []}, "allows nothing"),
        ({"key": "$ENV:K", "rpm_limt": 5}, "did you mean 'rpm_limit'"),
    ]
    for entry, message in bad:
        with pytest.raises(agentrig.ConfigError) as refused:
            parse_settings({"keys": {"ci": entry}})
        assert message in str(refused.value), (entry, str(refused.value))
        assert "sk-literal" not in str(refused.value)
    with (
        pytest.raises(agentrig.ConfigError) as unknown,
        RunningServer(CONFIG, settings(models=["asistant"]), environ=ENV),
    ):
        pytest.fail("the server started with an unknown model 'asistant'")
    assert "did you mean 'assistant'" in str(unknown.value)


def test_a_usd_budget_needs_a_price_for_every_agent_the_run_can_reach() -> None:
    config = scripted_config(
        agents={
            "assistant": {"provider": "local", "model": "scripted-1", "subagents": ["helper"]},
            "helper": {
                "provider": "local",
                "model": "scripted-2",
                "description": "Helps with sums.",
            },
        }
    )
    table = settings(max_budget=100.0)
    table["agents"] = {"assistant": {}}
    with RunningServer(config, table, environ=ENV) as srv:
        priced(srv, 0.1)  # scripted-1 only: the helper's model has no price
        with pytest.raises(openai.PermissionDeniedError) as unpriced:
            oa(srv).chat.completions.create(model="assistant", messages=HI)
    assert unpriced.value.code == "budget_unpriced"
    assert "'scripted-2' (of agent 'helper'" in str(unpriced.value)


def test_keys_added_at_the_same_time_are_all_kept(tmp_path: Path) -> None:
    """``keys add`` reads, changes and replaces ``keys.json``: two at once must not drop one
    (each secret was shown as made)."""
    from agentrig_server._keys import KeyFile
    from agentrig_server._settings import KeyLimits

    ids = [f"k{i}" for i in range(16)]
    start = threading.Barrier(len(ids))

    def add(key_id: str) -> None:
        start.wait()
        KeyFile(tmp_path).add(key_id, KeyLimits())

    threads = [threading.Thread(target=add, args=(key_id,)) for key_id in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(KeyFile(tmp_path).load()) == sorted(ids)
