"""API errors, rendered in each API's own shape so the official SDKs raise their own classes.

An :class:`ApiError` carries the HTTP status, an agentrig ``code`` and a message that is safe to
show a client.  Internal exceptions never reach a client: :func:`internal_error` logs the whole
exception under a fresh error id and returns an error that only names that id.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from starlette.responses import JSONResponse

from agentrig.diagnostics import get_logger
from agentrig.errors import AgentrigError

__all__ = [
    "ApiError",
    "Dialect",
    "error_event",
    "error_response",
    "internal_error",
    "reported_error",
]

_log = get_logger("server")

Dialect = Literal["openai", "anthropic"]

# status -> (OpenAI error type, Anthropic error type)
_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("invalid_request_error", "authentication_error"),
    402: ("insufficient_quota", "billing_error"),
    403: ("permission_error", "permission_error"),
    404: ("invalid_request_error", "not_found_error"),
    408: ("invalid_request_error", "timeout_error"),
    409: ("invalid_request_error", "invalid_request_error"),
    413: ("invalid_request_error", "request_too_large"),
    415: ("invalid_request_error", "invalid_request_error"),
    421: ("invalid_request_error", "invalid_request_error"),
    429: ("rate_limit_exceeded", "rate_limit_error"),
    500: ("server_error", "api_error"),
    502: ("server_error", "api_error"),
    503: ("server_error", "overloaded_error"),
    504: ("server_error", "api_error"),
}


class ApiError(AgentrigError):
    """A request failed with ``status``; ``message`` is written for the client."""

    code = "server.request"
    category = "user"

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str = "invalid_request",
        param: str | None = None,
        retry_after: int | None = None,
        retry: bool | None = None,
    ) -> None:
        super().__init__(message, code=f"server.{code}")
        self.status = status
        self.api_code = code
        self.param = param
        self.retry_after = retry_after
        #: False: tell the SDKs not to retry (``x-should-retry: false``), as for a spent budget
        self.retry = retry

    def status_for(self, dialect: Dialect) -> int:
        """The status in ``dialect``: a spent budget is Anthropic's 402 ``billing_error``
        (its SDK's ``PaymentRequiredError``) and a 429 for OpenAI clients (as OpenAI answers
        a spent quota, and LiteLLM a spent budget)."""
        if self.api_code == "budget_exceeded" and dialect == "anthropic":
            return 402
        return self.status

    def body(self, dialect: Dialect) -> dict[str, Any]:
        openai_type, anthropic_type = _TYPES.get(self.status_for(dialect), _TYPES[500])
        if self.api_code == "budget_exceeded":
            openai_type = "budget_exceeded"  # LiteLLM's type for it
        if dialect == "anthropic":
            return {"type": "error", "error": {"type": anthropic_type, "message": self.message}}
        return {
            "error": {
                "message": self.message,
                "type": openai_type,
                "param": self.param,
                "code": self.api_code,
            }
        }


def internal_error(exc: BaseException) -> ApiError:
    """Log ``exc`` in full under a new error id; the client sees only the id."""
    error_id = f"err_{secrets.token_hex(8)}"
    _log.error("internal error %s: %r", error_id, exc, exc_info=exc)
    return ApiError(
        500, f"internal server error (error id {error_id})", code="internal_error", param=None
    )


def reported_error(wording: str) -> ApiError:
    """A reply that reported an error as its stop reason (classified replies): a failed
    upstream, as a provider error is."""
    return ApiError(
        502,
        f"the agent's model reported an error instead of an answer ({wording})",
        code="upstream_error",
    )


def error_response(error: ApiError, dialect: Dialect) -> JSONResponse:
    headers = {"retry-after": str(error.retry_after)} if error.retry_after is not None else {}
    if error.retry is False:
        headers["x-should-retry"] = "false"
    if error.status in (408, 413):  # the body was not read whole: the connection is spent
        headers["connection"] = "close"
    status = error.status_for(dialect)
    return JSONResponse(error.body(dialect), status_code=status, headers=headers)


def error_event(error: ApiError, dialect: Dialect) -> dict[str, Any]:
    """The body of an error that happens after a stream started (sent as one SSE event)."""
    return error.body(dialect)
