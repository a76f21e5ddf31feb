"""The pinned transport over real sockets: a loopback HTTP server and a TLS server."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Iterator, Sequence

import httpx
import pytest

from agentrig.host import EgressPolicy, EgressRejectedError, egress_client

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"host={self.headers.get('Host')} path={self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(server: http.server.HTTPServer) -> Iterator[int]:
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def http_port() -> Iterator[int]:
    yield from serve(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler))


class StaticResolver:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        return self.table[host]


async def test_default_policy_refuses_loopback(http_port: int) -> None:
    async with egress_client() as client:
        with pytest.raises(EgressRejectedError):
            await client.get(f"http://127.0.0.1:{http_port}/")


async def test_explicitly_allowed_loopback_server_is_reached(http_port: int) -> None:
    policy = EgressPolicy(allow_private={f"127.0.0.1:{http_port}"})
    resolver = StaticResolver({"svc.test": ["127.0.0.1"]})
    async with egress_client(policy=policy, resolver=resolver) as client:
        direct = await client.get(f"http://127.0.0.1:{http_port}/direct")
        assert direct.text == f"host=127.0.0.1:{http_port} path=/direct"
        named = await client.get(f"http://svc.test:{http_port}/named")
        assert named.text == f"host=svc.test:{http_port} path=/named"
    assert resolver.calls == ["svc.test"]


async def test_pinned_connection_never_reaches_an_unvalidated_port(http_port: int) -> None:
    policy = EgressPolicy(allow_private={"127.0.0.1:1"})
    async with egress_client(policy=policy) as client:
        with pytest.raises(EgressRejectedError):
            await client.get(f"http://127.0.0.1:{http_port}/")


@pytest.fixture
def tls_server() -> Iterator[tuple[int, ssl.SSLContext, list[str | None]]]:
    import trustme  # a dev dependency

    ca = trustme.CA()
    server_cert = ca.issue_cert("pinned.test")
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_cert.configure_cert(server_context)
    seen_sni: list[str | None] = []

    def record(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        seen_sni.append(name)

    server_context.sni_callback = record
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    for port in serve(server):
        yield port, client_context, seen_sni


async def test_tls_verification_and_sni_use_the_logical_host(
    tls_server: tuple[int, ssl.SSLContext, list[str | None]],
) -> None:
    port, client_context, seen_sni = tls_server
    policy = EgressPolicy(allow_private={"127.0.0.1"})
    resolver = StaticResolver({"pinned.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    async with egress_client(policy=policy, resolver=resolver, verify=client_context) as client:
        response = await client.get(f"https://pinned.test:{port}/secure")
        assert response.text == f"host=pinned.test:{port} path=/secure"
        assert seen_sni == ["pinned.test"]
        # Same pinned address, but the certificate does not name this host: refused by TLS.
        with pytest.raises(httpx.ConnectError):
            await client.get(f"https://other.test:{port}/")
        with pytest.raises(httpx.ConnectError):
            await client.get(f"https://127.0.0.1:{port}/")
