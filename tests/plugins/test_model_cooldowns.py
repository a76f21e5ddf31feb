"""Cooldowns per concrete model, against a loopback server answering as OpenAI's chat
completions API does: a 429 with ``retry-after`` cools that (provider, model) pair for the
whole process; other runs fail fast without a request, or the fallback provider skips it."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.errors import AgentrigError
from agentrig.kernel import open_runtime
from agentrig.llm import (
    COOLDOWNS,
    ModelCooldownError,
    ModelCooldowns,
    ProviderError,
    RateLimitError,
)
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = pytest.mark.anyio

LIMITED = "gpt-limited"
ENV = {"OPENAI_API_KEY": "sk-test"}


def _text(model: str, text: str) -> MockReply:
    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": model, "choices": [choice]}  # fmt: skip

    return MockReply(events=[chunk({"role": "assistant", "content": text}, None),
                             chunk({}, "stop"), "[DONE]"])  # fmt: skip


def answer(request: MockRequest) -> MockReply:
    """``gpt-limited*`` are over their rate limit for an hour; any other model answers."""
    model = request.body["model"]
    if model.startswith(LIMITED):
        body = {"error": {"type": "rate_limit_exceeded", "message": "Rate limit reached"}}
        return MockReply(status=429, body=body, headers={"retry-after": "3600"})
    return _text(model, f"answered by {model}")


def _config(url: str, **providers: Any) -> dict[str, Any]:
    options = {"base_url": f"{url}/v1", "allow_private_base_url": True, "max_retries": 0}
    return {
        "providers": {"main": {"kind": "openai", "options": options}, **providers},
        "agents": {
            "first": {"provider": "main", "model": LIMITED},
            "second": {"provider": "main", "model": LIMITED},
            "other": {"provider": "main", "model": "gpt-free"},
        },
    }


def _models(server: MockProviderServer) -> list[str]:
    return [r.body["model"] for r in server.requests]


async def test_a_rate_limit_cools_the_model_and_other_runs_fail_fast() -> None:
    with MockProviderServer(answer) as server:
        async with open_runtime(_config(server.url), environ=ENV) as rt:
            with pytest.raises(RateLimitError) as hit:
                await rt.agent("first").run("hi")
            assert hit.value.code == "provider.rate_limit"
            assert _models(server) == [LIMITED]
            left = COOLDOWNS.remaining("main", LIMITED)
            assert left is not None
            assert 3500 < left <= 3600

            # another agent on the same model: refused at once, nothing sent
            with pytest.raises(ModelCooldownError) as cooled:
                await rt.agent("second").run("hi")
            assert cooled.value.code == "provider.cooldown"
            assert "'gpt-limited' is cooling down after a rate limit" in str(cooled.value)
            assert cooled.value.retry_after is not None
            assert cooled.value.retry_after > 3500
            assert _models(server) == [LIMITED]
            errors = [e.data for e in rt.agent("second").session.events if e.type == "model/error"]
            assert [e.code for e in errors] == ["provider.cooldown"]

            # another model of the same provider is not cooled
            assert (await rt.agent("other").run("hi")).value == "answered by gpt-free"

        # process-wide: a second runtime in the same process waits out the same deadline
        async with open_runtime(_config(server.url), environ=ENV) as rt:
            with pytest.raises(ModelCooldownError):
                await rt.agent("first").run("hi")
        assert _models(server) == [LIMITED, "gpt-free"]


async def test_the_fallback_provider_skips_a_cooling_deployment() -> None:
    with MockProviderServer(answer) as server:
        config = _config(server.url)
        config["providers"]["backup"] = config["providers"]["main"]
        config["providers"]["smart"] = {
            "kind": "fallback",
            "options": {
                "deployments": ["main", "backup"],
                "models": {"main": LIMITED, "backup": "gpt-free"},
            },
        }
        config["agents"] = {"assistant": {"provider": "smart", "model": "smart-model"}}
        async with open_runtime(config, environ=ENV) as rt:
            agent = rt.agent("assistant")
            first = await agent.run("one")
            assert first.value == "answered by gpt-free"
            assert _models(server) == [LIMITED, "gpt-free"]  # the 429, then the backup
            second = await agent.run("two")
            assert second.value == "answered by gpt-free"
            assert _models(server) == [LIMITED, "gpt-free", "gpt-free"]  # no second 429
            assert second.invocation.model == "gpt-free"


async def test_a_fallback_group_fails_fast_while_every_deployment_cools() -> None:
    with MockProviderServer(answer) as server:
        config = _config(server.url)
        config["providers"]["backup"] = config["providers"]["main"]
        config["providers"]["smart"] = {
            "kind": "fallback",
            "options": {
                "deployments": ["main", "backup"],
                "models": {"main": LIMITED, "backup": f"{LIMITED}-too"},
            },
        }
        config["agents"] = {"assistant": {"provider": "smart", "model": "smart-model"}}
        async with open_runtime(config, environ=ENV) as rt:
            agent = rt.agent("assistant")
            with pytest.raises(RateLimitError) as hit:
                await agent.run("one")
            assert hit.value.code == "provider.rate_limit"
            assert _models(server) == [LIMITED, f"{LIMITED}-too"]
            # the concrete models cool, not the group's name (each deployment has its own)
            assert COOLDOWNS.remaining("main", LIMITED) is not None
            assert COOLDOWNS.remaining("backup", f"{LIMITED}-too") is not None
            assert COOLDOWNS.remaining("smart", "smart-model") is None
            with pytest.raises(ModelCooldownError) as cooled:
                await agent.run("two")
            assert "'backup'" in str(cooled.value)
            assert _models(server) == [LIMITED, f"{LIMITED}-too"]  # nothing sent


def test_cooldowns_start_on_a_deadline_extend_to_the_later_and_expire() -> None:
    now = [100.0]
    cooldowns = ModelCooldowns(clock=lambda: now[0])

    def limited(after: float | None) -> RateLimitError:
        return RateLimitError("429", status=429, retry_after=after, provider="p")

    assert not cooldowns.note("p", "m", limited(None))  # no deadline: nothing to wait for
    assert not cooldowns.note("p", "m", ProviderError("500", status=500, retry_after=5))
    first = limited(30)
    assert cooldowns.note("p", "m", first)
    assert first.cooldown_started
    assert not cooldowns.note("p", "group", first)  # one failure, one cooldown
    assert cooldowns.remaining("p", "group") is None
    assert not cooldowns.note("p", "m", ModelCooldownError("p", "m", 99))
    cooldowns.note("p", "m", limited(10))  # an earlier deadline does not shorten it
    assert cooldowns.remaining("p", "m") == 30
    assert cooldowns.remaining("p", "other") is None
    now[0] = 120.0
    with pytest.raises(ModelCooldownError) as info:
        cooldowns.check("p", "m")
    assert info.value.retry_after == 10
    assert not info.value.retryable
    assert info.value.can_fallback
    assert isinstance(info.value, AgentrigError)
    now[0] = 130.0
    cooldowns.check("p", "m")  # the deadline passed: sent again
    assert cooldowns.remaining("p", "m") is None
