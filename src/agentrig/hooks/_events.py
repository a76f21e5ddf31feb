"""Hook events: the lifecycle point that fired and its Claude-Code-shaped JSON input."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

import attrs

__all__ = [
    "FIRED_EVENTS",
    "KNOWN_EVENTS",
    "NOT_FIRED",
    "EventName",
    "HookEvent",
    "event_name_problem",
]

EventName = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PreCompact",
]
"""The events agentrig knows by name (Claude Code's names); other names are allowed."""

KNOWN_EVENTS: frozenset[str] = frozenset(EventName.__args__)  # type: ignore[attr-defined]

#: THE list of events agentrig fires (the one place to change when the loop fires another).
#: A config hook (``[[hooks.<Event>]]``) for any other name would never run, so it is refused.
FIRED_EVENTS: frozenset[str] = frozenset({"PreToolUse"})

#: Known events agentrig does not fire, with the reason a config naming one is refused.
NOT_FIRED: Mapping[str, str] = MappingProxyType(
    {
        name: "agentrig does not fire this event yet, so a hook for it would never run"
        for name in sorted(KNOWN_EVENTS - FIRED_EVENTS)
    }
)


def event_name_problem(name: str) -> str | None:
    """Why a config hook for event ``name`` would never run (None: agentrig fires it)."""
    if name in FIRED_EVENTS:
        return None
    reason = NOT_FIRED.get(name)
    if reason is not None:
        return f"{name}: {reason} (events agentrig fires: {', '.join(sorted(FIRED_EVENTS))})"
    import difflib

    candidates = sorted(FIRED_EVENTS | KNOWN_EVENTS)
    lowered = {c.lower(): c for c in candidates}
    close = lowered.get(name.lower()) or next(
        iter(difflib.get_close_matches(name, candidates, n=1)), None
    )
    hint = f"; did you mean {close!r}?" if close else ""
    return (
        f"unknown hook event {name!r}{hint} "
        f"(events agentrig fires: {', '.join(sorted(FIRED_EVENTS))})"
    )


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
    ``traceparent`` is handed to command hooks in their environment only -- it never appears
    in the JSON input, in an HTTP body or to any other hook type.
    """

    name: str = attrs.field(validator=_check_name)
    payload: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_payload)
    traceparent: str | None = attrs.field(default=None, kw_only=True)

    @property
    def tool_name(self) -> str | None:
        """The tool this event is about (tool events only)."""
        value = self.payload.get("tool_name")
        return value if isinstance(value, str) else None

    def input(self) -> dict[str, Any]:
        """The JSON input as a plain dict, ``hook_event_name`` first."""
        return {"hook_event_name": self.name, **{k: v for k, v in self.payload.items()}}

    def to_json(self) -> bytes:
        """The JSON input as UTF-8 bytes (values JSON cannot carry are rendered as text)."""
        return json.dumps(self.input(), default=str, ensure_ascii=False).encode("utf-8")

    # ---- constructors for the events agentrig fires ------------------------------------------
    @classmethod
    def pre_tool_use(
        cls,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        session_id: str,
        cwd: str | None = None,
        tool_use_id: str | None = None,
        transcript_path: str | None = None,
        permission_mode: str = "default",
        **extra: Any,
    ) -> HookEvent:
        """``PreToolUse``: the model asked for a tool call that has not run yet."""
        return cls(
            "PreToolUse",
            {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "cwd": cwd if cwd is not None else os.getcwd(),
                "permission_mode": permission_mode,
                "tool_name": tool_name,
                "tool_input": dict(tool_input),
                "tool_use_id": tool_use_id,
                **extra,
            },
        )

    @classmethod
    def post_tool_use(
        cls,
        tool_name: str,
        tool_input: Mapping[str, Any],
        tool_response: Any,
        *,
        session_id: str,
        cwd: str | None = None,
        tool_use_id: str | None = None,
        transcript_path: str | None = None,
        **extra: Any,
    ) -> HookEvent:
        """``PostToolUse``: a tool call ran; ``tool_response`` is what it returned."""
        return cls(
            "PostToolUse",
            {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "cwd": cwd if cwd is not None else os.getcwd(),
                "tool_name": tool_name,
                "tool_input": dict(tool_input),
                "tool_response": tool_response,
                "tool_use_id": tool_use_id,
                **extra,
            },
        )

    @classmethod
    def user_prompt_submit(
        cls,
        prompt: str,
        *,
        session_id: str,
        cwd: str | None = None,
        transcript_path: str | None = None,
        **extra: Any,
    ) -> HookEvent:
        """``UserPromptSubmit``: a prompt is about to be handed to the model."""
        return cls(
            "UserPromptSubmit",
            {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "cwd": cwd if cwd is not None else os.getcwd(),
                "prompt": prompt,
                **extra,
            },
        )

    @classmethod
    def stop(
        cls,
        *,
        session_id: str,
        stop_hook_active: bool = False,
        cwd: str | None = None,
        transcript_path: str | None = None,
        **extra: Any,
    ) -> HookEvent:
        """``Stop``: the agent finished its turn (``stop_hook_active`` after a Stop block)."""
        return cls(
            "Stop",
            {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "cwd": cwd if cwd is not None else os.getcwd(),
                "stop_hook_active": stop_hook_active,
                **extra,
            },
        )

    @classmethod
    def session_start(
        cls,
        *,
        session_id: str,
        source: str = "startup",
        cwd: str | None = None,
        transcript_path: str | None = None,
        **extra: Any,
    ) -> HookEvent:
        """``SessionStart``: a session began (``source``: startup, resume, ...)."""
        return cls(
            "SessionStart",
            {
                "session_id": session_id,
                "transcript_path": transcript_path,
                "cwd": cwd if cwd is not None else os.getcwd(),
                "source": source,
                **extra,
            },
        )
