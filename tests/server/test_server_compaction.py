"""A served conversation compacts: a ``previous_response_id`` chain driven with the official
``openai`` SDK through a real server, on a model with a small window, passes the compaction
threshold -- the history is summarised, the chain goes on, the summary call's tokens are in
the response's usage and count against the run's token budget, and the kept conversation
(what the chat page reopens) shows the summary in place of the turns it replaced."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from server_support import KEY, RunningServer, scripted_config

from agentrig.builtins._scripted import Reply, ScriptedProvider
from agentrig.kernel import compose_step
from agentrig.llm import ModelInfo, ModelRequest, Usage

pytestmark = pytest.mark.integration

ENV = {"SERVER_KEY": KEY}
SUMMARY_MARK = "Summarise the conversation transcript"
WINDOW = 600  # tokens; compaction past half of it


class Conversing(ScriptedProvider):
    """Answers every turn at some length; a summary request gets a short summary."""

    def __init__(self) -> None:
        super().__init__()
        self.summaries: list[ModelRequest] = []

    def _take(self, request: ModelRequest) -> Reply:
        self.requests.append(request)
        head = request.messages[0]
        if head.role == "system" and head.text.startswith(SUMMARY_MARK):
            self.summaries.append(request)
            return Reply(text=f"They talked ({len(self.summaries)}).", usage=Usage.of(40, 10))
        turn = sum(1 for m in request.messages if m.role == "assistant")
        return Reply(text=f"answer {turn}: " + "more words " * 20, usage=Usage.of(5, 5))


class SmallWindow:
    """Registers the scripted model's small context window when the runtime is composed."""

    @compose_step("finish")
    def compose(self, payload: Any) -> None:
        payload.runtime.models.register(ModelInfo(model="m", context_window=WINDOW))


def served(provider: Conversing, budget: int = 100_000) -> RunningServer:
    agents = {
        "assistant": {
            "provider": "local",
            "model": "m",
            "compaction": {"at": 0.5, "keep_last": 2},
        }
    }
    settings = {
        "api_keys": ["$ENV:SERVER_KEY"],
        "agents": {"assistant": {"max_run_tokens": budget}},
    }
    return RunningServer(
        scripted_config(agents=agents),
        settings,
        environ=ENV,
        plugins=[("small-window", SmallWindow())],
        overrides=[("providers", "local", provider)],
    )


def test_a_previous_response_id_chain_compacts_and_goes_on() -> None:
    provider = Conversing()
    with served(provider) as srv:
        client = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        response = client.responses.create(model="assistant", input="question 0", store=True)
        usages = [response.usage]
        for n in range(1, 8):
            response = client.responses.create(
                model="assistant",
                input=f"question {n}",
                previous_response_id=response.id,
                store=True,
            )
            assert response.status == "completed"
            usages.append(response.usage)
        assert response.output_text.startswith("answer")
        headers = {"Authorization": f"Bearer {KEY}"}
        with httpx.Client(base_url=srv.base_url, headers=headers) as http:
            (kept,) = http.get("/v1/sessions").json()["data"]
            assert kept["last_response_id"] == response.id
            messages = http.get(f"/v1/sessions/{kept['id']}").json()["messages"]
    assert provider.summaries  # the window filled up: compacted, once or more
    compacted = len(provider.summaries)
    # every turn after a compaction sends the summary first, never the replaced turns
    last = provider.requests[-1].messages
    assert last[0].role == "user"
    assert last[0].text.endswith(f"They talked ({compacted}).")
    assert not any(m.text == "question 0" for m in last)
    # a compacting turn's usage holds its summary call: 5 + 40 prompt tokens
    inputs = [u.input_tokens for u in usages if u is not None]
    assert inputs.count(45) == compacted
    assert set(inputs) == {5, 45}
    # the kept conversation -- what the chat page reopens -- starts with the summary
    assert messages[0]["role"] == "summary"
    assert messages[0]["text"].endswith(f"They talked ({compacted}).")
    assert messages[-2:] == [
        {"role": "user", "text": "question 7"},
        {
            "role": "assistant",
            "text": response.output_text,
            "tool_calls": [],
            "interrupted": False,
        },
    ]


def test_the_summary_call_counts_against_the_runs_token_budget() -> None:
    provider = Conversing()
    # a round costs 10 tokens, a summary 50: a compacting run passes 40 before its round
    with served(provider, budget=40) as srv:
        client = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        response = client.responses.create(model="assistant", input="question 0", store=True)
        statuses = [response.status]
        while not provider.summaries:
            response = client.responses.create(
                model="assistant",
                input="question",
                previous_response_id=response.id,
                store=True,
            )
            statuses.append(response.status)
    # the compacting run spent its budget on the summary: no round was sent after it
    assert set(statuses[:-1]) == {"completed"}
    assert statuses[-1] == "incomplete"
    assert provider.requests[-1] is provider.summaries[-1]
