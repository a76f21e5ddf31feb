"""OAuth for HTTP servers (``[mcp_servers.NAME.oauth]``) against a real authorization server.

The server is the official SDK's own (``mcp.server.auth`` in a FastMCP app, on loopback, see
``_mcp_oauth.py``); the client is the plugin's, on the SDK's ``OAuthClientProvider``.  The
test plays the user's browser: it opens the printed sign-in address with a real HTTP client
and follows the authorization server's redirect to the loopback callback.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _mcp_oauth import AuthServer, Provider, bound, oauth_server
from _mcp_support import one_call_config, tool_ctx
from agentrig_mcp import (
    HttpServerSpec,
    McpClient,
    McpServerUnavailable,
    OAuthSettings,
    oauth_logins,
    parse_settings,
)
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyUrl

from agentrig.errors import ConfigError
from agentrig.ids import ToolId

pytestmark = [pytest.mark.anyio]


class Browser:
    """Where the client sent the user, and a browser that goes there when asked (after a
    wrong callback first, with ``detour``)."""

    def __init__(self, *, follow: bool = True, detour: bool = False) -> None:
        self.follow = follow
        self.detour = detour
        self.urls: list[str] = []
        self.pages: list[tuple[int, str]] = []
        self._send, self._receive = anyio.create_memory_object_stream[str](10)

    def present(self, server: str, url: str, open_browser: bool) -> None:
        assert server == "secure"
        assert not open_browser
        self.urls.append(url)
        self._send.send_nowait(url)

    async def run(self) -> None:
        """Open each sign-in address: the authorization server consents and redirects to the
        callback, which the browser then loads."""
        async with httpx.AsyncClient(trust_env=False) as http:
            async for url in self._receive:
                if not self.follow:
                    continue
                answer = await http.get(url)
                assert answer.status_code in (302, 307), answer.text
                callback = answer.headers["location"]
                if self.detour:
                    wrong = await http.get(callback.replace("state=", "state=x"))
                    self.pages.append((wrong.status_code, wrong.text))
                page = await http.get(callback)
                self.pages.append((page.status_code, page.text))


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[AuthServer]:
    """The protected server; parametrized ``True``, its authorization server is on another
    origin."""
    with oauth_server(Provider(), separate=getattr(request, "param", False)) as running:
        yield running


@asynccontextmanager
async def signed_in(
    url: str, state: Path, browser: Browser, *, sse: bool = False, **oauth: Any
) -> AsyncIterator[McpClient]:
    """A client of the server ``secure`` with OAuth, the browser answering its sign-ins."""
    settings = OAuthSettings(open_browser=False, **oauth)
    spec = HttpServerSpec(
        type="sse" if sse else "http",
        url=url,
        oauth=settings,
        trust_content=True,
        startup_timeout=5,
    )

    async def secret(server: str, reference: str) -> str:
        assert reference == "$ENV:SECURE_SECRET"
        return "s3cret"

    async with anyio.create_task_group() as tg:
        tg.start_soon(browser.run)
        logins = oauth_logins(state, resolve=secret, present=browser.present)
        client = McpClient({"secure": spec}, spawn=tg.start_soon, oauth=logins)
        try:
            yield client
        finally:
            await client.aclose()
            tg.cancel_scope.cancel()


async def whoami(client: McpClient) -> str:
    tools = {t.id: t for t in await client.tools("secure")}
    result = await tools[ToolId("mcp__secure__whoami")].execute({}, tool_ctx())
    assert not result.is_error, result.content
    return str(result.content)


def kept(state: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((state / "oauth" / "secure.json").read_text())
    return data


async def test_sign_in_registers_keeps_tokens_owner_only_and_reuses_them(
    server: AuthServer, tmp_path: Path
) -> None:
    browser = Browser()
    async with signed_in(server.url, tmp_path, browser) as client:
        client_id = await whoami(client)
    provider = server.provider
    assert (provider.registrations, provider.authorizations) == (1, 1)
    assert client_id in provider.clients
    assert len(browser.urls) == 1
    assert browser.urls[0].startswith(server.url[: -len("/mcp")])
    assert browser.pages[-1][0] == 200
    assert "Signed in to MCP server" in browser.pages[-1][1]
    path = tmp_path / "oauth" / "secure.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    data = kept(tmp_path)
    assert data["url"] == server.url
    assert data["client"]["client_id"] == client_id
    assert data["tokens"]["access_token"] in provider.access
    # a new client (a restarted runtime) uses what was kept: no registration, no sign-in
    again = Browser()
    async with signed_in(server.url, tmp_path, again) as client:
        assert await whoami(client) == client_id
    assert (provider.registrations, provider.authorizations, again.urls) == (1, 1, [])


@pytest.mark.parametrize("server", [False, True], ids=["same-origin", "separate"], indirect=True)
async def test_an_expired_token_is_refreshed_without_the_user(
    server: AuthServer, tmp_path: Path
) -> None:
    """A restarted client refreshes at the authorization server that issued the token (kept
    with it: the resource server's origin may not be it)."""
    provider = server.provider
    provider.rotate = False  # the refresh token outlives a refresh that issues none
    async with signed_in(server.url, tmp_path, Browser()) as client:
        await whoami(client)
    old = kept(tmp_path)
    provider.expire_all()
    path = tmp_path / "oauth" / "secure.json"
    path.write_text(json.dumps({**old, "expires_at": time.time() - 60}))
    quiet = Browser()
    async with signed_in(server.url, tmp_path, quiet) as client:
        await whoami(client)
    assert (provider.refreshes, provider.authorizations, quiet.urls) == (1, 1, [])
    now = kept(tmp_path)
    assert now["tokens"]["access_token"] != old["tokens"]["access_token"]
    assert now["tokens"]["refresh_token"] == old["tokens"]["refresh_token"]
    assert now["expires_at"] > 0


async def test_a_refresh_without_a_new_refresh_token_keeps_the_old_one(
    server: AuthServer, tmp_path: Path
) -> None:
    provider = server.provider
    provider.rotate = False  # a refresh issues no new refresh token
    async with signed_in(server.url, tmp_path, Browser()) as client:
        await whoami(client)
        login = client.connection("secure").login
        assert login is not None
        for _ in range(2):
            # the token's lifetime is over, on both sides (the clock is not waited for)
            provider.expire_all()
            login.auth.context.token_expiry_time = time.time() - 1
            await whoami(client)
    # the second refresh used the refresh token the first one left in place
    assert (provider.refreshes, provider.authorizations) == (2, 1)


async def test_a_stray_callback_is_refused_and_the_real_one_taken(
    server: AuthServer, tmp_path: Path
) -> None:
    browser = Browser(detour=True)
    async with signed_in(server.url, tmp_path, browser) as client:
        assert await whoami(client) in server.provider.clients
    (wrong, _), (right, _) = browser.pages
    assert (wrong, right) == (404, 200)


async def test_sign_in_over_the_legacy_sse_transport(tmp_path: Path) -> None:
    with oauth_server(Provider(), sse=True) as server:
        async with signed_in(server.url, tmp_path, Browser(), sse=True) as client:
            assert await whoami(client) in server.provider.clients
    assert server.provider.authorizations == 1


async def test_a_refused_sign_in_says_why(server: AuthServer, tmp_path: Path) -> None:
    server.provider.refuse = "the user said no"
    async with signed_in(server.url, tmp_path, Browser()) as client:
        with pytest.raises(McpServerUnavailable, match="refused the sign-in: the user said no"):
            await client.tools("secure")


async def test_no_sign_in_within_login_timeout(server: AuthServer, tmp_path: Path) -> None:
    async with signed_in(server.url, tmp_path, Browser(follow=False), login_timeout=0.2) as c:
        with pytest.raises(McpServerUnavailable, match=r"within 0.2s \(oauth.login_timeout\)"):
            await c.tools("secure")


async def test_a_registered_client_with_its_secret(server: AuthServer, tmp_path: Path) -> None:
    sock, _ = bound()
    port = sock.getsockname()[1]
    sock.close()  # the port the client's registration names
    server.provider.clients["agentrig-ci"] = OAuthClientInformationFull(
        client_id="agentrig-ci",
        client_secret="s3cret",
        redirect_uris=[AnyUrl(f"http://127.0.0.1:{port}/callback")],
        token_endpoint_auth_method="client_secret_post",
    )
    async with signed_in(
        server.url,
        tmp_path,
        Browser(),
        callback_port=port,
        client_id="agentrig-ci",
        client_secret="$ENV:SECURE_SECRET",
    ) as client:
        assert await whoami(client) == "agentrig-ci"
    assert server.provider.registrations == 0


def test_oauth_keys_are_checked() -> None:
    servers = {"s": {"url": "https://x.example/mcp", "oauth": {"client_id": "c"}}}
    specs, settings = parse_settings(servers, {"state_dir": "state"}, source=None)
    spec = specs["s"]
    assert isinstance(spec, HttpServerSpec)
    assert spec.oauth is not None
    assert (spec.oauth.client_id, settings.state_dir) == ("c", "state")
    # Claude Code's spelling in .mcp.json
    oauth = {"clientId": "c", "callbackPort": 8765}
    claude: dict[str, Any] = {"s": {"type": "http", "url": "https://x.example/mcp", "oauth": oauth}}
    spec = parse_settings(claude, {}, source=None)[0]["s"]
    assert isinstance(spec, HttpServerSpec)
    assert spec.oauth == OAuthSettings(client_id="c", callback_port=8765)
    bad: list[dict[str, Any]] = [
        {"url": "https://x.example/mcp", "oauth": {"client_secret": "$ENV:S"}},
        {"url": "https://x.example/mcp", "oauth": {"client_id": "c", "client_secret": "literal"}},
        {"url": "https://x.example/mcp", "oauth": {"scopes": "x"}},
        {"command": "server", "oauth": {}},
    ]
    for entry in bad:
        with pytest.raises(ConfigError, match="oauth"):
            parse_settings({"s": entry}, {}, source=None)


@pytest.mark.slow  # a whole runtime: over a second on a loaded machine
async def test_a_runtime_signs_in_through_config(
    server: AuthServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``oauth`` in ``[mcp_servers.*]``: the address is printed on stderr, the tokens kept in
    ``[mcp] state_dir``; the sign-in's requests go through the egress policy."""
    import agentrig
    from agentrig.ids import AgentId

    config = one_call_config(
        "secure",
        "whoami",
        url=server.url,
        allow_private_url=True,
        trust_content=True,
        oauth={"open_browser": False},
    )
    config["mcp"] = {"state_dir": str(tmp_path / "state")}

    async def browse() -> None:
        printed = ""
        while "open:\n" not in printed:
            await anyio.sleep(0.02)  # the runtime prints from its own task
            printed += capsys.readouterr().err
        url = printed.split("open:\n", 1)[1].split()[0]
        async with httpx.AsyncClient(trust_env=False) as http:
            answer = await http.get(url)
            await http.get(answer.headers["location"])

    async with anyio.create_task_group() as tg:
        tg.start_soon(browse)
        async with agentrig.open_runtime(config) as rt:
            await rt.agent(AgentId("assistant")).run("who am I")
            messages = rt.agent(AgentId("assistant")).session.derive_messages()
    assert [m.text for m in messages if m.role == "tool"] == [next(iter(server.provider.clients))]
    assert kept(tmp_path / "state")["tokens"]["access_token"] in server.provider.access


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the commands run in their own process
async def test_login_opens_the_browser_and_logout_forgets(
    server: AuthServer, tmp_path: Path
) -> None:
    """``agentrig mcp login NAME`` prints the address and opens the browser (``BROWSER``
    names a stand-in that consents and follows the redirect); ``logout`` forgets."""
    import sys

    from _mcp_support import AGENTRIG

    config = tmp_path / "agentrig.toml"
    config.write_text(
        f'[mcp_servers.secure]\nurl = "{server.url}"\nallow_private_url = true\noauth = {{}}\n'
    )
    browser = Path(__file__).with_name("_mcp_browser.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    env["BROWSER"] = f"{sys.executable} {browser} %s"
    with anyio.fail_after(120):
        login = await anyio.run_process(
            [AGENTRIG, "mcp", "login", "-c", str(config), "secure"], env=env, check=False
        )
    assert login.returncode == 0, login.stderr.decode()[-2000:]
    assert b"asks you to sign in; open:\n  " + server.url.rsplit("/", 1)[0].encode() in login.stderr
    kept_file = tmp_path / ".agentrig" / "mcp" / "oauth" / "secure.json"
    assert f"signed in to 'secure' (kept in {kept_file})".encode() in login.stdout
    assert kept(tmp_path / ".agentrig" / "mcp")["tokens"]["access_token"] in server.provider.access
    logout = [AGENTRIG, "mcp", "logout", "-c", str(config), "secure"]
    done = await anyio.run_process(logout, env=env)
    assert b"signed out of 'secure'" in done.stdout
    assert not kept_file.exists()
    again = await anyio.run_process(logout, env=env)
    assert b"no sign-in kept for 'secure'" in again.stdout
