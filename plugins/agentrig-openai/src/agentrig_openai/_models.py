"""OpenAI model metadata: context window, output limit, pricing and capabilities.

Numbers are copied from the vendor's own model pages (``source`` names the page and the day
it was read); nothing is estimated.  Pricing is USD per 1M tokens, standard tier.  Models
whose numbers were not confirmed on a vendor page here get capability declarations only
(:data:`CAPABILITIES`) and are not registered in the model registry -- the registry's
documented defaults (and its one warning) apply to them until someone adds sourced numbers.
"""

from __future__ import annotations

import re

from agentrig.llm import Capabilities, ModelInfo, Pricing

__all__ = ["CAPABILITIES", "MODELS", "find_capabilities", "find_model"]

_DATE_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")
_READ = "read 2026-12-03"

_CHAT = Capabilities(
    structured_output="native",
    tool_choice=True,
    parallel_tool_calls=True,
    streaming=True,
    reasoning_effort=(),
    vision=True,
)
"""A non-reasoning chat model with json_schema response_format, tools and image input."""

_GPT5 = Capabilities(
    structured_output="native",
    tool_choice=True,
    parallel_tool_calls=True,
    streaming=True,
    reasoning_effort=("minimal", "low", "medium", "high"),
    vision=True,
)

_O_SERIES = Capabilities(
    structured_output="native",
    tool_choice=True,
    streaming=True,
    reasoning_effort=("low", "medium", "high"),
)

MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        model="gpt-5-mini",
        context_window=400_000,
        max_output_tokens=128_000,
        pricing=Pricing(input="0.25", output="2.00", cache_read="0.025"),
        capabilities=_GPT5,
        source=f"https://developers.openai.com/api/docs/models/gpt-5-mini ({_READ})",
    ),
    ModelInfo(
        model="gpt-5-nano",
        context_window=400_000,
        max_output_tokens=128_000,
        pricing=Pricing(input="0.05", output="0.40", cache_read="0.005"),
        capabilities=_GPT5,
        source=f"https://developers.openai.com/api/docs/models/gpt-5-nano ({_READ})",
    ),
)
"""Models with vendor-sourced numbers; the factory registers them in the model registry."""

CAPABILITIES: dict[str, Capabilities] = {
    "gpt-4o": _CHAT,
    "gpt-4o-mini": _CHAT,
    "gpt-4.1": _CHAT,
    "gpt-4.1-mini": _CHAT,
    "gpt-4.1-nano": _CHAT,
    "o3": Capabilities(
        structured_output="native",
        tool_choice=True,
        streaming=True,
        reasoning_effort=("low", "medium", "high"),
        vision=True,
    ),
    "o4-mini": Capabilities(
        structured_output="native",
        tool_choice=True,
        streaming=True,
        reasoning_effort=("low", "medium", "high"),
        vision=True,
    ),
    "o3-mini": _O_SERIES,
    "gpt-5": _GPT5,
}
"""Capability declarations for models without sourced numbers (no registry entry)."""

_BY_NAME: dict[str, ModelInfo] = {info.model: info for info in MODELS}


def _base(model: str) -> str:
    return _DATE_SUFFIX.sub("", model)


def find_model(model: str) -> ModelInfo | None:
    """The table entry for ``model``; a dated snapshot (``gpt-5-mini-2025-08-07``) falls back
    to its alias (``gpt-5-mini``)."""
    return _BY_NAME.get(model) or _BY_NAME.get(_base(model))


def find_capabilities(model: str) -> Capabilities | None:
    """What this package declares about ``model`` (``None``: nothing, which is not a denial)."""
    info = find_model(model)
    if info is not None:
        return info.capabilities
    return CAPABILITIES.get(model) or CAPABILITIES.get(_base(model))
