"""A real OAuth-protected MCP server for the tests, on loopback in a thread of this process
(its own asyncio loop, so the tests run on either anyio backend).

The official SDK's server side: a MCPServer server whose ``auth_server_provider`` makes it its
own authorization server (``mcp.server.auth``: RFC 8414 metadata, RFC 7591 registration,
``/authorize`` and ``/token`` with PKCE, RFC 9728 protected-resource metadata, bearer
checks).  The provider below is the part an operator writes: it keeps clients, codes and
tokens in memory, consents at once (the user who clicks "allow"), and counts what it did.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.types import ASGIApp

__all__ = ["AuthServer", "Provider", "bound", "oauth_server"]


@dataclass
class Provider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """An in-memory authorization server (what ``mcp.server.auth`` asks an operator for; the
    grants it does not offer, such as identity assertions, keep the SDK's refusal)."""

    #: seconds an access token lives, as told to the client (``expires_in``)
    lifetime: int = 3600
    #: ``error`` to refuse the sign-in with at ``/authorize`` (the user clicked "deny")
    refuse: str | None = None
    #: issue a new refresh token on each refresh (rotation)
    rotate: bool = True
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    registrations: int = 0
    authorizations: int = 0
    refreshes: int = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.registrations += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        if self.refuse is not None:
            raise AuthorizeError(error="access_denied", error_description=self.refuse)
        assert client.client_id is not None
        self.authorizations += 1
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], *, refresh: bool) -> OAuthToken:
        """A new access token and, with ``refresh``, a new refresh token."""
        token = secrets.token_urlsafe(24)
        # the server ends a token by forgetting it (expire_all), not by the clock
        self.access[token] = AccessToken(token=token, client_id=client_id, scopes=scopes)
        issued = secrets.token_urlsafe(24) if refresh else None
        if issued is not None:
            self.refresh[issued] = RefreshToken(token=issued, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=token,
            expires_in=self.lifetime,
            refresh_token=issued,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(authorization_code.client_id, authorization_code.scopes, refresh=True)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refreshes += 1
        if self.rotate:  # the old refresh token is spent; otherwise it stays valid
            del self.refresh[refresh_token.token]
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh=self.rotate
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def expire_all(self) -> None:
        """Every access token issued so far stops working (as if its lifetime ran out)."""
        self.access.clear()


@dataclass
class AuthServer:
    """The running server: its MCP endpoint and its provider."""

    url: str
    provider: Provider


def _app(resource: str, provider: Provider, issuer: str | None) -> MCPServer:
    """The MCP server at ``resource``; its own authorization server too unless ``issuer``
    names another."""
    base = resource.rsplit("/", 1)[0]
    settings = AuthSettings(
        issuer_url=AnyHttpUrl(issuer or base),
        resource_server_url=AnyHttpUrl(resource),
        client_registration_options=ClientRegistrationOptions(enabled=True),
        validate_token_resource=False,
    )
    if issuer is None:
        app = MCPServer("secure", auth_server_provider=provider, auth=settings)
    else:
        app = MCPServer("secure", token_verifier=ProviderTokenVerifier(provider), auth=settings)

    @app.tool()
    def whoami() -> str:
        """The client the caller's access token was issued to."""
        token = get_access_token()
        return token.client_id if token is not None else "anonymous"

    return app


@contextmanager
def _serving(app: ASGIApp, sock: socket.socket) -> Iterator[None]:
    """Serve ``app`` with uvicorn on the bound ``sock`` (in a thread of its own)."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)  # uvicorn says it is serving by a flag only
        assert server.started, "the OAuth test server did not start"
        yield
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def bound() -> tuple[socket.socket, str]:
    """A socket bound to a free loopback port, and its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def oauth_server(
    provider: Provider, *, separate: bool = False, sse: bool = False
) -> Iterator[AuthServer]:
    """Serve the protected MCP server (``/mcp``; with ``sse``, the legacy transport at
    ``/sse``) on loopback with its authorization server: in the same app, or with
    ``separate`` on an origin of its own (another port)."""
    with contextlib.ExitStack() as stack:
        issuer = None
        if separate:
            as_sock, issuer = bound()
            registration = ClientRegistrationOptions(enabled=True)
            routes = create_auth_routes(
                provider, AnyHttpUrl(issuer), client_registration_options=registration
            )
            stack.enter_context(_serving(Starlette(routes=routes), as_sock))
        sock, base = bound()
        url = f"{base}/sse" if sse else f"{base}/mcp"
        mcp = _app(url, provider, issuer)
        stack.enter_context(_serving(mcp.sse_app() if sse else mcp.streamable_http_app(), sock))
        yield AuthServer(url, provider)
