"""The outcome contract: decoding answers, combining outcomes, enforcement, matchers."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.hooks import (
    ENFORCEMENT,
    KNOWN_EVENTS,
    Allow,
    Decision,
    Deny,
    EventPosture,
    HookErrorOutcome,
    HookEvent,
    HookOutcome,
    combine,
    compile_matcher,
    decode_answer,
    decode_http_answer,
    enforces,
    matcher_subject,
    posture,
)

# ---- outcomes --------------------------------------------------------------------------------


def test_error_and_deny_must_name_a_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        HookErrorOutcome("")
    with pytest.raises(ValueError, match="reason"):
        Deny("   ")
    assert HookErrorOutcome("timed out after 1s").kind == "error"
    assert Allow().kind == "allow"
    assert Deny("no").kind == "deny"


def test_outcomes_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Deny("no").reason = "yes"  # type: ignore[misc]
    decision = Decision(updated_input={"a": 1})
    with pytest.raises(TypeError):
        decision.updated_input["a"] = 2  # type: ignore[index]


def test_event_payload_is_read_only_and_named() -> None:
    event = HookEvent("Stop", {"session_id": "s", "stop_hook_active": False})
    with pytest.raises(TypeError):
        event.payload["x"] = 1  # type: ignore[index]
    assert json.loads(event.to_json()) == {
        "hook_event_name": "Stop",
        "session_id": "s",
        "stop_hook_active": False,
    }
    with pytest.raises(ValueError, match="identifier"):
        HookEvent("")
    assert {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"} <= KNOWN_EVENTS


def test_event_constructors_give_claude_code_shaped_input() -> None:
    pre = HookEvent.pre_tool_use("Bash", {"command": "ls"}, session_id="s", cwd="/w")
    assert pre.input()["tool_input"] == {"command": "ls"}
    post = HookEvent.post_tool_use("Bash", {"command": "ls"}, "a\nb", session_id="s", cwd="/w")
    assert post.input()["tool_response"] == "a\nb"
    prompt = HookEvent.user_prompt_submit("hello", session_id="s", cwd="/w")
    assert prompt.input()["prompt"] == "hello"
    stop = HookEvent.stop(session_id="s", stop_hook_active=True, cwd="/w")
    assert stop.input()["stop_hook_active"] is True
    start = HookEvent.session_start(session_id="s", source="resume", cwd="/w")
    assert start.input()["source"] == "resume"
    for event in (pre, post, prompt, stop, start):
        data = event.input()
        assert data["session_id"] == "s"
        assert data["cwd"] == "/w"
        assert "transcript_path" in data
        assert data["hook_event_name"] == event.name


# ---- decoding a command hook's stdout ----------------------------------------------------------


def pre(text: str) -> HookOutcome:
    return decode_answer(text, event="PreToolUse", steering=True)


@pytest.mark.parametrize("text", ["", "  \n", "ok", "looked fine\nsecond line"])
def test_empty_or_plain_text_is_allow_with_the_text(text: str) -> None:
    assert pre(text) == Allow(text, None, steering=True)


@pytest.mark.parametrize(
    ("body", "reason_part"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not an object"),
        (json.dumps({"continue": "false"}), "continue must be true or false"),
        (json.dumps({"suppressOutput": 1}), "suppressOutput"),
        (json.dumps({"decision": "approve-ish"}), "decision must be"),
        (json.dumps({"decision": True}), "decision must be"),
        (json.dumps({"hookSpecificOutput": "allow"}), "hookSpecificOutput must be an object"),
        (
            json.dumps({"hookSpecificOutput": {"permissionDecision": "ALLOW"}}),
            "permissionDecision",
        ),
        (json.dumps({"hookSpecificOutput": {"permissionDecision": True}}), "permissionDecision"),
        (json.dumps({"hookSpecificOutput": {"updatedInput": [1]}}), "updatedInput"),
        (
            json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse"}}),
            "hookEventName",
        ),
        (json.dumps({"hookSpecificOutput": {"additionalContext": 3}}), "additionalContext"),
    ],
)
def test_undecodable_answers_are_errors_with_a_named_reason(body: str, reason_part: str) -> None:
    outcome = pre(body)
    assert isinstance(outcome, HookErrorOutcome)
    assert outcome.reason.startswith("undecodable answer")
    assert reason_part in outcome.reason


# what may stand before (and after) a JSON answer: a byte-order mark, whitespace and other
# characters nobody sees -- the answer is still the JSON it opens
_INVISIBLE = st.text(alphabet="\ufeff \t\r\n\u200b\u200e\xa0\u2028", max_size=6)
_BLOCK = json.dumps({"decision": "block", "reason": "r"})


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff" + _BLOCK,
        "\ufeff \n\t" + _BLOCK + "\r\n",
        " \ufeff" + _BLOCK,
        "\r\n\u200b" + _BLOCK + "\n\n",
    ],
)
def test_a_byte_order_mark_and_whitespace_before_json_are_tolerated(text: str) -> None:
    assert pre(text) == Deny("r", decision=Decision(block=True, reason="r"))


@settings(max_examples=200, deadline=None)
@given(before=_INVISIBLE, after=_INVISIBLE, body=st.sampled_from(["{", "[", "{}", "[]"]))
def test_output_starting_like_json_is_never_plain_text(before: str, after: str, body: str) -> None:
    for tail in ("", "x", '"decision": "block"', "}{", "} trailing"):
        outcome = pre(before + body + tail + after)
        # never the plain-text reading (an Allow without a decoded answer) that lets a call
        # through: either a decoded answer or an error naming why
        assert not (isinstance(outcome, Allow) and outcome.decision is None), outcome


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff{not json",
        "\ufeff\n[",
        '{"decision": "block"',
        '{"decision": "block"} {"decision": "approve"}',
        '{"decision": "block", "reason": "r"}\nsome log line',
    ],
)
def test_json_that_does_not_parse_is_an_error_naming_why(text: str) -> None:
    outcome = pre(text)
    assert isinstance(outcome, HookErrorOutcome)
    assert outcome.reason.startswith("undecodable answer: stdout is not valid JSON")


@pytest.mark.parametrize("decode", [pre, decode_http_answer])
def test_a_duplicate_key_is_an_error_not_the_last_value(decode: Any) -> None:
    # json.loads alone would keep "approve" and allow the call
    outcome = decode('{"decision": "block", "reason": "r", "decision": "approve"}')
    assert isinstance(outcome, HookErrorOutcome)
    assert "duplicate key 'decision'" in outcome.reason


def test_an_http_body_with_a_byte_order_mark_is_read() -> None:
    outcome = decode_http_answer('\ufeff {"allow": false, "reason": "no"}\n')
    assert isinstance(outcome, Deny)
    assert outcome.reason == "no"


@pytest.mark.parametrize(
    "body",
    [
        {"decision": "block", "reason": "r", "continue": "nope"},
        {"decision": "block", "reason": "r", "hookSpecificOutput": {"permissionDecision": "?"}},
        {"hookSpecificOutput": {"permissionDecision": "deny", "updatedInput": "x"}, "reason": "r"},
    ],
)
def test_an_explicit_block_is_honoured_beside_an_undecodable_field(body: dict[str, Any]) -> None:
    outcome = pre(json.dumps(body))
    assert isinstance(outcome, Deny)
    assert outcome.reason == "r"


def test_a_full_claude_code_answer_is_decoded() -> None:
    body = {
        "continue": True,
        "suppressOutput": True,
        "systemMessage": "note to the user",
        "unknownField": {"ignored": True},
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "safe",
            "updatedInput": {"command": "ls -la"},
            "additionalContext": "context",
            "somethingNew": 1,
        },
    }
    outcome = pre(json.dumps(body))
    assert isinstance(outcome, Allow)
    assert outcome.decision == Decision(
        permission="allow",
        permission_reason="safe",
        updated_input={"command": "ls -la"},
        additional_context="context",
        continue_=True,
        suppress_output=True,
        system_message="note to the user",
    )


def test_legacy_approve_and_continue_false() -> None:
    approve = pre(json.dumps({"decision": "approve"}))
    assert isinstance(approve, Allow)
    assert approve.decision is not None
    assert approve.decision.permission == "allow"
    stop = pre(json.dumps({"continue": False, "stopReason": "enough"}))
    assert isinstance(stop, Allow)
    assert stop.decision == Decision(continue_=False, stop_reason="enough")


# ---- decoding an HTTP answer -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"allow": True}, "allow"),
        ({"allow": False, "reason": "nope"}, "deny"),
        ({"allow": False}, "deny"),
        ({"allow": "true"}, "error"),
        ({"allow": 1}, "error"),
        ({"allow": None}, "error"),
        ({}, "allow"),  # success with no decision (Claude Code)
        ({"reason": "no verdict here"}, "allow"),
        ({"hookSpecificOutput": {"permissionDecision": "allow"}}, "allow"),
        ({"hookSpecificOutput": {"permissionDecision": "deny"}}, "deny"),
        ({"hookSpecificOutput": {"permissionDecision": "perhaps"}}, "error"),
        ({"decision": "block", "reason": "x"}, "deny"),
        ({"allow": "yes", "decision": "block", "reason": "x"}, "deny"),
        ({"allow": True, "decision": "block", "reason": "x"}, "deny"),
        ({"allow": True, "continue": "no"}, "error"),
    ],
)
def test_http_verdict_is_trusted_only_when_exact(body: dict[str, Any], expected: str) -> None:
    outcome = decode_http_answer(json.dumps(body), event="PreToolUse")
    assert outcome.kind == expected
    if isinstance(outcome, Allow):
        assert not outcome.steering


def test_http_deny_reason_and_garbage() -> None:
    assert decode_http_answer('{"allow": false, "reason": "policy 7"}') == Deny(
        "policy 7", decision=Decision(reason="policy 7")
    )
    for garbage in ("<html>oops</html>", "[true]", '"allow"'):
        assert isinstance(decode_http_answer(garbage), HookErrorOutcome)


# ---- combining -----------------------------------------------------------------------------------


def steer(permission: str | None = None, **fields: Any) -> Allow:
    return Allow("", Decision(permission=permission, **fields), steering=True)  # type: ignore[arg-type]


def remote(permission: str | None = None, **fields: Any) -> Allow:
    return Allow("", Decision(permission=permission, **fields), steering=False)  # type: ignore[arg-type]


ERROR = HookErrorOutcome("timed out after 1s")


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], None),
        ([Allow()], None),
        ([steer("allow")], "allow"),
        ([steer("allow"), steer("defer")], "defer"),
        ([steer("defer"), steer("ask")], "ask"),
        ([steer("ask"), steer("defer")], "ask"),
        ([steer("ask"), Deny("no")], "deny"),
        ([Deny("no"), steer("allow")], "deny"),
        ([steer("allow"), steer("deny")], "deny"),
        ([steer("allow"), ERROR], "deny"),
        ([Allow(), ERROR], "deny"),
        ([ERROR], "deny"),
        ([Allow("", Decision(block=True, reason="r"))], "deny"),
        # a non-steering hook cannot approve or defer, but can deny and ask
        ([remote("allow")], None),
        ([remote("defer")], None),
        ([remote("ask")], "ask"),
        ([remote("deny")], "deny"),
    ],
)
def test_combine_table_on_pre_tool_use(outcomes: list[HookOutcome], expected: str | None) -> None:
    combined = combine(outcomes, event="PreToolUse")
    assert combined.permission == expected
    assert combined.denied == (expected == "deny")
    if expected == "deny":
        assert combined.reason


def test_an_error_on_pre_tool_use_fails_closed_with_its_reason() -> None:
    combined = combine(
        [Allow(), attrs.evolve(ERROR, source="hook PreToolUse[1] (command)")], event="PreToolUse"
    )
    assert combined.denied
    assert "timed out after 1s" in combined.reason
    assert "hook PreToolUse[1] (command)" in combined.reason
    assert combined.errors == ("hook PreToolUse[1] (command): timed out after 1s",)


@pytest.mark.parametrize(
    "event", ["PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "Whatever"]
)
def test_an_error_on_other_events_is_advisory(event: str) -> None:
    combined = combine([Allow("out"), ERROR], event=event)
    assert combined.permission is None
    assert not combined.denied
    assert combined.errors == ("timed out after 1s",)
    assert combined.outputs == ("out",)
    # a stated block is still honoured on an advisory event
    blocked = combine([ERROR, Deny("not this prompt")], event=event)
    assert blocked.denied
    assert blocked.reason == "not this prompt"


def test_updated_input_only_from_steering_hooks() -> None:
    rewrite = {"command": "ls"}
    assert combine([steer(updated_input=rewrite)], event="PreToolUse").updated_input == rewrite
    assert combine([remote(updated_input=rewrite)], event="PreToolUse").updated_input is None
    denied = combine([steer(updated_input=rewrite), Deny("no")], event="PreToolUse")
    assert denied.updated_input is None
    same = combine([steer(updated_input=rewrite), steer(updated_input=rewrite)], event="PreToolUse")
    assert same.updated_input == rewrite
    assert same.permission is None


def test_conflicting_rewrites_are_refused_on_pre_tool_use() -> None:
    combined = combine(
        [steer(updated_input={"command": "a"}), steer(updated_input={"command": "b"})],
        event="PreToolUse",
    )
    assert combined.denied
    assert "updatedInput" in combined.reason
    assert combined.updated_input is None


def test_combine_collects_context_outputs_and_stop() -> None:
    combined = combine(
        [
            Allow("shown", Decision(additional_context="ctx1")),
            Allow("hidden", Decision(suppress_output=True, additional_context="ctx2")),
            Allow("", Decision(continue_=False, stop_reason="budget spent", system_message="m")),
        ],
        event="PostToolUse",
    )
    assert combined.outputs == ("shown",)
    assert combined.additional_context == ("ctx1", "ctx2")
    assert combined.system_messages == ("m",)
    assert combined.stop
    assert combined.stop_reason == "budget spent"
    assert len(combined.outcomes) == 3


def test_ask_reason_is_carried() -> None:
    combined = combine([steer("ask", permission_reason="touches prod")], event="PreToolUse")
    assert combined.needs_approval
    assert combined.reason == "touches prod"


# ---- enforcement -------------------------------------------------------------------------------


def test_only_tool_use_gating_enforces() -> None:
    assert [event for event in ENFORCEMENT if enforces(event)] == ["PreToolUse"]
    assert enforces("PreToolUse")
    for event in ("PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "SessionEnd"):
        assert not enforces(event)
    assert not enforces("SomethingNew")
    assert posture("SomethingNew") == EventPosture(awaits=False, inspects=False, enforces=False)


def test_an_event_can_enforce_only_if_its_fire_site_awaits_and_inspects() -> None:
    for event, row in ENFORCEMENT.items():
        if row.enforces:
            assert row.awaits, event
            assert row.inspects, event
    with pytest.raises(ValueError, match="awaits and inspects"):
        EventPosture(awaits=True, inspects=False, enforces=True)
    with pytest.raises(ValueError, match="awaits and inspects"):
        EventPosture(awaits=False, inspects=True, enforces=True)
    with pytest.raises(TypeError):
        ENFORCEMENT["Stop"] = EventPosture(True, True, True)  # type: ignore[index]


# ---- matchers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "tool", "matches"),
    [
        (None, "Bash", True),
        ("", "Bash", True),
        ("*", "Anything", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("Bash", "bash", False),
        ("Bash|Write", "Write", True),
        ("Bash|Write", "Edit", False),
        ("Bash|Write", "WriteFile", False),
        ("mcp__.*", "mcp__github__create_issue", True),
        ("mcp__memory__.*", "mcp__github__create_issue", False),
        ("^Notebook", "NotebookEdit", True),
        ("Edit$", "NotebookEdit", True),
        ("Edit$", "EditFile", False),
        ("Notebook.*", "Notebook", True),
    ],
)
def test_matcher_table(matcher: str | None, tool: str, matches: bool) -> None:
    event = HookEvent.pre_tool_use(tool, {}, session_id="s", cwd="/")
    assert compile_matcher(matcher).matches(matcher_subject(event)) is matches


def test_invalid_regex_matcher_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid matcher"):
        compile_matcher("Bash(")


def test_matcher_subjects() -> None:
    assert matcher_subject(HookEvent.session_start(session_id="s", source="resume", cwd="/")) == (
        "resume"
    )
    assert matcher_subject(HookEvent.stop(session_id="s", cwd="/")) is None
    assert compile_matcher("Bash").matches(None)  # events without a subject ignore the matcher
