"""OAuth sign-in for HTTP servers (``[mcp_servers.NAME.oauth]``), on the SDK's client.

The SDK's :class:`~mcp.client.auth.OAuthClientProvider` (an ``httpx2.Auth`` on the server's
HTTP client) runs the MCP authorization flow: on a 401 it discovers the protected resource
and its authorization server (RFC 9728, RFC 8414), registers a client when none is
configured (RFC 7591), sends the user to the authorization endpoint with PKCE, exchanges the
code, and refreshes an expired token with its refresh token.  This module gives it:

* the storage -- one owner-only JSON file per server under ``<[mcp] state_dir>/oauth/``
  (the host's :class:`~agentrig.host.OwnerOnlyStore`): the client registration, the tokens
  with when they expire, and the authorization server's metadata, so a restarted runtime
  refreshes instead of asking the user again;
* the redirect -- the sign-in address is printed (and opened in the browser unless
  ``open_browser = false``), and a one-shot listener on ``127.0.0.1:<callback_port>`` takes
  the browser's return, accepting only the ``state`` it was sent with.

Before a session starts, :meth:`OAuthLogin.sign_in` sends one request through the client so
that a sign-in waiting for the user happens outside the server's ``startup_timeout``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from anyio.abc import SocketListener, SocketStream
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, ValidationError

from agentrig import __version__ as agentrig_version
from agentrig.diagnostics import get_logger
from agentrig.host import OwnerOnlyStore
from agentrig_mcp._config import HttpServerSpec, OAuthSettings
from agentrig_mcp._errors import McpAuthError

__all__ = ["OAuthFor", "OAuthLogin", "OAuthStore", "Present", "oauth_logins", "print_sign_in"]

Present = Callable[[str, str, bool], None]
"""``present(server, url, open_browser)``: show the user where to sign in."""

OAuthFor = Callable[[str, HttpServerSpec], Awaitable["OAuthLogin"]]
"""``oauth(server, spec)``: the sign-in of a server whose spec has ``oauth``."""

ResolveSecret = Callable[[str, str], Awaitable[str]]
"""``resolve(server, reference)``: the value of ``oauth.client_secret``."""

#: a browser's request to the callback is one line and some headers
_MAX_REQUEST = 16 * 1024
_READ_TIMEOUT = 10.0
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>agentrig</title>"
    "<p>{text}</p><p>You can close this tab.</p>"
)


def print_sign_in(server: str, url: str, open_browser: bool) -> None:
    """Print the sign-in address on stderr and, when asked, open it in the browser."""
    print(
        f"agentrig mcp: MCP server {server!r} asks you to sign in; open:\n  {url}",
        file=sys.stderr,
        flush=True,
    )
    if open_browser:
        import threading
        import webbrowser

        # not waited for: a browser command may only return once the page is loaded, and
        # the page is this process's callback, answered after the address is presented
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()


class OAuthStore:
    """The SDK's token storage, kept in ``<root>/<server>.json`` (owner-only).

    What is kept belongs to one server URL: a file written for another URL is not used.
    """

    def __init__(self, root: Path, server: str, url: str) -> None:
        self._root = root
        self._file = f"{server}.json"
        self._url = url
        #: the redirect URI a stored registration must name (set by :class:`OAuthLogin`)
        self.redirect_uri: str | None = None
        #: a client registered beforehand (``oauth.client_id``): used instead of a stored one
        self.configured: OAuthClientInformationFull | None = None
        #: the SDK's flow state (set by :class:`OAuthLogin`): its authorization server's
        #: metadata is kept with the tokens, and a kept refresh token goes back into it
        self.context: OAuthContext | None = None

    def _store(self) -> OwnerOnlyStore:
        return OwnerOnlyStore(self._root)

    def path(self) -> Path:
        """The file (which may not exist yet)."""
        return self._root / self._file

    def read(self) -> dict[str, Any]:
        """What is kept for this server's URL (``{}``: nothing)."""
        store = self._store()
        if not store.exists(self._file):
            return {}
        try:
            data = json.loads(store.read_bytes(self._file))
        except ValueError:
            get_logger("mcp").warning("%s: unreadable, signing in again", store.path(self._file))
            return {}
        return data if isinstance(data, dict) and data.get("url") == self._url else {}

    def _write(self, **changes: Any) -> None:
        data = {**self.read(), **changes, "url": self._url}
        self._store().write_bytes(self._file, json.dumps(data, indent=1).encode(), durable=True)

    def keep_port(self, port: int) -> None:
        """Remember the callback port a registration was made for."""
        self._write(callback_port=port)

    def forget(self) -> bool:
        """Remove what is kept (sign out); False when there was nothing."""
        return self._store().remove(self._file)

    def expires_at(self) -> float | None:
        """When the kept access token expires (seconds since the epoch; None: not said)."""
        value = self.read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def get_tokens(self) -> OAuthToken | None:
        raw = self.read().get("tokens")
        try:
            return OAuthToken.model_validate(raw) if raw is not None else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        kept = await self.get_tokens()
        context = self.context
        if tokens.refresh_token is None and kept is not None and kept.refresh_token:
            # RFC 6749 6: a refresh that issues no new refresh token leaves the old one valid
            tokens = tokens.model_copy(update={"refresh_token": kept.refresh_token})
            if context is not None:
                context.current_tokens = tokens
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        metadata = context.oauth_metadata if context is not None else None
        changes: dict[str, Any] = {"tokens": tokens.model_dump(mode="json"), "expires_at": expires}
        if metadata is not None:
            changes["authorization_server"] = metadata.model_dump(mode="json", exclude_none=True)
        self._write(**changes)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.configured is not None:
            return self.configured
        raw = self.read().get("client")
        try:
            info = OAuthClientInformationFull.model_validate(raw) if raw is not None else None
        except ValidationError:
            return None
        if info is not None and self.redirect_uri is not None:
            registered = [str(uri) for uri in info.redirect_uris or ()]
            if self.redirect_uri not in registered:
                return None  # registered for another callback address: register again
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write(client=client_info.model_dump(mode="json", exclude_none=True))

    def authorization_server(self) -> OAuthMetadata | None:
        """The authorization server's metadata kept with the tokens (its token endpoint)."""
        raw = self.read().get("authorization_server")
        try:
            return OAuthMetadata.model_validate(raw) if raw is not None else None
        except ValidationError:
            return None


async def _read_request(stream: SocketStream) -> str:
    """The request line of one HTTP request (``GET /callback?... HTTP/1.1``)."""
    data = b""
    with anyio.fail_after(_READ_TIMEOUT):
        while b"\r\n\r\n" not in data and len(data) < _MAX_REQUEST:
            data += await stream.receive()
    return data.split(b"\r\n", 1)[0].decode("latin-1")


async def _answer(stream: SocketStream, status: str, text: str) -> None:
    import html

    body = _PAGE.format(text=html.escape(text)).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
    )
    await stream.send(head.encode() + body)


def _callback_params(line: str) -> dict[str, str] | None:
    """The query of a ``GET /callback`` request line (None: another request)."""
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "GET":
        return None
    target = urlsplit(parts[1])
    if target.path != "/callback":
        return None
    return {key: values[0] for key, values in parse_qs(target.query).items()}


class _Callback:
    """The loopback address the authorization server sends the browser back to."""

    def __init__(self, server: str, port: int, patience: float) -> None:
        self._server = server
        self.port = port
        self._patience = patience
        self._listener: SocketListener | None = None
        self.state: str | None = None

    async def listen(self) -> None:
        if self._listener is not None:
            return
        try:
            multi = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        except OSError as exc:
            raise McpAuthError(
                f"MCP server {self._server!r}: cannot listen for the sign-in on "
                f"127.0.0.1:{self.port} ({exc}); free it or set oauth.callback_port"
            ) from None
        listener = multi.listeners[0]
        assert isinstance(listener, SocketListener)  # one TCP socket, as asked for
        self._listener = listener

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None

    async def _one(self, listener: SocketListener) -> AuthorizationCodeResult | None:
        """Take one request: its code, state and issuer when it is the callback of this
        sign-in."""
        async with await listener.accept() as stream:
            try:
                params = _callback_params(await _read_request(stream))
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError):
                return None
            if params is None or params.get("state") != self.state:
                await _answer(stream, "404 Not Found", "Not the sign-in this client waits for.")
                return None
            if "error" in params:
                why = params.get("error_description") or params["error"]
                await _answer(stream, "200 OK", f"Sign-in refused: {why}")
                raise McpAuthError(
                    f"MCP server {self._server!r}: the authorization server refused the "
                    f"sign-in: {why}"
                )
            await _answer(stream, "200 OK", f"Signed in to MCP server {self._server!r}.")
            return AuthorizationCodeResult(
                code=params.get("code", ""), state=params["state"], iss=params.get("iss")
            )

    async def wait(self) -> AuthorizationCodeResult:
        """The authorization code, state and issuer the browser brings back (within
        ``login_timeout``)."""
        listener = self._listener
        assert listener is not None, "listen() comes first (the redirect handler calls it)"
        try:
            with anyio.move_on_after(self._patience):
                while True:
                    found = await self._one(listener)
                    if found is not None:
                        return found
            raise McpAuthError(
                f"MCP server {self._server!r}: no sign-in came back within {self._patience:g}s "
                "(oauth.login_timeout)"
            )
        finally:
            await self.close()


def _free_port() -> int:
    """A port free on loopback now (kept with the registration from then on)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class OAuthLogin:
    """One HTTP server's OAuth: the SDK's provider (:attr:`auth`) and its storage."""

    def __init__(
        self,
        server: str,
        spec: HttpServerSpec,
        state_dir: Path,
        *,
        client_secret: str | None = None,
        present: Present = print_sign_in,
    ) -> None:
        settings = spec.oauth or OAuthSettings()
        self.server = server
        self._settings = settings
        self.store = OAuthStore(state_dir / "oauth", server, spec.url)
        kept_port = self.store.read().get("callback_port")
        port = settings.callback_port or (kept_port if isinstance(kept_port, int) else 0)
        self._callback = _Callback(server, port or _free_port(), settings.login_timeout)
        redirect = f"http://127.0.0.1:{self._callback.port}/callback"
        self.store.redirect_uri = redirect
        self._present = present
        self._client_secret = client_secret
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect)],
            client_name="agentrig",
            software_id="agentrig",
            software_version=agentrig_version,
            token_endpoint_auth_method="client_secret_post" if client_secret else "none",
        )
        self.auth = OAuthClientProvider(
            spec.url,
            metadata,
            self.store,
            redirect_handler=self._redirect,
            callback_handler=self._returned,
        )
        self.store.context = self.auth.context
        self._restore()

    def _restore(self) -> None:
        """Start from what is kept: an expired token is refreshed (not signed in again)
        at the authorization server that issued it."""
        context = self.auth.context
        context.oauth_metadata = self.store.authorization_server()
        expires = self.store.expires_at()
        if expires is not None:
            context.token_expiry_time = expires
        if self._settings.client_id is not None:
            self.store.configured = OAuthClientInformationFull(
                client_id=self._settings.client_id,
                client_secret=self._client_secret,
                redirect_uris=[AnyUrl(self.store.redirect_uri or "")],
                token_endpoint_auth_method=(
                    "client_secret_post" if self._client_secret else "none"
                ),
            )

    async def _redirect(self, url: str) -> None:
        await self._callback.listen()
        self._callback.state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        if self._settings.callback_port == 0:
            # the registration names this port: keep it for the next sign-in
            self.store.keep_port(self._callback.port)
        self._present(self.server, url, self._settings.open_browser)

    async def _returned(self) -> AuthorizationCodeResult:
        return await self._callback.wait()

    async def sign_in(self, http: httpx2.AsyncClient, url: str, *, sse: bool = False) -> None:
        """Make sure the client holds a token the server takes, signing in if needed: one
        request the endpoint answers -- a JSON-RPC ping POSTed (streamable HTTP), or the
        event stream's GET, closed once its status is known (legacy SSE)."""
        headers = {"accept": "text/event-stream" if sse else "application/json, text/event-stream"}
        ping = None if sse else {"jsonrpc": "2.0", "id": "agentrig-sign-in", "method": "ping"}
        method = "GET" if sse else "POST"
        try:
            async with http.stream(method, url, json=ping, headers=headers, auth=self.auth) as r:
                response = r
        except (httpx2.HTTPError, OAuthFlowError, ValidationError) as exc:
            raise McpAuthError(
                f"MCP server {self.server!r}: sign-in failed: {type(exc).__name__}: {exc}"
            ) from None
        if response.status_code in (401, 403):
            raise McpAuthError(
                f"MCP server {self.server!r} refused the token it was given "
                f"(HTTP {response.status_code})"
            )


def oauth_logins(
    state_dir: Path, *, resolve: ResolveSecret | None = None, present: Present = print_sign_in
) -> OAuthFor:
    """What :class:`~agentrig_mcp.McpClient` takes as ``oauth=``: each server's sign-in,
    its tokens kept under ``state_dir/oauth``; ``resolve`` gives ``oauth.client_secret``."""

    async def login(server: str, spec: HttpServerSpec) -> OAuthLogin:
        reference = spec.oauth.client_secret if spec.oauth is not None else None
        secret = None
        if reference is not None:
            if resolve is None:
                raise McpAuthError(
                    f"MCP server {server!r}: oauth.client_secret needs a secret resolver"
                )
            secret = await resolve(server, reference)
        return OAuthLogin(server, spec, state_dir, client_secret=secret, present=present)

    return login
