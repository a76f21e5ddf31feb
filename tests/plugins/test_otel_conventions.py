"""agentrig-otel's spans against the GenAI semantic conventions.

``CONVENTIONS`` lists, for the three span kinds the plugin writes, every attribute the
conventions require, require conditionally, recommend or make opt-in (semantic-conventions
v1.41, ``model/gen-ai/spans.yaml``, 2026-05: ``span.gen_ai.invoke_agent.internal``,
``span.gen_ai.inference.client``, ``span.gen_ai.execute_tool.internal`` with the groups they
extend).  ``docs/observability.md`` has one table per span kind saying which agentrig sets;
the test checks the tables name exactly these attributes at these levels, and that a real run
(the ``openai`` provider streaming from a loopback server, content capture on) sets every
attribute a table says is set and none it says is not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _otel_conventions import CONVENTIONS, REQ, openai_at, recording
from agentrig_otel import Telemetry
from opentelemetry.sdk.trace import ReadableSpan
from test_otel import memory

from agentrig.ids import AgentId
from agentrig.kernel import open_runtime
from agentrig.testing import MockProviderServer, MockReply, MockRequest

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[2] / "docs" / "observability.md"

#: the heading of each span kind's table in the docs
HEADINGS = {
    "invoke_agent": "`invoke_agent {agent}` (internal):",
    "chat": "`chat {model}` (client):",
    "execute_tool": "`execute_tool {tool}` (internal):",
}
#: what this run cannot show: a failed call or turn (tests/plugins/test_otel.py checks
#: ``error.type`` on an interrupted run), and cache writes (OpenAI reports none;
#: test_cache_writes_are_reported below)
NOT_IN_THIS_RUN = {
    ("chat", "error.type"),
    ("invoke_agent", "error.type"),
    ("chat", "gen_ai.usage.cache_creation.input_tokens"),
    ("invoke_agent", "gen_ai.usage.cache_creation.input_tokens"),
}


def documented() -> dict[str, dict[str, tuple[str, str]]]:
    """span kind -> attribute -> (level, what agentrig does), from the docs' tables."""
    text = DOC.read_text()
    section = text[text.index("### Against the GenAI conventions") :]
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    for kind, heading in HEADINGS.items():
        start = section.index(heading)
        rows: dict[str, tuple[str, str]] = {}
        for line in section[start:].splitlines()[1:]:
            if not line.strip():
                if rows:
                    break
                continue
            match = re.fullmatch(r"\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|", line)
            if match:
                rows[match.group(1)] = (match.group(2).strip(), match.group(3).strip())
        tables[kind] = rows
    return tables


def test_the_docs_tables_list_the_conventions_attributes_at_their_levels() -> None:
    tables = documented()
    for kind, attributes in CONVENTIONS.items():
        assert {name: level for name, (level, _) in tables[kind].items()} == attributes, kind
        for name, (_, ours) in tables[kind].items():
            assert ours.startswith(("set", "not set")), (kind, name, ours)
        required = [n for n, level in attributes.items() if level == REQ]
        assert all(tables[kind][n][1].startswith("set") for n in required)


# ---- a real run: the openai provider streaming from a loopback server ----------------------

RESPONSE_MODEL = "gpt-test-2026-01-01"


def _chunk(response_id: str, choices: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "chat.completion.chunk",
        "created": 1_767_000_000,
        "model": RESPONSE_MODEL,
        "choices": choices,
        **extra,
    }


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }


def answer(request: MockRequest) -> MockReply:
    """A tool call first; once the history has the tools' results, the answer."""
    messages = request.body["messages"]
    if not any(m.get("role") == "tool" for m in messages):
        calls = [
            {
                "index": i,
                "id": f"call_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(
                [("lookup", {"city": "Oslo"}), ("explode", {"reason": "boom"})]
            )
        ]
        delta = {"role": "assistant", "content": None, "tool_calls": calls}
        events: list[Any] = [
            _chunk("chatcmpl-1", [{"index": 0, "delta": delta, "finish_reason": None}]),
            _chunk("chatcmpl-1", [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
            _chunk("chatcmpl-1", [], usage=_usage(20, 5)),
            "[DONE]",
        ]
    else:
        text = {"role": "assistant", "content": "Sunny in Oslo."}
        events = [
            _chunk("chatcmpl-2", [{"index": 0, "delta": text, "finish_reason": None}]),
            _chunk("chatcmpl-2", [{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            _chunk("chatcmpl-2", [], usage=_usage(40, 6)),
            "[DONE]",
        ]
    return MockReply(events=events)


async def run_against(server: MockProviderServer) -> list[ReadableSpan]:
    provider, spans = recording()
    telemetry = Telemetry(provider.get_tracer("agentrig"), capture_content=True)
    config = {
        "providers": openai_at(server.url),
        "agents": {
            "assistant": {
                "provider": "main",
                "model": "gpt-test",
                "description": "Answers weather questions.",
                "system_prompt": "You answer weather questions.",
                "max_tokens": 300,
                "temperature": 0.2,
                "tools": ["lookup", "explode"],
            }
        },
    }
    async with open_runtime(
        config,
        memory=memory(),
        plugins=[("otel-test", telemetry)],
        environ={"OPENAI_API_KEY": "sk-test"},
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Weather in Oslo?")
    return list(spans.get_finished_spans())


def _kind(span: ReadableSpan) -> str:
    return str(dict(span.attributes or {})["gen_ai.operation.name"])


async def test_a_real_run_sets_what_the_tables_say_and_nothing_they_say_it_does_not() -> None:
    with MockProviderServer(answer) as server:
        spans = await run_against(server)
    assert sorted(span.name for span in spans) == [
        "chat gpt-test",
        "chat gpt-test",
        "execute_tool explode",
        "execute_tool lookup",
        "invoke_agent assistant",
    ]
    tables = documented()
    for kind, rows in tables.items():
        of_kind = [dict(s.attributes or {}) for s in spans if _kind(s) == kind]
        for name, (_, ours) in rows.items():
            present = [name in attributes for attributes in of_kind]
            if ours.startswith("not set"):
                assert not any(present), (kind, name)
            elif (kind, name) not in NOT_IN_THIS_RUN:
                assert any(present), (kind, name, ours)
            if name in CONVENTIONS[kind] and CONVENTIONS[kind][name] == REQ:
                assert all(present), (kind, name)


async def test_the_values_are_the_conventions_ones() -> None:
    with MockProviderServer(answer) as server:
        spans = await run_against(server)
        port = int(server.url.rsplit(":", 1)[1])
    run = next(s for s in spans if s.name == "invoke_agent assistant")
    first, second = sorted(
        (s for s in spans if s.name == "chat gpt-test"), key=lambda s: s.start_time or 0
    )
    chat = dict(first.attributes or {})
    assert chat["gen_ai.provider.name"] == "openai"
    assert chat["gen_ai.request.model"] == "gpt-test"
    assert chat["gen_ai.response.model"] == RESPONSE_MODEL
    assert chat["gen_ai.response.id"] == "chatcmpl-1"
    assert chat["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert dict(second.attributes or {})["gen_ai.response.finish_reasons"] == ("stop",)
    assert (chat["server.address"], chat["server.port"]) == ("127.0.0.1", port)
    assert (chat["gen_ai.request.max_tokens"], chat["gen_ai.request.temperature"]) == (300, 0.2)
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 4
    assert chat["gen_ai.usage.reasoning.output_tokens"] == 2
    turn = dict(run.attributes or {})
    assert turn["gen_ai.request.model"] == "gpt-test"  # what was asked for ...
    assert turn["gen_ai.response.model"] == RESPONSE_MODEL  # ... beside what answered
    assert turn["gen_ai.provider.name"] == "openai"
    assert turn["gen_ai.response.finish_reasons"] == ("stop",)
    assert turn["gen_ai.agent.description"] == "Answers weather questions."
    # content in the conventions' message schema
    assert json.loads(str(turn["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}
    ]
    outputs = json.loads(str(turn["gen_ai.output.messages"]))
    calls = [("lookup", {"city": "Oslo"}), ("explode", {"reason": "boom"})]
    assert outputs[0] == {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": f"call_{name}", "name": name, "arguments": arguments}
            for name, arguments in calls
        ],
        "finish_reason": "tool_call",
    }
    assert outputs[-1] == {
        "role": "assistant",
        "parts": [{"type": "text", "content": "Sunny in Oslo."}],
        "finish_reason": "stop",
    }
    assert json.loads(str(turn["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "You answer weather questions."}
    ]
    tools = {s.name: dict(s.attributes or {}) for s in spans if _kind(s) == "execute_tool"}
    assert tools["execute_tool lookup"]["gen_ai.tool.type"] == "function"
    assert tools["execute_tool lookup"]["gen_ai.tool.description"] == "Look a city's weather up."
    assert tools["execute_tool explode"]["error.type"] == "RuntimeError"


async def test_cache_writes_are_reported() -> None:
    provider, spans = recording()
    telemetry = Telemetry(provider.get_tracer("agentrig"))
    usage = {"prompt": 50, "completion": 5, "cache_read": 10, "cache_write": 30}
    script = [{"text": "Hi.", "usage": usage}]
    config = {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "agents": {"assistant": {"provider": "local", "model": "m"}},
    }
    async with open_runtime(config, plugins=[("otel-test", telemetry)], environ={}) as rt:
        await rt.agent(AgentId("assistant")).run("hi")
    for span in spans.get_finished_spans():
        attributes = dict(span.attributes or {})
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 30, span.name
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == 10, span.name
