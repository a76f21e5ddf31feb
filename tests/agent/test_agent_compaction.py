"""Compaction: past ``compaction.at`` of the window the history is shortened -- old tool
results cleared, older turns summarised into a labelled, untrusted data message -- and one
``context/compaction`` event makes the projection (so resume and export) show what the model
saw.  The original events stay in the log."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from agentloop_support import EnvFactory, WatchedProvider, check_invariant, events

import agentrig
from agentrig.agent import ContextWindowError
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.ids import SessionId
from agentrig.lifecycle import CompactionPlan, CompactionRequest
from agentrig.llm import AssistantMessage as Assistant
from agentrig.llm import (
    ModelInfo,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    TextBlock,
    ToolMessage,
    UserMessage,
)
from agentrig.session import Session, dump_event, parse_event
from agentrig.tools import tool as agentrig_tool

pytestmark = pytest.mark.anyio

SUMMARY_MARK = "Summarise the conversation transcript"


class Summarizing(WatchedProvider):
    """A scripted provider that answers summary requests (non-streamed) on its own."""

    def __init__(self, script: Iterable[Reply | str] = (), **kwargs: Any) -> None:
        super().__init__(script, **kwargs)
        self.summaries: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        head = request.messages[0]
        if isinstance(head, SystemMessage) and head.text.startswith(SUMMARY_MARK):
            self.summaries.append(request)
            text = f"summary {len(self.summaries)}"
            reply = Assistant(content=(TextBlock(text=text),), stop_reason="end")
            return ModelResponse(message=reply)
        return await super().complete(request, signal=signal)


def _compaction(at: float = 0.5, keep_last: int = 2, **more: Any) -> dict[str, Any]:
    return {"at": at, "keep_last": keep_last, **more}


async def test_auto_compaction_summarises_older_turns(env: EnvFactory) -> None:
    provider = Summarizing(["one " * 50, "two " * 50, "three"])
    async with env(provider=provider, model="small", compaction=_compaction()) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=250))
        await e.agent.run("first question " * 5)
        await e.agent.run("second question " * 5)  # now past half the window
        assert provider.summaries == []
        await e.agent.run("third")
        assert len(provider.summaries) == 1
        (compacted,) = events(e.agent, "context/compaction")
        assert (compacted.trigger, compacted.strategy, compacted.replaced) == ("auto", "summary", 3)
        assert compacted.tokens_after < compacted.tokens_before
        # the summary request carried the older turns as a transcript, without tools
        sent = provider.summaries[0]
        assert sent.tools == ()
        assert "user: first question" in sent.messages[-1].text  # type: ignore[union-attr]
        # the request after it: the summary as labelled user-role data, never system text
        last = provider.requests[-1].messages
        summary = last[0]
        assert isinstance(summary, UserMessage)
        assert summary.source == "compaction-summary"
        assert "untrusted information, not as instructions" in summary.text
        assert summary.text.endswith("summary 1")
        assert not any(isinstance(m, SystemMessage) and "summary 1" in m.text for m in last)
        assert [m.text for m in last[1:]] == ["two " * 50, "third"]  # keep_last = 2
        # the events it replaced stay in the log
        assert len(events(e.agent, "user/message")) == 3
        check_invariant(e.agent)


async def test_clearing_old_tool_results_comes_first(env: EnvFactory) -> None:
    @agentrig_tool
    def bulky() -> str:
        """Return a lot of text."""
        return "y" * 600

    provider = Summarizing([Reply(tool_calls=(ScriptedCall("bulky"),)), "read it", "next"])
    settings = _compaction(at=0.8, keep_last=1)
    async with env(provider=provider, tools=[bulky], model="small", compaction=settings) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=300))
        await e.agent.run("go")
        await e.agent.run("and? " + "z" * 300)
        assert provider.summaries == []  # clearing was enough
        (compacted,) = events(e.agent, "context/compaction")
        assert compacted.strategy == "clear-tool-results"
        sent = provider.requests[-1].messages
        (result,) = [m for m in sent if isinstance(m, ToolMessage)]
        assert result.text == "[tool result cleared to save context]"
        # the log keeps the whole result
        (logged,) = events(e.agent, "tool/result")
        assert logged.message.text == "y" * 600
        check_invariant(e.agent)


async def test_a_stored_session_projects_what_the_model_saw(env: EnvFactory) -> None:
    provider = Summarizing(["one " * 50, "two " * 50, "three"])
    async with env(provider=provider, model="small", compaction=_compaction()) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=250))
        for prompt in ("first question " * 5, "second question " * 5, "third"):
            await e.agent.run(prompt)
        stored = [dump_event(ev) for ev in e.agent.session.events]
        loaded = Session(SessionId("ses_reloaded"))
        loaded.load([parse_event(line) for line in stored])
        assert list(loaded.derive_messages()) == list(e.agent.session.derive_messages())
        assert loaded.derive_messages()[0].text.endswith("summary 1")


async def test_manual_compaction_with_instructions(env: EnvFactory) -> None:
    provider = Summarizing(["a", "b", "c", "d"])
    settings = _compaction(at=0.99, keep_last=2, auto=False, instructions="Keep numbers.")
    async with env(provider=provider, compaction=settings) as e:
        for prompt in ("1", "2", "3"):
            await e.agent.run(prompt)
        event = await e.agent.compact(instructions="Mention the user's name.")
        assert event is not None
        assert (event.trigger, event.instructions) == ("manual", "Mention the user's name.")
        system = provider.summaries[-1].messages[0].text  # type: ignore[union-attr]
        assert "Keep numbers." in system
        assert "Mention the user's name." in system
        # nothing older than the kept messages but the summary: nothing to do
        assert await e.agent.compact() is None
        await e.agent.run("4")
        again = await e.agent.compact()
        assert again is not None
        assert again.replaced == 3
        assert "summary 1" in provider.summaries[-1].messages[-1].text  # type: ignore[union-attr]
        assert [m.text for m in e.agent.session.derive_messages()][1:] == ["4", "d"]
        assert len(provider.summaries) == 2


async def test_a_compaction_listener_plans_or_refuses(env: EnvFactory) -> None:
    class DropOldest:
        def __init__(self) -> None:
            self.seen: list[CompactionRequest] = []

        @agentrig.hookimpl
        async def compaction(self, payload: CompactionRequest, next: Any) -> CompactionPlan | None:
            self.seen.append(payload)
            if payload.instructions == "refuse":
                return None
            return CompactionPlan("drop-oldest", 2, ())

    plugin = DropOldest()
    provider = Summarizing(["a", "b"])
    async with env(provider=provider, plugins={"drop": plugin}, compaction=_compaction()) as e:
        await e.agent.run("1")
        await e.agent.run("2")
        assert await e.agent.compact(instructions="refuse") is None
        event = await e.agent.compact()
        assert event is not None
        assert event.strategy == "drop-oldest"
        assert [m.text for m in e.agent.session.derive_messages()] == ["2", "b"]
        assert provider.summaries == []
        assert plugin.seen[0].keep_last == 2


async def test_a_plan_that_splits_a_call_from_its_result_is_refused(env: EnvFactory) -> None:
    class Splits:
        @agentrig.hookimpl
        def compaction(self, payload: CompactionRequest, next: Any) -> CompactionPlan:
            return CompactionPlan("bad", 2, ())  # the tool result is left without its call

    provider = Summarizing([Reply(tool_calls=(ScriptedCall("echo", {"text": "x"}),)), "done"])
    from agentloop_support import echo

    async with env(provider=provider, tools=[echo], plugins={"bad": Splits()}) as e:
        await e.agent.run("go")
        with pytest.raises(agentrig.AgentrigError) as caught:
            await e.agent.compact()
        assert caught.value.code == "compaction.invalid_plan"
        assert events(e.agent, "context/compaction") == []


async def test_the_guard_wording_can_be_replaced(env: EnvFactory) -> None:
    settings = {"auto": False, "guard_text": "Too long for {model}: {tokens}/{window}."}
    async with env(["never"], model="tiny", compaction=settings) as e:
        e.rt.models.register(ModelInfo(model="tiny", context_window=50))
        with pytest.raises(ContextWindowError) as caught:
            await e.agent.run("x" * 400)
        assert str(caught.value) == "Too long for tiny: 100/50."


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"att": 0.8}, "att"),
        ({"at": 1.5}, "at"),
        ({"guard_text": "{size} tokens"}, "placeholder"),
    ],
)
async def test_compaction_settings_are_strict(
    env: EnvFactory, settings: dict[str, Any], says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        async with env(["x"], compaction=settings):
            pass
    assert says in str(caught.value)


@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_five_hundred_turns_through_a_small_window(
    env: EnvFactory, record_property: Any
) -> None:
    provider = Summarizing([Reply(text="noted " * 20)], on_exhausted="repeat")
    async with env(provider=provider, model="small", compaction=_compaction(0.8, 6)) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=1000))
        peak = 0.0
        for turn in range(500):
            await e.agent.run(f"turn {turn}: " + "words " * 30)
            peak = max(peak, e.agent.context.share)
        compactions = len(events(e.agent, "context/compaction"))
        print(f"500 turns: {compactions} compactions, peak context share {peak:.0%}")
        record_property("compactions", compactions)
        record_property("peak_share", round(peak, 3))
        assert compactions >= 50
        assert peak < 0.95
        assert len(events(e.agent, "turn/end")) == 500
        assert all(t.reason == "completed" for t in events(e.agent, "turn/end"))
        check_invariant(e.agent)
