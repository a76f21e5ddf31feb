"""The LLM vocabulary: messages, content blocks, stream chunks, requests, usage, the Provider
port, capabilities, model metadata and the provider error taxonomy.

Everything here is declared once and shared by the loop, the session log and every provider
plugin.  Importing this package does not import httpx; HTTP provider plugins import their
shared machinery (retries, SSE, options, client session) from :mod:`agentrig.llm.http`.
"""

from __future__ import annotations

from agentrig.llm._capabilities import (
    CAPABILITY_NAMES,
    Capabilities,
    capability,
    require_capability,
)
from agentrig.llm._cooldown import (
    COOLDOWNS,
    ModelCooldownError,
    ModelCooldowns,
    ModelDeployment,
    ServedFrom,
)
from agentrig.llm._effort import (
    EFFORT_LEVELS,
    EffortDisposition,
    EffortResolution,
    capture_efforts,
    report_effort,
    resolve_effort_level,
)
from agentrig.llm._errors import (
    AuthenticationError,
    CapabilityError,
    ContextLengthError,
    EmptyCompletionError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderProtocolError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
    error_from_status,
    parse_retry_after,
)
from agentrig.llm._models import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_OUTPUT_TOKENS,
    ModelInfo,
    ModelRegistry,
    Pricing,
    cost,
)
from agentrig.llm._provider import (
    PROVIDERS,
    EndpointModelListing,
    HttpClientFactory,
    ModelListing,
    Provider,
    ProviderConfig,
    ProviderFactory,
    ReadinessCheck,
    check_provider_contribution,
)
from agentrig.llm._request import ModelRequest, ModelResponse, ResponseFormat, ToolSpec
from agentrig.llm._request_capabilities import require_capabilities
from agentrig.llm._request_options import (
    BODY_FIELDS,
    RequestOptionsCheck,
    request_option_issues,
    reserved_option_error,
    reserved_option_issues,
)
from agentrig.llm._stream_check import StreamCheck
from agentrig.messages import (
    CONTENT_BLOCKS,
    MESSAGE_ADAPTER,
    STREAM_CHUNKS,
    AssistantMessage,
    ContentBlock,
    FileBlock,
    FinishChunk,
    ImageBlock,
    Message,
    ProviderStateBlock,
    ProviderStateChunk,
    ReasoningBlock,
    ReasoningDelta,
    ReasoningEffort,
    StopReason,
    StreamAssembler,
    StreamChunk,
    SystemMessage,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    ToolCallStart,
    ToolMessage,
    ToolResultChunk,
    ToolStatus,
    Usage,
    UsageChunk,
    UserMessage,
    message_chunks,
    parse_tool_arguments,
)

__all__ = [
    "COOLDOWNS",
    "ModelCooldownError",
    "ModelCooldowns",
    "ModelDeployment",
    "ServedFrom",
    # content blocks
    "CONTENT_BLOCKS",
    "ContentBlock",
    "FileBlock",
    "ImageBlock",
    "ProviderStateBlock",
    "ReasoningBlock",
    "TextBlock",
    "ToolCallBlock",
    "parse_tool_arguments",
    # messages
    "MESSAGE_ADAPTER",
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolMessage",
    "ToolStatus",
    "UserMessage",
    # usage
    "Usage",
    # stream chunks
    "STREAM_CHUNKS",
    "FinishChunk",
    "ProviderStateChunk",
    "ReasoningDelta",
    "StreamAssembler",
    "StreamCheck",
    "StreamChunk",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallStart",
    "ToolResultChunk",
    "UsageChunk",
    # requests and responses
    "ModelRequest",
    "ModelResponse",
    "ReasoningEffort",
    "ResponseFormat",
    # reasoning effort resolution
    "EFFORT_LEVELS",
    "EffortDisposition",
    "EffortResolution",
    "capture_efforts",
    "report_effort",
    "resolve_effort_level",
    "StopReason",
    "ToolSpec",
    # provider port
    "PROVIDERS",
    "HttpClientFactory",
    "Provider",
    "ProviderConfig",
    "ProviderFactory",
    "EndpointModelListing",
    "ModelListing",
    "ReadinessCheck",
    "check_provider_contribution",
    "BODY_FIELDS",
    "RequestOptionsCheck",
    "request_option_issues",
    "reserved_option_error",
    "reserved_option_issues",
    # capabilities
    "CAPABILITY_NAMES",
    "Capabilities",
    "capability",
    "require_capability",
    # model metadata
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "ModelInfo",
    "ModelRegistry",
    "Pricing",
    "cost",
    # errors
    "AuthenticationError",
    "CapabilityError",
    "ContextLengthError",
    "EmptyCompletionError",
    "InvalidRequestError",
    "NotFoundError",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderProtocolError",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "error_from_status",
    "parse_retry_after",
    "require_capabilities",
    "message_chunks",
]
