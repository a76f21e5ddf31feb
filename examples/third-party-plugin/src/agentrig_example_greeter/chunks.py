"""A new member of the ``stream_chunk`` family (entry point ``agentrig.variants: greeting``).

A variant is a frozen pydantic model subclassing a family base, with a literal ``type`` tag
no other member uses.  A host that has this plugin parses ``{"type": "greeting", ...}``
into :class:`GreetingChunk`; a host without it keeps the record as an opaque unknown chunk
and writes it back unchanged.
"""

from __future__ import annotations

from typing import Literal

from agentrig.llm import StreamChunk


class GreetingChunk(StreamChunk):
    """A greeting streamed alongside the model's text."""

    type: Literal["greeting"] = "greeting"
    text: str
