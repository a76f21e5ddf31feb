"""What one model request carries: its configuration, messages, tools and the size guard.

Pure assembly, no I/O besides the ``request_config`` waterfall: the model call
(:mod:`._model_call`) sends what this builds, and logs the guard's refusal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentrig.errors import HookError
from agentrig.lifecycle import RequestConfig
from agentrig.llm import (
    EFFORT_LEVELS,
    Message,
    ModelRequest,
    ResponseFormat,
    SystemMessage,
    ToolSpec,
    UserMessage,
)

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent
    from agentrig.agent._context import ContextUsage
    from agentrig.agent._port import AgentPort

__all__ = [
    "CONTEXT_GUARD_RATIO",
    "CONTEXT_GUARD_TEXT",
    "build_request",
    "context_overflow",
    "initial_config",
    "request_config",
]

CONTEXT_GUARD_RATIO = 0.95
"""The hard stop: a request above this share of the window is not sent."""

CONTEXT_GUARD_TEXT = (
    "The request was not sent: it needs about {tokens} tokens, more than {percent}% of the "
    "{window}-token context window of {model}."
)
"""The guard's diagnostic (neutral mechanism text); ``[agents.<id>] compaction.guard_text``
replaces it."""


_EFFORTS = (*EFFORT_LEVELS, "auto")

# What :func:`build_request` fills in: pydantic's ``model_copy(update=...)`` sets the given
# fields unvalidated, as ``model_construct`` does, without ``model_construct``'s Python walk
# over every field (half the instructions: ``benchmarks/README.md``).  Frozen, never sent.
_BLANK = ModelRequest(model="", messages=())


async def request_config(port: AgentPort, *, remember: bool = True) -> RequestConfig:
    """The ``request_config`` waterfall's choice for the next request (remembered as the
    start of the next one unless ``remember`` is false: a side call's choice is its own)."""
    agent = port.agent
    # What the machine would use: the agent's options on its first request, the
    # configuration of its last logged request header afterwards.
    default = port.last_request_config
    if default is None:
        default = initial_config(agent)
    hooks = agent.runtime.hooks
    if not hooks.has_listeners("request_config"):
        if remember:
            port.last_request_config = default
        return default  # what the waterfall's end gives, without a coroutine
    chosen = await hooks.waterfall("request_config", default, _keep_config)
    if chosen.reasoning_effort is not None and chosen.reasoning_effort not in _EFFORTS:
        raise HookError(
            f"a request_config listener set reasoning_effort={chosen.reasoning_effort!r}; "
            f"it is one of {', '.join(_EFFORTS)} or None"
        )
    if remember:
        port.last_request_config = chosen
    return chosen


def initial_config(agent: Agent) -> RequestConfig:
    """The configuration of an agent's first request: its ``[agents.<id>]`` settings."""
    cfg = agent.config
    return RequestConfig(
        agent=agent,
        provider=cfg.provider,
        model=cfg.model,
        max_tokens=cfg.max_tokens,
        temperature=cfg.temperature,
        reasoning_effort=cfg.reasoning_effort,
        # ``[agents.<id>] options``: extra fields of every request (a provider merges them
        # into its request body); plain dicts and lists again, as the provider sends them
        options=cfg.model_dump(include={"options"})["options"] if cfg.options else {},
    )


async def _keep_config(payload: RequestConfig) -> RequestConfig:
    return payload  # the end of the request_config waterfall: the configuration as it is


def request_messages(
    view: Sequence[Message], system_extra: str | None, extra_instruction: str | None
) -> Sequence[Message]:
    """The session's messages, with the structured-output and turn-end instructions added."""
    if not (system_extra or extra_instruction):
        return view
    items = list(view)
    if system_extra:
        if items and isinstance(items[0], SystemMessage):
            items[0] = SystemMessage(text=f"{items[0].text}\n\n{system_extra}")
        else:
            items.insert(0, SystemMessage(text=system_extra))
    if extra_instruction:
        items.append(UserMessage.of(extra_instruction, source="instruction"))
    return tuple(items)


def context_overflow(usage: ContextUsage, model: str, text: str | None = None) -> str | None:
    """Why a request using ``usage`` of ``model``'s window must not be sent (None: it fits).

    ``text`` is the diagnostic's template (placeholders ``{tokens}``, ``{percent}``,
    ``{window}``, ``{model}``): the product layer's wording seam.
    """
    if usage.used <= usage.window * CONTEXT_GUARD_RATIO:
        return None
    return (text or CONTEXT_GUARD_TEXT).format(
        tokens=usage.used,
        percent=int(CONTEXT_GUARD_RATIO * 100),
        window=usage.window,
        model=model,
    )


def build_request(
    cfg: RequestConfig,
    messages: Sequence[Message],
    specs: tuple[ToolSpec, ...],
    tool_choice: str | None,
    response_format: ResponseFormat | None,
    transport: str | None,
) -> ModelRequest:
    """The request, built without re-validating what the loop already holds validated
    (validating would walk the whole history per call)."""
    return _BLANK.model_copy(
        update={
            "model": cfg.model,
            "messages": messages,
            "tools": specs,
            "tool_choice": tool_choice,
            "max_tokens": cfg.max_tokens,
            "temperature": cfg.temperature,
            "stop": (),
            "response_format": response_format,
            "structured_output": transport,
            "reasoning_effort": cfg.reasoning_effort,
            "parallel_tool_calls": None,
            "options": dict(cfg.options),
        }
    )
