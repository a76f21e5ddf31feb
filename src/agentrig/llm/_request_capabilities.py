"""Refuse a request that needs a capability the provider declared absent -- once, in the core.

Each provider plugin would otherwise repeat these checks (or forget one and send a request
the vendor rejects, or silently ignores).  Only an explicit ``False`` (or a declared set that
lacks the value) refuses: an undeclared capability is silence, and the request goes out.
Streaming is not checked here: the loop drives a ``streaming=False`` provider through its
non-streaming call instead; nor is reasoning effort, a preference each provider resolves
against its model's levels (applied, clamped, fell back, not applied) and reports
(:func:`~agentrig.llm.report_effort`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.llm._capabilities import Capabilities
from agentrig.llm._errors import CapabilityError
from agentrig.messages import FileBlock, ImageBlock, UserMessage

if TYPE_CHECKING:
    from agentrig.llm._provider import Provider
    from agentrig.llm._request import ModelRequest

__all__ = ["require_capabilities"]


def require_capabilities(provider: Provider, request: ModelRequest, declared: Capabilities) -> None:
    """Raise :class:`CapabilityError` naming the capability ``request`` needs but ``declared``
    (what ``provider`` says about ``request.model``) rules out; return quietly otherwise."""
    absent = _absent(request, declared)
    if absent is None:
        return
    name, needed = absent
    kind = getattr(provider, "kind", None)
    raise CapabilityError(
        f"provider {kind!r}, model {request.model!r} declares no {name!r} "
        f"(declared: {getattr(declared, name)!r}), but the request needs it: {needed}; "
        "the request was not sent",
        provider=kind if isinstance(kind, str) else None,
    )


def _absent(request: ModelRequest, declared: Capabilities) -> tuple[str, str] | None:
    choice = request.tool_choice
    # "none" without tools asks for nothing the model would not do anyway
    harmless = choice in (None, "auto") or (choice == "none" and not request.tools)
    if declared.tool_choice is False and not harmless:
        return "tool_choice", f"tool_choice={choice!r}"
    if declared.parallel_tool_calls is False and request.parallel_tool_calls is not None:
        return "parallel_tool_calls", f"parallel_tool_calls={request.parallel_tool_calls!r}"
    if declared.vision is False:
        for position, message in enumerate(request.messages):
            if not isinstance(message, UserMessage):
                continue
            for block in message.content:
                if isinstance(block, ImageBlock | FileBlock):
                    return "vision", f"a {block.type} block in message {position}"
    structured = request.structured_output
    if structured is not None and structured != "prompt":
        transport = declared.structured_output
        if transport == "none" or (transport == "json_mode" and structured == "native"):
            return "structured_output", f"structured_output={structured!r}"
    return None
