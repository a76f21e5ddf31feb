"""agentrig-otel: W3C trace context goes out with what a run sends, and events name their span.

Real loopback servers (an OpenAI-compatible provider, an HTTP hook receiver), real command
hook processes; spans from the SDK's in-memory exporter.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from _otel_global import installed_global_spans
from agentrig_otel import Telemetry
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracer

import agentrig
from agentrig.ids import AgentId
from agentrig.kernel import MemorySource, open_runtime
from agentrig.plugin import TRACE_CONTEXT
from agentrig.session import dump_event

pytestmark = pytest.mark.anyio


@agentrig.tool(risk="inspect")
def lookup(city: str) -> str:
    """Look a city's weather up."""
    return f"sunny in {city}"


class Recorder:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.provider = provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.telemetry = Telemetry(provider.get_tracer("agentrig"))

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name.startswith(prefix)]


def ids(span: ReadableSpan) -> tuple[str, str]:
    ctx = span.get_span_context()
    assert ctx is not None
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")


def traceparent_of(span: ReadableSpan) -> str:
    trace_id, span_id = ids(span)
    ctx = span.get_span_context()
    assert ctx is not None
    return f"00-{trace_id}-{span_id}-{int(ctx.trace_flags):02x}"


def names_the_call(traceparent: str, tool: ReadableSpan) -> bool:
    """Whether a request's ``traceparent`` names the tool call it serves: the call's own span,
    or -- in a process where an application installed a global tracer provider -- the span the
    mcp 2.x SDK opens per request through that provider, a child of the call's span."""
    if traceparent == traceparent_of(tool):
        return True
    _, trace_id, span_id, _ = traceparent.split("-")
    call = tool.get_span_context()
    assert call is not None
    for span in installed_global_spans():
        ctx = span.get_span_context()
        if ctx is not None and f"{ctx.trace_id:032x}-{ctx.span_id:016x}" == f"{trace_id}-{span_id}":
            return span.parent is not None and span.parent.span_id == call.span_id
    return False


# ---- a provider on loopback ------------------------------------------------------------


class ChatHandler(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint answering every request with one streamed "hi"."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ChatHandler.seen.append({k.lower(): v for k, v in self.headers.items()})
        chunks = [
            {"model": "llama3.1", "choices": [{"index": 0, "delta": {"content": "hi"}}]},
            {"model": "llama3.1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        payload = data.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        return None


class HookHandler(http.server.BaseHTTPRequestHandler):
    """An HTTP hook receiver that allows everything and keeps the headers it got."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        HookHandler.seen.append({k.lower(): v for k, v in self.headers.items()})
        payload = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        return None


def _serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def chat_port() -> Iterator[int]:
    ChatHandler.seen.clear()
    yield from _serve(ChatHandler)


@pytest.fixture
def hook_port() -> Iterator[int]:
    HookHandler.seen.clear()
    yield from _serve(HookHandler)


def openai_config(port: int) -> dict[str, Any]:
    return {
        "providers": {
            "local": {
                "kind": "openai",
                "options": {
                    "base_url": f"http://127.0.0.1:{port}/v1",
                    "allow_private_base_url": True,
                    "max_retries": 0,
                },
            }
        },
        "agents": {"assistant": {"provider": "local", "model": "llama3.1"}},
    }


async def test_a_provider_request_carries_the_chat_spans_traceparent(chat_port: int) -> None:
    recorder = Recorder()
    async with open_runtime(
        openai_config(chat_port), plugins=[("otel-test", recorder.telemetry)], environ={}
    ) as rt:
        assert rt.services.get(TRACE_CONTEXT) is recorder.telemetry
        result = await rt.agent(AgentId("assistant")).run("Hi")
    assert result.value == "hi"
    (chat,) = recorder.named("chat ")
    (run,) = recorder.named("invoke_agent ")
    assert chat.name == "chat llama3.1"
    assert chat.parent is not None
    assert chat.parent.span_id == run.context.span_id
    (headers,) = ChatHandler.seen
    assert headers["traceparent"] == traceparent_of(chat)


async def untraced_chat(port: int, plugins: list[tuple[str, object]]) -> None:
    """One run against the loopback provider: neither its request nor an event is traced."""
    async with open_runtime(openai_config(port), plugins=plugins, environ={}) as rt:
        await rt.agent(AgentId("assistant")).run("Hi")
        events = rt.agent(AgentId("assistant")).session.events
    (headers,) = ChatHandler.seen
    assert "traceparent" not in headers
    assert all(e.trace is None for e in events)
    assert all('"trace"' not in dump_event(e) for e in events)


async def test_a_tracer_that_records_nothing_adds_nothing(chat_port: int) -> None:
    # exporter = "global" with no provider set by the application: OpenTelemetry's no-op tracer
    await untraced_chat(chat_port, [("otel-test", Telemetry(NoOpTracer()))])


async def test_without_a_trace_context_nothing_is_added(chat_port: int) -> None:
    await untraced_chat(chat_port, [])


# ---- hooks ---------------------------------------------------------------------------------


def scripted_config(**extra: Any) -> dict[str, Any]:
    script = [
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Rome"}, "id": "call_r"}]},
        {"text": "Sunny."},
    ]
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "agents": {"assistant": {"provider": "local", "model": "scripted-1", "tools": ["lookup"]}},
        **extra,
    }


def memory() -> MemorySource:
    source = MemorySource()
    source.add("tools", "lookup", lookup)
    return source


async def traced_run(cfg: dict[str, Any], inbound: dict[str, str] | None = None) -> Recorder:
    """One run with a recording tracer; inside ``inbound``'s trace context when given."""
    recorder = Recorder()
    async with open_runtime(
        cfg, memory=memory(), plugins=[("otel-test", recorder.telemetry)], environ={}
    ) as rt:
        trace = rt.services.require(TRACE_CONTEXT)
        scope = trace.continue_from(inbound) if inbound else None
        try:
            await rt.agent(AgentId("assistant")).run("Rome?")
        finally:
            if scope is not None:
                scope.close()
    return recorder


@pytest.mark.subprocess
async def test_a_command_hook_sees_traceparent_of_the_tool_span(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    command = f'printf "%s|%s" "$TRACEPARENT" "${{TRACESTATE-unset}}" > {seen}'
    hooks = {"PreToolUse": [{"strategy": "command", "options": {"command": command}}]}
    recorder = await traced_run(scripted_config(hooks=hooks))
    (tool,) = recorder.named("execute_tool ")
    traceparent, tracestate = seen.read_text().split("|")
    assert traceparent == traceparent_of(tool)
    assert tracestate == "unset"


@pytest.mark.subprocess
async def test_a_command_hook_sees_the_tracestate_the_trace_carries(tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    command = f'printf "%s|%s" "$TRACEPARENT" "${{TRACESTATE-unset}}" > {seen}'
    hooks = {"PreToolUse": [{"strategy": "command", "options": {"command": command}}]}
    inbound = {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "vendor=opaque",
    }
    recorder = await traced_run(scripted_config(hooks=hooks), inbound)
    (tool,) = recorder.named("execute_tool ")
    traceparent, tracestate = seen.read_text().split("|")
    assert traceparent == traceparent_of(tool)
    assert traceparent.split("-")[1] == "0af7651916cd43dd8448eb211c80319c"
    assert tracestate == "vendor=opaque"


async def test_an_http_hook_receives_the_traceparent_header(hook_port: int) -> None:
    url = f"http://127.0.0.1:{hook_port}/hook"
    hooks = {
        "PreToolUse": [{"strategy": "http", "options": {"url": url, "allow_private_url": True}}]
    }
    recorder = await traced_run(scripted_config(hooks=hooks))
    (tool,) = recorder.named("execute_tool ")
    (headers,) = HookHandler.seen
    assert headers["traceparent"] == traceparent_of(tool)


# ---- session events ----------------------------------------------------------------------


async def test_session_events_carry_the_ids_of_the_span_that_produced_them() -> None:
    recorder = Recorder()
    async with open_runtime(
        scripted_config(), memory=memory(), plugins=[("otel-test", recorder.telemetry)], environ={}
    ) as rt:
        await rt.agent(AgentId("assistant")).run("Rome?")
        events = rt.agent(AgentId("assistant")).session.events
    (run,) = recorder.named("invoke_agent ")
    (tool,) = recorder.named("execute_tool ")
    first_chat, second_chat = sorted(recorder.named("chat "), key=lambda s: s.start_time or 0)
    by_type: dict[str, list[tuple[str, str] | None]] = {}
    for event in events:
        pair = (event.trace.trace_id, event.trace.span_id) if event.trace else None
        by_type.setdefault(event.type, []).append(pair)
    assert by_type["turn/start"] == [ids(run)]
    assert by_type["turn/end"] == [ids(run)]
    assert by_type["assistant/message"] == [ids(first_chat), ids(second_chat)]
    assert by_type["tool/call"] == [ids(tool)]
    assert by_type["tool/result"] == [ids(tool)]
    # and the stored form names them too: a log line leads to its trace
    line = json.loads(dump_event(next(e for e in events if e.type == "tool/result")))
    assert line["trace"] == {"trace_id": ids(tool)[0], "span_id": ids(tool)[1]}


async def test_the_otel_table_provides_the_trace_context() -> None:
    async with open_runtime(
        scripted_config(otel={"exporter": "none"}), memory=memory(), environ={}
    ) as rt:
        assert isinstance(rt.services.require(TRACE_CONTEXT), Telemetry)
        await rt.agent(AgentId("assistant")).run("Rome?")
        events = rt.agent(AgentId("assistant")).session.events
    assert all(e.trace is not None for e in events if e.type != "system/prompt")


async def test_continue_from_makes_a_run_the_child_of_an_inbound_trace() -> None:
    recorder = Recorder()
    inbound = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    async with open_runtime(
        scripted_config(), memory=memory(), plugins=[("otel-test", recorder.telemetry)], environ={}
    ) as rt:
        trace = rt.services.require(TRACE_CONTEXT)
        scope = trace.continue_from({"traceparent": inbound})
        try:
            await rt.agent(AgentId("assistant")).run("Rome?")
        finally:
            scope.close()
        assert trace.headers() == {}  # closed: nothing current any more
    (run,) = recorder.named("invoke_agent ")
    assert format(run.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert run.parent is not None
    assert format(run.parent.span_id, "016x") == "b7ad6b7169203331"


# ---- MCP servers -------------------------------------------------------------------------

TRACE_SERVER = str(Path(__file__).with_name("_mcp_trace_server.py"))


def mcp_config(server: dict[str, Any]) -> dict[str, Any]:
    script = [{"tool_calls": [{"name": "mcp__demo__trace", "arguments": {}}]}, {"text": "ok"}]
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "agents": {
            "assistant": {"provider": "local", "model": "scripted-1", "tools": ["mcp__demo"]}
        },
        "permissions": {"allow": ["mcp__demo__trace"]},
        "mcp_servers": {"demo": server},
    }


async def mcp_trace(recorder: Recorder, server: dict[str, Any]) -> tuple[ReadableSpan, list[str]]:
    """Run one call of the server's ``trace`` tool inside an application span."""
    tracer = recorder.provider.get_tracer("app")
    with tracer.start_as_current_span("app") as app:
        async with open_runtime(
            mcp_config(server), plugins=[("otel-test", recorder.telemetry)], environ={}
        ) as rt:
            await rt.agent(AgentId("assistant")).run("trace?")
            messages = rt.agent(AgentId("assistant")).session.derive_messages()
    (text,) = [m.text for m in messages if m.role == "tool"]
    assert isinstance(app, ReadableSpan)
    # the server's answer is its last line (agentrig-mcp labels it as untrusted data first)
    return app, text.splitlines()[-1].split()


@pytest.mark.subprocess
@pytest.mark.slow
async def test_an_mcp_stdio_server_gets_the_trace_context() -> None:
    recorder = Recorder()
    app, (env, meta, header) = await mcp_trace(
        recorder, {"command": sys.executable, "args": [TRACE_SERVER]}
    )
    (tool,) = recorder.named("execute_tool ")
    assert env == traceparent_of(app)  # the span the server process started in
    assert names_the_call(meta, tool)  # each request names the call it serves
    assert header == "-"


@pytest.mark.subprocess
@pytest.mark.slow
async def test_an_mcp_http_server_gets_the_calls_traceparent_header() -> None:
    process = await anyio.open_process([sys.executable, TRACE_SERVER, "--http"], env={})
    try:
        assert process.stdout is not None
        with anyio.fail_after(30):
            line = b""
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
        recorder = Recorder()
        _app, (env, meta, header) = await mcp_trace(
            recorder, {"url": url, "allow_private_url": True}
        )
    finally:
        process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
    (tool,) = recorder.named("execute_tool ")
    assert env == "-"
    assert names_the_call(meta, tool)
    assert names_the_call(header, tool)  # not the connection's: the call's
