"""Approvals: a call that needs a person waits for an answer through the API, or -- served
non-interactively -- fails the request with a clear 403."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from server_support import KEY, RunningServer, scripted_config, tool_entries

import agentrig

pytestmark = pytest.mark.integration

OTHER_KEY = "sk-other-key-9876543210"
ENV = {"SERVER_KEY": KEY, "OTHER_KEY": OTHER_KEY}
AUTH = {"authorization": f"Bearer {KEY}"}


def bump(counter: str) -> str:
    """Increment a counter (changes state, so it asks in the default mode)."""
    return f"{counter} bumped"


def entries() -> agentrig.MemorySource:
    return tool_entries("modify", bump)


CALL = {"tool_calls": [{"name": "bump", "arguments": {"counter": "visits"}}]}


def config(script: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return scripted_config(
        script or [CALL, {"text": "Done."}],
        agents={"assistant": {"provider": "local", "model": "m", "tools": ["bump"]}},
    )


def settings(approvals: str) -> dict[str, Any]:
    return {
        "api_keys": ["$ENV:SERVER_KEY", "$ENV:OTHER_KEY"],
        "agents": {"assistant": {"approvals": approvals}},
    }


def sse_events(lines: Any) -> Any:
    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:])


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_a_waiting_call_is_answered_through_the_api(decision: str) -> None:
    body = {"model": "assistant", "input": "bump it", "stream": True}
    with (
        RunningServer(config(), settings("api"), environ=ENV, memory=entries()) as srv,
        httpx.Client(base_url=srv.base_url, timeout=30) as http,
    ):
        if True:
            with http.stream("POST", "/v1/responses", json=body, headers=AUTH) as response:
                events = sse_events(response.iter_lines())
                request = next(
                    e
                    for e in events
                    if e["type"] == "response.output_item.added"
                    and e["item"]["type"] == "mcp_approval_request"
                )
                approval_id = request["item"]["id"]
                listed = http.get("/v1/approvals", headers=AUTH).json()["data"]
                assert [(a["id"], a["tool"]) for a in listed] == [(approval_id, "bump")]
                # another caller neither sees nor answers it
                other = {"authorization": f"Bearer {OTHER_KEY}"}
                assert http.get("/v1/approvals", headers=other).json()["data"] == []
                stolen = http.post(
                    f"/v1/approvals/{approval_id}", json={"decision": "allow"}, headers=other
                )
                assert stolen.status_code == 404
                answer = http.post(
                    f"/v1/approvals/{approval_id}", json={"decision": decision}, headers=AUTH
                )
                assert answer.status_code == 200
                rest = list(events)
    done = [e["item"] for e in rest if e["type"] == "response.output_item.done"]
    call = next(i for i in done if i["type"] == "mcp_call")
    if decision == "allow":
        assert call["output"] == "visits bumped"
    else:
        assert call["output"] is None
        assert "denied" in call["error"]
    assert rest[-1]["type"] == "response.completed"


def test_served_non_interactively_a_call_needing_approval_fails_with_403() -> None:
    with RunningServer(config([CALL]), settings("refuse"), environ=ENV, memory=entries()) as srv:
        sdk = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.PermissionDeniedError) as info:
            sdk.chat.completions.create(
                model="assistant", messages=[{"role": "user", "content": "bump it"}]
            )
        assert "approval" in str(info.value)
        assert "server.agents.assistant.approvals" in str(info.value)
        stream = sdk.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "bump it"}], stream=True
        )
        with pytest.raises(openai.APIError) as streamed:
            list(stream)
        assert "approval" in str(streamed.value)


def test_no_answer_in_time_denies_the_call() -> None:
    cfg = settings("api")
    cfg["agents"]["assistant"]["approval_timeout"] = 0.2
    with RunningServer(config(), cfg, environ=ENV, memory=entries()) as srv:
        sdk = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        response = sdk.responses.create(model="assistant", input="bump it")
    call = next(i for i in response.output if i.type == "mcp_call")
    assert "no answer within" in str(call.error)
    assert response.output_text == "Done."
