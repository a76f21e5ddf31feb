"""A served run that suspends (a listener waits for an outside answer) is a clear 409, not a
generic internal error: nothing in the served APIs can deliver that answer."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
from server_support import KEY, RunningServer, scripted_config, tool_entries

import agentrig
from agentrig.lifecycle import ExecutionSuspended, ToolExecution

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY}
SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}
CALL = {"tool_calls": [{"name": "look", "arguments": {"key": "door"}}]}


def look(key: str) -> str:
    """Read something."""
    return f"looked at {key}"


class WaitsForAnAnswer:
    """Pauses every call before it starts, for an answer from outside the run."""

    @agentrig.hookimpl
    def tool_execution(self, payload: ToolExecution, next: Any) -> None:
        raise ExecutionSuspended(f"waiting for a person on call {payload.call.id!r}")


def serving() -> RunningServer:
    config = scripted_config(
        [CALL, {"text": "Done."}],
        agents={"assistant": {"provider": "local", "model": "m", "tools": ["look"]}},
    )
    return RunningServer(
        config,
        SETTINGS,
        environ=ENV,
        memory=tool_entries("inspect", look),
        plugins=[("waits", WaitsForAnAnswer())],
    )


def test_the_openai_sdk_gets_a_conflict_naming_the_suspension() -> None:
    with serving() as srv:
        client = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.ConflictError) as raised:
            client.chat.completions.create(
                model="assistant", messages=[{"role": "user", "content": "look"}]
            )
    body: Any = raised.value.body
    assert body["code"] == "run_suspended"
    assert "execution.suspended" in body["message"]
    assert "internal" not in body["message"]


def test_the_anthropic_sdk_gets_a_conflict_too() -> None:
    with serving() as srv:
        client = anthropic.Anthropic(base_url=srv.base_url, api_key=KEY, max_retries=0)
        with pytest.raises(anthropic.ConflictError) as raised:
            client.messages.create(
                model="assistant", max_tokens=100, messages=[{"role": "user", "content": "look"}]
            )
    assert "execution.suspended" in str(raised.value)


def test_a_streamed_run_ends_with_the_same_error_event() -> None:
    body = {"model": "assistant", "input": "look", "stream": True}
    with (
        serving() as srv,
        httpx.Client(base_url=srv.base_url, timeout=30) as http,
        http.stream(
            "POST", "/v1/responses", json=body, headers={"authorization": f"Bearer {KEY}"}
        ) as response,
    ):
        events = [
            json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")
        ]
    failed = [e for e in events if e.get("type") in ("error", "response.failed")]
    assert failed, events
    assert "execution.suspended" in json.dumps(failed)
    assert "internal server error" not in json.dumps(failed)
