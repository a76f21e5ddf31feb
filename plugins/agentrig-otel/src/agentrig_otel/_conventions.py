"""agentrig's vocabulary in the GenAI semantic conventions' terms: finish reasons, messages
(the conventions' ``role`` / ``parts`` schema) and a provider's server address."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "FINISH_REASONS",
    "finish_reason",
    "input_messages",
    "output_messages",
    "provider_kind",
    "server_of",
]

#: agentrig's stop reason -> the conventions' finish reason (their ``FinishReason`` values)
FINISH_REASONS: dict[str, str] = {
    "end": "stop",
    "stop_sequence": "stop",
    "tool_calls": "tool_call",
    "length": "length",
    "content_filter": "content_filter",
    "refusal": "content_filter",
    "error": "error",
}


def finish_reason(stop_reason: Any) -> str:
    """The conventions' value for ``stop_reason`` (one they do not name passes as it is)."""
    text = str(stop_reason)
    return FINISH_REASONS.get(text, text)


def _parts(blocks: Iterable[Any]) -> list[dict[str, Any]]:
    """A message's content blocks as the conventions' parts."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append({"type": "text", "content": block.text})
        elif kind == "tool_call":
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
        elif kind == "reasoning":
            parts.append({"type": "reasoning", "content": block.text})
        elif kind in ("image", "file"):
            part: dict[str, Any] = {"type": "uri" if block.url else "blob"}
            part["mime_type"] = block.media_type
            part["modality"] = "image" if kind == "image" else "file"
            if block.url:
                part["uri"] = block.url
            else:
                part["content"] = block.data
            parts.append(part)
        # provider state blocks are opaque replay data, not content: left out
    return parts


def input_messages(events: Iterable[Any]) -> list[dict[str, Any]]:
    """What a turn was given: its user and steering messages."""
    messages = []
    for event in events:
        if event.type in ("user/message", "steering/message"):
            messages.append({"role": "user", "parts": _parts(event.data.message.content)})
    return messages


def output_messages(events: Iterable[Any]) -> list[dict[str, Any]]:
    """What a turn's model answered: each reply, with its finish reason."""
    messages: list[dict[str, Any]] = []
    for event in events:
        if event.type == "assistant/message":
            message = event.data.message
            out: dict[str, Any] = {"role": "assistant", "parts": _parts(message.content)}
            if message.stop_reason is not None:
                out["finish_reason"] = finish_reason(message.stop_reason)
            messages.append(out)
    return messages


def _provider(runtime: Any, provider_id: Any) -> Any:
    """The configured provider ``provider_id`` of ``runtime`` (None: unknown)."""
    if runtime is None or not provider_id:
        return None
    from agentrig.llm import PROVIDERS

    return runtime.catalog(PROVIDERS).get(provider_id)


def provider_kind(runtime: Any, provider_id: Any) -> str | None:
    """The kind (entry-point name) of a configured provider: ``gen_ai.provider.name``."""
    kind = getattr(_provider(runtime, provider_id), "kind", None)
    return kind if isinstance(kind, str) else None


def server_of(runtime: Any, provider_id: Any) -> dict[str, Any]:
    """``server.address`` and ``server.port`` of a provider that sends HTTP to a base URL
    (an :class:`agentrig.llm.http.HttpProvider`'s ``options.base_url``); empty otherwise."""
    provider = _provider(runtime, provider_id)
    base_url = getattr(getattr(provider, "options", None), "base_url", None)
    if not isinstance(base_url, str):
        return {}
    parts = urlsplit(base_url)
    if not parts.hostname:
        return {}
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return {"server.address": parts.hostname, "server.port": port}
