"""Shared request checks: field types, generation settings, refused parameters, data URLs.

Every check raises a 400 naming the field (``messages[2].content[0].type``) before any run or
stream starts.  Parameters a server cannot honour are refused by name, never dropped.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Mapping
from typing import Any

from agentrig.llm import FileBlock, ImageBlock
from agentrig_server._errors import ApiError

__all__ = [
    "bad",
    "check_keys",
    "data_url_block",
    "opt_bool",
    "opt_int",
    "opt_temperature",
    "require_list",
    "require_object",
    "require_str",
]


def bad(where: str, message: str) -> ApiError:
    return ApiError(400, f"{where}: {message}", param=where)


def require_object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise bad(where, f"expected an object, got {type(value).__name__}")
    return value


def require_list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise bad(where, f"expected an array, got {type(value).__name__}")
    return value


def require_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise bad(where, f"expected a string, got {type(value).__name__}")
    return value


def opt_int(body: Mapping[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise bad(key, f"expected a positive integer, got {value!r}")
    return value


def opt_bool(body: Mapping[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise bad(key, f"expected true or false, got {value!r}")
    return value


def opt_temperature(body: Mapping[str, Any], key: str, high: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= high:
        raise bad(key, f"expected a number from 0 to {high:g}, got {value!r}")
    return float(value)


def check_keys(
    body: Mapping[str, Any],
    where: str,
    supported: Iterable[str],
    *,
    tools: Iterable[str] = (),
) -> None:
    """Refuse request-defined tools (tools are server-owned) and every unsupported key."""
    for key in tools:
        if body.get(key) not in (None, [], {}):
            raise ApiError(
                400,
                f"{where}{key}: this server runs its agents' own tools; a request cannot define "
                "tools or choose among them (configure tools on the agent instead)",
                code="tools_not_allowed",
                param=key,
            )
    allowed = set(supported) | set(tools)
    for key in body:
        if key not in allowed:
            raise ApiError(
                400,
                f"{where}{key}: parameter not supported by this server "
                f"(supported: {', '.join(sorted(set(supported)))})",
                code="unsupported_parameter",
                param=key,
            )


def data_url_block(url: str, where: str, *, kind: str) -> ImageBlock | FileBlock:
    """An image or file block from a ``data:`` URL (inline) or an http(s) URL (by reference)."""
    if url.startswith("data:"):
        header, comma, data = url[5:].partition(",")
        media_type, _, encoding = header.partition(";")
        if not comma or encoding != "base64" or not media_type:
            raise bad(where, "expected a data URL of the form data:<media-type>;base64,<data>")
        if kind == "image":
            return ImageBlock(media_type=media_type, data=data)
        return FileBlock(media_type=media_type, data=data)
    if url.startswith(("https://", "http://")):
        guessed = mimetypes.guess_type(url.split("?", 1)[0])[0]
        media_type = guessed or ("image/*" if kind == "image" else "application/octet-stream")
        if kind == "image":
            return ImageBlock(media_type=media_type, url=url)
        return FileBlock(media_type=media_type, url=url)
    raise bad(where, "expected a data: URL or an http(s) URL")
