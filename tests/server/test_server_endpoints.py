"""The endpoints the official SDKs call besides creating answers, each through the SDK's own
method: ``models.retrieve`` (both SDKs), ``responses.retrieve`` / ``responses.delete``,
``messages.count_tokens``; a request id on every answer; Anthropic's ``message_start`` with
the input tokens; Responses echoing the limit the run really has; ``stream_options`` only
with ``stream``."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from openai.types.responses import ResponseCompletedEvent
from server_support import KEY, RunningServer, scripted_config

from agentrig.llm import Capabilities, FinishChunk, TextDelta, Usage, UsageChunk

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY, "OTHER_KEY": "sk-other-key-987654321"}
SETTINGS = {
    "api_keys": ["$ENV:SERVER_KEY", "$ENV:OTHER_KEY"],
    "agents": {"assistant": {"max_output_tokens": 500}, "helper": {}},
}


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    model = {"provider": "local", "model": "m"}
    agents = {"assistant": {**model, "system_prompt": "Be brief."}, "helper": model}
    with RunningServer(scripted_config(agents=agents), SETTINGS, environ=ENV) as srv:
        yield srv


def oa(server: RunningServer, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}/v1", api_key=key, max_retries=0)


def an(server: RunningServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url, api_key=KEY, max_retries=0)


def test_models_retrieve_with_both_sdks(server: RunningServer) -> None:
    model = oa(server).models.retrieve("assistant")
    assert (model.id, model.owned_by) == ("assistant", "agentrig")
    info = an(server).models.retrieve("helper")
    assert (info.id, info.display_name, info.type) == ("helper", "helper", "model")
    with pytest.raises(openai.NotFoundError, match="did you mean 'assistant'"):
        oa(server).models.retrieve("asistant")


def test_a_stored_response_is_retrieved_and_deleted(server: RunningServer) -> None:
    client = oa(server)
    made = client.responses.create(model="assistant", input="Hi", max_output_tokens=9000)
    # the limit the run really has: the agent's max_output_tokens caps the request's
    assert made.max_output_tokens == 500
    again = client.responses.retrieve(made.id)
    assert again.id == made.id
    assert again.output_text == "Hello there!"
    assert again.status == "completed"
    # another caller cannot see it
    with pytest.raises(openai.NotFoundError):
        oa(server, ENV["OTHER_KEY"]).responses.retrieve(made.id)
    client.responses.delete(made.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(made.id)
    # a streamed one is kept too; one made with store=false is not
    streamed = list(client.responses.create(model="assistant", input="Hi", stream=True))
    completed = streamed[-1]
    assert isinstance(completed, ResponseCompletedEvent)
    assert client.responses.retrieve(completed.response.id).output_text == "Hello there!"
    unstored = client.responses.create(model="assistant", input="Hi", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(unstored.id)


def test_count_tokens_estimates_what_the_agent_would_send(server: RunningServer) -> None:
    client = an(server)
    short = client.messages.count_tokens(
        model="assistant", messages=[{"role": "user", "content": "Hi"}]
    )
    longer = client.messages.count_tokens(
        model="assistant",
        system="Answer in French.",
        messages=[{"role": "user", "content": "word " * 400}],
    )
    # "Be brief." (9) + "Hi" (2) characters: 3 tokens at four characters a token
    assert short.input_tokens == 3
    assert longer.input_tokens == 3 + (len("Answer in French.") + 2000 - 2 + 3) // 4
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="nope", messages=[{"role": "user", "content": "Hi"}])
    with pytest.raises(anthropic.BadRequestError, match="tools"):
        client.messages.count_tokens(
            model="assistant",
            messages=[{"role": "user", "content": "Hi"}],
            tools=[{"name": "f", "input_schema": {"type": "object"}}],
        )


def test_every_answer_has_a_request_id(server: RunningServer) -> None:
    completion = oa(server).chat.completions.with_raw_response.create(
        model="assistant", messages=[{"role": "user", "content": "Hi"}]
    )
    assert completion.request_id is not None
    assert completion.request_id.startswith("req_")
    message = an(server).messages.create(
        model="assistant", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message._request_id is not None
    assert message._request_id.startswith("req_")
    # refusals too, and each answer its own
    ids = set()
    for headers in ({}, {"authorization": f"Bearer {KEY}"}):
        answer = httpx.get(f"{server.base_url}/v1/models", headers=headers)
        assert answer.headers["x-request-id"] == answer.headers["request-id"]
        ids.add(answer.headers["x-request-id"])
    assert len(ids) == 2


def test_stream_options_without_stream_is_refused(server: RunningServer) -> None:
    with pytest.raises(openai.BadRequestError, match="stream_options"):
        oa(server).chat.completions.create(
            model="assistant",
            messages=[{"role": "user", "content": "Hi"}],
            stream_options={"include_usage": True},
        )


def test_message_start_has_the_estimate_when_the_provider_reports_usage_last(
    server: RunningServer,
) -> None:
    with an(server).messages.stream(
        model="assistant", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    ) as stream:
        events = list(stream)
    start = events[0]
    assert start.type == "message_start"
    assert start.message.usage.input_tokens == 3  # the count_tokens estimate


class EarlyUsage:
    """A provider that reports a call's input tokens before its answer, as Anthropic's does."""

    kind = "early-usage"

    def capabilities(self, model: str) -> Capabilities:
        return Capabilities(streaming=True)

    async def complete(self, request: Any, *, signal: Any) -> Any:
        raise NotImplementedError("streamed only")

    async def stream(self, request: Any, *, signal: Any) -> AsyncIterator[Any]:
        yield UsageChunk(usage=Usage(prompt=1234, completion=0, total=1234))
        yield TextDelta(text="Hello")
        yield UsageChunk(usage=Usage(prompt=1234, completion=2, total=1236))
        yield FinishChunk(stop_reason="end")

    async def aclose(self) -> None:
        return None


def test_message_start_has_the_providers_input_tokens() -> None:
    with RunningServer(
        scripted_config(),
        {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}},
        environ=ENV,
        overrides=[("providers", "local", EarlyUsage())],
    ) as srv:
        client = anthropic.Anthropic(base_url=srv.base_url, api_key=KEY, max_retries=0)
        with client.messages.stream(
            model="assistant", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
        ) as stream:
            events = list(stream)
            final = stream.get_final_message()
    assert events[0].type == "message_start"
    assert events[0].message.usage.input_tokens == 1234
    assert final.usage.output_tokens == 2
    assert final.content[0].type == "text"


def test_the_access_log_has_one_line_per_request_and_no_content(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}, "access_log": True}
    with caplog.at_level("INFO", logger="agentrig.server.access"):
        with RunningServer(scripted_config(), settings, environ=ENV) as srv:
            oa(srv).chat.completions.create(
                model="assistant", messages=[{"role": "user", "content": "PURPLE-ELEPHANT"}]
            )
            refused = httpx.get(f"{srv.base_url}/v1/models?secret=QUERY-SECRET")
            assert refused.status_code == 401
        lines = [r.getMessage() for r in caplog.records if r.name == "agentrig.server.access"]
    assert len(lines) == 2
    assert re.fullmatch(
        r"req_[0-9a-f]{24} 127\.0\.0\.1 POST /v1/chat/completions 200 [\d.]+ms", lines[0]
    )
    assert lines[1].split()[0] == refused.headers["x-request-id"]
    assert " GET /v1/models 401 " in lines[1]
    assert not any("PURPLE" in line or "SECRET" in line or KEY in line for line in lines)
