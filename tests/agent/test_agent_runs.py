"""Runs: FIFO per agent, concurrency across agents, the round budget and forced summary,
empty completions, unknown tools, the identical-input and context guards, tool failures --
and the invariant that every tool call has exactly one result, at every exit."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agentloop_support import (
    EnvFactory,
    Gate,
    WatchedProvider,
    assert_one_result_per_call,
    check_invariant,
    clock,
    echo,
    events,
    explode,
    request_texts,
    texts,
)

import agentrig
from agentrig.agent import (
    FORCED_SUMMARY_FALLBACK,
    FORCED_SUMMARY_INSTRUCTION,
    ContextWindowError,
    IdenticalToolInputError,
    ToolChoiceViolationError,
)
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.ids import AgentId
from agentrig.llm import (
    AssistantMessage,
    EmptyCompletionError,
    ModelInfo,
    ToolMessage,
    UserMessage,
)
from agentrig.tools import ToolContext, ToolOutput
from agentrig.tools import tool as agentrig_tool

pytestmark = pytest.mark.anyio


def echo_call(text: str) -> Reply:
    return Reply(tool_calls=(ScriptedCall("echo", {"text": text}),))


# ---- the invariant helper itself ---------------------------------------------------------------


def _call(*ids: str) -> AssistantMessage:
    from agentrig.llm import ToolCallBlock

    return AssistantMessage(content=tuple(ToolCallBlock(id=i, name="t", arguments={}) for i in ids))


def _result(call_id: str) -> ToolMessage:
    return ToolMessage.of(call_id, "t", "ok")


@pytest.mark.parametrize(
    ("history", "ok"),
    [
        ([_call("a", "b"), _result("b"), _result("a")], True),
        ([_call("a"), _result("a"), _call("a"), _result("a")], True),  # ids may be reused
        ([_call("a", "b"), _result("a")], False),  # one call without a result
        ([_call("a"), _result("a"), _result("a")], False),  # two results for one call
        ([_result("x")], False),  # a result without a call
        ([_call("a"), UserMessage.of("hi"), _result("a")], False),  # result after other input
    ],
    ids=["parallel", "reused-ids", "missing", "duplicate", "orphan", "late"],
)
def test_the_invariant_checker(history: list[Any], ok: bool) -> None:
    if ok:
        assert_one_result_per_call(history)
    else:
        with pytest.raises(AssertionError):
            assert_one_result_per_call(history)


# ---- FIFO and concurrency --------------------------------------------------------------------


async def test_runs_on_one_agent_are_fifo_with_sequential_history(env: EnvFactory) -> None:
    gate = Gate()
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("gate"),)),
        "answer A",
        Reply(text="answer B", delay=0.001),
        Reply(text="answer C", delay=0.001),
    ]
    async with env(script, tools=[gate.tool]) as e:
        agent = e.agent
        finished: list[str] = []

        async def run(prompt: str) -> None:
            result = await agent.run(prompt)
            finished.append(result.value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "A")
            await gate.entered.wait()  # A holds the slot
            tg.start_soon(run, "B")
            await anyio.wait_all_tasks_blocked()  # B queued behind A
            tg.start_soon(run, "C")
            await anyio.wait_all_tasks_blocked()  # C queued behind B
            assert len(e.provider.requests) == 1
            gate.release.set()
        assert finished == ["answer A", "answer B", "answer C"]
        assert texts(agent.session.derive_messages()) == [
            "user:A",
            "assistant:[gate]",
            "tool:gate=opened",
            "assistant:answer A",
            "user:B",
            "assistant:answer B",
            "user:C",
            "assistant:answer C",
        ]
        # each run saw the complete history of the runs before it
        assert (
            request_texts(e.provider.requests[3])[:-1] == texts(agent.session.derive_messages())[:6]
        )
        starts = [t.turn for t in events(agent, "turn/start")]
        assert starts == [1, 2, 3]
        check_invariant(agent)


async def test_separate_agents_run_concurrently(env: EnvFactory) -> None:
    other = WatchedProvider([Reply(text="never", delay=3600)])
    extra = {
        "providers": {"local": {"kind": "scripted"}, "other": {"kind": "scripted"}},
        "agents": {
            "assistant": {"provider": "local", "model": "m1"},
            "second": {"provider": "other", "model": "m1"},
        },
    }
    env.overrides.set("providers", "other", other)
    async with env([Reply(text="never", delay=3600)], config=extra) as e:
        first, second = e.rt.agent(AgentId("assistant")), e.rt.agent(AgentId("second"))
        signals = [agentrig.CancelSignal(), agentrig.CancelSignal()]
        results: dict[str, Any] = {}

        async def run(agent: Any, signal: Any) -> None:
            results[agent.id] = await agent.run("hi", signal=signal)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, first, signals[0])
            tg.start_soon(run, second, signals[1])
            # both provider calls are in flight at the same time
            await e.provider.received(1)
            await other.received(1)
            assert first.status == second.status == "running"
            for signal in signals:
                signal.cancel("enough")
        assert results["assistant"].interrupted
        assert results["second"].interrupted


# ---- round budget and forced summary ------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "expected"),
    [("Here is what I found.", "Here is what I found."), ("", FORCED_SUMMARY_FALLBACK)],
    ids=["summary", "empty-summary-fallback"],
)
async def test_round_budget_forces_one_summary_without_tools(
    env: EnvFactory, summary: str, expected: str
) -> None:
    script: list[Reply | str] = [echo_call("1"), echo_call("2"), Reply(text=summary), "unused"]
    async with env(script, tools=[echo], max_rounds=2) as e:
        agent = e.agent
        result = await agent.run("research")
        assert result.value == expected
        requests = e.provider.requests
        assert len(requests) == 3
        assert [len(r.tools) for r in requests] == [1, 1, 0]
        assert requests[2].tool_choice == "none"
        assert request_texts(requests[2])[-1] == f"user:{FORCED_SUMMARY_INSTRUCTION}"
        # the synthetic instruction is a per-call artifact, never persisted
        for event in agent.session.events:
            assert FORCED_SUMMARY_INSTRUCTION not in event.model_dump_json()
        assert texts(agent.session.derive_messages())[-1] == f"assistant:{expected}"
        assert events(agent, "turn/end")[-1].reason == "budget"
        check_invariant(agent)


async def test_forced_summary_tool_calls_are_not_dispatched(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        echo_call("1"),
        Reply(text="summary", tool_calls=(ScriptedCall("echo", {}),)),
    ]
    async with env(script, tools=[echo], max_rounds=1) as e:
        result = await e.agent.run("go")
        assert result.value == "summary"
        results = [ev.message for ev in events(e.agent, "tool/result")]
        assert [(m.status, m.text) for m in results][-1][0] == "not_executed"
        assert len(events(e.agent, "tool/call")) == 1  # only the budgeted round executed
        check_invariant(e.agent)


async def test_forced_summary_failure_fails_the_run_with_its_own_error(env: EnvFactory) -> None:
    from agentrig.llm import error_from_status

    failure = error_from_status(503, "overloaded", {}, provider="scripted")
    async with env([echo_call("1"), Reply(error=failure)], tools=[echo], max_rounds=1) as e:
        with pytest.raises(type(failure)):
            await e.agent.run("go")
        check_invariant(e.agent)


async def test_run_scoped_budget_wins_and_zero_disables_the_cap(env: EnvFactory) -> None:
    rounds = 30  # beyond the default budget of 25
    script: list[Reply | str] = [echo_call(str(i)) for i in range(rounds)] + ["finally"]
    async with env(script, tools=[echo], max_rounds=1) as e:
        result = await e.agent.run("go", max_rounds=0)
        assert result.value == "finally"
        assert len(e.provider.requests) == rounds + 1
        assert all(len(r.tools) == 1 for r in e.provider.requests)
        assert len(events(e.agent, "tool/call")) == rounds
        assert result.invocation.rounds == rounds + 1
        check_invariant(e.agent)


async def test_tool_only_completion_makes_no_summary_call(env: EnvFactory) -> None:
    script: list[Reply | str] = [echo_call("1"), echo_call("2"), "unused"]
    async with env(script, tools=[echo], max_rounds=2) as e:
        result = await e.agent.run("go", tool_only_completion=True)
        assert len(e.provider.requests) == 2
        assert result.value == ""
        assert events(e.agent, "turn/end")[-1].reason == "budget"
        check_invariant(e.agent)


@pytest.mark.parametrize("tool_only", [False, True])
async def test_neither_text_nor_tool_result_is_an_empty_completion_error(
    env: EnvFactory, tool_only: bool
) -> None:
    async with env([Reply(text="")]) as e:
        with pytest.raises(EmptyCompletionError):
            await e.agent.run("hi", tool_only_completion=tool_only)
        assert events(e.agent, "turn/end")[-1].reason == "failed"
        assert e.agent.status == "idle"
        check_invariant(e.agent)


async def test_tool_only_completion_accepts_a_turn_that_ends_on_a_tool_result(
    env: EnvFactory,
) -> None:
    async with env([echo_call("x"), Reply(text="")], tools=[echo]) as e:
        result = await e.agent.run("hi", tool_only_completion=True)
        assert result.value == ""
        check_invariant(e.agent)
    async with env([echo_call("x"), Reply(text="")], tools=[echo]) as e:
        with pytest.raises(EmptyCompletionError):
            await e.agent.run("hi")
        check_invariant(e.agent)


# ---- unknown tools -------------------------------------------------------------------------------


async def test_unknown_tool_is_skipped_naming_the_available_tools(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("teleport", {"to": "mars"}), ScriptedCall("clock"))),
        "done",
    ]
    async with env(script, tools=[clock, echo]) as e:
        result = await e.agent.run("go")
        assert result.value == "done"
        skipped, ran = (ev.message for ev in events(e.agent, "tool/result"))
        assert skipped.status == "skipped"
        assert "teleport" in skipped.text
        assert "clock" in skipped.text
        assert "echo" in skipped.text
        assert ran.status == "ok"
        # not counted as executed: no tool/call event for it
        assert [c.call.name for c in events(e.agent, "tool/call")] == ["clock"]
        check_invariant(e.agent)


async def test_repeated_unknown_tool_rounds_force_a_final_call_naming_them(
    env: EnvFactory,
) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("teleport"),)),
        Reply(tool_calls=(ScriptedCall("levitate"),)),
        "I cannot do that.",
        "unused",
    ]
    async with env(script, tools=[clock]) as e:
        result = await e.agent.run("go")
        assert result.value == "I cannot do that."
        requests = e.provider.requests
        assert len(requests) == 3
        final = requests[2]
        assert final.tools == ()
        assert final.tool_choice == "none"
        instruction = request_texts(final)[-1]
        assert "teleport" in instruction
        assert "levitate" in instruction
        assert "never executed" in instruction
        assert events(e.agent, "tool/call") == []
        assert all(ev.message.status == "skipped" for ev in events(e.agent, "tool/result"))
        # the instruction is not persisted
        assert all(instruction[5:] not in ev.model_dump_json() for ev in e.agent.session.events)
        check_invariant(e.agent)


async def test_a_known_call_resets_the_unknown_tool_streak(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("teleport"),)),
        Reply(tool_calls=(ScriptedCall("clock"),)),
        Reply(tool_calls=(ScriptedCall("teleport"),)),
        "done",
    ]
    async with env(script, tools=[clock]) as e:
        assert (await e.agent.run("go")).value == "done"
        assert [len(r.tools) for r in e.provider.requests] == [1, 1, 1, 1]
        check_invariant(e.agent)


# ---- identical-input guard ---------------------------------------------------------------------


async def test_identical_tool_input_guard(env: EnvFactory) -> None:
    same = echo_call("same")
    batch = Reply(
        tool_calls=(ScriptedCall("echo", {"text": "same"}), ScriptedCall("clock")),
    )
    script: list[Reply | str] = [same, same, same, batch, "unused"]
    async with env(script, tools=[echo, clock], identical_input_limit=3) as e:
        with pytest.raises(IdenticalToolInputError) as caught:
            await e.agent.run("loop")
        assert caught.value.recoverable is True
        assert not agentrig.is_abort(caught.value)
        assert len(events(e.agent, "tool/call")) == 3  # the fourth batch never dispatched
        last_two = [ev.message for ev in events(e.agent, "tool/result")][-2:]
        assert [m.name for m in last_two] == ["echo", "clock"]
        assert all(m.status == "not_executed" for m in last_two)
        assert events(e.agent, "turn/end")[-1].reason == "failed"
        check_invariant(e.agent)


@agentrig_tool(risk="inspect")
def pair(a: dict[str, int], b: int) -> str:
    """Take a map and a number."""
    return "ok"


def _pair_call(arguments: dict[str, Any]) -> Reply:
    return Reply(tool_calls=(ScriptedCall("pair", arguments),))


async def test_identical_input_guard_reads_objects_whatever_their_key_order(
    env: EnvFactory,
) -> None:
    first = _pair_call({"a": {"x": 1, "y": 2}, "b": 1})
    permuted = _pair_call({"b": 1, "a": {"y": 2, "x": 1}})  # the same input, keys reordered
    async with env([first, permuted, "unused"], tools=[pair], identical_input_limit=1) as e:
        with pytest.raises(IdenticalToolInputError):
            await e.agent.run("loop")
        assert len(events(e.agent, "tool/call")) == 1


async def test_identical_input_guard_tells_json_types_apart(env: EnvFactory) -> None:
    # 1, 1.0 and true are different JSON inputs (Python alone calls them equal)
    script: list[Reply | str] = [
        _pair_call({"a": {}, "b": 1}),
        _pair_call({"a": {}, "b": 1.0}),
        _pair_call({"a": {}, "b": True}),
        "done",
    ]
    async with env(script, tools=[pair], identical_input_limit=1) as e:
        assert (await e.agent.run("loop")).value == "done"
        assert len(events(e.agent, "tool/call")) == 3


async def test_a_lone_surrogate_in_the_arguments_is_an_invalid_input_not_a_failed_run(
    env: EnvFactory,
) -> None:
    # json.loads gives "\ud800" for a model's escaped text; no UTF-8 encoder takes it
    script: list[Reply | str] = [_pair_call({"a": {"\ud800": 1}, "b": 1}), "done"]
    async with env(script, tools=[pair], identical_input_limit=1) as e:
        assert (await e.agent.run("go")).value == "done"
        (result,) = [ev.message for ev in events(e.agent, "tool/result")]
        assert result.status == "error"
        assert "Invalid JSON" in result.text


async def test_identical_input_guard_can_be_disabled(env: EnvFactory) -> None:
    same = echo_call("same")
    async with env([same] * 5 + ["done"], tools=[echo], identical_input_limit=0) as e:
        assert (await e.agent.run("loop")).value == "done"
        assert len(events(e.agent, "tool/call")) == 5


# ---- context guard -------------------------------------------------------------------------------


async def test_context_guard_blocks_the_request_before_it_is_sent(env: EnvFactory) -> None:
    async with env(["never sent"], model="tiny") as e:
        e.rt.models.register(ModelInfo(model="tiny", context_window=50))
        with pytest.raises(ContextWindowError) as caught:
            await e.agent.run("x" * 400)
        assert e.provider.requests == []
        assert events(e.agent, "request/header") == []
        # the refusal is a model/error event, not assistant text in the history
        assert all(not isinstance(m, AssistantMessage) for m in e.agent.session.derive_messages())
        (refused,) = events(e.agent, "model/error")
        assert refused.code == "loop.context_window"
        assert refused.model == "tiny"
        assert "not sent" in refused.message
        assert str(caught.value) == refused.message
        check_invariant(e.agent)


async def test_context_guard_lets_a_small_request_through(env: EnvFactory) -> None:
    async with env(["fits"], model="tiny") as e:
        e.rt.models.register(ModelInfo(model="tiny", context_window=1000))
        assert (await e.agent.run("short")).value == "fits"


async def test_context_guard_trips_after_a_tool_round(env: EnvFactory) -> None:
    @agentrig_tool
    def bulky() -> str:
        """Return a lot of text."""
        return "y" * 2000

    async with env(
        [Reply(tool_calls=(ScriptedCall("bulky"),)), "unused"], tools=[bulky], model="tiny"
    ) as e:
        e.rt.models.register(ModelInfo(model="tiny", context_window=300))
        with pytest.raises(ContextWindowError):
            await e.agent.run("go")
        assert len(e.provider.requests) == 1
        check_invariant(e.agent)


# ---- tool failures and tool_choice ---------------------------------------------------------------


async def test_a_raising_tool_becomes_an_error_result(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("explode", {"reason": "disk full"}), ScriptedCall("clock"))),
        "recovered",
    ]
    async with env(script, tools=[explode, clock]) as e:
        assert (await e.agent.run("go")).value == "recovered"
        failed, ran = (ev.message for ev in events(e.agent, "tool/result"))
        assert failed.status == "error"
        assert "disk full" in failed.text
        assert ran.status == "ok"
        check_invariant(e.agent)


async def test_invalid_tool_input_becomes_an_error_result(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("echo", {"wrong": 1}),)),
        Reply(tool_calls=(ScriptedCall("echo", raw_arguments="{not json"),)),
        "ok",
    ]
    async with env(script, tools=[echo]) as e:
        assert (await e.agent.run("go")).value == "ok"
        statuses = [ev.message.status for ev in events(e.agent, "tool/result")]
        assert statuses == ["error", "error"]
        check_invariant(e.agent)


async def test_tool_choice_none_omits_tools_and_refuses_a_tool_call(env: EnvFactory) -> None:
    async with env([echo_call("x"), "unused"], tools=[echo]) as e:
        with pytest.raises(ToolChoiceViolationError):
            await e.agent.run("go", tool_choice="none")
        assert e.provider.requests[0].tools == ()
        assert events(e.agent, "tool/call") == []
        check_invariant(e.agent)
        # a later run without the override keeps the configured tools
        e.provider.add("fine")
        await e.agent.run("again")
        assert len(e.provider.requests[-1].tools) == 1


# ---- provider-owned call ids ----------------------------------------------------------------


async def test_reused_and_empty_provider_call_ids_each_get_their_own_result(
    env: EnvFactory,
) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("echo", {"text": "a"}, id="same"),)),
        Reply(tool_calls=(ScriptedCall("echo", {"text": "b"}, id="same"),)),
        Reply(
            tool_calls=(
                ScriptedCall("echo", {"text": "c"}, id=""),
                ScriptedCall("clock", id=""),
            )
        ),
        "done",
    ]
    async with env(script, tools=[echo, clock], identical_input_limit=0) as e:
        assert (await e.agent.run("go")).value == "done"
        results = [(ev.message.call_id, ev.message.text) for ev in events(e.agent, "tool/result")]
        assert results == [("same", "echo:a"), ("same", "echo:b"), ("", "echo:c"), ("", "12:00")]
        check_invariant(e.agent)


# ---- what a running tool is told ---------------------------------------------------------------


async def test_a_tool_gets_its_calls_identities_and_limit_in_its_context(env: EnvFactory) -> None:
    seen: list[ToolContext] = []

    @agentrig_tool(timeout=5)
    async def probe(ctx: ToolContext) -> str:
        """Look at the context."""
        seen.append(ctx)
        return "seen"

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("probe", id="call_7"),)), "done"]
    async with env(script, tools=[probe]) as e:
        assert (await e.agent.run("go")).value == "done"
        ((ctx,), (result,)) = seen, events(e.agent, "tool/result")
        assert (ctx.tool_id, ctx.call_id) == ("probe", "call_7")
        assert ctx.invocation_id == result.invocation_id
        assert ctx.invocation_id.startswith("inv_")
        assert ctx.agent is e.agent
        assert ctx.services is e.agent.runtime.services
        assert (ctx.timeout, ctx.alongside) == (5.0, False)
        assert not ctx.signal.cancelled


# ---- a tool result that concludes the turn ----------------------------------------------------


@pytest.mark.parametrize("steer", [False, True], ids=["concludes", "steering-still-runs"])
async def test_a_concluding_tool_result_ends_the_turn_at_its_step(
    env: EnvFactory, steer: bool
) -> None:
    @agentrig_tool
    def finish(ctx: ToolContext) -> ToolOutput:
        """Hand the result over and stop."""
        if steer:
            ctx.agent.steer("one more thing")
        return ToolOutput("handed over", concludes_turn=True)

    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("finish"),)),
        "after the steer",
        "unused",
    ]
    async with env(script, tools=[finish]) as e:
        result = await e.agent.run("go", tool_only_completion=True)
        if steer:
            # the conclusion never short-circuits steering already submitted
            assert len(e.provider.requests) == 2
            assert result.value == "after the steer"
        else:
            assert len(e.provider.requests) == 1
            assert result.value == ""
        assert events(e.agent, "turn/end")[-1].reason == "completed"
        assert len(events(e.agent, "turn/start")) == 1
        check_invariant(e.agent)
