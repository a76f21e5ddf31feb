"""Conversation messages: system, user, assistant and tool, discriminated by ``role``.

Messages are frozen and built on the hot path, so they carry no validators beyond their field
types.  Content fields parse through :data:`~agentrig.llm.CONTENT_BLOCKS`: already-built
blocks pass through untouched, and unknown block tags are kept opaque.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agentrig.ids import new_message_id
from agentrig.messages._build import build
from agentrig.messages._content import ContentBlocks, TextBlock, ToolCallBlock
from agentrig.messages._literals import StopReason
from agentrig.messages._usage import Usage

__all__ = [
    "MESSAGE_ADAPTER",
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolMessage",
    "ToolStatus",
    "UserMessage",
]

ToolStatus: TypeAlias = Literal["ok", "error", "skipped", "not_executed"]

_CONFIG = ConfigDict(frozen=True, extra="forbid")


def _joined_text(content: tuple[Any, ...]) -> str:
    text = ""  # a loop: half the cost of join() over a generator for the usual one block
    for block in content:
        if isinstance(block, TextBlock):
            text += block.text
    return text


class SystemMessage(BaseModel):
    """The system prompt (at most one, at the head of a request)."""

    model_config = _CONFIG

    role: Literal["system"] = "system"
    text: str


class UserMessage(BaseModel):
    """Input from outside the model: the user, a follow-up, a steer, an injection, a hook …"""

    model_config = _CONFIG

    role: Literal["user"] = "user"
    id: str = Field(default_factory=new_message_id)
    content: ContentBlocks
    source: str = "user"

    @classmethod
    def of(cls, text: str, *, source: str = "user") -> UserMessage:
        """A user message holding one text block."""
        block = build(TextBlock, {"text": text})
        return build(cls, {"id": new_message_id(), "content": (block,), "source": source})

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return _joined_text(self.content)


class AssistantMessage(BaseModel):
    """What the model produced, blocks in the order it produced them.

    ``interrupted`` marks a reply cut short by cancellation (only assistant messages can be
    interrupted).  ``continuation`` is opaque provider text needed to continue this reply on a
    later request; only the provider that wrote it reads it.
    """

    model_config = _CONFIG

    role: Literal["assistant"] = "assistant"
    content: ContentBlocks
    stop_reason: StopReason | None = None
    provider_stop_reason: str | None = None
    interrupted: bool = False
    model: str | None = None
    usage: Usage | None = None
    continuation: str | None = None

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return _joined_text(self.content)

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        """The tool-call blocks, in order."""
        return tuple(
            block
            for block in self.content
            if type(block) is ToolCallBlock or isinstance(block, ToolCallBlock)
        )


class ToolMessage(BaseModel):
    """The one result of one tool call, linked by the provider's ``call_id``."""

    model_config = _CONFIG

    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: ContentBlocks
    status: ToolStatus = "ok"

    @classmethod
    def of(cls, call_id: str, name: str, text: str, status: ToolStatus = "ok") -> ToolMessage:
        """A tool result holding one text block."""
        block = build(TextBlock, {"text": text})
        values = {"call_id": call_id, "name": name, "content": (block,), "status": status}
        return build(cls, values)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return _joined_text(self.content)


Message: TypeAlias = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
"""Any conversation message (a closed union discriminated by ``role``)."""

MESSAGE_ADAPTER: TypeAdapter[SystemMessage | UserMessage | AssistantMessage | ToolMessage] = (
    TypeAdapter(Message)
)
"""Parses and dumps a :data:`Message`."""
