"""agentrig-openai: the OpenAI provider plugins for agentrig.

Registered in the ``agentrig.providers`` entry-point group as ``openai`` (Chat Completions,
``POST {base_url}/chat/completions``, which OpenAI-compatible servers -- Azure-compatible
gateways, vLLM, Ollama, llama.cpp, Groq, ... -- also speak) and ``openai-responses`` (the
Responses API, ``{base_url}/responses`` over HTTP/SSE or its WebSocket mode).  httpx, no
vendor SDK.
"""

from __future__ import annotations

from agentrig_openai._models import CAPABILITIES, MODELS, find_capabilities, find_model
from agentrig_openai._options import DEFAULT_BASE_URL, OpenAIOptions
from agentrig_openai._provider import OpenAIProvider, factory
from agentrig_openai._responses_options import ResponsesOptions
from agentrig_openai._responses_provider import OpenAIResponsesProvider, responses_factory
from agentrig_openai._wire import STOP_REASONS

__all__ = [
    "CAPABILITIES",
    "DEFAULT_BASE_URL",
    "MODELS",
    "STOP_REASONS",
    "OpenAIOptions",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "ResponsesOptions",
    "factory",
    "find_capabilities",
    "find_model",
    "responses_factory",
]
