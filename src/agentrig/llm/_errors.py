"""The provider error taxonomy and the helper that maps an HTTP failure onto it.

Callers branch on the class, ``code``, ``retryable`` and ``can_fallback`` -- never on message
text.  Each error keeps the facts it was built from: the HTTP status, the vendor's error type
and code, the server's retry hint and the request id.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from agentrig.errors import AgentrigError, Category

__all__ = [
    "AuthenticationError",
    "CapabilityError",
    "ContextLengthError",
    "EmptyCompletionError",
    "InvalidRequestError",
    "NotFoundError",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderProtocolError",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "error_from_status",
    "parse_retry_after",
]

_MESSAGE_LIMIT = 500


class ProviderError(AgentrigError):
    """A provider call failed.

    ``retryable``: the same request may succeed if sent again (408, 409, 429, 5xx, 529,
    connection errors, timeouts), unless the server said otherwise with ``x-should-retry``.
    ``can_fallback``: another deployment or model could plausibly serve the request; a cause
    this class cannot place is ``False``.
    """

    code = "provider.error"
    category: Category = "provider"

    #: Class-level answers; ``None`` means "decide from the HTTP status".
    _retryable: ClassVar[bool | None] = None
    _can_fallback: ClassVar[bool | None] = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        vendor_type: str | None = None,
        vendor_code: str | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
        provider: str | None = None,
        should_retry: bool | None = None,
        body: object = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.vendor_type = vendor_type
        self.vendor_code = vendor_code
        self.retry_after = retry_after
        self.request_id = request_id
        self.provider = provider
        self.should_retry = should_retry
        self.body = body
        self.recoverable = self.retryable

    @property
    def retryable(self) -> bool:
        if self.should_retry is not None:
            return self.should_retry
        if self._retryable is not None:
            return self._retryable
        status = self.status
        return status is not None and (status in (408, 409, 429) or status >= 500)

    @property
    def can_fallback(self) -> bool:
        if self._can_fallback is not None:
            return self._can_fallback
        status = self.status
        return status is not None and (status in (408, 429) or status >= 500)


class AuthenticationError(ProviderError):
    """The credentials were refused (401/403) at this deployment."""

    code = "provider.auth"
    _retryable = False
    _can_fallback = True


class RateLimitError(ProviderError):
    """Too many requests (429)."""

    code = "provider.rate_limit"
    _retryable = True
    _can_fallback = True
    #: set once the error started a model cooldown (``agentrig.llm.COOLDOWNS``), so a layer
    #: above (the loop over a ``fallback`` provider) does not cool a whole group for it
    cooldown_started: bool = False


class InvalidRequestError(ProviderError):
    """The provider rejected the request itself (400/422); sending it elsewhere will not help."""

    code = "provider.invalid_request"
    _retryable = False
    _can_fallback = False


class NotFoundError(ProviderError):
    """The model or endpoint does not exist at this deployment (404)."""

    code = "provider.not_found"
    _retryable = False
    _can_fallback = True


class ContextLengthError(InvalidRequestError):
    """The request does not fit the model's context window."""

    code = "provider.context_length"


class OverloadedError(ProviderError):
    """The provider is temporarily overloaded (529/503)."""

    code = "provider.overloaded"
    _retryable = True
    _can_fallback = True


class ServerError(ProviderError):
    """The provider failed internally (5xx)."""

    code = "provider.server"
    _retryable = True
    _can_fallback = True


class ProviderConnectionError(ProviderError):
    """The provider could not be reached or the connection broke."""

    code = "provider.connection"
    _retryable = True
    _can_fallback = True


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""

    code = "provider.timeout"
    _retryable = True
    _can_fallback = True


# Vendor error types (inside a 200 stream) that mean "try again / elsewhere".
_TRANSIENT_VENDOR_TYPES = frozenset(
    {"overloaded_error", "rate_limit_error", "api_error", "server_error", "timeout_error"}
)


class ProviderStreamError(ProviderError):
    """An error event inside a stream that had started with HTTP 200.

    ``error`` is the vendor's error object, verbatim.  Whether it is retryable follows from the
    vendor's error type (overload, rate limit, server error); anything else is not.
    """

    code = "provider.stream"

    def __init__(
        self,
        message: str,
        *,
        error: Mapping[str, Any] | None = None,
        vendor_type: str | None = None,
        vendor_code: str | None = None,
        request_id: str | None = None,
        provider: str | None = None,
    ) -> None:
        self.error = dict(error) if error is not None else None
        if vendor_type is None and error is not None:
            found = error.get("type")
            vendor_type = found if isinstance(found, str) else None
        super().__init__(
            message,
            vendor_type=vendor_type,
            vendor_code=vendor_code,
            request_id=request_id,
            provider=provider,
            body=self.error,
        )

    @property
    def retryable(self) -> bool:
        return self.vendor_type in _TRANSIENT_VENDOR_TYPES

    @property
    def can_fallback(self) -> bool:
        return self.vendor_type in _TRANSIENT_VENDOR_TYPES


class ProviderProtocolError(ProviderError):
    """The server answered in a shape the protocol does not allow (for example a 2xx JSON or
    HTML page to a streaming request).  Sending the same request again would not help."""

    code = "provider.protocol"
    _retryable = False
    _can_fallback = False


class CapabilityError(ProviderError):
    """A request needs a capability the provider/model does not declare.

    Raised before any network activity; the caller must change the request.
    """

    code = "provider.capability"
    category: Category = "user"
    _retryable = False
    _can_fallback = False


class EmptyCompletionError(ProviderError):
    """A turn ended with neither text nor a tool call (raised by the loop)."""

    code = "provider.empty"
    _retryable = False
    _can_fallback = False


# -- mapping an HTTP failure ---------------------------------------------------------------


def _parse_body(body: object) -> object:
    if isinstance(body, bytes | bytearray):
        body = bytes(body).decode("utf-8", errors="replace")
    if isinstance(body, str):
        text = body.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text
    return body


def _str_or_none(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _vendor_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """``(type, code, message)`` from an OpenAI-, Anthropic- or FastAPI-style error body."""
    if isinstance(body, str):
        return None, None, body
    if not isinstance(body, Mapping):
        return None, None, None
    error = body.get("error")
    if isinstance(error, Mapping):
        # OpenAI {"error": {type, code, message}}; Anthropic {"type": "error", "error": {...}}
        return (
            _str_or_none(error.get("type")),
            _str_or_none(error.get("code")),
            _str_or_none(error.get("message")),
        )
    if isinstance(error, str):
        return _str_or_none(body.get("type")), _str_or_none(body.get("code")), error
    message = body.get("message", body.get("detail"))
    return _str_or_none(body.get("type")), _str_or_none(body.get("code")), _str_or_none(message)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    for key, found in headers.items():
        if key.lower() == name:
            return found
    return None


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``retry-after`` (seconds or an HTTP date)."""
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


def _should_retry(headers: Mapping[str, str]) -> bool | None:
    value = _header(headers, "x-should-retry")
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    return None


_CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
# Anthropic signals an over-long prompt only through the message of a 400; these phrases are
# the documented wordings (a fallback -- codes are preferred when a vendor sends one).
_CONTEXT_PHRASES = ("prompt is too long", "maximum context length", "context window")


def _is_context_length(
    status: int, vendor_type: str | None, vendor_code: str | None, message: str | None
) -> bool:
    if vendor_code in _CONTEXT_CODES or vendor_type in _CONTEXT_CODES:
        return True
    if status in (400, 413) and message:
        lowered = message.lower()
        return any(phrase in lowered for phrase in _CONTEXT_PHRASES)
    return False


def _error_class(
    status: int, vendor_type: str | None, vendor_code: str | None, message: str | None
) -> type[ProviderError]:
    if _is_context_length(status, vendor_type, vendor_code, message):
        return ContextLengthError
    if vendor_type == "overloaded_error" or status in (503, 529):
        return OverloadedError
    if status in (401, 403):
        return AuthenticationError
    if status == 404:
        return NotFoundError
    if status == 408:
        return ProviderTimeoutError
    if status == 429:
        return RateLimitError
    if status in (400, 413, 422):
        return InvalidRequestError
    if status >= 500:
        return ServerError
    return ProviderError


def error_from_status(
    status: int,
    body: object,
    headers: Mapping[str, str] | None = None,
    *,
    provider: str | None,
) -> ProviderError:
    """Map a failed HTTP response onto the taxonomy.

    ``body`` may be raw bytes/text or already-parsed JSON.  OpenAI-style
    ``{"error": {"type", "code", "message"}}`` and Anthropic-style
    ``{"type": "error", "error": {"type", "message"}}`` bodies give the vendor type, code and
    message; ``retry-after`` (seconds or HTTP date), ``retry-after-ms`` and ``x-should-retry``
    give the retry hints; ``request-id`` / ``x-request-id`` the request id.
    """
    headers = headers if headers is not None else {}
    parsed = _parse_body(body)
    vendor_type, vendor_code, vendor_message = _vendor_fields(parsed)
    cls = _error_class(status, vendor_type, vendor_code, vendor_message)
    detail = vendor_message or (parsed if isinstance(parsed, str) else None) or "no details"
    if len(detail) > _MESSAGE_LIMIT:
        detail = detail[:_MESSAGE_LIMIT] + "…"
    kind = f" {vendor_type}" if vendor_type else ""
    who = f"{provider}: " if provider else ""
    return cls(
        f"{who}HTTP {status}{kind}: {detail}",
        status=status,
        vendor_type=vendor_type,
        vendor_code=vendor_code,
        retry_after=parse_retry_after(headers),
        request_id=_header(headers, "request-id") or _header(headers, "x-request-id"),
        provider=provider,
        should_retry=_should_retry(headers),
        body=parsed,
    )
