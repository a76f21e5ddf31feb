"""Context-window tracking: the provider's latest report plus the estimate of what came since,
bounded below by the estimate of the whole history, never summed across turns."""

from __future__ import annotations

import pytest
from agentloop_support import EnvFactory, events

from agentrig.agent import ContextUsage, ContextWindowError, measure_context
from agentrig.agent._context import context_tokens, context_usage
from agentrig.builtins._scripted import Reply
from agentrig.ids import SessionId
from agentrig.llm import AssistantMessage, ModelInfo, TextBlock, Usage, UserMessage
from agentrig.session import AssistantMessageEvent, ContextCompacted, Session, UserMessageEvent

pytestmark = pytest.mark.anyio


def _session(*messages: UserMessage | AssistantMessage) -> Session:
    session = Session(SessionId("ses_context_test"))
    for message in messages:
        if isinstance(message, UserMessage):
            session.append(UserMessageEvent(message=message))
        else:
            session.append(AssistantMessageEvent(message=message))
    return session


def _reply(text: str, usage: Usage | None, *, interrupted: bool = False) -> AssistantMessage:
    return AssistantMessage(
        content=(TextBlock(text=text),), usage=usage, interrupted=interrupted, stop_reason="end"
    )


def test_without_a_report_the_number_is_the_estimate() -> None:
    session = _session(UserMessage.of("x" * 400), _reply("y" * 40, None))
    usage = measure_context(session, 1000)
    assert (usage.used, usage.source, usage.reported) == (110, "estimate", None)
    assert usage.share == pytest.approx(0.11)


def test_the_latest_report_plus_the_estimate_of_what_came_since() -> None:
    session = _session(
        UserMessage.of("hello"),
        _reply("hi", Usage.of(900, 20)),
        UserMessage.of("z" * 400),  # 100 tokens by the estimate, not reported yet
    )
    usage = measure_context(session, 10_000)
    assert (usage.used, usage.source, usage.reported) == (1020, "provider", 920)


def test_reports_are_never_summed_across_turns() -> None:
    session = _session(
        UserMessage.of("one"),
        _reply("a", Usage.of(1000, 20)),
        UserMessage.of("two"),
        _reply("b", Usage.of(1100, 30)),
    )
    assert measure_context(session, 10_000).used == 1130  # the last report only


def test_a_cache_read_is_part_of_the_prompt_not_an_addition() -> None:
    session = _session(UserMessage.of("q"), _reply("a", Usage.of(1000, 10, cache_read=800)))
    assert measure_context(session, 10_000).used == 1010


def test_the_history_estimate_is_a_lower_bound() -> None:
    # a report far below what the history holds (a provider counting only the new input)
    session = _session(UserMessage.of("x" * 4000), _reply("a", Usage.of(3, 1)))
    usage = measure_context(session, 10_000)
    assert (usage.used, usage.source) == (1000, "estimate")
    assert measure_context(session, 10_000, floor=5000).used == 5000  # a floor, not a charge


def test_an_interrupted_reply_report_is_not_trusted() -> None:
    session = _session(
        UserMessage.of("q"),
        _reply("a", Usage.of(500, 5)),
        UserMessage.of("again"),
        _reply("partial", Usage.of(9000, 1), interrupted=True),
    )
    usage = measure_context(session, 100_000)
    assert usage.reported == 505
    assert usage.used < 9000


def test_describe_is_a_line_for_people() -> None:
    usage = ContextUsage(used=12_345, window=200_000, source="provider", estimate=100)
    assert usage.describe() == "12,345 / 200,000 tokens (6%, provider)"


async def test_agent_context_follows_the_provider_reports(env: EnvFactory) -> None:
    replies = [Reply(text="first", usage=Usage.of(700, 9)), Reply(text="second")]
    async with env(replies, model="mid") as e:
        e.rt.models.register(ModelInfo(model="mid", context_window=10_000))
        before = e.agent.context
        assert (before.source, before.window) == ("estimate", 10_000)
        await e.agent.run("hello")
        after = e.agent.context
        assert (after.used, after.source) == (709, "provider")
        await e.agent.run("x" * 400)  # the reply reports nothing: the estimate is added
        assert e.agent.context.used == 709 + (400 + len("second")) // 4


async def test_the_guard_stops_on_the_reported_usage(env: EnvFactory) -> None:
    # the characters are few, but the provider said the context is nearly full
    replies: list[Reply | str] = [Reply(text="ok", usage=Usage.of(960, 10)), "never sent"]
    async with env(replies, model="small") as e:
        e.rt.models.register(ModelInfo(model="small", context_window=1000))
        await e.agent.run("hi")
        with pytest.raises(ContextWindowError) as caught:
            await e.agent.run("and now?")
        assert len(e.provider.requests) == 1
        (refused,) = events(e.agent, "model/error")
        assert refused.message == str(caught.value)
        assert "about 972 tokens" in refused.message


def test_a_compaction_replaces_the_projection_prefix_and_resets_the_report() -> None:
    session = _session(
        UserMessage.of("old question " * 50),
        _reply("old answer", Usage.of(5000, 50)),
        UserMessage.of("recent"),
        _reply("recent answer", None),
    )
    summary = UserMessage.of("[summary] they talked", source="compaction-summary")
    before = session.derive_messages()
    session.append(ContextCompacted(strategy="test", replaced=2, messages=(summary,)))
    after = session.derive_messages()
    assert [m.text for m in after] == ["[summary] they talked", "recent", "recent answer"]
    assert len(before) == 4  # a view made before keeps what it showed
    usage = measure_context(session, 100_000)
    assert (usage.source, usage.reported) == ("estimate", None)  # the old report counted more
    assert usage.used == sum(len(m.text) for m in after) // 4
    # the events it replaced stay in the log
    assert [e.type for e in session.events][:2] == ["user/message", "assistant/message"]


def test_the_loop_measures_the_view_it_sends_as_measure_context_does() -> None:
    session = _session(
        UserMessage.of("hello"), _reply("hi", Usage.of(900, 20)), UserMessage.of("z" * 400)
    )
    chars = session.derive_messages().chars
    for tools, extra in ((0, 0), (80, 44)):
        usage = context_usage(session, chars, 10_000, tools, extra)
        assert usage == measure_context(session, 10_000, tool_chars=tools, extra_chars=extra)
        # what the loop reads per request without the record: the same numbers
        assert context_tokens(session, chars, tools, extra) == (
            usage.used,
            usage.source,
            usage.estimate,
            usage.reported,
        )
    fresh = _session(UserMessage.of("hello"))  # no report: the estimate alone
    usage = measure_context(fresh, 10_000)
    assert context_tokens(fresh, fresh.derive_messages().chars) == (
        usage.used,
        "estimate",
        usage.estimate,
        None,
    )
