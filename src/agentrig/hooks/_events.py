"""Hook events: the lifecycle point that fired and its Claude-Code-shaped JSON input.

:data:`FIREABLE_EVENTS` is the one list of events agentrig fires; configuration validates
event names against it with :func:`event_name_problem` (an event agentrig cannot fire yet is
refused with the reason, an unknown name with a "did you mean").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

import attrs

from agentrig.errors import did_you_mean
from agentrig.redaction import redact

__all__ = [
    "FIREABLE_EVENTS",
    "FIRED_EVENTS",
    "KNOWN_EVENTS",
    "NOT_FIRED",
    "PERMISSION_MODES",
    "EventName",
    "HookEvent",
    "event_name_problem",
]

EventName = Literal[
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PreCompact",
    "PostCompact",
]
"""The events agentrig knows by name (Claude Code's names); other names are allowed."""

KNOWN_EVENTS: frozenset[str] = frozenset(EventName.__args__)  # type: ignore[attr-defined]

FIREABLE_EVENTS: tuple[str, ...] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
"""THE list of events agentrig fires, in lifecycle order (the one place to change when the
loop fires another).  A config hook for any other name would never run, so it is refused."""

FIRED_EVENTS: frozenset[str] = frozenset(FIREABLE_EVENTS)
""":data:`FIREABLE_EVENTS` as a set."""

_WHY_NOT: dict[str, str] = {}  # why a known event is not fired (none: all are)
NOT_FIRED: Mapping[str, str] = MappingProxyType(
    {
        name: _WHY_NOT.get(name, "agentrig does not fire this event yet")
        + ", so a hook for it would never run"
        for name in sorted((KNOWN_EVENTS | set(_WHY_NOT)) - FIRED_EVENTS)
    }
)
"""Claude Code events agentrig knows but does not fire, with the reason config refuses them."""

PERMISSION_MODES: Mapping[str, str] = MappingProxyType(
    {
        "default": "default",
        "accept-edits": "acceptEdits",
        "plan": "plan",
        "bypass": "bypassPermissions",
    }
)
"""agentrig's ``[permissions] mode`` -> Claude Code's ``permission_mode`` in hook input."""


def event_name_problem(name: str) -> str | None:
    """Why a config hook for event ``name`` would never run (None: agentrig fires it)."""
    if name in FIRED_EVENTS:
        return None
    fired = ", ".join(FIREABLE_EVENTS)
    reason = NOT_FIRED.get(name)
    if reason is not None:
        return f"{name}: {reason} (events agentrig fires: {fired})"
    candidates = sorted(FIRED_EVENTS | KNOWN_EVENTS)
    lowered = {c.lower(): c for c in candidates}
    case_only = lowered.get(name.lower())
    hint = f"; did you mean {case_only!r}?" if case_only else did_you_mean(name, candidates)
    return f"unknown hook event {name!r}{hint} (events agentrig fires: {fired})"


def _frozen_payload(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _check_name(_instance: object, _attribute: object, value: str) -> None:
    if not value or not value.isidentifier():
        raise ValueError(f"a hook event name must be an identifier, got {value!r}")


@attrs.frozen(slots=True)
class HookEvent:
    """One firing of a lifecycle event.

    ``payload`` is the JSON input a hook receives (Claude Code's shape: ``session_id``,
    ``transcript_path``, ``cwd``, ``tool_name``, ``tool_input``, ``tool_response``,
    ``prompt``, ``stop_hook_active`` ...); ``hook_event_name`` is always set from ``name``.
    ``traceparent`` / ``tracestate`` (W3C trace context; the hook runner fills them from the
    runtime's trace context) are handed to command hooks in their environment only -- they
    never appear in the JSON input or an HTTP body (HTTP hooks send them as headers).
    """

    name: str = attrs.field(validator=_check_name)
    payload: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_payload)
    traceparent: str | None = attrs.field(default=None, kw_only=True)
    tracestate: str | None = attrs.field(default=None, kw_only=True)

    @property
    def tool_name(self) -> str | None:
        """The tool this event is about (tool events only)."""
        value = self.payload.get("tool_name")
        return value if isinstance(value, str) else None

    def input(self) -> dict[str, Any]:
        """The JSON input as a plain dict, ``hook_event_name`` first."""
        return {"hook_event_name": self.name, **{k: v for k, v in self.payload.items()}}

    def to_json(self) -> bytes:
        """The JSON input as UTF-8 bytes (values JSON cannot carry are rendered as text).

        The payload leaves the process (a command's stdin, an HTTP body), so the value of
        every secret key in it is redacted by the shared redactor (:mod:`agentrig.redaction`).
        """
        return json.dumps(redact(self.input()), default=str, ensure_ascii=False).encode("utf-8")

    # ---- constructors for the events agentrig fires ------------------------------------------
    # Every event carries Claude Code's common fields: session_id, transcript_path, cwd,
    # permission_mode (hook_event_name is added by :meth:`input`).
    @classmethod
    def of(
        cls,
        name: str,
        *,
        session_id: str,
        cwd: str | None = None,
        transcript_path: str | None = None,
        permission_mode: str = "default",
        **fields: Any,
    ) -> HookEvent:
        """Any event, with the common fields first and the event's own ``fields`` after."""
        return cls(
            name,
            {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "cwd": cwd if cwd is not None else os.getcwd(),
                "permission_mode": permission_mode,
                **fields,
            },
        )

    @classmethod
    def _tool_call(
        cls,
        name: str,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        session_id: str,
        tool_use_id: str | None = None,
        **common: Any,
    ) -> HookEvent:
        return cls.of(
            name,
            session_id=session_id,
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_use_id=tool_use_id,
            **common,
        )

    @classmethod
    def pre_tool_use(
        cls, tool_name: str, tool_input: Mapping[str, Any], *, session_id: str, **common: Any
    ) -> HookEvent:
        """``PreToolUse``: the model asked for a tool call that has not run yet."""
        return cls._tool_call("PreToolUse", tool_name, tool_input, session_id=session_id, **common)

    @classmethod
    def permission_request(
        cls, tool_name: str, tool_input: Mapping[str, Any], *, session_id: str, **common: Any
    ) -> HookEvent:
        """``PermissionRequest``: a call needs a person's approval; a hook may answer for them."""
        return cls._tool_call(
            "PermissionRequest", tool_name, tool_input, session_id=session_id, **common
        )

    @classmethod
    def post_tool_use(
        cls,
        tool_name: str,
        tool_input: Mapping[str, Any],
        tool_response: Any,
        *,
        session_id: str,
        tool_use_id: str | None = None,
        **common: Any,
    ) -> HookEvent:
        """``PostToolUse``: a tool call ran; ``tool_response`` is what it returned."""
        return cls.of(
            "PostToolUse",
            session_id=session_id,
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_response=tool_response,
            tool_use_id=tool_use_id,
            **common,
        )

    @classmethod
    def post_tool_use_failure(
        cls,
        tool_name: str,
        tool_input: Mapping[str, Any],
        error: str,
        *,
        session_id: str,
        tool_use_id: str | None = None,
        is_interrupt: bool = False,
        **common: Any,
    ) -> HookEvent:
        """``PostToolUseFailure``: a tool call ran and failed; ``error`` is what it reported."""
        return cls.of(
            "PostToolUseFailure",
            session_id=session_id,
            tool_name=tool_name,
            tool_input=dict(tool_input),
            tool_use_id=tool_use_id,
            error=error,
            is_interrupt=is_interrupt,
            **common,
        )

    @classmethod
    def user_prompt_submit(cls, prompt: str, *, session_id: str, **common: Any) -> HookEvent:
        """``UserPromptSubmit``: a prompt is about to be handed to the model."""
        return cls.of("UserPromptSubmit", session_id=session_id, prompt=prompt, **common)

    @classmethod
    def notification(
        cls, message: str, notification_type: str, *, session_id: str, **common: Any
    ) -> HookEvent:
        """``Notification``: ``permission_prompt`` (an approval waits) or ``idle_prompt``."""
        return cls.of(
            "Notification",
            session_id=session_id,
            message=message,
            notification_type=notification_type,
            **common,
        )

    @classmethod
    def stop(
        cls,
        *,
        session_id: str,
        stop_hook_active: bool = False,
        last_assistant_message: str | None = None,
        **common: Any,
    ) -> HookEvent:
        """``Stop``: the agent finished its turn (``stop_hook_active`` after a Stop block)."""
        return cls.of(
            "Stop",
            session_id=session_id,
            stop_hook_active=stop_hook_active,
            last_assistant_message=last_assistant_message,
            **common,
        )

    @classmethod
    def session_start(cls, *, session_id: str, source: str = "startup", **common: Any) -> HookEvent:
        """``SessionStart``: a session began (``source``: ``startup``, ``resume``, ``clear``,
        or ``compact`` after a compaction)."""
        return cls.of("SessionStart", session_id=session_id, source=source, **common)

    @classmethod
    def session_end(cls, *, session_id: str, reason: str = "other", **common: Any) -> HookEvent:
        """``SessionEnd``: a session ended (``reason``: ``other``, ``clear``, ...)."""
        return cls.of("SessionEnd", session_id=session_id, reason=reason, **common)
