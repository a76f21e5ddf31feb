"""The ``[providers.<id>.options]`` table of an ``openai`` provider."""

from __future__ import annotations

from typing import ClassVar, Literal

from agentrig.llm.http import HttpProviderOptions

__all__ = ["DEFAULT_BASE_URL", "OpenAIEndpointOptions", "OpenAIOptions"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIEndpointOptions(HttpProviderOptions):
    """What both OpenAI providers (Chat Completions and Responses) take.

    ``base_url`` may point at any OpenAI-compatible server; ``structured_output`` then
    overrides what the provider declares for every model (``None`` keeps the model table).
    The connection, retry and ``base_url`` rules come from
    :class:`~agentrig.llm.http.HttpProviderOptions`.
    """

    vendor_base_url: ClassVar[str | None] = DEFAULT_BASE_URL

    base_url: str = DEFAULT_BASE_URL
    organization: str | None = None
    project: str | None = None
    structured_output: Literal["native", "json_mode", "none"] | None = None
    strict_tools: Literal["auto", "always", "never"] = "auto"


class OpenAIOptions(OpenAIEndpointOptions):
    """Options of the OpenAI Chat Completions provider (``kind = "openai"``)."""

    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    system_role: Literal["system", "developer"] = "system"
    stream_usage: bool = True
