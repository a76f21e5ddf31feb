"""Cross-site requests (issue 28, point 7): what a web page in the user's browser can make a
default server (loopback, no keys) do -- nothing.  A body must be JSON by its content type
(415), the Host must be the server's (421: DNS rebinding), a foreign Origin is refused (403),
and a browser reaches the API only from the chat page of this launch (its token) or an
allowed origin.  Every case is a real request over a socket to a real server."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_support import RunningServer, scripted_config

pytestmark = pytest.mark.integration

CHAT = {"model": "assistant", "messages": [{"role": "user", "content": "Hi"}]}
MESSAGES = {**CHAT, "max_tokens": 10}
RESPONSES = {"model": "assistant", "input": "Hi"}
POSTS = [
    ("/v1/chat/completions", CHAT),
    ("/v1/messages", MESSAGES),
    ("/v1/responses", RESPONSES),
    ("/v1/approvals/apr_x", {"decision": "allow"}),
]
# every content type a page can send without a preflight, and near-misses of JSON
NOT_JSON = [
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "text/json",
    "application/jsonp",
    "application/x-json",
    "application/json-patch+json",
    "application/ld+json",
    "json",
    "",
]
FOREIGN_HOSTS = [
    "evil.example",
    "evil.example:{port}",
    "127.0.0.1.evil.example:{port}",
    "localhost.evil.example",
    "rebind.127.0.0.1.nip.io:{port}",
    "10.0.0.1:{port}",
    "0.0.0.0:{port}",
    "192.168.1.1",
    "[2001:db8::1]:{port}",
    "localhost:notaport",
    "127.0.0.1:{port}/path",
    "user@127.0.0.1:{port}",
    "",
]
OWN_HOSTS = [
    "127.0.0.1:{port}",
    "127.0.0.1",
    "localhost:{port}",
    "LOCALHOST:{port}",
    "localhost.:{port}",
    "[::1]:{port}",
]
FOREIGN_ORIGINS = [
    "http://evil.example",
    "https://evil.example",
    "null",
    "http://127.0.0.1:{other}",
    "https://127.0.0.1:{port}",
    "http://localhost:{port}",  # another origin than the one the request was sent to
    "http://127.0.0.1:{port}.evil.example",
    "http://127.0.0.1:{port}/path",
    "file://",
    "chrome-extension://abcdefghijklmnop",
]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    settings = {"agents": {"assistant": {}}, "allowed_hosts": ["agents.internal"], "ui": True}
    with RunningServer(scripted_config(), settings) as srv:
        yield srv


def raw(port: int, request: bytes) -> bytes:
    """Send ``request`` as is and read the whole answer (the server closes or answers once)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or not _complete(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return data


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    found = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
    return found is not None and len(body) >= int(found[1])


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize("content_type", NOT_JSON)
@pytest.mark.parametrize(("path", "body"), POSTS)
def test_a_body_that_is_not_json_by_its_type_is_415(
    server: RunningServer, path: str, body: dict[str, object], content_type: str
) -> None:
    import json

    headers = {"content-type": content_type} if content_type else {}
    answer = httpx.post(server.base_url + path, content=json.dumps(body), headers=headers)
    assert answer.status_code == 415, (path, content_type, answer.text)
    assert "application/json" in answer.text


def test_json_with_parameters_or_in_capitals_is_accepted(server: RunningServer) -> None:
    import json

    for content_type in ("application/json", "Application/JSON; charset=utf-8"):
        answer = httpx.post(
            server.base_url + "/v1/chat/completions",
            content=json.dumps(CHAT),
            headers={"content-type": content_type},
        )
        assert answer.status_code == 200, answer.text


def test_the_cross_site_text_plain_post_runs_nothing(server: RunningServer) -> None:
    """The reported attack: a form or fetch() with text/plain from another site."""
    body = '{"model":"assistant","messages":[{"role":"user","content":"rm -rf ~"}]}'
    cross = httpx.post(
        server.base_url + "/v1/chat/completions",
        content=body,
        headers={"content-type": "text/plain", "origin": "http://evil.example"},
    )
    assert cross.status_code == 403
    assert cross.json()["error"]["code"] == "origin_not_allowed"
    no_origin = httpx.post(
        server.base_url + "/v1/chat/completions",
        content=body,
        headers={"content-type": "text/plain"},
    )
    assert no_origin.status_code == 415


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
@pytest.mark.parametrize("path", ["/health", "/v1/models", "/"])
def test_a_foreign_host_is_421_on_every_route(server: RunningServer, host: str, path: str) -> None:
    host = host.format(port=server.port)
    answer = raw(
        server.port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    )
    assert status_of(answer) in (400, 421), (host, answer)  # h11 itself refuses a few (400)


def test_a_foreign_host_cannot_post_a_run(server: RunningServer) -> None:
    sdk = openai.OpenAI(
        base_url=f"{server.base_url}/v1",
        api_key="unused",
        max_retries=0,
        default_headers={"host": "evil.example"},
    )
    with pytest.raises(openai.APIStatusError) as info:
        sdk.chat.completions.create(model="assistant", messages=[{"role": "user", "content": "x"}])
    assert info.value.status_code == 421
    claude = anthropic.Anthropic(
        base_url=server.base_url,
        api_key="unused",
        max_retries=0,
        default_headers={"host": "evil.example"},
    )
    with pytest.raises(anthropic.APIStatusError) as refused:
        claude.messages.create(
            model="assistant", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
    assert refused.value.status_code == 421
    assert refused.value.body is not None


def test_a_request_without_host_is_refused(server: RunningServer) -> None:
    answer = raw(server.port, b"GET /v1/models HTTP/1.0\r\n\r\n")
    assert status_of(answer) in (400, 421)


@pytest.mark.parametrize("host", [*OWN_HOSTS, "agents.internal", "AGENTS.internal:8080"])
def test_the_servers_own_and_configured_names_are_served(server: RunningServer, host: str) -> None:
    host = host.format(port=server.port)
    answer = raw(
        server.port,
        f"GET /v1/models HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode(),
    )
    assert status_of(answer) == 200, (host, answer)


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
@pytest.mark.parametrize("path", ["/health", "/v1/models", "/"])
def test_a_foreign_origin_is_refused(server: RunningServer, origin: str, path: str) -> None:
    origin = origin.format(port=server.port, other=server.port + 1)
    answer = httpx.get(server.base_url + path, headers={"origin": origin})
    assert answer.status_code == 403, (origin, answer.text)


def page_token(server: RunningServer) -> str:
    page = httpx.get(server.base_url + "/")
    found = re.search(r'name="agentrig-page-token" content="([^"]+)"', page.text)
    assert found is not None
    return found[1]


def test_a_browser_reaches_the_api_only_with_this_launchs_page_token(
    server: RunningServer,
) -> None:
    token = page_token(server)
    assert len(token) >= 40
    assert "{{" not in token
    own = server.base_url
    browser = {"sec-fetch-site": "same-origin", "origin": own}
    refused = [
        browser,
        {**browser, "x-agentrig-page-token": "wrong"},
        {**browser, "x-agentrig-page-token": token[:-1]},
        {"sec-fetch-site": "same-origin", "x-agentrig-page-token": ""},
        {"sec-fetch-site": "cross-site", "x-agentrig-page-token": token},
        {"sec-fetch-site": "same-site", "x-agentrig-page-token": token},
        {"origin": own},
    ]
    for headers in refused:
        answer = httpx.get(own + "/v1/models", headers=headers)
        assert answer.status_code == 403, (headers, answer.text)
        assert answer.json()["error"]["code"] == "browser_request_refused"
    allowed = httpx.post(
        own + "/v1/chat/completions",
        json=CHAT,
        headers={**browser, "x-agentrig-page-token": token},
    )
    assert allowed.status_code == 200, allowed.text
    # typed into the address bar: a navigation nobody else started
    assert httpx.get(own + "/v1/models", headers={"sec-fetch-site": "none"}).status_code == 200
    # the SDKs (no browser headers) need no token
    sdk = openai.OpenAI(base_url=f"{own}/v1", api_key="unused", max_retries=0)
    assert [m.id for m in sdk.models.list()] == ["assistant"]


def test_every_launch_has_its_own_token_and_the_page_is_not_cached(server: RunningServer) -> None:
    page = httpx.get(server.base_url + "/")
    assert page.headers["cache-control"] == "no-store"
    with RunningServer(scripted_config(), {"agents": {"assistant": {}}, "ui": True}) as other:
        assert page_token(other) != page_token(server)
        # a token of another launch is refused
        stale = httpx.get(
            other.base_url + "/v1/models",
            headers={"sec-fetch-site": "same-origin", "x-agentrig-page-token": page_token(server)},
        )
        assert stale.status_code == 403


def test_without_the_page_a_browser_is_refused_and_allowed_origins_are_served() -> None:
    settings = {"agents": {"assistant": {}}, "allowed_origins": ["https://chat.example"]}
    with RunningServer(scripted_config(), settings) as srv:
        no_page = httpx.get(srv.base_url + "/v1/models", headers={"sec-fetch-site": "same-origin"})
        assert no_page.status_code == 403
        listed = httpx.get(
            srv.base_url + "/v1/models",
            headers={"origin": "https://chat.example", "sec-fetch-site": "cross-site"},
        )
        assert listed.status_code == 200
        other = httpx.get(
            srv.base_url + "/v1/models", headers={"origin": "https://chat.example:8443"}
        )
        assert other.status_code == 403
        # a browser on that origin can send JSON: the preflight is answered, the answer readable
        preflight = httpx.options(
            srv.base_url + "/v1/chat/completions",
            headers={
                "origin": "https://chat.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type, authorization",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://chat.example"
        posted = httpx.post(
            srv.base_url + "/v1/chat/completions",
            json=CHAT,
            headers={"origin": "https://chat.example"},
        )
        assert posted.status_code == 200
        assert posted.headers["access-control-allow-origin"] == "https://chat.example"
        refused = httpx.options(
            srv.base_url + "/v1/chat/completions",
            headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
        )
        assert refused.status_code == 403
        assert "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("allowed_hosts", ["http://evil.example"]),
        ("allowed_hosts", ["evil.example:8400"]),
        ("allowed_hosts", ["*"]),
        ("allowed_hosts", ["*.example"]),
        ("allowed_hosts", [""]),
        ("allowed_origins", ["evil.example"]),
        ("allowed_origins", ["http://evil.example/path"]),
        ("allowed_origins", ["*"]),
        ("allowed_origins", ["ftp://evil.example"]),
        ("allowed_origins", ["null"]),
    ],
)
def test_host_and_origin_settings_are_checked(key: str, value: list[str]) -> None:
    from agentrig_server import parse_settings

    from agentrig.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        parse_settings({key: value})
    assert f"server.{key}" in str(info.value)


@pytest.fixture(scope="module")
def http(server: RunningServer) -> Iterator[httpx.Client]:
    """One client for the property tests (a new one per request costs more than the request)."""
    with httpx.Client(base_url=server.base_url, timeout=10) as client:
        yield client


LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
NAMES = st.lists(LABEL, min_size=1, max_size=4).map(".".join)
PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def served_locally(name: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name in ("localhost", "agents.internal")


@PROPERTY
@given(name=NAMES, port=st.none() | st.integers(1, 65535))
def test_any_other_host_name_is_421(http: httpx.Client, name: str, port: int | None) -> None:
    host = name if port is None else f"{name}:{port}"
    answer = http.get("/v1/models", headers={"host": host})
    assert answer.status_code == (200 if served_locally(name) else 421), host


@PROPERTY
@given(scheme=st.sampled_from(["http", "https"]), name=NAMES, port=st.integers(1, 65535))
def test_any_other_origin_is_403(http: httpx.Client, scheme: str, name: str, port: int) -> None:
    origin = f"{scheme}://{name}:{port}"
    own = scheme == "http" and name == "127.0.0.1" and port == http.base_url.port
    answer = http.get("/health", headers={"origin": origin})
    assert answer.status_code == (200 if own else 403), origin


@PROPERTY
@given(
    media=st.from_regex(r"[a-z]{1,12}/[a-z0-9.+-]{1,20}", fullmatch=True),
    params=st.sampled_from(["", "; charset=utf-8", ";x=1"]),
)
def test_any_other_content_type_is_415(http: httpx.Client, media: str, params: str) -> None:
    answer = http.post(
        "/v1/chat/completions",
        content=b'{"model":"assistant","messages":[{"role":"user","content":"Hi"}]}',
        headers={"content-type": media + params},
    )
    assert answer.status_code == (200 if media == "application/json" else 415), media
