"""The three request parsers (OpenAI Chat, OpenAI Responses, Anthropic Messages) walk a
conversation the same way: every message an object at its key path, tool results answering a
call an earlier message of the same request made, the last message the user's -- each refused
with a 400 naming the field, in the format's own words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest
from agentrig_server._anthropic import parse_messages_request
from agentrig_server._errors import ApiError
from agentrig_server._openai_chat import parse_chat_request
from agentrig_server._responses import parse_responses_request
from agentrig_server._runs import Prompt

from agentrig.llm import AssistantMessage, ToolMessage, UserMessage


def chat(messages: Any) -> Prompt:
    return parse_chat_request({"model": "m", "messages": messages})[0]


def anthropic(messages: Any, **extra: Any) -> Prompt:
    return parse_messages_request({"model": "m", "max_tokens": 5, "messages": messages, **extra})[0]


def responses(items: Any, **extra: Any) -> Prompt:
    prompt = parse_responses_request({"model": "m", "input": items, **extra})[0]
    assert isinstance(prompt, Prompt)
    return prompt


def refused(parse: Callable[[], object]) -> tuple[str | None, str]:
    with pytest.raises(ApiError) as caught:
        parse()
    assert caught.value.status == 400
    return caught.value.param, str(caught.value)


CHAT_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "sub", "arguments": "{}"}},
    ],
}
ANTHROPIC_CALL = {
    "role": "assistant",
    "content": [
        {"type": "tool_use", "id": "c1", "name": "add", "input": {}},
        {"type": "tool_use", "id": "c2", "name": "sub", "input": {}},
    ],
}
RESPONSES_CALLS = [
    {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"},
    {"type": "function_call", "call_id": "c2", "name": "sub", "arguments": "{}"},
]


def test_tool_results_answer_the_calls_of_earlier_messages_by_name() -> None:
    prompts = [
        chat(
            [
                {"role": "user", "content": "hi"},
                CHAT_CALL,
                {"role": "tool", "tool_call_id": "c2", "content": "1"},
                {"role": "tool", "tool_call_id": "c1", "content": "5"},
                {"role": "user", "content": "and?"},
            ]
        ),
        anthropic(
            [
                {"role": "user", "content": "hi"},
                ANTHROPIC_CALL,
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "c2", "content": "1"},
                        {"type": "tool_result", "tool_use_id": "c1", "content": "5"},
                        {"type": "text", "text": "and?"},
                    ],
                },
            ]
        ),
        responses(
            [
                {"role": "user", "content": "hi"},
                *RESPONSES_CALLS,
                {"type": "function_call_output", "call_id": "c2", "output": "1"},
                {"type": "function_call_output", "call_id": "c1", "output": "5"},
                {"role": "user", "content": "and?"},
            ]
        ),
    ]
    for prompt in prompts:
        assert [type(m) for m in prompt.history] == [
            UserMessage,
            AssistantMessage,
            ToolMessage,
            ToolMessage,
        ]
        results = [m for m in prompt.history if isinstance(m, ToolMessage)]
        assert [(m.call_id, m.name, m.text) for m in results] == [
            ("c2", "sub", "1"),
            ("c1", "add", "5"),
        ]
        assert prompt.message.text == "and?"


def test_a_tool_result_for_no_earlier_call_is_refused_in_the_formats_words() -> None:
    assert refused(
        lambda: chat(
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "c9", "content": "5"},
                {"role": "user", "content": "and?"},
            ]
        )
    ) == (
        "messages[1].tool_call_id",
        "messages[1].tool_call_id: no earlier assistant tool call 'c9'",
    )
    assert refused(
        lambda: anthropic(
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "c9", "content": "5"}],
                },
            ]
        )
    ) == (
        "messages[1].content[0].tool_use_id",
        "messages[1].content[0].tool_use_id: no earlier tool_use 'c9'",
    )
    assert refused(
        lambda: responses(
            [
                {"role": "user", "content": "hi"},
                {"type": "function_call_output", "call_id": "c9", "output": "5"},
                {"role": "user", "content": "and?"},
            ]
        )
    ) == ("input[1].call_id", "input[1].call_id: no earlier function_call 'c9'")


def test_the_last_message_must_be_the_users() -> None:
    assert refused(lambda: chat([{"role": "user", "content": "hi"}, CHAT_CALL])) == (
        "messages",
        "messages: the last message must be the user's",
    )
    tool_results_only = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "5"}],
    }
    assert refused(
        lambda: anthropic([{"role": "user", "content": "hi"}, ANTHROPIC_CALL, tool_results_only])
    ) == ("messages", "messages: the last message must be the user's, with more than tool results")
    assert refused(lambda: responses([{"role": "user", "content": "hi"}, *RESPONSES_CALLS])) == (
        "input",
        "input: the last input item must be the user's message",
    )


def test_every_message_is_an_object_at_its_key_path_and_one_is_required() -> None:
    assert refused(lambda: chat([{"role": "user", "content": "hi"}, "hello"])) == (
        "messages[1]",
        "messages[1]: expected an object, got str",
    )
    assert refused(lambda: anthropic([7])) == (
        "messages[0]",
        "messages[0]: expected an object, got int",
    )
    assert refused(lambda: responses([None])) == (
        "input[0]",
        "input[0]: expected an object, got NoneType",
    )
    assert refused(lambda: chat([])) == ("messages", "messages: at least one message is required")
    assert refused(lambda: anthropic([])) == (
        "messages",
        "messages: at least one message is required",
    )
    assert refused(lambda: chat({"role": "user"})) == (
        "messages",
        "messages: expected an array, got dict",
    )


def test_system_texts_join_in_order() -> None:
    assert (
        chat(
            [
                {"role": "system", "content": "one"},
                {"role": "developer", "content": [{"type": "text", "text": "two"}]},
                {"role": "user", "content": "hi"},
            ]
        ).system
        == "one\n\ntwo"
    )
    assert anthropic([{"role": "user", "content": "hi"}], system="one").system == "one"
    prompt = responses(
        [{"role": "developer", "content": "two"}, {"role": "user", "content": "hi"}],
        instructions="one",
    )
    assert prompt.system == "one\n\ntwo"
    assert responses("hi").system is None


# ---- end-user tags: accepted, not passed on ---------------------------------------------------


def _chat(messages: Any, **extra: Any) -> Prompt:
    return parse_chat_request({"model": "m", "messages": messages, **extra})[0]


@pytest.mark.parametrize(
    ("parse", "tags"),
    [
        (_chat, {"user": "end-user-7"}),
        (responses, {"user": "end-user-7"}),
        (anthropic, {"metadata": {"user_id": "end-user-7"}}),
    ],
)
def test_end_user_tags_are_accepted_and_change_nothing_the_agent_is_sent(
    parse: Callable[..., Prompt], tags: dict[str, Any]
) -> None:
    """Documented in docs/server.md: SDK clients may set them; the agent's own options decide
    what its provider is sent, so the parsed prompt is the same with and without them."""
    message = [{"role": "user", "content": "hi"}]
    tagged, plain = parse(message, **tags), parse(message)
    assert tagged.message.content == plain.message.content
    assert attrs.evolve(tagged, message=plain.message) == plain


# a call that waited for a person, as a reply's output lists it: read from the session (the
# approval request first) or streamed (the call first); either way one call with its result
APPROVAL = {
    "type": "mcp_approval_request",
    "id": "appr_1",
    "server_label": "agentrig",
    "name": "bump",
    "arguments": '{"counter": "visits"}',
}
RAN = {
    "type": "mcp_call",
    "id": "mcp_1",
    "server_label": "agentrig",
    "name": "bump",
    "arguments": '{"counter": "visits"}',
    "output": "visits bumped",
    "approval_request_id": "appr_1",
}
ASK = {"role": "user", "content": "bump it"}
AGAIN = {"role": "user", "content": "again"}


@pytest.mark.parametrize("order", [[APPROVAL, RAN], [RAN, APPROVAL]])
def test_a_replayed_approval_request_and_its_call_are_one_call(order: list[Any]) -> None:
    prompt = responses([ASK, *order, AGAIN])
    call_message, result = prompt.history[1:]
    assert isinstance(call_message, AssistantMessage)
    assert isinstance(result, ToolMessage)
    [call] = call_message.tool_calls
    assert (call.name, call.arguments) == ("bump", {"counter": "visits"})
    assert (result.call_id, result.text, result.status) == (call.id, "visits bumped", "ok")


def test_a_replayed_approval_request_needs_its_call_or_an_answer() -> None:
    param, message = refused(lambda: responses([ASK, APPROVAL, AGAIN]))
    assert param == "input[1]"
    assert "'appr_1' has no result" in message


def test_approval_responses_end_the_input_and_are_read_in_openais_shape() -> None:
    answer = {"type": "mcp_approval_response", "approval_request_id": "appr_1", "approve": False}
    parsed = parse_responses_request(
        {"model": "m", "input": [ASK, APPROVAL, {**answer, "reason": "not today"}]}
    )[0]
    assert not isinstance(parsed, Prompt)
    assert [(a.approval_id, a.decision, a.message, a.param) for a in parsed] == [
        ("appr_1", "deny", "not today", "input[2].approval_request_id")
    ]
    param, _ = refused(lambda: responses([answer, AGAIN]))
    assert param == "input[1]"
    param, message = refused(lambda: responses([{**answer, "approve": "yes"}]))
    assert (param, message) == (
        "input[0].approve",
        "input[0].approve: expected true or false, got 'yes'",
    )
