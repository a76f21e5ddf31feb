"""What the Chat Completions and Responses bodies write alike.

The two APIs name most request controls the same way (``tools``, ``tool_choice``,
``parallel_tool_calls``, ``temperature``, extra body fields) and count tokens in ``usage``
objects of one shape with other prefixes; written once here, the two wire modules keep only
what differs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from agentrig.llm import ModelRequest, ToolSpec, Usage, reserved_option_error

__all__ = ["add_controls", "add_options", "as_int", "compact_json", "data_url", "usage_of"]


def as_int(value: object) -> int | None:
    """``value`` if it is an int (a JSON bool is not), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def compact_json(value: object) -> str:
    """JSON text as the APIs send it: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def data_url(media_type: str, data: str) -> str:
    """Inline base64 ``data`` as the ``data:`` URL both APIs take for images and files."""
    return f"data:{media_type};base64,{data}"


def add_controls(
    body: dict[str, Any],
    request: ModelRequest,
    *,
    tool: Callable[[ToolSpec], dict[str, Any]],
    tool_choice: Callable[[str], str | dict[str, Any]],
    max_tokens_field: str,
) -> None:
    """Put the request's tools and sampling controls on ``body``.

    ``tool`` and ``tool_choice`` write the API's own shapes.  Tools are left off when the
    choice is ``"none"`` (the choice still goes out); a choice or ``parallel_tool_calls``
    without tools is not sent, since both APIs refuse it.
    """
    if request.tools and request.tool_choice != "none":
        body["tools"] = [tool(spec) for spec in request.tools]
    if request.tool_choice is not None and (request.tools or request.tool_choice == "none"):
        body["tool_choice"] = tool_choice(request.tool_choice)
    if request.parallel_tool_calls is not None and request.tools:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature


def add_options(
    body: dict[str, Any], request: ModelRequest, reserved: Mapping[str, str], *, provider: str
) -> None:
    """Merge ``request.options`` into ``body`` last; a field of ``reserved`` raises.

    An agent's own options were refused when it was built, so a reserved one here came from
    a ``request_config`` listener: it is an error, never silently dropped.
    """
    for key, value in request.options.items():
        if key in reserved:
            raise reserved_option_error(key, reserved, provider=provider)
        body[key] = value


def usage_of(raw: object, *, prompt: str, completion: str) -> Usage | None:
    """The usage of an OpenAI ``usage`` object whose counts are ``{prompt}_tokens`` and
    ``{completion}_tokens`` (``None`` when it has neither).

    ``{prompt}_tokens_details.cached_tokens`` is the cache read (a part of the prompt) and
    ``cache_write_tokens`` beside it what some gateways report as written;
    ``{completion}_tokens_details.reasoning_tokens`` the reasoning part of the completion.
    ``total_tokens`` is kept as given, even when it is not prompt + completion.
    """
    if not isinstance(raw, Mapping):
        return None
    prompt_tokens = as_int(raw.get(f"{prompt}_tokens"))
    completion_tokens = as_int(raw.get(f"{completion}_tokens"))
    if prompt_tokens is None and completion_tokens is None:
        return None
    partial = prompt_tokens is None or completion_tokens is None
    prompt_tokens = prompt_tokens or 0
    prompt_details = raw.get(f"{prompt}_tokens_details")
    completion_details = raw.get(f"{completion}_tokens_details")
    cache_read = cache_write = reasoning = None
    if isinstance(prompt_details, Mapping):
        cache_read = as_int(prompt_details.get("cached_tokens"))
        cache_write = as_int(prompt_details.get("cache_write_tokens"))
    if isinstance(completion_details, Mapping):
        reasoning = as_int(completion_details.get("reasoning_tokens"))
    uncached = None
    if cache_read is not None:
        uncached = max(prompt_tokens - cache_read - (cache_write or 0), 0)
    return Usage.of(
        prompt_tokens,
        completion_tokens or 0,
        total=as_int(raw.get("total_tokens")),
        cache_read=cache_read,
        cache_write=cache_write,
        uncached_input=uncached,
        reasoning=reasoning,
        partial=partial,
    )
