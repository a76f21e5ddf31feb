"""The ``[providers.<id>.options]`` table of an ``openai`` provider."""

from __future__ import annotations

import ipaddress
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_BASE_URL", "OpenAIOptions"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _is_private_host(host: str) -> bool:
    lowered = host.lower().rstrip(".")
    if lowered == "localhost" or lowered.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(lowered.strip("[]"))
    except ValueError:
        return False  # a DNS name: the runtime's egress policy checks what it resolves to
    return not address.is_global


class OpenAIOptions(BaseModel):
    """Options of the OpenAI Chat Completions provider.

    ``base_url`` may point at any OpenAI-compatible server; ``structured_output`` then
    overrides what the provider declares for every model (``None`` keeps the model table).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    timeout: float = Field(default=600.0, gt=0, description="read/write/pool timeout, seconds")
    connect_timeout: float = Field(default=10.0, gt=0, description="connect timeout, seconds")
    max_retries: int = Field(default=2, ge=0, le=10)
    retry_base_delay: float = Field(default=0.5, ge=0)
    retry_max_delay: float = Field(default=8.0, ge=0)
    max_retry_after: float = Field(default=60.0, ge=0, description="cap on a server's Retry-After")
    organization: str | None = None
    project: str | None = None
    allow_private_base_url: bool = False
    structured_output: Literal["native", "json_mode", "none"] | None = None
    strict_tools: Literal["auto", "always", "never"] = "auto"
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    system_role: Literal["system", "developer"] = "system"
    stream_usage: bool = True
    extra_headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_base_url(self) -> OpenAIOptions:
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
        """Whether ``base_url`` is OpenAI's own API."""
        return self.base_url.rstrip("/") == DEFAULT_BASE_URL
