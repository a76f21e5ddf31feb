"""The ``http`` hook strategy: POST the event's JSON to a URL and decode the verdict.

::

    [[hooks.PreToolUse]]
    strategy = "http"
    options.url = "https://policy.internal/hooks/pre-tool-use"
    options.timeout = 5
    options.headers = { Authorization = "Bearer ..." }

The request goes through the runtime's HTTP client (``spec["http"]``, the factory the
runtime provides and the egress policy wraps); this strategy never builds its own, so it
cannot route around that policy.

A 2xx answer with an empty body or ``{}`` is success with no decision (Claude Code); any
other body is a JSON object: ``{"allow": true}``, ``{"allow": false, "reason": "..."}``, or
Claude Code's fields (``decision: "block"``, ``hookSpecificOutput.permissionDecision`` ...).
``allow`` is trusted only when it is exactly ``true`` or ``false``.  A non-2xx status, a
timeout, a connection failure, a body beyond ``max_response_bytes`` and an undecodable body
are :class:`~agentrig.hooks.HookErrorOutcome` naming which.  An HTTP answer never steers a
call (no allow-override, no ``updatedInput``); it can deny or ask.

A loopback or private ``url`` (``http://127.0.0.1:8080/hook``) is refused unless the entry
says ``options.allow_private_url = true``: then that one host and port is exempt from the
egress policy, which still refuses everything else (cloud-metadata addresses included).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentrig.cancel import CancelSignal
from agentrig.hooks import HookErrorOutcome, HookEvent, HookOutcome, decode_http_answer
from agentrig.host import EgressPolicy, EgressRejected, check_url
from agentrig.kernel import with_options

__all__ = ["HttpHook", "HttpOptions", "factory"]

MIB = 1024 * 1024


class HttpOptions(BaseModel):
    """``options`` of a ``strategy = "http"`` hook entry."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="http(s) URL the event JSON is POSTed to")
    timeout: float = Field(default=30.0, gt=0, description="seconds for the whole exchange")
    headers: dict[str, str] = Field(default_factory=dict)
    max_response_bytes: int = Field(default=MIB, gt=0)
    allow_private_url: bool = Field(
        default=False, description="consent to a loopback or private url (that host:port only)"
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = httpx.URL(value)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"url must be an absolute http(s) URL, got {value!r}")
        return value

    @model_validator(mode="after")
    def _private_needs_consent(self) -> HttpOptions:
        verdict = check_url(self.url, policy=EgressPolicy())
        if isinstance(verdict, EgressRejected) and not self.allow_private_url:
            raise ValueError(
                f"url {self.url!r} is refused by the egress policy ({verdict.message}); for a "
                "hook server on a loopback or private address set allow_private_url = true"
            )
        return self

    @property
    def egress_allow_private(self) -> tuple[str, ...]:
        """The egress exemption the url needs: its ``host:port`` with consent, else none."""
        if not self.allow_private_url:
            return ()
        url = httpx.URL(self.url)
        port = url.port or (443 if url.scheme == "https" else 80)
        host = url.host
        return (f"[{host}]:{port}" if ":" in host else f"{host}:{port}",)

    @field_validator("timeout")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("timeout must be a finite number of seconds")
        return value


class _TooLarge(Exception):
    pass


class HttpHook:
    """A configured HTTP hook (see the module docs)."""

    def __init__(
        self, options: HttpOptions, client_factory: Callable[..., httpx.AsyncClient]
    ) -> None:
        self.options = options
        self._client_factory = client_factory
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"<HttpHook {self.options.url!r}>"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            exempt = self.options.egress_allow_private
            self._client = (
                self._client_factory(allow_private=exempt) if exempt else self._client_factory()
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def _exchange(self, event: HookEvent) -> tuple[int, bytes]:
        headers = {"content-type": "application/json", **self.options.headers}
        # a configured hook is a destination of this composition: it gets the trace context
        # (a header, never in the body), and the runtime's client adds it to nothing else
        if event.traceparent:
            headers.setdefault("traceparent", event.traceparent)
            if event.tracestate:
                headers.setdefault("tracestate", event.tracestate)
        limit = self.options.max_response_bytes
        async with self._http().stream(
            "POST",
            self.options.url,
            content=event.to_json(),
            headers=headers,
            timeout=self.options.timeout,
        ) as response:
            if not 200 <= response.status_code < 300:
                return response.status_code, b""
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > limit:
                    raise _TooLarge
            return response.status_code, bytes(body)

    async def run(self, event: HookEvent, *, signal: CancelSignal) -> HookOutcome:
        """POST ``event`` and decode the answer; raises only when ``signal`` fires."""
        signal.raise_if_cancelled()
        timeout = self.options.timeout
        outcome: HookOutcome | None = None
        with anyio.move_on_after(timeout), signal.scope():
            try:
                status, body = await self._exchange(event)
            except _TooLarge:
                outcome = HookErrorOutcome(
                    f"the response exceeded {self.options.max_response_bytes} bytes"
                )
            except httpx.TimeoutException:
                outcome = HookErrorOutcome(f"timed out after {timeout:g}s")
            except httpx.HTTPError as exc:
                outcome = HookErrorOutcome(
                    f"request failed: {type(exc).__name__}: {exc}".rstrip(": ")
                )
            else:
                if not 200 <= status < 300:
                    outcome = HookErrorOutcome(f"answered HTTP {status}, not 2xx")
                else:
                    try:
                        text = body.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        outcome = HookErrorOutcome(
                            f"undecodable answer: the response body is not valid UTF-8 ({exc})"
                        )
                    else:
                        outcome = decode_http_answer(text, event=event.name)
        if signal.cancelled:
            raise signal.abort_error()
        if outcome is None:  # the deadline fired
            return HookErrorOutcome(f"timed out after {timeout:g}s")
        return outcome


@with_options(HttpOptions)
def factory(spec: Mapping[str, Any]) -> HttpHook:
    """Entry point ``http`` of ``agentrig.hook_strategies``.

    ``spec["options"]`` holds the :class:`HttpOptions`; ``spec["http"]`` is the runtime's
    client factory (required: a hook must not bypass the egress policy with a client of its
    own).
    """
    options = HttpOptions.model_validate(dict(spec.get("options") or {}))
    client_factory = spec.get("http")
    if not callable(client_factory):
        raise ValueError(
            "the http hook strategy needs the runtime's HTTP client factory (spec['http']); "
            "it never builds a client of its own"
        )
    return HttpHook(options, client_factory)
