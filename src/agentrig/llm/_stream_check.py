"""Holding a provider's stream to the chunk protocol while the loop reads it.

A provider plugin that yields something other than a :class:`~agentrig.llm.StreamChunk`, or
a tool-call fragment for a call it never started, would otherwise be folded into a reply the
model never wrote (a nameless call, an empty answer).  Such a stream fails as
:class:`~agentrig.llm.ProviderProtocolError` naming the provider and the chunk, and an
exception a provider raises keeps the provider's id.
"""

from __future__ import annotations

from typing import final

from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import AgentrigError
from agentrig.llm._errors import ProviderError, ProviderProtocolError
from agentrig.messages import (
    FinishChunk,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)

__all__ = ["StreamCheck"]

_SHOWN = 120  # characters of a refused chunk's repr in the message


def _shown(chunk: object) -> str:
    text = repr(chunk)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


@final
class StreamCheck:
    """The checks of one provider call: :meth:`chunk` for each chunk, :meth:`failure` for an
    exception the provider's stream (or ``complete``) raised."""

    __slots__ = ("_started", "provider")

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self._started: set[int] = set()

    def chunk(self, chunk: object) -> StreamChunk:
        """``chunk`` when the protocol allows it here; else :class:`ProviderProtocolError`."""
        # the chunks of every reply first, by exact class (no isinstance on pydantic's
        # metaclass); a subclass takes the general way below
        if type(chunk) is TextDelta or type(chunk) is FinishChunk:
            return chunk
        if type(chunk) is ToolCallStart:
            self._started.add(chunk.index)
            return chunk
        if type(chunk) is ToolCallDelta and chunk.index in self._started:
            return chunk
        if not isinstance(chunk, StreamChunk):
            raise self._refuse(f"a {type(chunk).__name__}, not a StreamChunk: {_shown(chunk)}")
        if isinstance(chunk, ToolCallStart):
            self._started.add(chunk.index)
        elif isinstance(chunk, ToolCallDelta) and chunk.index not in self._started:
            raise self._refuse(
                f"a tool-call fragment for call index {chunk.index}, which no ToolCallStart "
                f"opened: {_shown(chunk)}"
            )
        return chunk

    def failure(self, error: Exception, signal: CancelSignal | None = None) -> Exception:
        """What to raise for ``error`` from the provider: an abort or an agentrig error as it
        is (a provider error gets the provider's id when it lacks one), anything else as a
        :class:`ProviderProtocolError` naming the provider."""
        if is_abort(error, signal):
            return error
        if isinstance(error, ProviderError):
            if error.provider is None:
                error.provider = self.provider
            return error
        if isinstance(error, AgentrigError):
            return error
        detail = " ".join(str(error).split()) or "no message"
        return ProviderProtocolError(
            f"provider {self.provider!r} raised {type(error).__name__}: {detail}",
            provider=self.provider,
        )

    def _refuse(self, what: str) -> ProviderProtocolError:
        return ProviderProtocolError(
            f"provider {self.provider!r} streamed {what}", provider=self.provider
        )
