"""The vocabulary's fast layer: compact instances built without pydantic's validation walk.

An idle agent keeps every message and block of its history, so their size is paid per
retained run (``benchmarks/README.md``, "Session log and the fast layer").
:mod:`agentrig._construct` builds them with their fields in CPython's key-sharing instance
storage (no ``__dict__`` per instance) and one fields-set per class and fields; it writes
pydantic's instance slots itself, so it is imported here and nowhere else (an
import-linter contract), and installed only on the pydantic versions the pin in
``pyproject.toml`` admits and ``tests/test_primitives_construct.py`` checks.  Without it
(:func:`install` not called) the vocabulary builds the same instances with the public
``model_construct``.
"""

from __future__ import annotations

from importlib.metadata import version

from agentrig._construct import compact_instances, construct_trusted
from agentrig.messages import _trusted
from agentrig.messages._chunks import ReasoningDelta, TextDelta
from agentrig.messages._content import ReasoningBlock, TextBlock, ToolCallBlock
from agentrig.messages._messages import AssistantMessage, ToolMessage, UserMessage
from agentrig.messages._usage import Usage

__all__ = ["COMPACT", "PYDANTIC_RANGE", "install"]

#: the pydantic versions (``>=`` low, ``<`` high, as ``major.minor``) the fast layer was
#: tested with: the pin of ``pyproject.toml``; on any other the vocabulary stays plain
PYDANTIC_RANGE = ((2, 12), (2, 15))

#: the classes built compactly: what an idle agent's history holds, and per-token chunks
COMPACT = (
    UserMessage,
    AssistantMessage,
    ToolMessage,
    TextBlock,
    ToolCallBlock,
    ReasoningBlock,
    Usage,
    TextDelta,
    ReasoningDelta,
)


def install() -> bool:
    """Build the vocabulary through :func:`agentrig._construct.construct_trusted`, when the
    installed pydantic is in :data:`PYDANTIC_RANGE`; whether it did."""
    major, minor = (int(part) for part in version("pydantic").split(".")[:2])
    low, high = PYDANTIC_RANGE
    if not low <= (major, minor) < high:
        return False
    compact_instances(*COMPACT)
    _trusted.install(construct_trusted)
    return True
