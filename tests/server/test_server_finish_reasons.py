"""How a served run's end is worded in each API, read back through the official SDKs.

An agent that classifies replies (``classify_model_responses``) ends a refused or filtered
reply ``model_response_failure``; an agent's ``deadline`` (or the server's
``max_run_seconds``) ends a run ``timeout``.  Chat completions say ``content_filter`` /
``length``, messages ``refusal`` / ``max_tokens``, Responses ``incomplete`` with
``incomplete_details.reason`` (``content_filter``, none for a deadline) -- and a reply that
reported an error is a failed response (a 502 elsewhere).
"""

from __future__ import annotations

import logging
from typing import Any

import anthropic
import openai
import pytest
from server_support import KEY, RunningServer, scripted_config

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY}
SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}


def _config(reply: dict[str, Any], **agent: Any) -> dict[str, Any]:
    return scripted_config(
        [reply],
        agents={"assistant": {"provider": "local", "model": "scripted-1", **agent}},
    )


def _refusing(stop: str) -> dict[str, Any]:
    reply = {"text": "I can't help with that.", "stop_reason": stop}
    return _config(reply, classify_model_responses=True)


def _clients(srv: RunningServer) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    return (
        openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0),
        anthropic.Anthropic(base_url=srv.base_url, api_key=KEY, max_retries=0),
    )


def _answers(srv: RunningServer) -> dict[str, Any]:
    """Each API's way of ending, plain and streamed."""
    oa, an = _clients(srv)
    hi: Any = [{"role": "user", "content": "Hi"}]
    chat = oa.chat.completions.create(model="assistant", messages=hi)
    chunks = list(oa.chat.completions.create(model="assistant", messages=hi, stream=True))
    message = an.messages.create(model="assistant", max_tokens=64, messages=hi)
    with an.messages.stream(model="assistant", max_tokens=64, messages=hi) as stream:
        streamed_message = stream.get_final_message()
    response = oa.responses.create(model="assistant", input="Hi")
    with oa.responses.stream(model="assistant", input="Hi") as rstream:
        events = list(rstream)
    # the SDK's get_final_response() wants response.completed; an incomplete or failed
    # response arrives in its own terminal event
    kinds = [event.type for event in events]
    streamed_response = getattr(events[-1], "response", None)
    return {
        "chat": chat,
        "chat_stream": [c.choices[0].finish_reason for c in chunks if c.choices][-1],
        "message": message,
        "message_stream": streamed_message,
        "response": response,
        "response_stream": streamed_response,
        "response_events": kinds,
    }


@pytest.mark.parametrize("stop", ["refusal", "content_filter"])
def test_a_classified_refusal_or_filter_is_worded_in_each_api(stop: str) -> None:
    with RunningServer(_refusing(stop), SETTINGS, environ=ENV) as srv:
        got = _answers(srv)
    chat = got["chat"].choices[0]
    assert chat.finish_reason == "content_filter"
    assert got["chat_stream"] == "content_filter"
    assert chat.message.content == "I can't help with that."
    # OpenAI puts a refusal's words in `refusal`; a filtered reply has none
    assert chat.message.refusal == ("I can't help with that." if stop == "refusal" else None)
    assert got["message"].stop_reason == "refusal"
    assert got["message_stream"].stop_reason == "refusal"
    for response in (got["response"], got["response_stream"]):
        assert response.status == "incomplete"
        assert response.incomplete_details is not None
        assert response.incomplete_details.reason == "content_filter"
        assert response.output_text == "I can't help with that."
    assert got["response_events"][-1] == "response.incomplete"


def test_the_agents_deadline_is_a_timeout_not_an_ordinary_truncation() -> None:
    slow = {"text": "tick " * 40, "delay": 0.05, "chunk_size": 5}
    with RunningServer(_config(slow, deadline="0.15s"), SETTINGS, environ=ENV) as srv:
        got = _answers(srv)
    # chat completions and messages have no deadline reason: a cut-short answer
    assert got["chat"].choices[0].finish_reason == "length"
    assert got["chat_stream"] == "length"
    assert got["message"].stop_reason == "max_tokens"
    assert got["message_stream"].stop_reason == "max_tokens"
    # Responses: incomplete, and no token limit named as the reason
    for response in (got["response"], got["response_stream"]):
        assert response.status == "incomplete"
        assert response.incomplete_details is not None
        assert response.incomplete_details.reason is None
    assert got["response_events"][-1] == "response.incomplete"


def test_the_servers_time_budget_is_a_timeout_too() -> None:
    slow = {"text": "tick " * 40, "delay": 0.05, "chunk_size": 5}
    settings = {**SETTINGS, "agents": {"assistant": {"max_run_seconds": 0.15}}}
    with RunningServer(_config(slow), settings, environ=ENV) as srv:
        oa, _ = _clients(srv)
        response = oa.responses.create(model="assistant", input="Hi")
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason is None


def test_a_token_limit_still_names_max_output_tokens() -> None:
    cut = {"text": "partial", "stop_reason": "length"}
    with RunningServer(_config(cut), SETTINGS, environ=ENV) as srv:
        oa, _ = _clients(srv)
        response = oa.responses.create(model="assistant", input="Hi")
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_a_reply_that_reported_an_error_fails_the_request() -> None:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    keep = Keep()
    errors = logging.getLogger("agentrig.server.errors")
    errors.addHandler(keep)
    try:
        _fails_in_each_api()
    finally:
        errors.removeHandler(keep)
    # the error log has each: a stream that failed after its 200 too
    assert any(" 502 upstream_error" in line for line in lines)
    assert any("/v1/chat/completions 200 upstream_error" in line for line in lines)


def _fails_in_each_api() -> None:
    with RunningServer(_refusing("error"), SETTINGS, environ=ENV) as srv:
        oa, an = _clients(srv)
        hi: Any = [{"role": "user", "content": "Hi"}]
        with pytest.raises(openai.APIStatusError) as chat:
            oa.chat.completions.create(model="assistant", messages=hi)
        with pytest.raises(anthropic.APIStatusError) as message:
            an.messages.create(model="assistant", max_tokens=64, messages=hi)
        with pytest.raises(openai.APIError) as streamed:
            list(oa.chat.completions.create(model="assistant", messages=hi, stream=True))
        response = oa.responses.create(model="assistant", input="Hi")
        with oa.responses.stream(model="assistant", input="Hi") as rstream:
            kinds = [event.type for event in rstream]
    assert chat.value.status_code == 502
    assert message.value.status_code == 502
    assert "reported an error" in str(streamed.value)
    assert response.status == "failed"
    assert response.error is not None
    assert response.error.code == "server_error"
    assert kinds[-1] == "response.failed"
