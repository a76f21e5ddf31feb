"""Content blocks: the pieces a message is made of.

Blocks form the ``content_block`` variant family.  Core registers its members in
:data:`CONTENT_BLOCKS` at import; plugins add theirs through the ``agentrig.variants`` entry
points.  Fields that hold blocks are annotated with :data:`ContentBlocks`, which parses
through the registry, so a block whose tag no installed plugin knows is kept opaque and dumped
back unchanged.

Tool results are not blocks: they are :class:`~agentrig.llm.ToolMessage` messages.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agentrig.messages._build import build
from agentrig.variants import Variant, VariantRegistry, discovered_members

__all__ = [
    "CONTENT_BLOCKS",
    "ContentBlock",
    "ContentBlocks",
    "FileBlock",
    "ImageBlock",
    "ProviderStateBlock",
    "ReasoningBlock",
    "TextBlock",
    "ToolCallBlock",
    "parse_tool_arguments",
]


class ContentBlock(Variant):
    """Base of the ``content_block`` family."""

    family: ClassVar[str] = "content_block"


class TextBlock(ContentBlock):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class ImageBlock(ContentBlock):
    """An image, inline (base64 ``data``) or by ``url``."""

    type: Literal["image"] = "image"
    media_type: str
    data: str | None = None
    url: str | None = None


class FileBlock(ContentBlock):
    """A document or other file, inline (base64 ``data``) or by ``url``."""

    type: Literal["file"] = "file"
    media_type: str
    data: str | None = None
    url: str | None = None
    name: str | None = None


# json.loads's decoder without its two whitespace scans: a value filling the text is json.loads's
_decode = json.JSONDecoder().raw_decode


def parse_tool_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Turn a provider's tool-argument text into ``(arguments, raw_arguments)``.

    Blank text means no arguments (``{}``).  Text that is not a JSON *object* gives ``{}`` and
    keeps the text as ``raw_arguments`` so the loop can report it to the model.  Streaming and
    non-streaming adapter paths both go through this function, so they agree.
    """
    if not raw.strip():
        return {}, None
    try:
        value, end = _decode(raw)
    except ValueError:
        end = -1
    if end != len(raw):  # text around the value: json.loads decides (whitespace is allowed)
        try:
            value = json.loads(raw)
        except ValueError:
            return {}, raw
    if isinstance(value, dict):
        return value, None
    return {}, raw


class ToolCallBlock(ContentBlock):
    """A tool call the model asked for.

    ``id`` is the provider's opaque call token: it may be empty and is not unique across a
    conversation, so anything needing a unique identity mints its own.  ``raw_arguments`` is
    set only when the provider's argument text was not a JSON object (``arguments`` is then
    ``{}``).
    """

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None

    @classmethod
    def from_json(cls, id: str, name: str, raw: str) -> ToolCallBlock:
        """Build a call from the provider's argument text (see :func:`parse_tool_arguments`)."""
        arguments, raw_arguments = parse_tool_arguments(raw)
        values = {"id": id, "name": name, "arguments": arguments, "raw_arguments": raw_arguments}
        return build(cls, values)


class ReasoningBlock(ContentBlock):
    """Displayable reasoning text.  Never replayed to a provider."""

    type: Literal["reasoning"] = "reasoning"
    text: str


class ProviderStateBlock(ContentBlock):
    """A vendor block kept verbatim and replayed unchanged to the provider that made it.

    ``provider`` is the provider kind (``"anthropic"`` …); other providers ignore the block.
    ``text`` is an optional displayable rendering (for example the thinking text).
    """

    type: Literal["provider_state"] = "provider_state"
    provider: str
    data: dict[str, Any]
    text: str | None = None


CONTENT_BLOCKS: VariantRegistry[ContentBlock] = VariantRegistry(
    ContentBlock, loader=discovered_members
)
"""The ``content_block`` family."""

CONTENT_BLOCKS.register_all(
    (TextBlock, ImageBlock, FileBlock, ToolCallBlock, ReasoningBlock, ProviderStateBlock),
    source="agentrig",
)

if TYPE_CHECKING:
    ContentBlocks = tuple[ContentBlock, ...]
else:
    ContentBlocks = CONTENT_BLOCKS.many_annotation()
"""Field annotation for a tuple of blocks, parsed through :data:`CONTENT_BLOCKS`."""
