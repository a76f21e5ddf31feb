"""agentrig-anthropic: the Anthropic Messages API provider plugin for agentrig.

Registered as ``anthropic`` in the ``agentrig.providers`` entry-point group.  Speaks
``POST {base_url}/v1/messages`` with httpx (no vendor SDK).
"""

from __future__ import annotations

from agentrig_anthropic._models import MODELS, find_model
from agentrig_anthropic._options import DEFAULT_BASE_URL, DEFAULT_THINKING_BUDGETS, AnthropicOptions
from agentrig_anthropic._provider import STRUCTURED_OUTPUTS_BETA, AnthropicProvider, factory
from agentrig_anthropic._wire import STOP_DETAILS, STOP_REASONS

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_THINKING_BUDGETS",
    "MODELS",
    "STOP_DETAILS",
    "STOP_REASONS",
    "STRUCTURED_OUTPUTS_BETA",
    "AnthropicOptions",
    "AnthropicProvider",
    "factory",
    "find_model",
]
