"""Shared request checks: field types, generation settings, refused parameters, data URLs.

Every check raises a 400 naming the field (``messages[2].content[0].type``) before any run or
stream starts.  Parameters a server cannot honour are refused by name, never dropped.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from agentrig.llm import ContentBlock, FileBlock, ImageBlock, TextBlock
from agentrig_server._errors import ApiError

__all__ = [
    "PartParser",
    "bad",
    "check_keys",
    "data_url_block",
    "joined_text",
    "objects",
    "parse_parts",
    "text_part",
    "inline_file",
    "user_content",
    "Template",
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


def objects(
    value: object, where: str, *, empty: str | None = None
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each item of the array at ``where`` as an object, with its key path ``where[i]``;
    ``empty`` (when given) refuses an empty array with that message."""
    items = require_list(value, where)
    if empty is not None and not items:
        raise bad(where, empty)
    for i, raw in enumerate(items):
        at = f"{where}[{i}]"
        yield at, require_object(raw, at)


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


_B = TypeVar("_B")
PartParser = Callable[[Mapping[str, Any], str], _B]
"""Turns one content part (an object with a ``type``) at a key path into a value."""


def parse_parts(
    content: object, where: str, parsers: Mapping[str, PartParser[_B]], *, what: str
) -> list[_B]:
    """Parse a list of typed parts, each by the parser of its ``type``; an unknown type is a
    400 naming the part and the supported types (a part is refused, never dropped)."""
    values: list[_B] = []
    for at, part in objects(content, where):
        kind = part.get("type")
        parser = parsers.get(kind) if isinstance(kind, str) else None
        if parser is None:
            supported = ", ".join(parsers)
            raise bad(f"{at}.type", f"unsupported {what} {kind!r} (supported: {supported})")
        values.append(parser(part, at))
    return values


def text_part(part: Mapping[str, Any], at: str) -> TextBlock:
    return TextBlock(text=require_str(part.get("text"), f"{at}.text"))


def joined_text(content: object, where: str, kinds: Iterable[str] = ("text",)) -> str:
    """A string, or the joined text of a list of text parts (any other part is refused)."""
    if isinstance(content, str):
        return content
    parts = parse_parts(content, where, dict.fromkeys(kinds, text_part), what="part here")
    return "".join(block.text for block in parts)


def user_content(
    content: object, where: str, parsers: Mapping[str, PartParser[ContentBlock]]
) -> tuple[ContentBlock, ...]:
    """A user message's content: a string, or a non-empty list of the given part types."""
    if isinstance(content, str):
        return (TextBlock(text=content),)
    blocks = parse_parts(content, where, parsers, what="content part")
    if not blocks:
        raise bad(where, "empty content")
    return tuple(blocks)


def inline_file(data: object, filename: object, where: str) -> ContentBlock:
    """A file sent inline as a data URL, keeping its name when one was given."""
    block = data_url_block(require_str(data, where), where, kind="file")
    return block.model_copy(update={"name": filename}) if isinstance(filename, str) else block


class Template:
    """A JSON object with holes, encoded once: the per-token frames of a stream fill only the
    holes (each value JSON-encoded), byte-for-byte what encoding the whole object gives."""

    __slots__ = ("_parts",)

    _HOLE = "\x00hole\x00"

    def __init__(self, head: str, data: Mapping[str, Any], tail: str) -> None:
        encoded = json.dumps(data, separators=(",", ":"))
        pieces = encoded.split(json.dumps(self._HOLE))
        pieces[0] = head + pieces[0]
        pieces[-1] = pieces[-1] + tail
        self._parts = tuple(piece.encode() for piece in pieces)

    @classmethod
    def hole(cls) -> str:
        """The placeholder to put where a value will go."""
        return cls._HOLE

    def fill(self, *values: object) -> bytes:
        parts = self._parts
        out = [parts[0]]
        for value, part in zip(values, parts[1:], strict=True):
            out.append(json.dumps(value).encode())
            out.append(part)
        return b"".join(out)
