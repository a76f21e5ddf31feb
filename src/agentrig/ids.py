"""Branded identifiers.

Every identifier that crosses a package boundary has its own static type (``typing.NewType``
over ``str``): a :data:`SessionId` cannot be passed where a :data:`CallId` is expected, yet at
runtime each is a plain string for comparison, logging and JSON.  Each type has exactly one
validating factory (``session_id("...")``) and, for identifiers agentrig mints itself, one
minting function (``new_session_id()``).

Identifiers that come from models or clients are never proof of anything: a valid
:data:`CallId` only says the string is well formed.
"""

from __future__ import annotations

import os
import re
import time
from typing import NewType

from agentrig.errors import InvalidIdError

__all__ = [
    "AgentId",
    "CallId",
    "EntryId",
    "InvocationId",
    "MessageId",
    "ModelId",
    "PluginName",
    "ProviderId",
    "RunId",
    "SessionId",
    "ToolId",
    "agent_id",
    "call_id",
    "entry_id",
    "invocation_id",
    "message_id",
    "model_id",
    "new_invocation_id",
    "new_message_id",
    "new_run_id",
    "new_session_id",
    "plugin_name",
    "provider_id",
    "run_id",
    "session_id",
    "tool_id",
]

SessionId = NewType("SessionId", str)
"""The shared identity of a live agent and its durable session."""
AgentId = NewType("AgentId", str)
"""The name an agent is registered under in a runtime (``[agents.<id>]``)."""
MessageId = NewType("MessageId", str)
"""Identity of one user/inbox message."""
CallId = NewType("CallId", str)
"""A provider-owned, opaque tool-call token; may be empty and is not unique."""
ToolId = NewType("ToolId", str)
"""The name a tool is offered to a model under."""
ProviderId = NewType("ProviderId", str)
"""The name of a configured provider instance (``[providers.<id>]``)."""
ModelId = NewType("ModelId", str)
"""A model name as the provider understands it."""
PluginName = NewType("PluginName", str)
"""An entry-point name: the ID a plugin contribution registers under."""
EntryId = NewType("EntryId", str)
"""A generic catalog key for kinds without a dedicated ID type."""
RunId = NewType("RunId", str)
"""Identity of one ``run()`` / ``stream()`` invocation, minted by agentrig."""
InvocationId = NewType("InvocationId", str)
"""Identity of one model or tool invocation, minted by agentrig."""

# Names people type into config files and entry points: a letter, then letters,
# digits, ``_``, ``-`` and ``.``; at most 128 characters.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,127}")
# Minted and caller-supplied opaque ids: URL- and file-name-safe, at most 128 characters.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}")
# Tool names as all major providers accept them.
_TOOL = re.compile(r"[A-Za-z0-9_\-.]{1,128}")
# Model names as providers spell them: 1-256 characters, none a control character.
_MODEL = re.compile(r"[^\x00-\x1f]{1,256}")


def _check(kind: str, value: str, pattern: re.Pattern[str], rule: str) -> str:
    if not isinstance(value, str):
        raise InvalidIdError(f"{kind} must be a string, got {type(value).__name__}", kind=kind)
    if pattern.fullmatch(value) is None:
        raise InvalidIdError(f"invalid {kind} {value!r}: {rule}", kind=kind)
    return value


_NAME_RULE = "expected a letter followed by up to 127 letters, digits, '_', '-' or '.'"
_TOKEN_RULE = "expected 1-128 letters, digits, '_', '-', '.' or ':' (not starting with punctuation)"


def session_id(value: str) -> SessionId:
    """Validate a caller-supplied session id."""
    return SessionId(_check("SessionId", value, _TOKEN, _TOKEN_RULE))


def agent_id(value: str) -> AgentId:
    return AgentId(_check("AgentId", value, _NAME, _NAME_RULE))


def message_id(value: str) -> MessageId:
    return MessageId(_check("MessageId", value, _TOKEN, _TOKEN_RULE))


def call_id(value: str) -> CallId:
    """Wrap a provider's tool-call id; any string (even empty) is accepted as an opaque token."""
    if not isinstance(value, str):
        raise InvalidIdError(f"CallId must be a string, got {type(value).__name__}", kind="CallId")
    return CallId(value)


def tool_id(value: str) -> ToolId:
    """Validate a tool name (1-128 of ``[A-Za-z0-9_.-]``, the set every major provider accepts)."""
    return ToolId(_check("ToolId", value, _TOOL, "expected 1-128 letters, digits, '_', '-' or '.'"))


def provider_id(value: str) -> ProviderId:
    return ProviderId(_check("ProviderId", value, _NAME, _NAME_RULE))


def model_id(value: str) -> ModelId:
    """Validate a model name: any non-empty string without control characters."""
    return ModelId(
        _check("ModelId", value, _MODEL, "expected 1-256 characters, no control characters")
    )


def plugin_name(value: str) -> PluginName:
    """Validate an entry-point name used as a plugin ID."""
    return PluginName(_check("PluginName", value, _NAME, _NAME_RULE))


def entry_id(value: str) -> EntryId:
    return EntryId(_check("EntryId", value, _NAME, _NAME_RULE))


def run_id(value: str) -> RunId:
    return RunId(_check("RunId", value, _TOKEN, _TOKEN_RULE))


def invocation_id(value: str) -> InvocationId:
    return InvocationId(_check("InvocationId", value, _TOKEN, _TOKEN_RULE))


def _mint(prefix: str) -> str:
    # Time-ordered (48-bit milliseconds) then 80 random bits, hex: sortable like a UUIDv7,
    # unique without coordination, and safe in file names.
    return f"{prefix}_{int(time.time() * 1000):012x}{os.urandom(10).hex()}"


def new_session_id() -> SessionId:
    """Mint a fresh, time-ordered session id."""
    return SessionId(_mint("ses"))


def new_message_id() -> MessageId:
    return MessageId(_mint("msg"))


def new_run_id() -> RunId:
    return RunId(_mint("run"))


def new_invocation_id() -> InvocationId:
    """Mint a fresh invocation id (unique, unlike provider call ids)."""
    return InvocationId(_mint("inv"))
