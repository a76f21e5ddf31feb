"""Class: trace headers go only to destinations that opted in (issue 28, point 15).

A runtime with a trace context hands ``traceparent`` to its providers (their base URL), its
HTTP hooks and its MCP servers -- never to a URL a tool fetches with the runtime's HTTP
client, nor to another origin a redirect leads to.  Real loopback servers record what each
request carried.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentrig
from agentrig.builtins._egress_http import trace_origin
from agentrig.ids import AgentId
from agentrig.kernel import compose_step
from agentrig.plugin import TRACE_CONTEXT, Composition

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class _Scope:
    def close(self) -> None:
        return None


class FixedTrace:
    """A trace context whose current headers never change (a stand-in tracer)."""

    def open(self, kind: str, agent_id: str, subject: str, provider: str | None = None) -> _Scope:
        return _Scope()

    def headers(self) -> dict[str, str]:
        return {"traceparent": TRACEPARENT, "tracestate": "k=v"}

    def ids(self) -> tuple[str, str] | None:
        return None

    def continue_from(self, headers: Mapping[str, str]) -> _Scope:
        return _Scope()

    @compose_step("check")
    def provide(self, payload: Composition) -> None:
        payload.runtime.services.provide(TRACE_CONTEXT, self, source="test")


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[tuple[int, str, str | None]]
    redirect_to: str | None = None

    def do_GET(self) -> None:
        port = int(self.headers["host"].rsplit(":", 1)[1])
        self.seen.append((port, self.path, self.headers["traceparent"]))
        if self.path == "/redirect" and self.redirect_to:
            self.send_response(302)
            self.send_header("location", self.redirect_to)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def servers() -> Iterator[tuple[list[tuple[int, str, str | None]], str, str]]:
    seen: list[tuple[int, str, str | None]] = []
    handler: type[_Recorder] = type("H", (_Recorder,), {"seen": seen})
    started = []
    for _ in range(2):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
    a, b = (f"http://127.0.0.1:{s.server_address[1]}" for s in started)
    handler.redirect_to = f"{b}/landed"
    yield seen, a, b
    for server in started:
        server.shutdown()
        server.server_close()


@pytest.mark.anyio
async def test_only_the_opted_in_origin_gets_trace_headers(
    servers: tuple[list[tuple[int, str, str | None]], str, str],
) -> None:
    seen, a, b = servers
    allow = [a.removeprefix("http://"), b.removeprefix("http://")]
    config: dict[str, Any] = {"providers": {}, "agents": {}}
    async with agentrig.open_runtime(config, plugins=[("trace", FixedTrace())]) as rt:
        assert rt.services.get(TRACE_CONTEXT) is not None
        opted = rt.http(allow_private=allow, trace_to=[f"{a}/v1"], follow_redirects=True)
        plain = rt.http(allow_private=allow, follow_redirects=True)
        for client in (opted, plain):
            for url in (f"{a}/x", f"{b}/y", f"{a}/redirect"):
                assert (await client.get(url)).status_code == 200
    port_a, port_b = int(a.rsplit(":", 1)[1]), int(b.rsplit(":", 1)[1])
    carried = {(port, path) for port, path, header in seen if header is not None}
    assert carried == {(port_a, "/x"), (port_a, "/redirect")}
    assert (port_b, "/landed", None) in seen  # a redirect to another origin carries none
    assert all(header in (None, TRACEPARENT) for _, _, header in seen)
    assert len(seen) == 2 * 4


@pytest.mark.anyio
async def test_a_tools_fetch_through_the_runtime_client_carries_no_trace(
    servers: tuple[list[tuple[int, str, str | None]], str, str],
) -> None:
    seen, a, _ = servers

    @agentrig.tool(risk="inspect")
    async def fetch(url: str) -> str:
        """Fetch a page with the runtime's HTTP client."""
        client = RT[0].http(allow_private=[a.removeprefix("http://")])
        return (await client.get(url)).text

    RT: list[Any] = []
    from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider

    provider = ScriptedProvider(
        [Reply(tool_calls=(ScriptedCall("fetch", {"url": f"{a}/page"}),)), "done"]
    )
    memory = agentrig.MemorySource()
    memory.add("tools", "fetch", fetch)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"x": {"provider": "local", "model": "m", "tools": ["fetch"]}},
    }
    async with agentrig.open_runtime(
        config,
        memory=memory,
        overrides=[("providers", "local", provider)],
        plugins=[("trace", FixedTrace())],
    ) as rt:
        RT.append(rt)
        await rt.agent(AgentId("x")).run("go")
    assert [(path, header) for _, path, header in seen] == [("/page", None)]


_HOSTS = st.sampled_from(["api.example.com", "API.example.com", "example.com", "127.0.0.1"])
_SCHEMES = st.sampled_from(["http", "https"])
_PORTS = st.sampled_from(["", ":80", ":443", ":8443"])


@settings(max_examples=300, deadline=None)
@given(_SCHEMES, _HOSTS, _PORTS, _SCHEMES, _HOSTS, _PORTS, st.sampled_from(["", "/v1", "/a?b"]))
def test_property_origins_compare_exactly(
    s1: str, h1: str, p1: str, s2: str, h2: str, p2: str, path: str
) -> None:
    one, two = trace_origin(f"{s1}://{h1}{p1}/x"), trace_origin(f"{s2}://{h2}{p2}{path}")
    assert one is not None
    assert two is not None
    default = {"http": 80, "https": 443}

    def port(scheme: str, given_port: str) -> int:
        return int(given_port[1:]) if given_port else default[scheme]

    same = (s1, h1.lower(), port(s1, p1)) == (s2, h2.lower(), port(s2, p2))
    assert (one == two) is same
    assert trace_origin("ftp://example.com/") is None
    assert trace_origin("not a url") is None
