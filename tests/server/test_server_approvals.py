"""Approvals: a call that needs a person waits for an answer through the API, or -- served
non-interactively -- fails the request with a clear 403."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from agentrig_server._approvals import ApprovalAnswer, Approvals
from agentrig_server._errors import ApiError
from openai.types.responses import ResponseCompletedEvent
from openai.types.responses.response_input_item_param import McpApprovalResponse
from server_support import KEY, RunningServer, scripted_config, tool_entries

import agentrig
from agentrig.ids import provider_id
from agentrig.llm import ToolCallBlock, ToolMessage
from agentrig.plugin import PROVIDERS

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


def answered_call(rest: list[Any], allowed: bool, denial: str) -> Any:
    """The answered call's ``mcp_call`` item among the rest of a stream, which completed:
    run when ``allowed``, else refused with ``denial`` in its error."""
    done = [e["item"] for e in rest if e["type"] == "response.output_item.done"]
    call = next(i for i in done if i["type"] == "mcp_call")
    if allowed:
        assert call["output"] == "visits bumped"
    else:
        assert call["output"] is None
        assert denial in call["error"]
    assert rest[-1]["type"] == "response.completed"
    return call


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
    answered_call(rest, decision == "allow", "denied")


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


@pytest.mark.parametrize("stream", [False, True])
def test_a_stateless_client_sends_a_call_that_waited_back_as_one_call(stream: bool) -> None:
    """OpenAI's ``store: false`` pattern over a reply whose call waited for a person (here: in
    vain): the ``mcp_approval_request`` and the ``mcp_call`` naming it are one call with its
    result in the history -- whichever order the reply listed them in."""
    cfg = settings("api")
    cfg["agents"]["assistant"]["approval_timeout"] = 0.1
    script: list[dict[str, Any]] = [CALL, {"text": "Done."}, {"text": "Again."}]
    with RunningServer(config(script), cfg, environ=ENV, memory=entries()) as srv:
        sdk = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        ask: list[Any] = [{"role": "user", "content": "bump it"}]
        if stream:
            events = list(sdk.responses.create(model="assistant", input=ask, stream=True))
            final = events[-1]
            assert isinstance(final, ResponseCompletedEvent)
            output = final.response.output
        else:
            output = sdk.responses.create(model="assistant", input=ask, store=False).output
        request = next(i for i in output if i.type == "mcp_approval_request")
        call = next(i for i in output if i.type == "mcp_call")
        assert call.approval_request_id == request.id
        # (this SDK types an mcp_call's error as an object; the server sends OpenAI's older
        # string, which pydantic would warn about while dumping it)
        replayed = [*ask, *(i.model_dump(exclude_none=True, warnings=False) for i in output)]
        replayed.append({"role": "user", "content": "again"})
        again = sdk.responses.create(model="assistant", input=replayed, store=False)
        provider = srv.rt.catalog(PROVIDERS).require(provider_id("local"))
        sent = provider.requests[-1].messages
    assert again.output_text == "Again."
    calls = [b for m in sent for b in m.content if isinstance(b, ToolCallBlock)]
    results = [m for m in sent if isinstance(m, ToolMessage)]
    assert [(c.name, c.arguments) for c in calls] == [("bump", {"counter": "visits"})]
    assert [(r.call_id, r.status) for r in results] == [(calls[0].id, "error")]
    assert "no answer within" in results[0].text


@pytest.mark.parametrize("approve", [True, False])
def test_an_mcp_approval_response_answers_the_waiting_call(approve: bool) -> None:
    body = {"model": "assistant", "input": "bump it", "stream": True}
    with (
        RunningServer(config(), settings("api"), environ=ENV, memory=entries()) as srv,
        httpx.Client(base_url=srv.base_url, timeout=30) as http,
        http.stream("POST", "/v1/responses", json=body, headers=AUTH) as waiting,
    ):
        sdk = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        events = sse_events(waiting.iter_lines())
        first_id = next(events)["response"]["id"]
        request = next(
            e["item"]
            for e in events
            if e["type"] == "response.output_item.added"
            and e["item"]["type"] == "mcp_approval_request"
        )
        answer: McpApprovalResponse = {
            "type": "mcp_approval_response",
            "approval_request_id": request["id"],
            "approve": approve,
            "reason": "checked by Ada",
        }
        # checked before anything is recorded: another response's id, the same answer twice
        with pytest.raises(openai.BadRequestError, match="waits in response"):
            sdk.responses.create(
                model="assistant", input=[answer], previous_response_id="resp_other"
            )
        with pytest.raises(openai.BadRequestError, match="answered twice"):
            sdk.responses.create(model="assistant", input=[answer, answer])
        other = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=OTHER_KEY, max_retries=0)
        with pytest.raises(openai.NotFoundError):  # not theirs to answer
            other.responses.create(model="assistant", input=[answer])
        if approve:
            answered = sdk.responses.create(
                model="assistant", input=[answer], previous_response_id=first_id
            )
        else:  # streamed, the answering response is its three events
            frames = list(sdk.responses.create(model="assistant", input=[answer], stream=True))
            assert [f.type for f in frames] == [
                "response.created",
                "response.in_progress",
                "response.completed",
            ]
            assert isinstance(frames[-1], ResponseCompletedEvent)
            answered = frames[-1].response
        rest = list(events)
        with pytest.raises(openai.NotFoundError, match="no pending approval"):
            sdk.responses.create(model="assistant", input=[answer])  # answered and gone
    assert (answered.status, answered.output) == ("completed", [])
    call = answered_call(rest, approve, "checked by Ada")
    assert call["approval_request_id"] == request["id"]


def test_an_answer_to_no_waiting_call_is_a_404() -> None:
    answer: McpApprovalResponse = {
        "type": "mcp_approval_response",
        "approval_request_id": "appr_x",
        "approve": True,
    }
    with RunningServer(config(), settings("api"), environ=ENV, memory=entries()) as srv:
        sdk = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.NotFoundError, match="no pending approval 'appr_x'"):
            sdk.responses.create(model="assistant", input=[answer])


@pytest.mark.anyio
async def test_the_first_answer_stands_on_either_route() -> None:
    """Until the waiting call wakes, a second answer -- a POST or an input item -- is a 400
    (it could otherwise turn a denial into an approval unseen)."""
    approvals = Approvals()
    pending = approvals.open(
        model="assistant", owner="me", session_id="s", tool="bump", arguments={}, reason=""
    )
    approvals.answer(pending.id, "me", {"decision": "deny"})
    with pytest.raises(ApiError, match="already answered") as again:
        approvals.answer(pending.id, "me", {"decision": "allow"})
    assert (again.value.status, again.value.api_code) == (400, "already_answered")
    answer = ApprovalAnswer(pending.id, "allow", "", "input[0].approval_request_id")
    with pytest.raises(ApiError, match="already answered"):
        approvals.decide_all("me", "assistant", None, [answer])
    assert (pending.answer, pending.answered.is_set()) == ("deny", True)
