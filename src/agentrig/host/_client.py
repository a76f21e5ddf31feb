"""The egress HTTP client: an ``httpx.AsyncClient`` whose every hop obeys the egress policy.

Why the client follows redirects itself instead of letting httpx do it: each hop must be
judged, resolved and pinned again (the transport does that), and the headers a caller gave
for one origin must not reach another.  Rules for a followed redirect:

* at most ``policy.max_redirects`` hops, then :class:`httpx.TooManyRedirects`;
* the new URL is judged before anything is sent to it; an ``https`` -> ``http`` downgrade
  is refused unless the policy allows it;
* when the origin (scheme, host, port) changes, every caller header except ``User-Agent`` is
  dropped -- ``Authorization``, ``Cookie``, API-key headers, custom headers -- along with the
  client's auth and any cookie; a same-origin hop keeps them;
* 301/302 (for POST) and 303 become a body-less GET, as browsers and httpx do; 307/308 keep
  the method and body, but only to the same origin: a cross-origin 307/308 that would resend a
  body is refused (``redirect.cross_origin_body``), since bodies carry secrets as often as
  headers do.

Environment proxies, ``.netrc`` and ``SSL_CERT_FILE`` are never read (``trust_env=False``);
a caller cannot pass ``transport``, ``mounts`` or ``proxy``.
"""

from __future__ import annotations

from typing import Any, Final

import httpx

# Needed at run time for the ``send`` override's annotation (typeguard checks it); httpx
# exports the sentinel value but not its class.
from httpx._client import UseClientDefault

from agentrig.host._egress import EgressPolicy, EgressRejected, _bad_char, check_url
from agentrig.host._errors import EgressRejectedError
from agentrig.host._resolver import Resolver
from agentrig.host._transport import EgressTransport

__all__ = ["EgressClient", "egress_client", "egress_request"]

_DEFAULT_PORTS: Final[dict[str, int]] = {"http": 80, "https": 443}
_FORBIDDEN_KWARGS: Final[frozenset[str]] = frozenset(
    {"transport", "mounts", "proxy", "proxies", "trust_env", "max_redirects", "app", "uds"}
)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    port = url.port if url.port is not None else _DEFAULT_PORTS.get(url.scheme)
    return url.scheme, url.host.lower().rstrip("."), port


def _has_body(request: httpx.Request) -> bool:
    length: str | None = request.headers.get("Content-Length")
    if length is not None:
        return length.strip() != "0"
    return "Transfer-Encoding" in request.headers


def _redirect_method(request: httpx.Request, status: int) -> str:
    method = request.method
    if status in (302, 303) and method != "HEAD":
        return "GET"
    if status == 301 and method == "POST":
        return "GET"
    return method


class EgressClient(httpx.AsyncClient):
    """An :class:`httpx.AsyncClient` bound to an :class:`EgressPolicy`.

    Use it like any httpx client (``get``, ``post``, ``stream``...).  A refused destination
    -- first request or any redirect hop -- raises :class:`EgressRejectedError`, whose
    ``rejection`` holds the policy's reason.
    """

    def __init__(
        self,
        *,
        policy: EgressPolicy | None = None,
        resolver: Resolver | None = None,
        transport: EgressTransport | None = None,
        **kwargs: Any,
    ) -> None:
        forbidden = sorted(_FORBIDDEN_KWARGS & set(kwargs))
        if forbidden:
            raise TypeError(f"EgressClient does not accept {', '.join(forbidden)}")
        if transport is None:
            transport = EgressTransport(
                policy=policy,
                resolver=resolver,
                verify=kwargs.pop("verify", True),
                limits=kwargs.pop("limits", None),
            )
        elif policy is not None or resolver is not None:
            raise TypeError("pass policy and resolver to the EgressTransport, not beside it")
        follow = bool(kwargs.pop("follow_redirects", True))
        super().__init__(
            transport=transport,
            trust_env=False,
            follow_redirects=False,
            max_redirects=transport.policy.max_redirects,
            **kwargs,
        )
        self._egress_transport = transport
        self._egress_follow = follow

    @property
    def policy(self) -> EgressPolicy:
        """The policy every request of this client is judged by."""
        return self._egress_transport.policy

    async def send(
        self,
        request: httpx.Request,
        *,
        stream: bool = False,
        # httpx's AuthTypes holds a forward reference typeguard cannot resolve at run time.
        auth: Any = httpx.USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = httpx.USE_CLIENT_DEFAULT,
    ) -> httpx.Response:
        follow = (
            self._egress_follow
            if isinstance(follow_redirects, UseClientDefault)
            else follow_redirects
        )
        first_origin = _origin(request.url)
        history: list[httpx.Response] = []
        hop_auth = auth
        while True:
            response = await super().send(
                request, stream=True, auth=hop_auth, follow_redirects=False
            )
            if not response.has_redirect_location:
                break
            if not follow:
                # httpx prepared a next_request by its own (laxer) header rules; offer ours.
                try:
                    response.next_request = self._next_hop(request, response)
                except (EgressRejectedError, httpx.HTTPError):
                    response.next_request = None
                break
            try:
                if len(history) >= self.policy.max_redirects:
                    raise httpx.TooManyRedirects(
                        f"more than {self.policy.max_redirects} redirects", request=request
                    )
                next_request = self._next_hop(request, response)
            except BaseException:
                await response.aclose()
                raise
            await response.aclose()
            history.append(response)
            if _origin(next_request.url) != first_origin:
                hop_auth = None
            request = next_request
        response.history = history
        if not stream:
            try:
                await response.aread()
            except BaseException:
                await response.aclose()
                raise
        return response

    def _next_hop(self, request: httpx.Request, response: httpx.Response) -> httpx.Request:
        location = response.headers["Location"]
        char = _bad_char(location)
        if char is not None:
            raise EgressRejectedError(
                EgressRejected(
                    reason="url.invalid_char",
                    message=f"the redirect location contains the character {char!r}",
                    url=location,
                )
            )
        try:
            target = httpx.URL(location)
        except httpx.InvalidURL as exc:
            raise httpx.RemoteProtocolError(
                f"invalid Location header: {exc}", request=request
            ) from exc
        if target.is_relative_url:
            target = request.url.join(target)
        outcome = check_url(target, policy=self.policy)
        if isinstance(outcome, EgressRejected):
            raise EgressRejectedError(outcome)
        if (
            request.url.scheme == "https"
            and target.scheme == "http"
            and not self.policy.allow_https_downgrade
        ):
            raise EgressRejectedError(
                EgressRejected(
                    reason="redirect.downgrade",
                    message="a redirect from https to http is refused",
                    url=str(target),
                )
            )
        method = _redirect_method(request, response.status_code)
        same_origin = _origin(target) == _origin(request.url)
        keep_body = method == request.method
        if keep_body and not same_origin and _has_body(request):
            raise EgressRejectedError(
                EgressRejected(
                    reason="redirect.cross_origin_body",
                    message=f"a {response.status_code} redirect would resend the request body "
                    "to another origin",
                    url=str(target),
                )
            )
        if same_origin:
            headers = httpx.Headers(request.headers)
            headers.pop("Host", None)
            if not keep_body:
                for name in ("Content-Length", "Transfer-Encoding", "Content-Type"):
                    headers.pop(name, None)
            # A caller's Cookie header stays; otherwise the jar (which may have learnt a
            # cookie from the redirect response itself) decides, as in httpx.
            cookies: httpx.Cookies | None = None if "Cookie" in headers else self.cookies
            extensions = dict(request.extensions)
        else:
            headers = httpx.Headers()
            agent = request.headers.get("User-Agent")
            if agent is not None:
                headers["User-Agent"] = agent
            cookies = None
            extensions = {k: v for k, v in request.extensions.items() if k == "timeout"}
        headers["Host"] = target.netloc.decode("ascii")
        return httpx.Request(
            method=method,
            url=target,
            headers=headers,
            cookies=cookies,
            stream=request.stream if keep_body else None,
            extensions=extensions,
        )


def egress_client(
    *,
    policy: EgressPolicy | None = None,
    resolver: Resolver | None = None,
    **httpx_kwargs: Any,
) -> EgressClient:
    """Create an :class:`EgressClient`; ``httpx_kwargs`` go to :class:`httpx.AsyncClient`.

    ``follow_redirects`` defaults to ``True`` (hops are followed by the client itself and
    judged one by one); ``transport``, ``mounts``, ``proxy`` and ``trust_env`` are refused.
    """
    return EgressClient(policy=policy, resolver=resolver, **httpx_kwargs)


async def egress_request(
    method: str,
    url: str | httpx.URL,
    *,
    policy: EgressPolicy | None = None,
    resolver: Resolver | None = None,
    client: EgressClient | None = None,
    **request_kwargs: Any,
) -> httpx.Response | EgressRejected:
    """Send one request through the egress policy and read the whole response.

    The policy's refusal is *returned* as :class:`EgressRejected`; transport failures raise
    as httpx raises them.  Pass ``client`` to reuse a pooled :class:`EgressClient` (its own
    policy applies; ``policy``/``resolver`` must then be left out).  Connections are released
    when this returns, whatever the outcome.
    """
    if client is not None:
        if policy is not None or resolver is not None:
            raise TypeError("pass either client or policy/resolver, not both")
        try:
            return await client.request(method, url, **request_kwargs)
        except EgressRejectedError as exc:
            return exc.rejection
    async with EgressClient(policy=policy, resolver=resolver) as own:
        try:
            return await own.request(method, url, **request_kwargs)
        except EgressRejectedError as exc:
            return exc.rejection
