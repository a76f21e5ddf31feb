"""The outcome contract: allow, deny, or error -- and how a hook's JSON answer is decoded.

A hook executor never hands back a raw exit code or HTTP status.  It returns one of three
outcomes:

* :class:`Allow` -- the hook did not object; its output is carried, and a decoded
  Claude-Code answer (:class:`Decision`) may ride along;
* :class:`Deny` -- the hook refused, with a reason;
* :class:`HookErrorOutcome` -- *no verdict could be decoded* (the hook crashed, timed out,
  printed something undecodable ...).  It is the absence of a verdict, not a third verdict,
  and it always names why.

Decoding is strict: a field is trusted only when it has exactly the type and one of the
values the protocol defines (``true``/``false``, a known ``permissionDecision`` literal).
Anything else makes the answer undecodable -- unless the same body states an explicit block
(``decision: "block"``, ``permissionDecision: "deny"`` or, for HTTP, ``allow: false``): that
is a decision the hook stated outright, and an undecodable field beside it does not retract
it.  Unknown fields are ignored.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import attrs

__all__ = [
    "PERMISSIONS",
    "Allow",
    "Decision",
    "Deny",
    "HookErrorOutcome",
    "HookOutcome",
    "Permission",
    "decode_answer",
    "decode_http_answer",
]

Permission = Literal["allow", "deny", "ask", "defer"]
PERMISSIONS: tuple[str, ...] = ("allow", "deny", "ask", "defer")


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else MappingProxyType(dict(value))


def _non_empty(_instance: object, attribute: Any, value: str) -> None:
    if not value.strip():
        raise ValueError(f"{attribute.name} must name a reason; an empty one says nothing")


@attrs.frozen(slots=True)
class Decision:
    """A decoded Claude-Code JSON answer (only the fields the hook actually sent are set).

    ``permission`` is ``hookSpecificOutput.permissionDecision`` (or the legacy top-level
    ``decision: "approve"`` as ``"allow"``); ``permission_reason`` its
    ``permissionDecisionReason``; ``block`` is ``decision: "block"`` with ``reason``;
    ``continue_`` is ``continue`` (``False`` stops the agent, with ``stop_reason``).
    """

    permission: Permission | None = None
    permission_reason: str | None = None
    updated_input: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_mapping)
    block: bool = False
    reason: str | None = None
    additional_context: str | None = None
    continue_: bool | None = None
    stop_reason: str | None = None
    suppress_output: bool = False
    system_message: str | None = None

    @property
    def refuses(self) -> bool:
        """Does this answer state a refusal outright (block or permission deny)?"""
        return self.block or self.permission == "deny"

    @property
    def refusal_reason(self) -> str:
        for text in (self.permission_reason, self.reason, self.stop_reason):
            if text and text.strip():
                return text.strip()
        return "blocked by hook (no reason given)"


@attrs.frozen(slots=True)
class Allow:
    """The hook did not object.

    ``steering`` says whether this answer may steer a tool call short of refusing it (a
    ``permissionDecision`` of allow or defer, an ``updatedInput``): only a command hook's
    answer may, since the hook is code the operator wrote rather than something answering
    from the very input it judges.
    """

    output: str = ""
    decision: Decision | None = None
    steering: bool = attrs.field(default=False, kw_only=True)
    source: str = attrs.field(default="", kw_only=True)

    kind: Literal["allow"] = attrs.field(default="allow", init=False)


@attrs.frozen(slots=True)
class Deny:
    """The hook refused, with a reason (a command hook's stderr on exit 2, a JSON block)."""

    reason: str = attrs.field(validator=_non_empty)
    decision: Decision | None = attrs.field(default=None, kw_only=True)
    source: str = attrs.field(default="", kw_only=True)

    kind: Literal["deny"] = attrs.field(default="deny", init=False)


@attrs.frozen(slots=True)
class HookErrorOutcome:
    """No verdict could be decoded; ``reason`` names why (never empty).

    ``proceed`` is set for a hook configured ``on_error = "proceed"``: its error is reported
    but never blocks, not even on an enforcing event (Claude Code's non-blocking error).
    """

    reason: str = attrs.field(validator=_non_empty)
    source: str = attrs.field(default="", kw_only=True)
    proceed: bool = attrs.field(default=False, kw_only=True)

    kind: Literal["error"] = attrs.field(default="error", init=False)


HookOutcome: TypeAlias = Allow | Deny | HookErrorOutcome
"""What one hook run decided: allow, deny, or error (no verdict)."""


# ---- decoding ---------------------------------------------------------------------------------
def _short(value: object) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Reader:
    """Collects the fields of one JSON answer and the problems found while reading them."""

    def __init__(self, body: Mapping[str, Any], event: str | None) -> None:
        self.body = body
        self.event = event
        self.problems: list[str] = []
        self.fields: dict[str, Any] = {}

    def _str(self, container: Mapping[str, Any], key: str, where: str, target: str) -> None:
        if key not in container or container[key] is None:
            return
        value = container[key]
        if isinstance(value, str):
            self.fields[target] = value
        else:
            self.problems.append(f"{where}{key} must be a string, got {_short(value)}")

    def _bool(self, container: Mapping[str, Any], key: str, where: str, target: str) -> None:
        if key not in container:
            return
        value = container[key]
        if value is True or value is False:
            self.fields[target] = value
        else:
            self.problems.append(f"{where}{key} must be true or false, got {_short(value)}")

    def read(self) -> Decision:
        body = self.body
        self._bool(body, "continue", "", "continue_")
        self._str(body, "stopReason", "", "stop_reason")
        self._bool(body, "suppressOutput", "", "suppress_output")
        self._str(body, "systemMessage", "", "system_message")
        self._str(body, "reason", "", "reason")
        if "decision" in body and body["decision"] is not None:
            value = body["decision"]
            if value == "block":
                self.fields["block"] = True
            elif value == "approve":  # Claude Code's legacy PreToolUse spelling of allow
                self.fields["permission"] = "allow"
            else:
                self.problems.append(f'decision must be "block" or "approve", got {_short(value)}')
        specific = body.get("hookSpecificOutput")
        if specific is not None:
            if isinstance(specific, Mapping):
                self._read_specific(specific)
            else:
                self.problems.append(
                    f"hookSpecificOutput must be an object, got {_short(specific)}"
                )
        return Decision(**self.fields)

    def _read_specific(self, specific: Mapping[str, Any]) -> None:
        where = "hookSpecificOutput."
        name = specific.get("hookEventName")
        if name is not None and self.event is not None and name != self.event:
            self.problems.append(
                f"{where}hookEventName is {_short(name)} but the event is {self.event!r}"
            )
        if "permissionDecision" in specific and specific["permissionDecision"] is not None:
            value = specific["permissionDecision"]
            if isinstance(value, str) and value in PERMISSIONS:
                self.fields["permission"] = value  # overrides the legacy top-level spelling
            else:
                self.problems.append(
                    f"{where}permissionDecision must be one of allow, deny, ask, defer; "
                    f"got {_short(value)}"
                )
        self._str(specific, "permissionDecisionReason", where, "permission_reason")
        if "decision" in specific and specific["decision"] is not None:
            self._read_permission_request(specific["decision"], f"{where}decision.")
        if "updatedInput" in specific and specific["updatedInput"] is not None:
            value = specific["updatedInput"]
            if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
                self.fields["updated_input"] = value
            else:
                self.problems.append(f"{where}updatedInput must be an object, got {_short(value)}")
        self._str(specific, "additionalContext", where, "additional_context")

    def _read_permission_request(self, value: object, where: str) -> None:
        # PermissionRequest: {"behavior": "allow", "updatedInput": {...}} answers for the user;
        # {"behavior": "deny", "message": "...", "interrupt": true} refuses (and stops).
        if not isinstance(value, Mapping):
            self.problems.append(f"{where[:-1]} must be an object, got {_short(value)}")
            return
        behavior = value.get("behavior")
        if behavior not in ("allow", "deny"):
            self.problems.append(
                f'{where}behavior must be "allow" or "deny", got {_short(behavior)}'
            )
            return
        self.fields["permission"] = behavior
        updated = value.get("updatedInput")
        if updated is not None:
            if isinstance(updated, Mapping) and all(isinstance(k, str) for k in updated):
                self.fields["updated_input"] = updated
            else:
                self.problems.append(
                    f"{where}updatedInput must be an object, got {_short(updated)}"
                )
        self._str(value, "message", where, "permission_reason")
        self._bool(value, "interrupt", where, "interrupt")
        if self.fields.pop("interrupt", False) and behavior == "deny":
            self.fields["continue_"] = False
            self.fields.setdefault("stop_reason", self.fields.get("permission_reason"))


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys; a hook printing {"decision": "block",
    # "decision": "approve"} has said two things, and neither reading may be picked for it.
    # (The config files' JSON reader does the same check, but it lives in builtins, above
    # this layer, and the kernel's public read_config_file reads a file, not a hook's text.)
    body: dict[str, Any] = {}
    for key, value in pairs:
        if key in body:
            raise ValueError(f"duplicate key {key!r}")
        body[key] = value
    return body


def _parse_json(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicates), None
    except (ValueError, RecursionError) as exc:
        return None, f"not valid JSON ({exc})"


def _invisible(ch: str) -> bool:
    # whitespace, a byte-order mark (U+FEFF) and other format characters (zero-width space,
    # direction marks): nothing a person reading the output would see before its first brace
    return ch.isspace() or unicodedata.category(ch) == "Cf"


def _json_text(text: str) -> str | None:
    """The JSON value ``text`` opens, without the invisible characters around it, or None.

    Output "starts like JSON" when its first visible character is ``{`` or ``[``; a UTF-8
    byte-order mark, whitespace and zero-width characters before it (and after the value)
    are tolerated, as Claude Code's reading (JavaScript's ``trim``) tolerates them.
    """
    start, end = 0, len(text)
    while start < end and _invisible(text[start]):
        start += 1
    while end > start and _invisible(text[end - 1]):
        end -= 1
    if start == end or text[start] not in "{[":
        return None
    return text[start:end]


def decode_answer(text: str, *, event: str | None = None, steering: bool = True) -> HookOutcome:
    """Decode what a command hook printed on stdout when it exited 0.

    Empty output, or plain text that does not open a JSON value, is an :class:`Allow`
    carrying the text (Claude Code treats non-JSON stdout the same way).  Output that opens a
    JSON value (``{`` or ``[``, after any byte-order mark and whitespace: see
    :func:`_json_text`) must decode to a Claude-Code answer object; if it does not -- bad
    syntax, a duplicate key, not an object -- the outcome is an error naming why, unless it
    states an explicit block.  It is never read as plain text that lets the call through.
    """
    stripped = _json_text(text)
    if stripped is None:
        return Allow(text, None, steering=steering)
    body, problem = _parse_json(stripped)
    if problem is not None:
        return HookErrorOutcome(f"undecodable answer: stdout is {problem}")
    if not isinstance(body, Mapping):
        return HookErrorOutcome(
            f"undecodable answer: stdout is JSON but not an object ({type(body).__name__})"
        )
    reader = _Reader(body, event)
    decision = reader.read()
    if decision.refuses:
        return Deny(decision.refusal_reason, decision=decision)
    if reader.problems:
        return HookErrorOutcome("undecodable answer: " + "; ".join(reader.problems))
    return Allow(text, decision, steering=steering)


def decode_http_answer(text: str, *, event: str | None = None) -> HookOutcome:
    """Decode the body of a 2xx answer from an HTTP hook.

    An empty body or ``{}`` is success with no decision, as in Claude Code (the call goes
    through the normal permission flow).  Otherwise the body must be a JSON object:
    ``{"allow": true}``, ``{"allow": false, "reason": "..."}``, or Claude Code's fields
    (``decision``, ``hookSpecificOutput.permissionDecision``, ``systemMessage`` ...).
    ``allow`` is trusted only when it is exactly ``true`` or ``false``; a field of the wrong
    type is an error, never read as a verdict.  An HTTP answer never steers (see
    :attr:`Allow.steering`).
    """
    if not text.strip().lstrip("\ufeff").strip():
        return Allow("", None, steering=False)
    stripped = _json_text(text) or text.strip()
    body, problem = _parse_json(stripped)
    if problem is not None:
        return HookErrorOutcome(f"undecodable answer: the response body is {problem}")
    if not isinstance(body, Mapping):
        return HookErrorOutcome(
            f"undecodable answer: the response body is JSON but not an object "
            f"({type(body).__name__})"
        )
    reader = _Reader(body, event)
    decision = reader.read()
    allow_field: bool | None = None
    if "allow" in body:
        value = body["allow"]
        if value is True or value is False:
            allow_field = value
        else:
            reader.problems.append(f"allow must be true or false, got {_short(value)}")
    if allow_field is False or decision.refuses:
        if decision.refuses:
            reason = decision.refusal_reason
        elif decision.reason and decision.reason.strip():
            reason = decision.reason.strip()
        else:
            reason = "denied by HTTP hook (no reason given)"
        return Deny(reason, decision=decision)
    if reader.problems:
        return HookErrorOutcome("undecodable answer: " + "; ".join(reader.problems))
    return Allow("", decision, steering=False)
