"""The pinned transport and the egress client, over a scripted network (no real sockets)."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import httpcore
import httpx
import pytest

from agentrig.host import (
    EgressClient,
    EgressPolicy,
    EgressRejected,
    EgressRejectedError,
    EgressTransport,
    PinnedNetworkBackend,
    egress_client,
    egress_request,
)

pytestmark = pytest.mark.anyio


@attrs.frozen
class SeenRequest:
    address: str
    port: int
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


def parse(address: str, port: int, raw: bytes) -> SeenRequest:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return SeenRequest(address, port, method, target, headers, body)


def reply(status: int = 200, body: bytes = b"ok", **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


Handler = Callable[[SeenRequest], bytes]


class FakeStream(httpcore.AsyncNetworkStream):
    def __init__(self, net: FakeNetwork, address: str, port: int) -> None:
        self.net, self.address, self.port = net, address, port
        self.written = bytearray()
        self.out: bytearray | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.written += buffer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        if self.out is None:
            seen = parse(self.address, self.port, bytes(self.written))
            self.net.requests.append(seen)
            self.out = bytearray(self.net.handler(seen))
        chunk = bytes(self.out[:max_bytes])
        del self.out[:max_bytes]
        return chunk

    async def aclose(self) -> None:
        pass

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore.AsyncNetworkStream:
        self.net.sni.append(server_hostname)
        return self

    def get_extra_info(self, info: str) -> Any:
        return None


class FakeNetwork(httpcore.AsyncNetworkBackend):
    """Records every connect; answers with ``handler`` (keyed on what was connected to)."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.handler: Handler = handler or (lambda seen: reply())
        self.connects: list[tuple[str, int]] = []
        self.requests: list[SeenRequest] = []
        self.sni: list[str | None] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        return FakeStream(self, host, port)

    async def sleep(self, seconds: float) -> None:
        pass


class Resolver:
    """Answers from a table; a list of answer lists is consumed one per call (rebinding)."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[tuple[str, int]] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        answers = self.table[host]
        return answers.pop(0) if len(answers) > 1 else answers[0]


PUBLIC_A = "93.184.216.34"
PUBLIC_B = "151.101.1.1"


def make_client(
    net: FakeNetwork, resolver: Resolver, policy: EgressPolicy | None = None, **kw: Any
) -> EgressClient:
    transport = EgressTransport(policy=policy, resolver=resolver, network_backend=net)
    return EgressClient(transport=transport, **kw)


async def test_connects_only_to_the_validated_address_despite_rebinding() -> None:
    net = FakeNetwork()
    resolver = Resolver({"rebind.example": [[PUBLIC_A], ["127.0.0.1"]]})
    async with make_client(net, resolver) as client:
        response = await client.get("http://rebind.example/a")
        assert response.status_code == 200
        assert net.connects == [(PUBLIC_A, 80)]
        assert resolver.calls == [("rebind.example", 80)]
        seen = net.requests[0]
        assert seen.headers["host"] == "rebind.example"  # logical name, not the IP
        assert seen.target == "/a"
        # The second request resolves again (once) and now gets loopback: refused, unsent.
        with pytest.raises(EgressRejectedError) as info:
            await client.get("http://rebind.example/b")
        assert info.value.rejection.reason == "address.blocked"
        assert info.value.code == "egress.rejected"
        assert resolver.calls == [("rebind.example", 80)] * 2
        assert net.connects == [(PUBLIC_A, 80)]


async def test_mixed_public_and_private_answers_are_refused_before_connecting() -> None:
    net = FakeNetwork()
    resolver = Resolver({"mixed.example": [[PUBLIC_A, "10.0.0.5"]]})
    async with make_client(net, resolver) as client:
        with pytest.raises(EgressRejectedError):
            await client.get("http://mixed.example/")
    assert net.connects == []


async def test_tls_identity_stays_with_the_logical_host() -> None:
    net = FakeNetwork()
    resolver = Resolver({"api.example.com": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        await client.get("https://api.example.com/v1")
    assert net.connects == [(PUBLIC_A, 443)]
    assert net.sni == ["api.example.com"]
    assert net.requests[0].headers["host"] == "api.example.com"


async def test_the_first_validated_address_that_connects_is_used() -> None:
    class FlakyNetwork(FakeNetwork):
        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,  # noqa: ASYNC109
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.AsyncNetworkStream:
            self.connects.append((host, port))
            if host == PUBLIC_A:
                raise httpcore.ConnectError("unreachable")
            return FakeStream(self, host, port)

    net = FlakyNetwork()
    resolver = Resolver({"two.example": [[PUBLIC_A, PUBLIC_B]]})
    async with make_client(net, resolver) as client:
        assert (await client.get("http://two.example/")).status_code == 200
    assert net.connects == [(PUBLIC_A, 80), (PUBLIC_B, 80)]


async def test_backend_refuses_a_connect_without_a_pin() -> None:
    backend = PinnedNetworkBackend(FakeNetwork())
    with pytest.raises(httpcore.ConnectError, match="no validated address"):
        await backend.connect_tcp("example.com", 80)
    with pytest.raises(httpcore.ConnectError, match="Unix"):
        await backend.connect_unix_socket("/var/run/docker.sock")


async def test_resolver_failure_is_a_connect_error() -> None:
    class Failing:
        async def resolve(self, host: str, port: int) -> Sequence[str]:
            raise OSError("NXDOMAIN")

    net = FakeNetwork()
    transport = EgressTransport(resolver=Failing(), network_backend=net)
    async with EgressClient(transport=transport) as client:
        with pytest.raises(httpx.ConnectError, match="NXDOMAIN"):
            await client.get("http://nowhere.example/")


def route(table: dict[str, Handler]) -> Handler:
    return lambda seen: table[seen.address](seen)


async def test_redirect_to_a_private_address_is_refused_at_the_hop() -> None:
    net = FakeNetwork(
        route({PUBLIC_A: lambda s: reply(302, Location="http://169.254.169.254/latest")})
    )
    resolver = Resolver({"start.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        with pytest.raises(EgressRejectedError) as info:
            await client.get("http://start.example/")
    assert info.value.rejection.reason == "address.blocked"
    assert net.connects == [(PUBLIC_A, 80)]


async def test_redirect_to_a_name_resolving_private_is_refused() -> None:
    net = FakeNetwork(route({PUBLIC_A: lambda s: reply(301, Location="http://inner.example/")}))
    resolver = Resolver({"start.example": [[PUBLIC_A]], "inner.example": [["10.1.1.1"]]})
    async with make_client(net, resolver) as client:
        with pytest.raises(EgressRejectedError):
            await client.get("http://start.example/")
    assert resolver.calls == [("start.example", 80), ("inner.example", 80)]
    assert net.connects == [(PUBLIC_A, 80)]


@pytest.mark.parametrize(
    "location",
    ["http://localhost/", "http://2130706433/", "gopher://x.example/", "http://a\\b.example/"],
)
async def test_redirect_locations_are_judged(location: str) -> None:
    net = FakeNetwork(route({PUBLIC_A: lambda s: reply(302, Location=location)}))
    resolver = Resolver({"start.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        with pytest.raises(EgressRejectedError):
            await client.get("http://start.example/")
    assert len(net.connects) == 1


CALLER_HEADERS = {
    "Authorization": "Bearer secret",
    "Cookie": "session=abc",
    "X-Api-Key": "k-123",
    "User-Agent": "agentrig-test/1",
}


async def test_cross_origin_redirect_keeps_only_the_user_agent() -> None:
    net = FakeNetwork(
        route(
            {
                PUBLIC_A: lambda s: reply(302, Location="http://other.example/landing"),
                PUBLIC_B: lambda s: reply(200, b"landed"),
            }
        )
    )
    resolver = Resolver({"start.example": [[PUBLIC_A]], "other.example": [[PUBLIC_B]]})
    async with make_client(net, resolver, auth=("user", "pw")) as client:
        response = await client.get("http://start.example/", headers=CALLER_HEADERS)
    assert response.text == "landed"
    assert [r.status_code for r in response.history] == [302]
    first, second = net.requests
    assert first.headers["authorization"].startswith("Basic ")  # the client auth applied
    assert first.headers["x-api-key"] == "k-123"
    assert second.headers["user-agent"] == "agentrig-test/1"
    assert second.headers["host"] == "other.example"
    for name in ("authorization", "cookie", "x-api-key"):
        assert name not in second.headers


async def test_port_change_is_a_cross_origin_redirect() -> None:
    net = FakeNetwork(
        lambda s: reply(302, Location="http://start.example:8080/") if s.port == 80 else reply(200)
    )
    resolver = Resolver({"start.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        await client.get("http://start.example/", headers=CALLER_HEADERS)
    assert "authorization" not in net.requests[1].headers
    assert net.connects == [(PUBLIC_A, 80), (PUBLIC_A, 8080)]


async def test_same_origin_redirect_keeps_caller_headers() -> None:
    net = FakeNetwork(
        lambda s: reply(302, Location="/next") if s.target == "/" else reply(200, b"there")
    )
    resolver = Resolver({"start.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        response = await client.get("http://start.example/", headers=CALLER_HEADERS)
    assert response.text == "there"
    second = net.requests[1]
    assert second.target == "/next"
    assert second.headers["authorization"] == "Bearer secret"
    assert second.headers["x-api-key"] == "k-123"
    assert second.headers["cookie"] == "session=abc"


async def test_too_many_redirects() -> None:
    counter = iter(range(100))
    net = FakeNetwork(lambda s: reply(302, Location=f"/r{next(counter)}"))
    resolver = Resolver({"loop.example": [[PUBLIC_A]]})
    async with make_client(net, resolver, policy=EgressPolicy(max_redirects=3)) as client:
        with pytest.raises(httpx.TooManyRedirects):
            await client.get("http://loop.example/")
    assert len(net.requests) == 4  # the original request and three followed hops


async def test_303_becomes_get_without_body() -> None:
    net = FakeNetwork(lambda s: reply(303, Location="/done") if s.target == "/form" else reply(200))
    resolver = Resolver({"site.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        await client.post("http://site.example/form", content=b"a=1")
    second = net.requests[1]
    assert (second.method, second.body) == ("GET", b"")
    assert "content-length" not in second.headers


async def test_307_same_origin_keeps_method_and_body() -> None:
    net = FakeNetwork(lambda s: reply(307, Location="/v2") if s.target == "/v1" else reply(200))
    resolver = Resolver({"site.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        await client.post("http://site.example/v1", content=b'{"key": "secret"}')
    second = net.requests[1]
    assert (second.method, second.body) == ("POST", b'{"key": "secret"}')


async def test_307_cross_origin_with_a_body_is_refused() -> None:
    net = FakeNetwork(route({PUBLIC_A: lambda s: reply(307, Location="http://other.example/")}))
    resolver = Resolver({"site.example": [[PUBLIC_A]], "other.example": [[PUBLIC_B]]})
    async with make_client(net, resolver) as client:
        with pytest.raises(EgressRejectedError) as info:
            await client.post("http://site.example/", content=b"secret")
    assert info.value.rejection.reason == "redirect.cross_origin_body"
    assert net.connects == [(PUBLIC_A, 80)]


async def test_https_to_http_downgrade_is_refused() -> None:
    net = FakeNetwork(lambda s: reply(302, Location="http://site.example/plain"))
    resolver = Resolver({"site.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        with pytest.raises(EgressRejectedError) as info:
            await client.get("https://site.example/")
    assert info.value.rejection.reason == "redirect.downgrade"


async def test_redirects_not_followed_when_disabled() -> None:
    net = FakeNetwork(lambda s: reply(302, Location="http://other.example/"))
    resolver = Resolver({"site.example": [[PUBLIC_A]]})
    async with make_client(net, resolver, follow_redirects=False) as client:
        response = await client.get("http://site.example/", headers=CALLER_HEADERS)
    assert response.status_code == 302
    assert response.next_request is not None
    assert "authorization" not in response.next_request.headers


async def test_environment_proxies_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://10.9.9.9:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    net = FakeNetwork()
    resolver = Resolver({"site.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        await client.get("https://site.example/")
        await client.get("http://site.example/")
    assert net.connects == [(PUBLIC_A, 443), (PUBLIC_A, 80)]
    assert all(r.target.startswith("/") for r in net.requests)  # origin-form, not proxy-form


def test_client_refuses_routing_options() -> None:
    for option in ("proxy", "mounts", "transport_ignored", "trust_env"):
        if option == "transport_ignored":
            continue
        with pytest.raises(TypeError):
            egress_client(**{option: None})
    with pytest.raises(TypeError):
        EgressClient(policy=EgressPolicy(), transport=EgressTransport())


async def test_egress_request_returns_rejections_as_values() -> None:
    outcome = await egress_request("GET", "http://169.254.169.254/latest/meta-data/")
    assert isinstance(outcome, EgressRejected)
    assert outcome.reason == "address.blocked"


async def test_egress_request_with_a_client() -> None:
    net = FakeNetwork(lambda s: reply(200, b"hello"))
    resolver = Resolver({"site.example": [[PUBLIC_A]]})
    async with make_client(net, resolver) as client:
        response = await egress_request("GET", "http://site.example/", client=client)
        assert isinstance(response, httpx.Response)
        assert response.text == "hello"
        rejected = await egress_request("GET", "http://localhost/", client=client)
        assert isinstance(rejected, EgressRejected)
        with pytest.raises(TypeError):
            await egress_request("GET", "http://x.example/", client=client, policy=EgressPolicy())
