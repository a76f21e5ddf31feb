"""Anthropic model metadata: context window, output limit, pricing and capabilities.

Numbers are copied from the vendor's own model pages (``source`` names the page and the day
it was read); nothing is estimated.  Pricing is USD per 1M tokens; ``cache_write`` is the
5-minute cache-write rate.  Where a page did not state a cache rate it is left ``None``
(the registry then prices those tokens at the input rate).
"""

from __future__ import annotations

import re

from agentrig.llm import Capabilities, ModelInfo, Pricing

__all__ = ["MODELS", "find_model"]

_DATE_SUFFIX = re.compile(r"-\d{8}$")
_READ = "read 2026-12-03"
_PAGE = "https://platform.claude.com/docs/en/models/{}/overview"


def _info(
    model: str,
    page: str,
    *,
    context: int,
    output: int,
    pricing: Pricing,
    thinking: bool,
    vision: bool | None = None,
) -> ModelInfo:
    return ModelInfo(
        model=model,
        context_window=context,
        max_output_tokens=output,
        pricing=pricing,
        capabilities=Capabilities(
            streaming=True,
            reasoning_effort=("none", "minimal", "low", "medium", "high", "max")
            if thinking
            else (),
            vision=vision,
        ),
        source=f"{_PAGE.format(page)} ({_READ})",
    )


MODELS: tuple[ModelInfo, ...] = (
    _info(
        "claude-sonnet-4-5",
        "sonnet-4-5",
        context=200_000,
        output=64_000,
        pricing=Pricing(input="3", output="15"),
        thinking=True,
    ),
    _info(
        "claude-haiku-4-5",
        "haiku-4-5",
        context=200_000,
        output=64_000,
        pricing=Pricing(input="1", output="5"),
        thinking=True,
    ),
    # Manual (budget) extended thinking is deprecated on Sonnet 4.6 and refused by Sonnet 5,
    # which think adaptively: no budget is ever sent to them (pass options.thinking instead).
    _info(
        "claude-sonnet-4-6",
        "sonnet-4-6",
        context=1_000_000,
        output=128_000,
        pricing=Pricing(input="3", output="15"),
        thinking=False,
    ),
    _info(
        "claude-sonnet-5",
        "sonnet-5",
        context=1_000_000,
        output=128_000,
        pricing=Pricing(input="2", output="10", cache_read="0.20", cache_write="2.50"),
        thinking=False,
        vision=True,
    ),
)
"""Models with vendor-sourced numbers; the factory registers them in the model registry."""

_BY_NAME: dict[str, ModelInfo] = {info.model: info for info in MODELS}


def find_model(model: str) -> ModelInfo | None:
    """The table entry for ``model``; a dated id (``claude-sonnet-4-5-20250929``) falls back
    to its alias (``claude-sonnet-4-5``)."""
    return _BY_NAME.get(model) or _BY_NAME.get(_DATE_SUFFIX.sub("", model))
