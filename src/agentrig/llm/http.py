"""HTTP machinery for provider plugins that speak to a model API with httpx.

What every HTTP provider needs and nothing vendor-specific: the shared options
(:class:`HttpProviderOptions` -- base URL checks, timeouts, retry settings, the egress
exemption a private base URL asks for), the client and its retrying send
(:class:`HttpSession`, :func:`send_with_retries`, :class:`RetryPolicy`), error mapping for
failed responses and transports, server-sent events (:func:`read_sse`) and NDJSON
(:func:`read_ndjson`), and :class:`HttpProvider`, the base class a provider plugin
subclasses.  Request bodies, headers, error-body quirks and event semantics stay in the
plugin.

Cancellation: every network read and every retry wait runs inside the run's
:class:`~agentrig.cancel.CancelSignal`, so a cancelled run stops at once with
:class:`~agentrig.errors.AbortError` and leaves no connection open.

This module imports httpx; ``import agentrig.llm`` does not import it.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentrig.cancel import CancelSignal
from agentrig.llm._cooldown import COOLDOWNS, ModelDeployment
from agentrig.llm._errors import ProviderError, ProviderProtocolError
from agentrig.llm._http_provider import HttpProvider, read_ndjson
from agentrig.llm._http_retry import (
    RetryPolicy,
    error_from_response,
    error_from_transport,
    send_with_retries,
)
from agentrig.llm._models import ModelInfo
from agentrig.llm._provider import Provider, ProviderConfig
from agentrig.llm._sse import (
    SSEDecoder,
    SSEEvent,
    close_stream,
    event_json,
    read_sse,
    read_sse_batches,
)

__all__ = [
    "HttpProvider",
    "HttpProviderFactory",
    "HttpProviderOptions",
    "HttpSession",
    "RetryPolicy",
    "SSEDecoder",
    "SSEEvent",
    "close_stream",
    "error_from_response",
    "error_from_transport",
    "event_json",
    "first_header",
    "model_ids",
    "read_json_object",
    "read_ndjson",
    "read_sse",
    "read_sse_batches",
    "send_with_retries",
]


def _is_private_host(host: str) -> bool:
    lowered = host.lower().rstrip(".")
    if lowered == "localhost" or lowered.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(lowered.strip("[]"))
    except ValueError:
        return False  # a DNS name: the runtime's egress policy checks what it resolves to
    return not address.is_global


class HttpProviderOptions(BaseModel):
    """Options every HTTP provider shares; subclass it for a provider's options table.

    A subclass gives ``base_url`` its default and sets ``vendor_base_url`` (the vendor's own
    API, for :attr:`vendor_endpoint`).  ``base_url`` must be http(s) with a host and no query;
    a private or loopback host needs ``allow_private_base_url = true``, and plain http is
    accepted only for such hosts.  Unknown keys are refused; instances are frozen.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    vendor_base_url: ClassVar[str | None] = None

    base_url: str
    timeout: float = Field(default=600.0, gt=0, description="read/write/pool timeout, seconds")
    connect_timeout: float = Field(default=10.0, gt=0, description="connect timeout, seconds")
    max_retries: int = Field(default=2, ge=0, le=10)
    retry_base_delay: float = Field(default=0.5, ge=0)
    retry_max_delay: float = Field(default=8.0, ge=0)
    max_retry_after: float = Field(default=60.0, ge=0, description="cap on a server's Retry-After")
    allow_private_base_url: bool = False
    extra_headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_base_url(self) -> HttpProviderOptions:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL with a host, got {self.base_url!r}")
        if parts.query or parts.fragment:
            raise ValueError("base_url must not carry a query or fragment")
        private = _is_private_host(parts.hostname)
        if private and not self.allow_private_base_url:
            raise ValueError(
                f"base_url {self.base_url!r} points at a private or loopback host; "
                "set allow_private_base_url = true to allow it"
            )
        if parts.scheme == "http" and not (private or self.allow_private_base_url):
            raise ValueError(
                "a public base_url must use https (set allow_private_base_url = true for a "
                "server on a private network reached by name, such as http://ollama:11434)"
            )
        return self

    @property
    def egress_allow_private(self) -> tuple[str, ...]:
        """The egress-policy exemption ``base_url`` needs: ``("host:port",)`` when
        ``allow_private_base_url`` is set, else nothing (public destinations only)."""
        if not self.allow_private_base_url:
            return ()
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return (f"[{host}]:{port}" if ":" in host else f"{host}:{port}",)

    @property
    def vendor_endpoint(self) -> bool:
        """Whether ``base_url`` is the vendor's own API (``vendor_base_url``)."""
        vendor = self.vendor_base_url
        return vendor is not None and self.base_url.rstrip("/") == vendor.rstrip("/")

    @property
    def retry_policy(self) -> RetryPolicy:
        """The retry settings as a :class:`RetryPolicy`."""
        return RetryPolicy(
            max_retries=self.max_retries,
            base_delay=self.retry_base_delay,
            max_delay=self.retry_max_delay,
            max_retry_after=self.max_retry_after,
        )

    def endpoint(self, path: str) -> str:
        """``base_url`` joined with ``path`` (``"/chat/completions"``) by exactly one slash."""
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")


class HttpSession:
    """A provider's HTTP client (built on first use) and its retrying send.

    ``client`` (a ready httpx client) is used as given and never closed here; otherwise the
    client comes from ``factory`` or, with none, a plain ``httpx.AsyncClient(trust_env=False)``,
    built on first use and closed by :meth:`aclose`.  ``timeout`` applies to each request
    :meth:`post_json` makes (``None``: the client's own);
    ``classify``, ``retry_if`` and ``stream_types`` (the media types a streamed answer may
    have) are passed to :func:`send_with_retries`.
    """

    __slots__ = (
        "_classify",
        "_client",
        "_closed",
        "_endpoint",
        "_factory",
        "_owned",
        "_policy",
        "_provider",
        "_retry_if",
        "_stream_types",
        "_timeout",
    )

    def __init__(
        self,
        *,
        provider: str,
        policy: RetryPolicy | None = None,
        timeout: httpx.Timeout | None = None,
        client: httpx.AsyncClient | None = None,
        factory: Callable[[], httpx.AsyncClient] | None = None,
        classify: Callable[[httpx.Response], ProviderError] | None = None,
        retry_if: Callable[[ProviderError], bool] | None = None,
        stream_types: tuple[str, ...] = ("text/event-stream",),
        endpoint: str | None = None,
    ) -> None:
        self._provider = provider
        #: the base URL: with it a rate-limited model's cooldown starts at the 429 itself
        self._endpoint = endpoint.rstrip("/") if endpoint else None
        self._stream_types = stream_types
        self._policy = policy if policy is not None else RetryPolicy()
        self._timeout = timeout
        self._client = client
        # A client handed in ready-made belongs to the caller; one we build is ours to close.
        self._owned = client is None
        self._factory = factory
        self._classify = classify
        self._retry_if = retry_if
        self._closed = False

    @classmethod
    def from_options(
        cls,
        options: HttpProviderOptions,
        *,
        provider: str,
        http: Callable[..., httpx.AsyncClient] | None = None,
        client: httpx.AsyncClient | None = None,
        classify: Callable[[httpx.Response], ProviderError] | None = None,
        retry_if: Callable[[ProviderError], bool] | None = None,
        stream_types: tuple[str, ...] = ("text/event-stream",),
    ) -> HttpSession:
        """The session ``options`` describe; ``http`` is the runtime's client factory.

        The runtime's factory is called with the timeouts, ``trace_to`` (the base URL: the
        one destination of this client that receives trace headers) and, for a private
        ``base_url`` (consented to by ``allow_private_base_url``), the one egress exemption
        the provider asks for (``allow_private``); public base URLs need none.
        """
        timeout = httpx.Timeout(options.timeout, connect=options.connect_timeout)
        exempt = options.egress_allow_private
        egress: dict[str, Any] = {"allow_private": exempt} if exempt else {}
        # the provider's own API opts in to trace headers; nothing else its client reaches
        egress["trace_to"] = (options.base_url,)
        factory = (lambda: http(timeout=timeout, **egress)) if http is not None else None
        return cls(
            provider=provider,
            policy=options.retry_policy,
            timeout=timeout,
            client=client,
            factory=factory,
            classify=classify,
            retry_if=retry_if,
            stream_types=stream_types,
            endpoint=options.base_url,
        )

    @property
    def policy(self) -> RetryPolicy:
        return self._policy

    def client(self) -> httpx.AsyncClient:
        """The client, built on first use; ``RuntimeError`` after :meth:`aclose`."""
        if self._closed:
            raise RuntimeError(f"the {self._provider} provider was closed")
        if self._client is None:
            if self._factory is not None:
                self._client = self._factory()
            else:
                self._client = httpx.AsyncClient(trust_env=False)
        return self._client

    async def aclose(self) -> None:
        """Close the client if this session built it; the session cannot be used again."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None and self._owned:
            await client.aclose()

    async def send(
        self,
        build: Callable[[], httpx.Request],
        *,
        signal: CancelSignal,
        stream: bool,
        model: str | None = None,
    ) -> httpx.Response:
        """:func:`send_with_retries` on this session's client, policy and hooks; a request
        for ``model`` that is rate limited with a deadline starts the cooldown of its
        deployment (this provider kind, endpoint and model) at once, before any retry wait."""
        on_failure = None
        if model is not None and self._endpoint is not None:
            deployment = ModelDeployment(self._provider, self._endpoint, model)

            def on_failure(error: ProviderError) -> None:
                COOLDOWNS.note(deployment, error)

        return await send_with_retries(
            self.client,
            build,
            policy=self._policy,
            signal=signal,
            provider=self._provider,
            stream=stream,
            classify=self._classify,
            retry_if=self._retry_if,
            stream_types=self._stream_types,
            on_failure=on_failure,
        )

    async def post_json(
        self,
        url: str,
        body: Mapping[str, Any],
        *,
        headers: Mapping[str, str],
        signal: CancelSignal,
        stream: bool,
    ) -> httpx.Response:
        """POST ``body`` as UTF-8 JSON to ``url`` with retries; see :meth:`send`."""
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        request_headers = dict(headers)
        timeout = self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT

        def build() -> httpx.Request:
            return self.client().build_request(
                "POST", url, content=content, headers=request_headers, timeout=timeout
            )

        model = body.get("model")
        chosen = model if isinstance(model, str) else None
        return await self.send(build, signal=signal, stream=stream, model=chosen)

    async def probe(self, url: str, *, headers: Mapping[str, str]) -> None:
        """GET ``url`` once, without retries: a readiness check, not a model call.

        A transport failure or a non-2xx answer raises the same :class:`ProviderError` a
        model call would (an invalid key is an :class:`AuthenticationError`), so a readiness
        report can say *why* a provider is not ready.
        """
        await self._get(url, headers, None)

    async def get_json(
        self, url: str, *, headers: Mapping[str, str], params: Mapping[str, str] | None = None
    ) -> Any:
        """GET ``url`` once, without retries, and parse its JSON body (a model listing).

        Fails as :meth:`probe` does; a body that is not JSON is a
        :class:`~agentrig.llm.ProviderProtocolError`.
        """
        response = await self._get(url, headers, params)
        try:
            return response.json()
        except ValueError:
            raise ProviderProtocolError(
                f"{self._provider}: GET {url} answered with a body that is not JSON: "
                f"{response.text[:200]!r}",
                status=response.status_code,
                provider=self._provider,
            ) from None

    async def _get(
        self, url: str, headers: Mapping[str, str], params: Mapping[str, str] | None
    ) -> httpx.Response:
        timeout = self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT
        try:
            response = await self.client().get(
                url, headers=dict(headers), params=dict(params) if params else None, timeout=timeout
            )
        except httpx.HTTPError as exc:
            raise error_from_transport(exc, provider=self._provider) from exc
        if not response.is_success:
            if self._classify is not None:
                raise self._classify(response)
            raise error_from_response(response, provider=self._provider)
        return response


def model_ids(body: Any, url: str, *, provider: str) -> frozenset[str]:
    """The model ids of a listing shaped ``{"data": [{"id": ...}, ...]}`` (OpenAI's and
    Anthropic's ``/models``); any other shape is a :class:`~agentrig.llm.ProviderProtocolError`
    naming ``url``."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise ProviderProtocolError(
            f"{provider}: GET {url} did not answer a model list (no 'data' array)",
            provider=provider,
        )
    return frozenset(
        item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)
    )


ProviderT = TypeVar("ProviderT", bound=Provider)


class HttpProviderFactory(Generic[ProviderT]):
    """``factory(config) -> provider`` for an HTTP provider: what its entry point names.

    Validates ``config.options`` with ``options_model``, contributes ``models`` to the
    runtime's model registry (an entry already there is kept), then calls ``provider(
    options=..., api_key=config.credentials.get("api_key"), http=config.http,
    models=config.models, instance_id=config.id)``.  ``name`` is what ``repr`` shows.
    """

    __slots__ = ("_name", "_provider", "models", "options_model")

    #: the ``[providers.<id>] credentials`` it reads: another key is refused at composition
    #: (``config.unknown_credential``) rather than ignored
    credential_keys: ClassVar[tuple[str, ...]] = ("api_key",)

    def __init__(
        self,
        provider: Callable[..., ProviderT],
        *,
        options_model: type[HttpProviderOptions],
        models: tuple[ModelInfo, ...] = (),
        name: str,
    ) -> None:
        self._provider = provider
        self._name = name
        self.options_model = options_model
        self.models = models

    def __call__(self, config: ProviderConfig) -> ProviderT:
        options = self.options_model.model_validate(dict(config.options))
        for info in self.models:
            if config.models.lookup(info.model) is None:
                config.models.register(info)
        return self._provider(
            options=options,
            api_key=config.credentials.get("api_key"),
            http=config.http,
            models=config.models,
            instance_id=config.id,
        )

    def __repr__(self) -> str:
        return f"<{self._name}>"


def first_header(headers: Mapping[str, str], *names: str) -> str | None:
    """The value of the first of ``names`` present in ``headers`` (``None`` if none is)."""
    for name in names:
        value = headers.get(name)
        if value is not None:
            return value
    return None


def read_json_object(
    response: httpx.Response, *, provider: str, request_id: str | None = None
) -> dict[str, Any]:
    """The body of a read 2xx response as a JSON object.

    Raises :class:`~agentrig.llm.ProviderError` (with the status and ``request_id``) when the
    body is not JSON or not an object.
    """
    try:
        data = response.json()
    except ValueError as exc:
        raise ProviderError(
            f"{provider}: the response body is not JSON",
            status=response.status_code,
            request_id=request_id,
            provider=provider,
        ) from exc
    if not isinstance(data, dict):
        raise ProviderError(
            f"{provider}: the response body is not a JSON object",
            status=response.status_code,
            request_id=request_id,
            provider=provider,
        )
    return data
