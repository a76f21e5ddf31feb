"""agentrig-openai: the OpenAI Chat Completions provider plugin for agentrig.

Registered as ``openai`` in the ``agentrig.providers`` entry-point group.  Speaks
``POST {base_url}/chat/completions`` with httpx (no vendor SDK), so it also serves
OpenAI-compatible servers (Azure-compatible gateways, vLLM, Ollama, llama.cpp, Groq, ...).
"""

from __future__ import annotations

from agentrig_openai._models import CAPABILITIES, MODELS, find_capabilities, find_model
from agentrig_openai._options import DEFAULT_BASE_URL, OpenAIOptions
from agentrig_openai._provider import OpenAIProvider, factory
from agentrig_openai._wire import STOP_REASONS

__all__ = [
    "CAPABILITIES",
    "DEFAULT_BASE_URL",
    "MODELS",
    "STOP_REASONS",
    "OpenAIOptions",
    "OpenAIProvider",
    "factory",
    "find_capabilities",
    "find_model",
]
