"""An installed provider distribution whose API streams NDJSON (issue 37 point 2).

The distribution is written the way the provider guide says -- ``HttpProvider`` with
``stream_format = "ndjson"``, its factory named by an ``agentrig.providers`` entry point --
and installed as pip leaves one (a ``.dist-info`` with ``entry_points.txt`` on the path).
It passes the provider conformance suite in served mode (the suite's own loopback server:
``application/x-ndjson``, chunked, the stream cut into 5-byte writes), and ``agentrig run``
answers through it in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from agentrig.llm import ModelRegistry, Provider, ProviderConfig
from agentrig.testing import MockProviderServer, MockReply, MockRequest
from agentrig.testing.conformance_provider import (
    RETRY_AFTER,
    SERVED_SPLIT,
    SLOW_FIRST_DELTA,
    TEXT,
    TEXT_DELTAS,
    TEXT_USAGE,
    TOOL_CALLS,
    TOOL_USAGE,
    ProviderConformance,
    Scenario,
)

DIST = "agentrig-lines"
AGENTRIG = str(Path(sys.executable).with_name("agentrig"))
SPLIT = SERVED_SPLIT

PROVIDER = '''
"""A provider for the "lines" API: POST /v1/chat, streamed as one JSON object per line."""

from typing import Any

from agentrig.llm import (
    AssistantMessage,
    FinishChunk,
    ModelResponse,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    UsageChunk,
)
from agentrig.llm.http import HttpProvider, HttpProviderOptions


class LinesOptions(HttpProviderOptions):
    base_url: str = "https://lines.example"


def _usage(data):
    counts = data.get("usage")
    return Usage.of(counts["input"], counts["output"]) if counts else None


class LinesProvider(HttpProvider):
    kind = "lines"
    path = "/v1/chat"
    options_model = LinesOptions
    stream_format = "ndjson"

    def build_body(self, request, *, stream):
        messages = [{"role": m.role, "text": m.text} for m in request.messages]
        tools = [{"name": t.name, "parameters": t.parameters} for t in request.tools]
        return {"model": request.model, "messages": messages, "tools": tools, "stream": stream}

    def parse_response(self, data, *, request_id):
        content: list[Any] = []
        if data.get("text"):
            content.append(TextBlock(text=data["text"]))
        for call in data.get("calls", ()):
            content.append(
                ToolCallBlock(id=call["id"], name=call["name"], arguments=call["arguments"])
            )
        stop = "tool_calls" if data.get("calls") else "end"
        message = AssistantMessage(content=tuple(content), stop_reason=stop, usage=_usage(data))
        return ModelResponse(message=message, request_id=request_id)

    def parse_event(self, data):
        kind = data["type"]
        if kind == "text":
            return [TextDelta.of(data["text"])]
        if kind == "call":
            return [ToolCallStart(index=data["index"], id=data["id"], name=data["name"])]
        if kind == "args":
            return [ToolCallDelta(index=data["index"], arguments=data["piece"])]
        usage = _usage(data)
        stop = "tool_calls" if data.get("calls") else "end"
        return [*([UsageChunk(usage=usage)] if usage else []), FinishChunk(stop_reason=stop)]


factory = LinesProvider.factory()
'''


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The distribution on ``sys.path``, as pip installs one; removed afterwards."""
    site = tmp_path_factory.mktemp("site")
    info = site / "agentrig_lines-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentrig.providers]\nlines = lines_api:factory\n")
    (site / "lines_api.py").write_text(PROVIDER, encoding="utf-8")
    sys.path.insert(0, str(site))
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("lines_api", None)


def _usage(scenario: Scenario) -> dict[str, int] | None:
    usage = {Scenario.TEXT: TEXT_USAGE, Scenario.TOOL_CALLS: TOOL_USAGE}.get(scenario)
    return None if usage is None else {"input": usage.prompt, "output": usage.completion}


def lines_reply(scenario: Scenario, request: MockRequest) -> MockReply:
    """The "lines" API's answer to ``request`` in ``scenario``."""
    errors = {
        Scenario.ERROR_429: 429,
        Scenario.ERROR_500: 500,
        Scenario.ERROR_400: 400,
        Scenario.ERROR_401: 401,
    }
    if scenario in errors:
        headers = {"retry-after": f"{RETRY_AFTER:g}"} if scenario is Scenario.ERROR_429 else {}
        status = errors[scenario]
        return MockReply(status=status, body={"error": f"HTTP {status}"}, headers=headers)
    calls = [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in TOOL_CALLS]
    usage = _usage(scenario)
    if not request.body["stream"]:
        whole: dict[str, Any] = {"calls": calls} if scenario is Scenario.TOOL_CALLS else {}
        whole.setdefault("text", "" if scenario is Scenario.TOOL_CALLS else TEXT)
        return MockReply(body={**whole, **({"usage": usage} if usage else {})})
    events: list[dict[str, Any]]
    if scenario is Scenario.SLOW_STREAM:
        return MockReply(
            events=[{"type": "text", "text": SLOW_FIRST_DELTA}], stream_format="ndjson"
        )
    if scenario is Scenario.TOOL_CALLS:
        events = []
        for index, call in enumerate(TOOL_CALLS):
            events.append({"type": "call", "index": index, "id": call.id, "name": call.name})
            events += [{"type": "args", "index": index, "piece": p} for p in call.pieces]
        end: dict[str, Any] = {"type": "end", "calls": True}
    else:
        events = [{"type": "text", "text": delta} for delta in TEXT_DELTAS]
        end = {"type": "end"}
    return MockReply(
        events=[*events, {**end, **({"usage": usage} if usage else {})}], stream_format="ndjson"
    )


def plain_client(**settings: Any) -> httpx.AsyncClient:
    """What a runtime's client factory returns, without its egress policy (loopback only)."""
    return httpx.AsyncClient(timeout=settings.get("timeout"), trust_env=False)


@pytest.mark.usefixtures("installed")
class TestInstalledNdjsonProviderConformance(ProviderConformance):
    model = "lines-1"

    def wire_reply(self, scenario: Scenario, request: MockRequest) -> MockReply:
        return lines_reply(scenario, request)

    def make_provider(self, scenario: Scenario) -> Provider:
        factory = entry_points(group="agentrig.providers")["lines"].load()
        options = {"base_url": self.base_url, "allow_private_base_url": True, "max_retries": 0}
        provider: Provider = factory(
            ProviderConfig(
                id="lines-test",
                kind="lines",
                options=options,
                http=plain_client,
                models=ModelRegistry(),
            )
        )
        return provider


CONFIG = """\
[providers.lines]
kind = "lines"
options = {{ base_url = "{url}", allow_private_base_url = true }}

[agents.main]
provider = "lines"
model = "lines-1"
"""


@pytest.mark.subprocess
def test_agentrig_run_answers_through_the_installed_ndjson_provider(
    installed: Path, tmp_path: Path
) -> None:
    def answer(request: MockRequest) -> MockReply:
        return lines_reply(Scenario.TEXT, request)

    with MockProviderServer(answer, split=3, keep_alives=True) as server:
        (tmp_path / "agentrig.toml").write_text(CONFIG.format(url=server.url), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(installed)}
        done = subprocess.run(
            [AGENTRIG, "run", "-c", "agentrig.toml", "--json", "hi"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["value"] == TEXT
    assert result["invocation"]["usage"]["prompt"] == TEXT_USAGE.prompt
    streamed = [r for r in server.requests if r.body["stream"]]
    assert streamed, "agentrig run did not stream"
    assert streamed[0].headers["accept"] == "application/x-ndjson"


def test_the_served_stream_is_framed_as_a_model_api_frames_it() -> None:
    """What served mode sends: the media type, chunked encoding, keep-alive comments, and a
    body cut into writes smaller than one event (a non-ASCII character cut in two)."""

    def answer(request: MockRequest) -> MockReply:
        fmt: Literal["sse", "ndjson"] = "ndjson" if request.path == "/nd" else "sse"
        return MockReply(events=[{"text": "héllo"}, {"text": "wörld"}], stream_format=fmt)

    with (
        MockProviderServer(answer, split=SPLIT, keep_alives=True) as server,
        httpx.Client(trust_env=False) as client,
    ):
        sse = client.post(f"{server.url}/sse", json={})
        nd = client.post(f"{server.url}/nd", json={})
    assert sse.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert sse.headers["transfer-encoding"] == "chunked"
    assert sse.text == (
        ': keep-alive\n\ndata: {"text": "héllo"}\n\n: keep-alive\n\ndata: {"text": "wörld"}\n\n'
    )
    assert nd.headers["content-type"] == "application/x-ndjson"
    assert nd.text == '{"text": "héllo"}\n{"text": "wörld"}\n'
    # on the wire: HTTP chunks of at most SPLIT bytes, so events and 'é' are cut across reads
    sizes = _chunk_sizes(server_raw(answer, "/sse"))
    assert max(sizes[:-1]) == SPLIT
    assert sizes[-1] == 0
    assert len(sizes) > 2 * len("data: ")  # every event spans several writes


def server_raw(answer: Any, path: str) -> bytes:
    """The raw bytes of one reply, read from a socket until the server closes it."""
    import socket

    with MockProviderServer(answer, split=SPLIT, keep_alives=True) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            conn.sendall(
                f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n"
                "connection: close\r\n\r\n{}".encode()
            )
            raw = b""
            while data := conn.recv(65536):
                raw += data
    return raw


def _chunk_sizes(raw: bytes) -> list[int]:
    body = raw.split(b"\r\n\r\n", 1)[1]
    sizes = []
    while body:
        line, body = body.split(b"\r\n", 1)
        size = int(line, 16)
        sizes.append(size)
        body = body[size + 2 :]
    return sizes
