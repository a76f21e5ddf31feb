"""The GenAI semantic conventions' attributes of the three span kinds agentrig-otel writes.

semantic-conventions v1.41 (``model/gen-ai/spans.yaml``, 2026-05, the last release that kept
the GenAI conventions in the main repository): ``span.gen_ai.invoke_agent.internal``,
``span.gen_ai.inference.client`` and ``span.gen_ai.execute_tool.internal``, each with the
attribute groups it extends; every attribute with its requirement level.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["COND", "CONVENTIONS", "OPT", "REC", "REQ", "openai_at", "recording"]


def recording() -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider whose ended spans the returned exporter keeps."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    return provider, spans


def openai_at(url: str) -> dict[str, Any]:
    """The ``[providers]`` table of an ``openai`` provider talking to a loopback server."""
    options = {"base_url": f"{url}/v1", "allow_private_base_url": True}
    return {"main": {"kind": "openai", "options": options}}


REQ, COND, REC, OPT = "required", "conditionally required", "recommended", "opt-in"
_REQUEST_PARAMS = {
    "gen_ai.request.max_tokens": REC,
    "gen_ai.request.temperature": REC,
    "gen_ai.request.top_p": REC,
    "gen_ai.request.stop_sequences": REC,
    "gen_ai.request.frequency_penalty": REC,
    "gen_ai.request.presence_penalty": REC,
    "gen_ai.request.choice.count": COND,
    "gen_ai.request.seed": COND,
    "gen_ai.output.type": COND,
}
_CONTENT = {
    "gen_ai.system_instructions": OPT,
    "gen_ai.input.messages": OPT,
    "gen_ai.output.messages": OPT,
    "gen_ai.tool.definitions": OPT,
}
CONVENTIONS: dict[str, dict[str, str]] = {
    "invoke_agent": {
        "gen_ai.operation.name": REQ,
        "gen_ai.provider.name": REQ,
        "gen_ai.request.model": COND,
        "error.type": COND,
        "gen_ai.conversation.id": COND,
        "gen_ai.agent.id": COND,
        "gen_ai.agent.name": COND,
        "gen_ai.agent.description": COND,
        "gen_ai.agent.version": COND,
        "gen_ai.data_source.id": COND,
        **_REQUEST_PARAMS,
        "gen_ai.response.finish_reasons": REC,
        "gen_ai.usage.input_tokens": REC,
        "gen_ai.usage.output_tokens": REC,
        "gen_ai.usage.cache_read.input_tokens": REC,
        "gen_ai.usage.cache_creation.input_tokens": REC,
        **_CONTENT,
    },
    "chat": {
        "gen_ai.operation.name": REQ,
        "gen_ai.provider.name": REQ,
        "gen_ai.request.model": COND,
        "error.type": COND,
        "server.port": COND,
        "gen_ai.conversation.id": COND,
        "gen_ai.request.stream": COND,
        "server.address": REC,
        **_REQUEST_PARAMS,
        "gen_ai.request.top_k": REC,
        "gen_ai.response.id": REC,
        "gen_ai.response.model": REC,
        "gen_ai.response.finish_reasons": REC,
        "gen_ai.response.time_to_first_chunk": REC,
        "gen_ai.usage.input_tokens": REC,
        "gen_ai.usage.output_tokens": REC,
        "gen_ai.usage.cache_read.input_tokens": REC,
        "gen_ai.usage.cache_creation.input_tokens": REC,
        "gen_ai.usage.reasoning.output_tokens": REC,
        **_CONTENT,
    },
    "execute_tool": {
        "gen_ai.operation.name": REQ,
        "gen_ai.tool.name": REQ,
        "error.type": COND,
        "gen_ai.tool.call.id": REC,
        "gen_ai.tool.description": REC,
        "gen_ai.tool.type": REC,
        "gen_ai.tool.call.arguments": OPT,
        "gen_ai.tool.call.result": OPT,
    },
}
