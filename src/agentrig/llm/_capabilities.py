"""What a provider (for a given model) declares it can do, and the one way to ask.

Every field is optional: ``None`` means the provider said nothing, which is *not* the same as
"unsupported".  Callers that must act on silence state their own assumption.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs

from agentrig.llm._errors import CapabilityError
from agentrig.messages import ReasoningEffort

if TYPE_CHECKING:
    from agentrig.llm._provider import Provider

__all__ = ["CAPABILITY_NAMES", "Capabilities", "capability", "require_capability"]


@attrs.frozen(slots=True)
class Capabilities:
    """Declared capabilities; ``None`` everywhere means "not declared".

    ``structured_output`` is the best transport for a response schema (``"none"`` = no
    transport, use prompting).  ``native_web_tools`` names server-side tools that are supported
    *and enabled* for this provider instance.  ``vendor_endpoint`` tells whether the base URL
    is the vendor's own (rather than a gateway or compatible server).
    """

    structured_output: Literal["native", "json_mode", "none"] | None = None
    tool_choice: bool | None = None
    parallel_tool_calls: bool | None = None
    streaming: bool | None = None
    reasoning_effort: tuple[ReasoningEffort, ...] | None = None
    vision: bool | None = None
    native_web_tools: frozenset[str] | None = None
    vendor_endpoint: bool | None = None

    def overlay(self, other: Capabilities | None) -> Capabilities:
        """These capabilities with every field ``other`` declares taking precedence.

        Providers use it to put a model's own table over the provider-wide defaults.
        """
        if other is None:
            return self
        changes = {
            field.name: getattr(other, field.name)
            for field in attrs.fields(Capabilities)
            if getattr(other, field.name) is not None
        }
        return attrs.evolve(self, **changes) if changes else self


CAPABILITY_NAMES: frozenset[str] = frozenset(field.name for field in attrs.fields(Capabilities))
"""The names :func:`capability` understands."""


def capability(provider: Provider, model: str, name: str) -> object | None:
    """The one query generic layers use: what ``provider`` declares about ``name`` for ``model``.

    Returns ``None`` when the capability is undeclared or the name is unknown -- silence is not
    a denial.
    """
    if name not in CAPABILITY_NAMES:
        return None
    value: object | None = getattr(provider.capabilities(model), name, None)
    return value


def require_capability(
    provider: Provider,
    model: str,
    name: str,
    value: object = None,
    *,
    assume_undeclared: bool = False,
) -> object:
    """Check a capability before any network activity; raise :class:`CapabilityError` if absent.

    Without ``value`` the capability must be declared and truthy (and not ``"none"``).  With
    ``value`` a collection capability must contain it and any other must equal it.  An
    undeclared capability fails unless the caller states ``assume_undeclared=True``.
    Returns the declared value (``None`` when undeclared and assumed).
    """
    declared = capability(provider, model, name)
    kind = getattr(provider, "kind", None)
    where = f"provider {kind!r}, model {model!r}"
    if declared is None:
        if assume_undeclared and name in CAPABILITY_NAMES:
            return None
        raise CapabilityError(
            f"{where} does not declare capability {name!r}"
            + ("" if name in CAPABILITY_NAMES else " (unknown capability name)"),
            provider=kind if isinstance(kind, str) else None,
        )
    if value is None:
        ok = bool(declared) and declared != "none"
    elif isinstance(declared, tuple | frozenset):
        ok = value in declared
    else:
        ok = declared == value
    if not ok:
        wanted = name if value is None else f"{name}={value!r}"
        raise CapabilityError(
            f"{where} does not support {wanted} (declared: {declared!r})",
            provider=kind if isinstance(kind, str) else None,
        )
    return declared
