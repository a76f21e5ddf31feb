"""agentrig's ``chat`` span beside what ``opentelemetry-instrumentation-openai-v2`` (the
OpenTelemetry project's instrumentation of the OpenAI SDK) emits for the same request.

One loopback server plays the Chat Completions API.  agentrig sends its request through its
``openai`` provider; the server keeps the request body; a child process sends the very same
body through the OpenAI SDK instrumented by openai-v2 (with the latest GenAI conventions,
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``) and prints its span.  Every
conventions attribute openai-v2 sets, agentrig sets to the same value; what agentrig adds
beyond it is from the conventions' list too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from _otel_conventions import CONVENTIONS, openai_at, recording
from agentrig_otel import Telemetry

from agentrig.ids import AgentId
from agentrig.kernel import open_runtime
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

MODEL = "gpt-4o-mini-2024-07-18"

#: the child process: the OpenAI SDK, instrumented by openai-v2, sends the body it is given
OPENAI_V2 = r"""
import json, sys
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import openai

spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
OpenAIInstrumentor().instrument(tracer_provider=provider)
url, body = sys.argv[1], json.loads(sys.argv[2])
client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
for _ in client.chat.completions.create(**body):
    pass
(span,) = spans.get_finished_spans()
print(json.dumps({
    "name": span.name,
    "kind": span.kind.name,
    "attributes": {k: list(v) if isinstance(v, tuple) else v for k, v in span.attributes.items()},
}))
"""


def answer(request: MockRequest) -> MockReply:
    def chunk(choices: list[Any], **extra: Any) -> dict[str, Any]:
        head = {"id": "chatcmpl-abc", "object": "chat.completion.chunk", "created": 1}
        return {**head, "model": MODEL, "choices": choices, **extra}

    usage = {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}
    text = {"role": "assistant", "content": "Hello there."}
    return MockReply(
        events=[
            chunk([{"index": 0, "delta": text, "finish_reason": None}]),
            chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            chunk([], usage=usage),
            "[DONE]",
        ]
    )


async def agentrig_span(server: MockProviderServer) -> dict[str, Any]:
    provider, spans = recording()
    config = {
        "providers": openai_at(server.url),
        "agents": {
            "assistant": {"provider": "main", "model": "gpt-4o-mini", "max_tokens": 50},
        },
    }
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    async with open_runtime(
        config, plugins=[("otel-test", telemetry)], environ={"OPENAI_API_KEY": "sk-test"}
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Say hello.")
    (chat,) = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    attributes = {
        k: list(v) if isinstance(v, tuple) else v for k, v in (chat.attributes or {}).items()
    }
    return {"name": chat.name, "kind": chat.kind.name, "attributes": attributes}


def openai_v2_span(server: MockProviderServer, body: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
    env.pop("PYTHONPATH", None)
    run = subprocess.run(
        [sys.executable, "-c", OPENAI_V2, f"{server.url}/v1", json.dumps(body)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    shown: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return shown


async def test_the_chat_span_matches_what_openai_v2_emits_for_the_same_request() -> None:
    with MockProviderServer(answer) as server:
        ours = await agentrig_span(server)
        (request,) = server.requests
        theirs = openai_v2_span(server, request.body)
        assert server.requests[1].body == request.body  # the very same request
    assert ours["name"] == theirs["name"] == "chat gpt-4o-mini"
    assert ours["kind"] == theirs["kind"] == "CLIENT"
    conventions = CONVENTIONS["chat"]
    shared = {k: v for k, v in theirs["attributes"].items() if k in conventions}
    # what openai-v2 sets of the conventions' list, agentrig sets the same
    assert {k: ours["attributes"].get(k) for k in shared} == shared
    assert set(shared) == {
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.response.id",
        "gen_ai.response.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
    }
    # openai-v2 (2.4b0) leaves out of a streamed call what agentrig adds, all from the
    # conventions' list (and agentrig's own provider id)
    assert set(ours["attributes"]) - set(shared) == {
        "gen_ai.conversation.id",
        "gen_ai.request.max_tokens",
        "gen_ai.response.finish_reasons",
        "gen_ai.response.time_to_first_chunk",
        "server.address",
        "server.port",
        "agentrig.provider.id",
    }
    assert ours["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
