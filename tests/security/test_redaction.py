"""Class: one redactor wherever data leaves the process (issue 28, point 16).

``agentrig.redaction`` decides by the normalised key: ``X-Api-Key``, ``apiKey``,
``client_secret``, ``refresh_token``, ``Authorization`` ... are secret in any spelling;
``max_tokens``, ``prompt_tokens`` and ``tokenizer`` are not.  The same function serves the
logs, hook payloads, ``sessions export`` and the OpenTelemetry plugin; observations carry no
argument values at all.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.diagnostics import get_logger
from agentrig.hooks import HookEvent
from agentrig.ids import AgentId
from agentrig.lifecycle import Observation
from agentrig.redaction import REDACTED, SECRET_SUFFIXES, is_secret_key, redact

SECRET = "s3cr3t-value-0xdeadbeef"

_PREFIXES = ["", "x", "client", "refresh", "access", "openai", "my", "db", "aws", "proxy"]
_ORDINARY = [
    "max_tokens", "prompt_tokens", "completion_tokens", "max_output_tokens", "token_count",
    "tokenizer", "tokens", "model", "temperature", "key_id", "monkey", "author", "authority",
    "secretary", "passage", "cookies_enabled_count", "keys", "path", "command", "url", "name",
    "description", "top_p", "credentialed_by", "signatures_seen",
]  # fmt: skip


def _spell(words: list[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "dots":
        return ".".join(words)
    if style == "upper":
        return "_".join(words).upper()
    if style == "header":
        return "-".join(w.capitalize() for w in words)
    head, *rest = words
    return head + "".join(w.capitalize() for w in rest)  # camelCase


_STYLES = st.sampled_from(["snake", "kebab", "dots", "upper", "header", "camel"])


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(_PREFIXES), st.sampled_from(SECRET_SUFFIXES), _STYLES)
def test_property_every_spelling_of_a_secret_key_is_secret(
    prefix: str, suffix: str, style: str
) -> None:
    words = [w for w in [prefix, *suffix.split("_")] if w]
    key = _spell(words, style)
    assert is_secret_key(key), key
    out = redact({"outer": [{key: SECRET, "max_tokens": 5}]})
    assert out == {"outer": [{key: REDACTED, "max_tokens": 5}]}


@pytest.mark.parametrize("key", _ORDINARY)
@pytest.mark.parametrize("style", ["snake", "camel", "header"])
def test_ordinary_fields_are_kept(key: str, style: str) -> None:
    spelt = _spell(key.split("_"), style)
    assert not is_secret_key(spelt), spelt
    assert redact({spelt: 1}) == {spelt: 1}


@pytest.mark.parametrize(
    "key",
    ["api_key", "x-api-key", "X-API-KEY", "apiKey", "client_secret", "clientSecret",
     "refresh_token", "refreshToken", "Authorization", "proxy-authorization", "password",
     "PASSWORD", "db.password", "Cookie", "set-cookie", "aws_secret_access_key", "auth",
     "private_key", "credentials", "id_token", "x-amz-signature", "pwd"],
)  # fmt: skip
def test_the_named_examples_are_secret(key: str) -> None:
    assert is_secret_key(key)


def test_logs_redact_the_mappings_they_are_given(caplog: pytest.LogCaptureFixture) -> None:
    log = get_logger("redaction-test")
    with caplog.at_level(logging.INFO, logger="agentrig"):
        log.warning("options %s then %r", {"api_key": SECRET, "max_tokens": 3}, [{"token": SECRET}])
        log.warning("as a mapping: %(headers)s", {"headers": {"Authorization": SECRET}})
    text = caplog.text
    assert SECRET not in text
    assert "max_tokens" in text
    assert text.count(REDACTED) == 3


def test_hook_payloads_are_redacted() -> None:
    event = HookEvent.of(
        "PreToolUse",
        session_id="s",
        tool_name="Login",
        tool_input={
            "user": "me",
            "password": SECRET,
            "max_tokens": 9,
            "nested": {"apiKey": SECRET},
        },
    )
    body = event.to_json().decode()
    assert SECRET not in body
    sent = json.loads(body)["tool_input"]
    assert sent == {
        "user": "me",
        "password": REDACTED,
        "max_tokens": 9,
        "nested": {"apiKey": REDACTED},
    }


def test_the_otel_plugin_uses_the_shared_redactor() -> None:
    import agentrig_otel

    assert agentrig_otel.redact is redact


class _Observer:
    def __init__(self) -> None:
        self.seen: list[Observation] = []

    @agentrig.hookimpl
    def observe(self, payload: Observation) -> None:
        self.seen.append(payload)


@agentrig.tool(risk="inspect")
def login(user: str, api_key: str) -> str:
    """Log in (a test double)."""
    return "ok"


@pytest.mark.anyio
async def test_sessions_export_and_observations_carry_no_secret(tmp_path: Any) -> None:
    from agentrig.cli._transcript import render

    call = ScriptedCall("login", {"user": "me", "api_key": SECRET})
    provider = ScriptedProvider([Reply(tool_calls=(call,)), "done"])
    memory = agentrig.MemorySource()
    memory.add("tools", "login", login)
    observer = _Observer()
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["login"]}},
    }
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", provider)],
        plugins=[("observer", observer)],
    ) as rt:
        agent = rt.agent(AgentId("a"))
        await agent.run("go")
        events = list(agent.session.events)
    assert observer.seen
    assert SECRET not in repr([o.data for o in observer.seen])
    for fmt in ("text", "markdown", "json"):
        out = render("ses", "main", events, fmt)  # type: ignore[arg-type]
        assert SECRET not in out, fmt
        assert re.search(r"api_key\W+\[REDACTED\]", out), fmt
        assert '"user": "me"' in out or "user" in out
