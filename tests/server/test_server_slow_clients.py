"""Slow clients and forged caller identity (issue 28, points 8 and 9), over raw sockets.

A request head must arrive within ``header_timeout`` however its bytes trickle in; a body
within ``body_timeout`` (408); a stalled body holds no admission slot.  ``X-Forwarded-For``
and its relatives name the client only when the connection comes from ``trusted_proxies``.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from server_support import RunningServer, scripted_config

pytestmark = pytest.mark.integration

TIMEOUTS = {"header_timeout": 1, "body_timeout": 1}
CHAT = b'{"model":"assistant","messages":[{"role":"user","content":"Hi"}]}'


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    settings = {"agents": {"assistant": {}}, "max_concurrent_per_key": 2, **TIMEOUTS}
    with RunningServer(scripted_config(), settings) as srv:
        yield srv


def connect(srv: RunningServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", srv.port), timeout=10)


def closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Read until the server closes; whether that happened within ``seconds``."""
    start = time.monotonic()
    data = b""
    sock.settimeout(seconds + 5)
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        return False, data
    return time.monotonic() - start <= seconds + 2, data


def head(length: int | None = None, host: str = "127.0.0.1") -> bytes:
    lines = [
        "POST /v1/chat/completions HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
    ]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_connection_that_sends_nothing_is_closed(server: RunningServer) -> None:
    with connect(server) as sock:
        closed, data = closed_within(sock, 1)
    assert closed
    assert data == b""


@pytest.mark.parametrize(
    "trickle",
    [
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 40,
        b"G" * 1 + b"ET /health HT",
        b"GET /health HTTP/1.1\r\n" + b"X-A: b\r\n" * 20,
    ],
)
def test_a_head_trickled_in_slowly_is_cut_off(server: RunningServer, trickle: bytes) -> None:
    start = time.monotonic()
    with connect(server) as sock:
        try:
            for byte in trickle:
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
                if time.monotonic() - start > 6:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while we were still sending: what we want
        closed, _ = closed_within(sock, 1)
    assert closed
    assert time.monotonic() - start < 8


def test_a_second_request_on_a_kept_alive_connection_is_held_to_the_same_deadline(
    server: RunningServer,
) -> None:
    with connect(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.2)
        assert b"200 OK" in sock.recv(65536)
        start = time.monotonic()
        try:
            for byte in b"GET /health HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa":
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed, _ = closed_within(sock, 1)
    assert closed
    assert time.monotonic() - start < 6


@pytest.mark.parametrize("sent", [0, 1, 30])
def test_a_stalled_body_is_answered_408_and_closed(server: RunningServer, sent: int) -> None:
    with connect(server) as sock:
        sock.sendall(head(len(CHAT)) + CHAT[:sent])
        closed, data = closed_within(sock, 2)
    assert closed
    assert data.startswith(b"HTTP/1.1 408"), data
    assert b"request_timeout" in data


def test_a_chunked_body_that_stalls_is_408(server: RunningServer) -> None:
    with connect(server) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mod'
        )
        closed, data = closed_within(sock, 2)
    assert closed
    assert data.startswith(b"HTTP/1.1 408"), data


def test_stalled_bodies_hold_no_admission_slot(server: RunningServer) -> None:
    """Twice the caller's slots of stalled bodies: an honest request still gets through."""
    stalled = [connect(server) for _ in range(4)]
    try:
        for sock in stalled:
            sock.sendall(head(len(CHAT)) + CHAT[:10])
        time.sleep(0.2)
        answer = httpx.post(
            server.base_url + "/v1/chat/completions",
            content=CHAT,
            headers={"content-type": "application/json"},
            timeout=5,
        )
        assert answer.status_code == 200, answer.text
    finally:
        for sock in stalled:
            sock.close()


def test_many_idle_sockets_do_not_lock_out_a_local_client(server: RunningServer) -> None:
    idle = [connect(server) for _ in range(20)]
    try:
        time.sleep(1.5)  # past header_timeout: every one of them is gone
        for sock in idle:
            closed, _ = closed_within(sock, 0.5)
            assert closed
        assert httpx.get(server.base_url + "/v1/models", timeout=5).status_code == 200
    finally:
        for sock in idle:
            sock.close()


FORGED = [
    {"x-forwarded-for": "10.0.0.{i}"},
    {"x-forwarded-for": "127.0.0.{i}"},
    {"x-forwarded-for": "127.0.0.{i}, 127.0.0.1"},
    {"x-real-ip": "127.0.0.{i}"},
    {"forwarded": "for=127.0.0.{i}"},
    {"x-forwarded-for": "::ffff:127.0.0.{i}"},
    {"x-client-ip": "127.0.0.{i}"},
    {"true-client-ip": "127.0.0.{i}"},
]


def test_forwarded_headers_do_not_buy_a_new_rate_limit() -> None:
    settings = {"agents": {"assistant": {}}, "rate_limit_per_minute": 2}
    with RunningServer(scripted_config(), settings) as srv:
        models = srv.base_url + "/v1/models"
        assert [httpx.get(models).status_code for _ in range(2)] == [200, 200]
        # the budget is spent: a forged address would be a fresh bucket (200)
        for header in FORGED:
            for i in range(2, 5):
                forged = {k: v.format(i=i) for k, v in header.items()}
                assert httpx.get(models, headers=forged).status_code == 429, forged


def test_trusted_proxies_turn_forwarded_addresses_on_for_those_proxies_only() -> None:
    settings = {
        "agents": {"assistant": {}},
        "rate_limit_per_minute": 2,
        "trusted_proxies": ["127.0.0.0/8"],
    }
    with RunningServer(scripted_config(), settings) as srv:
        # each forwarded loopback client has its own budget now
        codes = [
            httpx.get(
                srv.base_url + "/v1/models", headers={"x-forwarded-for": f"127.0.0.{i}"}
            ).status_code
            for i in range(2, 8)
        ]
        assert codes == [200] * 6
        # and a forwarded remote client is a remote client: no keys, loopback only
        remote = httpx.get(srv.base_url + "/v1/models", headers={"x-forwarded-for": "10.1.2.3"})
        assert remote.status_code == 403
    other = {**settings, "trusted_proxies": ["10.9.9.9"]}  # we are not that proxy
    with RunningServer(scripted_config(), other) as srv:
        remote = httpx.get(srv.base_url + "/v1/models", headers={"x-forwarded-for": "10.1.2.3"})
        assert remote.status_code == 200


@pytest.mark.parametrize("value", ["10.0.0.300", "proxy.internal", "10.0.0.0/33", "*", ""])
def test_trusted_proxies_must_be_addresses_or_networks(value: str) -> None:
    from agentrig_server import parse_settings

    from agentrig.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        parse_settings({"trusted_proxies": [value]})
    assert "server.trusted_proxies" in str(info.value)
