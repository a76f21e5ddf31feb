"""Reading and switching an agent's model after construction.

Synchronous on purpose: what it reads (the configured provider and model, the configuration
of the last request) is known from construction on, so "which model?" needs no await.  A
switch is checked before it is kept -- the provider must exist, must not say it lacks the
model, and the model must be able to serve what the agent's requests need -- and applies
from the next model round (a round in flight keeps the model it was sent to).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from agentrig.agent._request import initial_config
from agentrig.errors import AgentrigError
from agentrig.ids import ProviderId
from agentrig.lifecycle import RequestConfig
from agentrig.llm import (
    EFFORT_LEVELS,
    PROVIDERS,
    CapabilityError,
    ModelListing,
    ModelRequest,
    Provider,
    ToolSpec,
    require_capabilities,
)

if TYPE_CHECKING:
    from agentrig.agent._port import AgentPort

__all__ = ["ModelChoiceError", "active_config", "switch_model"]


_EFFORTS = (*EFFORT_LEVELS, "auto", None)


class ModelChoiceError(AgentrigError):
    """A model switch was refused; ``code`` says why: ``model.invalid`` (an empty name),
    ``model.unknown_provider``, ``model.unknown`` (the provider lists its models and this is
    not one) or ``model.incapable`` (it lacks a capability the agent's requests need)."""

    code = "model.invalid"
    category = "user"


def active_config(port: AgentPort) -> RequestConfig:
    """The configuration the next round starts from (before ``request_config`` hooks)."""
    last = port.last_request_config
    return last if last is not None else initial_config(port.agent)


_KEEP: Any = object()


def switch_model(
    port: AgentPort, model: str, provider: str | None, reasoning_effort: Any = _KEEP
) -> RequestConfig:
    """Check ``model`` (on ``provider``, default: the current one) and make it the agent's;
    ``reasoning_effort`` replaces the agent's when given (None: ask for none)."""
    port.ensure_alive()
    if reasoning_effort is not _KEEP and reasoning_effort not in _EFFORTS:
        raise ModelChoiceError(
            f"reasoning_effort is one of {', '.join(map(str, _EFFORTS[:-1]))} or None, "
            f"not {reasoning_effort!r}"
        )
    if not isinstance(model, str) or not model.strip():
        raise ModelChoiceError(f"a model is a non-empty name, not {model!r}")
    current = active_config(port)
    target = current.provider if provider is None else ProviderId(provider)
    instance = port.runtime.catalog(PROVIDERS).get(target)
    if instance is None:
        known = ", ".join(sorted(port.runtime.catalog(PROVIDERS).ids())) or "none"
        raise ModelChoiceError(
            f"no provider {target!r} is configured (configured: {known})",
            code="model.unknown_provider",
        )
    where = f"provider {target!r}"
    if isinstance(instance, ModelListing) and not instance.lists_model(model):
        raise ModelChoiceError(f"{where} does not serve the model {model!r}", code="model.unknown")
    _require_fit(port, instance, model, current, where)
    chosen = attrs.evolve(current, provider=target, model=model)
    if reasoning_effort is not _KEEP:
        chosen = attrs.evolve(chosen, reasoning_effort=reasoning_effort)
    port.last_request_config = chosen
    return chosen


def _require_fit(
    port: AgentPort, provider: Provider, model: str, current: RequestConfig, where: str
) -> None:
    """Refuse a model that lacks what the agent's next request would need (its reasoning
    effort, images in its history ...), judged from the model's declared capabilities."""
    specs: tuple[ToolSpec, ...] = tuple(
        port.agent.tool_spec(tool) for tool in port.agent.offered_tools()
    )
    probe = ModelRequest.model_construct(
        model=model,
        messages=tuple(port.session.derive_messages()),
        tools=specs,
        tool_choice=None,
        reasoning_effort=current.reasoning_effort,
        parallel_tool_calls=None,
        structured_output=None,
    )
    try:
        require_capabilities(provider, probe, provider.capabilities(model))
    except CapabilityError as exc:
        raise ModelChoiceError(
            f"{where}, model {model!r} cannot serve this agent: {exc}", code="model.incapable"
        ) from exc
