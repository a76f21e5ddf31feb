"""The ``[providers.<id>.options]`` table of an ``anthropic`` provider."""

from __future__ import annotations

import ipaddress
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_THINKING_BUDGETS", "AnthropicOptions"]

DEFAULT_BASE_URL = "https://api.anthropic.com"

Effort = Literal["minimal", "low", "medium", "high", "max"]

DEFAULT_THINKING_BUDGETS: dict[Effort, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "max": 32768,
}
"""``reasoning_effort`` -> extended-thinking ``budget_tokens`` (agentrig's policy, not a
vendor number; 1024 is the API's minimum budget).  Override with ``thinking_budgets``."""


def _is_private_host(host: str) -> bool:
    lowered = host.lower().rstrip(".")
    if lowered == "localhost" or lowered.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(lowered.strip("[]"))
    except ValueError:
        return False  # a DNS name: the runtime's egress policy checks what it resolves to
    return not address.is_global


class AnthropicOptions(BaseModel):
    """Options of the Anthropic Messages provider."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    anthropic_version: str = "2023-06-01"
    beta: tuple[str, ...] = ()
    timeout: float = Field(default=600.0, gt=0, description="read/write/pool timeout, seconds")
    connect_timeout: float = Field(default=10.0, gt=0, description="connect timeout, seconds")
    max_retries: int = Field(default=2, ge=0, le=10)
    retry_base_delay: float = Field(default=0.5, ge=0)
    retry_max_delay: float = Field(default=8.0, ge=0)
    max_retry_after: float = Field(default=60.0, ge=0, description="cap on a server's Retry-After")
    allow_private_base_url: bool = False
    structured_output: Literal["native", "none"] | None = None
    default_max_tokens: int | None = Field(default=None, gt=0)
    thinking_budgets: dict[Effort, int] = Field(
        default_factory=lambda: dict(DEFAULT_THINKING_BUDGETS)
    )
    extra_headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_base_url(self) -> AnthropicOptions:
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
        for effort, budget in self.thinking_budgets.items():
            if budget < 1024:
                raise ValueError(f"thinking_budgets[{effort!r}] must be at least 1024")
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
        """Whether ``base_url`` is Anthropic's own API."""
        return self.base_url.rstrip("/") == DEFAULT_BASE_URL
