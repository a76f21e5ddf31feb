"""The provider error taxonomy and error_from_status."""

from __future__ import annotations

import email.utils
import time

import pytest

from agentrig.errors import AgentrigError, error_info
from agentrig.llm import (
    AuthenticationError,
    CapabilityError,
    ContextLengthError,
    EmptyCompletionError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    error_from_status,
    parse_retry_after,
)

OPENAI_429 = {
    "error": {
        "message": "Rate limit reached for gpt-x",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
ANTHROPIC_529 = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_openai_style_body() -> None:
    error = error_from_status(
        429, OPENAI_429, {"x-request-id": "req_1", "retry-after": "2"}, provider="openai"
    )
    assert type(error) is RateLimitError
    assert error.code == "provider.rate_limit"
    assert error.category == "provider"
    assert error.status == 429
    assert error.vendor_type == "requests"
    assert error.vendor_code == "rate_limit_exceeded"
    assert error.retry_after == 2.0
    assert error.request_id == "req_1"
    assert error.provider == "openai"
    assert error.retryable
    assert error.can_fallback
    assert "Rate limit reached" in str(error)
    assert isinstance(error, ProviderError)
    assert isinstance(error, AgentrigError)


def test_anthropic_style_body_as_bytes() -> None:
    import json

    error = error_from_status(
        529, json.dumps(ANTHROPIC_529).encode(), {"request-id": "req_a"}, provider="anthropic"
    )
    assert type(error) is OverloadedError
    assert error.vendor_type == "overloaded_error"
    assert error.vendor_code is None
    assert error.request_id == "req_a"
    assert error.retryable
    assert error.can_fallback
    assert error.body == ANTHROPIC_529


@pytest.mark.parametrize(
    ("status", "cls", "retryable", "can_fallback"),
    [
        (400, InvalidRequestError, False, False),
        (422, InvalidRequestError, False, False),
        (401, AuthenticationError, False, True),
        (403, AuthenticationError, False, True),
        (404, NotFoundError, False, True),
        (408, ProviderTimeoutError, True, True),
        (409, ProviderError, True, False),
        (429, RateLimitError, True, True),
        (500, ServerError, True, True),
        (502, ServerError, True, True),
        (503, OverloadedError, True, True),
        (529, OverloadedError, True, True),
        (418, ProviderError, False, False),
    ],
)
def test_status_mapping(
    status: int, cls: type[ProviderError], retryable: bool, can_fallback: bool
) -> None:
    error = error_from_status(status, None, {}, provider="p")
    assert type(error) is cls
    assert error.retryable is retryable
    assert error.can_fallback is can_fallback
    assert error.recoverable is retryable
    assert error_info(error).is_retryable is retryable


def test_codes() -> None:
    assert AuthenticationError("x").code == "provider.auth"
    assert InvalidRequestError("x").code == "provider.invalid_request"
    assert NotFoundError("x").code == "provider.not_found"
    assert ContextLengthError("x").code == "provider.context_length"
    assert OverloadedError("x").code == "provider.overloaded"
    assert ServerError("x").code == "provider.server"
    assert ProviderConnectionError("x").code == "provider.connection"
    assert ProviderTimeoutError("x").code == "provider.timeout"
    assert ProviderStreamError("x").code == "provider.stream"
    assert EmptyCompletionError("x").code == "provider.empty"
    capability = CapabilityError("x")
    assert capability.code == "provider.capability"
    assert capability.category == "user"
    assert not capability.retryable
    assert ProviderConnectionError("x").retryable
    assert ProviderConnectionError("x").can_fallback
    assert ProviderTimeoutError("x").can_fallback
    assert not ProviderError("unknown").can_fallback
    assert not ProviderError("unknown").retryable


def test_context_length_detection() -> None:
    openai = {
        "error": {
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
            "message": "This model's maximum context length is 8192 tokens",
        }
    }
    anthropic = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 210000 tokens > 200000 maximum",
        },
    }
    for body in (openai, anthropic):
        error = error_from_status(400, body, {}, provider="p")
        assert type(error) is ContextLengthError
        assert isinstance(error, InvalidRequestError)
        assert not error.can_fallback


def test_x_should_retry_overrides() -> None:
    assert not error_from_status(500, None, {"x-should-retry": "false"}, provider="p").retryable
    assert error_from_status(400, None, {"X-Should-Retry": "true"}, provider="p").retryable


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    waited = parse_retry_after({"retry-after": date}, now=now)
    assert waited is not None
    assert 28 <= waited <= 31
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=now) == 0.0


def test_headers_may_be_httpx_headers() -> None:
    import httpx  # a hard dependency

    headers = httpx.Headers({"Request-Id": "r9", "Retry-After": "4"})
    error = error_from_status(429, "", headers, provider="p")
    assert error.request_id == "r9"
    assert error.retry_after == 4.0


def test_non_json_and_odd_bodies() -> None:
    text = error_from_status(502, "<html>Bad gateway</html>", {}, provider="gw")
    assert type(text) is ServerError
    assert "Bad gateway" in str(text)
    assert text.vendor_type is None
    detail = error_from_status(422, {"detail": "bad field"}, {}, provider=None)
    assert "bad field" in str(detail)
    string_error = error_from_status(401, {"error": "invalid key"}, None, provider="p")
    assert type(string_error) is AuthenticationError
    assert "invalid key" in str(string_error)
    long = error_from_status(500, "x" * 5000, {}, provider="p")
    assert len(str(long)) < 700


def test_overloaded_vendor_type_wins_over_status() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    assert type(error_from_status(500, body, {}, provider="a")) is OverloadedError


def test_stream_error_keeps_vendor_object() -> None:
    vendor = {"type": "overloaded_error", "message": "Overloaded"}
    error = ProviderStreamError("stream failed", error=vendor, provider="anthropic")
    assert error.error == vendor
    assert error.vendor_type == "overloaded_error"
    assert error.retryable
    assert error.can_fallback
    other = ProviderStreamError("bad", error={"type": "invalid_request_error", "message": "x"})
    assert not other.retryable
    assert not other.can_fallback
