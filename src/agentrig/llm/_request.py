"""What a loop sends to a provider and what comes back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from agentrig.messages import AssistantMessage, Message, ReasoningEffort, StopReason, SystemMessage

__all__ = [
    "ModelRequest",
    "ModelResponse",
    "ReasoningEffort",
    "ResponseFormat",
    "StopReason",
    "ToolSpec",
]

_CONFIG = ConfigDict(frozen=True, extra="forbid")


class ToolSpec(BaseModel):
    """A tool offered to the model.

    ``parameters`` is the tool's own (unprojected) JSON schema; each adapter projects it for
    its wire format, while validation of the model's arguments always uses this one.
    """

    model_config = _CONFIG

    name: str
    description: str
    parameters: dict[str, Any]


class ResponseFormat(BaseModel):
    """A requested structured-output shape: a named JSON schema.

    The schema field is ``schema_`` in Python (``schema`` would shadow a pydantic method) and
    ``schema`` on the wire, both when parsing and when dumping.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool = True

    @model_serializer(mode="wrap")
    def _dump_with_alias(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {("schema" if key == "schema_" else key): value for key, value in data.items()}


class ModelRequest(BaseModel):
    """One provider call.

    ``messages`` holds the conversation; a :class:`SystemMessage`, if any, is its first item.
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or the name of the one tool the
    model must call.  ``structured_output`` is the transport the loop chose for
    ``response_format``.  ``options`` carries provider-specific extras.
    """

    model_config = _CONFIG

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: Literal["auto", "none", "required"] | str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    response_format: ResponseFormat | None = None
    structured_output: Literal["native", "json_mode", "prompt"] | None = None
    reasoning_effort: ReasoningEffort | None = None
    parallel_tool_calls: bool | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _system_at_head(self) -> ModelRequest:
        for position, message in enumerate(self.messages):
            if position and isinstance(message, SystemMessage):
                raise ValueError(
                    f"a system message may only be the first message (found at {position})"
                )
        return self

    @property
    def system(self) -> str | None:
        """The system prompt text, if the request has one."""
        head = self.messages[0] if self.messages else None
        return head.text if isinstance(head, SystemMessage) else None


class ModelResponse(BaseModel):
    """A provider's complete reply.

    ``served_model`` is the model that actually answered (it may differ from the one asked
    for); usage and cost are charged to it.  ``response_id`` is the provider's id of the
    response, for telemetry (as ``FinishChunk.response_id``).
    """

    model_config = _CONFIG

    message: AssistantMessage
    request_id: str | None = None
    served_model: str | None = None
    response_id: str | None = None

    @property
    def stop_reason(self) -> StopReason | None:
        return self.message.stop_reason
