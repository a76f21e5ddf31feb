"""The message vocabulary: messages, content blocks, stream chunks and usage.

Pure data with no I/O, so it sits with the primitives: the kernel's hook payloads may carry
it, and every layer above (providers, the session log, the loop) shares one declaration.
:mod:`agentrig.llm` re-exports every name here beside the Provider port.
"""

from __future__ import annotations

from agentrig.messages import _fast
from agentrig.messages._chunks import (
    STREAM_CHUNKS,
    FinishChunk,
    ProviderStateChunk,
    ReasoningDelta,
    StreamAssembler,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolResultChunk,
    UsageChunk,
    message_chunks,
)
from agentrig.messages._content import (
    CONTENT_BLOCKS,
    ContentBlock,
    FileBlock,
    ImageBlock,
    ProviderStateBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    parse_tool_arguments,
)
from agentrig.messages._literals import ReasoningEffort, StopReason
from agentrig.messages._messages import (
    MESSAGE_ADAPTER,
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    ToolStatus,
    UserMessage,
)
from agentrig.messages._usage import Usage

_fast.install()  # the contained fast layer (see agentrig.messages._fast)

__all__ = [
    "CONTENT_BLOCKS",
    "MESSAGE_ADAPTER",
    "STREAM_CHUNKS",
    "AssistantMessage",
    "ContentBlock",
    "FileBlock",
    "FinishChunk",
    "ImageBlock",
    "Message",
    "ProviderStateBlock",
    "ProviderStateChunk",
    "ReasoningBlock",
    "ReasoningDelta",
    "ReasoningEffort",
    "StopReason",
    "StreamAssembler",
    "StreamChunk",
    "SystemMessage",
    "TextBlock",
    "TextDelta",
    "ToolCallBlock",
    "ToolCallDelta",
    "ToolCallStart",
    "ToolMessage",
    "ToolResultChunk",
    "ToolStatus",
    "Usage",
    "UsageChunk",
    "UserMessage",
    "message_chunks",
    "parse_tool_arguments",
]
