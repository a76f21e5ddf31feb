"""The ``[providers.<id>.options]`` table of an ``anthropic`` provider."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from agentrig.llm.http import HttpProviderOptions

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


class AnthropicOptions(HttpProviderOptions):
    """Options of the Anthropic Messages provider.

    The connection, retry and ``base_url`` rules come from
    :class:`~agentrig.llm.http.HttpProviderOptions`.
    """

    vendor_base_url: ClassVar[str | None] = DEFAULT_BASE_URL

    base_url: str = DEFAULT_BASE_URL
    anthropic_version: str = "2023-06-01"
    beta: tuple[str, ...] = ()
    structured_output: Literal["native", "none"] | None = None
    default_max_tokens: int | None = Field(default=None, gt=0)
    thinking_budgets: dict[Effort, int] = Field(
        default_factory=lambda: dict(DEFAULT_THINKING_BUDGETS)
    )

    @model_validator(mode="after")
    def _check_thinking_budgets(self) -> AnthropicOptions:
        for effort, budget in self.thinking_budgets.items():
            if budget < 1024:
                raise ValueError(f"thinking_budgets[{effort!r}] must be at least 1024")
        return self
