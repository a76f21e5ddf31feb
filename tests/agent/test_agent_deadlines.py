"""Deadlines: a run-level deadline ends the run ``timeout`` (its own outcome, not
``interrupted``) with its reason; a per-tool timeout gives the model an error result and the
run goes on; the caller's own cancellation still propagates and ends the run ``interrupted``.

The waits here never end on their own (a reply that never arrives, a tool that never
returns), so what ends them is the deadline under test; nothing is judged by elapsed time.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, check_invariant, events
from pydantic import BaseModel

from agentrig import CancelSignal
from agentrig.agent import DeadlineExceededError, agent_configs
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.errors import AgentrigError, ConfigError
from agentrig.ids import AgentId
from agentrig.kernel import load_config
from agentrig.tools import ToolContext, ToolDefinitionError, tool

pytestmark = pytest.mark.anyio

NEVER = Reply(text="never arrives", delay=3600)


@tool(risk="inspect")
async def hang(ctx: ToolContext) -> str:
    """Waits until the run's signal fires."""
    with ctx.signal.scope():
        await anyio.sleep_forever()
    return f"stopped: {ctx.signal.reason}"


@tool(timeout=0.05)
async def stuck() -> str:
    """Never answers (and ignores the run's signal)."""
    await anyio.sleep_forever()
    return "never"


@tool
async def slow() -> str:
    """Never answers unless a timeout is configured for it."""
    await anyio.sleep_forever()
    return "never"


# ---- the run-level deadline ---------------------------------------------------------------------


async def test_a_per_call_deadline_ends_the_run_as_timeout_with_the_reason(
    env: EnvFactory,
) -> None:
    async with env([NEVER]) as e:
        result = await e.agent.run("hi", deadline=0.05)
        assert result.invocation.outcome == "timeout"
        assert result.timed_out
        assert not result.interrupted  # no caller cancelled it
        reason = "the run passed its deadline of 0.05s"
        assert result.invocation.stop_reason == reason
        end = events(e.agent, "turn/end")[-1]
        assert end.reason == "timeout"
        assert end.detail == reason
        assert events(e.agent, "assistant/message")[-1].message.interrupted is True
        assert e.agent.status == "idle"
        check_invariant(e.agent)


async def test_the_config_deadline_reaches_a_running_tool_through_its_signal(
    env: EnvFactory,
) -> None:
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("hang"),)), "unused"]
    async with env(script, tools=[hang], deadline="50ms") as e:
        result = await e.agent.run("go")
        assert result.timed_out
        assert result.invocation.stop_reason == "the run passed its deadline of 0.05s"
        assert events(e.agent, "turn/end")[-1].reason == "timeout"
        (tool_result,) = events(e.agent, "tool/result")
        assert tool_result.message.text == "stopped: the run passed its deadline of 0.05s"
        check_invariant(e.agent)


async def test_a_streamed_run_takes_a_deadline_too(env: EnvFactory) -> None:
    async with env([NEVER]) as e:
        stream = e.agent.stream("hi", deadline="50ms")
        async for _chunk in stream:
            pass
        assert stream.result.invocation.outcome == "timeout"
        assert "deadline" in (stream.result.invocation.stop_reason or "")


async def test_a_run_that_finishes_in_time_is_untouched(env: EnvFactory) -> None:
    async with env(["done"], deadline="1h") as e:
        result = await e.agent.run("hi")
        assert result.value == "done"
        assert result.invocation.outcome == "completed"
        assert result.invocation.stop_reason is None


async def test_the_callers_signal_still_cancels_a_run_with_a_deadline(env: EnvFactory) -> None:
    async with env([NEVER]) as e:
        signal = CancelSignal()
        results: list[Any] = []

        async def run() -> None:
            results.append(await e.agent.run("hi", signal=signal, deadline="1h"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await e.provider.received(1)
            assert e.agent.cancel("user pressed stop")
        assert results[0].invocation.outcome == "interrupted"  # not the deadline's doing
        assert not results[0].timed_out
        assert results[0].invocation.stop_reason is None
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        assert signal.reason == "user pressed stop"


async def test_an_outer_cancellation_is_not_swallowed_by_the_deadline(env: EnvFactory) -> None:
    async with env([NEVER]) as e:
        with anyio.CancelScope() as scope:

            async def stop() -> None:
                await e.provider.received(1)
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(stop)
                await e.agent.run("hi", deadline="1h")
            pytest.fail("the caller's cancellation was swallowed")  # pragma: no cover
        assert scope.cancelled_caught
        assert events(e.agent, "turn/end")[-1].reason == "interrupted"
        assert events(e.agent, "turn/end")[-1].detail is None


async def test_a_queued_followup_turn_gets_the_config_deadline(env: EnvFactory) -> None:
    async with env([NEVER], deadline="50ms") as e:
        e.agent.followup("later")
        await e.agent.when_idle()
        end = events(e.agent, "turn/end")[-1]
        assert end.reason == "timeout"
        assert end.detail == "the run passed its deadline of 0.05s"


def test_the_deadline_error_is_an_abort_with_its_own_code() -> None:
    error = DeadlineExceededError(2.5)
    assert error.code == "loop.deadline"
    assert str(error) == "the run passed its deadline of 2.5s"
    signal = CancelSignal()
    signal.cancel(error)
    assert signal.abort_error() is error


async def test_a_malformed_per_call_deadline_is_refused_naming_it(env: EnvFactory) -> None:
    async with env(["unused"]) as e:
        with pytest.raises(AgentrigError, match="deadline: 'soon' is not a duration") as info:
            await e.agent.run("hi", deadline="soon")
        assert info.value.code == "loop.deadline_invalid"
        assert e.provider.requests == []


async def test_a_deadline_during_structured_output_retries_ends_the_run_as_timeout(
    env: EnvFactory,
) -> None:
    class Answer(BaseModel):
        n: int

    # the first answer does not validate; the retry never arrives and the deadline ends it
    async with env(["not json", NEVER]) as e:
        result = await e.agent.run("hi", output_type=Answer, deadline="50ms")
        assert result.invocation.outcome == "timeout"
        assert result.invocation.structured_attempts == 2
        assert [end.reason for end in events(e.agent, "turn/end")] == ["completed", "timeout"]


# ---- per-tool timeouts --------------------------------------------------------------------------


async def _run_past_a_timeout(e: Any, name: str, limit: str) -> None:
    """Run the script (a call of ``name``, then "carried on"): the call times out, the run
    goes on and the model sees the error."""
    result = await e.agent.run("go")
    assert result.value == "carried on"
    assert not result.interrupted
    (tool_result,) = events(e.agent, "tool/result")
    assert tool_result.message.status == "error"
    assert tool_result.message.text == (
        f"tool.timeout: the tool {name!r} did not finish within its {limit} timeout and was stopped"
    )
    # the model saw the error in its next request
    assert "tool.timeout" in e.provider.requests[1].messages[-1].text
    check_invariant(e.agent)


async def test_a_tool_timeout_gives_the_model_an_error_and_the_run_goes_on(
    env: EnvFactory,
) -> None:
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("stuck"),)), "carried on"]
    async with env(script, tools=[stuck]) as e:
        await _run_past_a_timeout(e, "stuck", "0.05s")


async def test_the_tools_config_table_sets_a_timeout(env: EnvFactory) -> None:
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("slow"),)), "ok"]
    async with env(script, tools=[slow], config={"tools": {"slow": {"timeout": "50ms"}}}) as e:
        result = await e.agent.run("go")
        assert result.value == "ok"
        (tool_result,) = events(e.agent, "tool/result")
        assert "within its 0.05s timeout" in tool_result.message.text


async def test_the_config_timeout_overrides_the_tools_own(env: EnvFactory) -> None:
    @tool(timeout=3600)
    async def patient() -> str:
        """Would wait an hour."""
        await anyio.sleep_forever()
        return "never"

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("patient"),)), "ok"]
    config = {"tools": {"patient": {"timeout": 0.05}}}
    async with env(script, tools=[patient], config=config) as e:
        await e.agent.run("go")
        (tool_result,) = events(e.agent, "tool/result")
        assert "within its 0.05s timeout" in tool_result.message.text


def test_a_tool_timeout_must_be_a_positive_number() -> None:
    for bad in (0, -1, -0.5):
        with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
            tool(timeout=bad)(slow.function)


# ---- config validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "value", "path"),
    [
        ("agent", "soon", ("agents", "a", "deadline")),
        ("agent", 0, ("agents", "a", "deadline")),
        ("agent", "-5s", ("agents", "a", "deadline")),
        ("tool", "3 weeks", ("tools", "slow", "timeout")),
        ("tool", -1, ("tools", "slow", "timeout")),
    ],
)
def test_malformed_durations_in_config_are_refused_at_their_key(
    table: str, value: object, path: tuple[str, ...]
) -> None:
    agent: dict[str, Any] = {"provider": "p", "model": "m"}
    data: dict[str, Any] = {"providers": {"p": {"kind": "k"}}, "agents": {"a": agent}}
    if table == "agent":
        agent["deadline"] = value
    else:
        data["tools"] = {"slow": {"timeout": value}}
    with pytest.raises(ConfigError) as info:
        load_config(data)
    (issue,) = info.value.issues
    assert issue.path == path


@pytest.mark.parametrize(
    ("value", "seconds"), [("30s", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0), (7, 7.0)]
)
def test_durations_read_as_seconds(value: object, seconds: float) -> None:
    data = {
        "providers": {"p": {"kind": "k"}},
        "agents": {"a": {"provider": "p", "model": "m", "deadline": value}},
    }
    assert agent_configs(load_config(data))[AgentId("a")].deadline == seconds


# ---- synchronous tools: a timeout abandons the worker thread -----------------------------------


async def test_a_sync_tool_past_its_timeout_gives_the_timeout_error_and_the_run_goes_on(
    env: EnvFactory,
) -> None:
    release, finished = threading.Event(), threading.Event()

    @tool(timeout=0.2)
    def blocking() -> str:
        """Blocks its thread until the test releases it (never within the timeout)."""
        release.wait(30)
        finished.set()
        return "late value"

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("blocking"),)), "carried on"]
    try:
        async with env(script, tools=[blocking]) as e:
            await _run_past_a_timeout(e, "blocking", "0.2s")
            assert not finished.is_set()  # the body was abandoned, not waited for
    finally:
        release.set()
    # the abandoned body finishes in the background; its value is dropped
    assert await anyio.to_thread.run_sync(finished.wait, 10)


async def test_a_tool_is_told_the_timeout_that_applies_to_its_call(env: EnvFactory) -> None:
    seen: list[float | None] = []

    @tool(timeout=3600)
    async def bounded(ctx: ToolContext) -> str:
        """Records its context's timeout."""
        seen.append(ctx.timeout)
        return "ok"

    @tool
    async def unbounded(ctx: ToolContext) -> str:
        """Records its context's timeout."""
        seen.append(ctx.timeout)
        return "ok"

    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("bounded"),)),
        Reply(tool_calls=(ScriptedCall("unbounded"),)),
        "done",
    ]
    config = {"tools": {"bounded": {"timeout": "2s"}}}
    async with env(script, tools=[bounded, unbounded], config=config) as e:
        assert (await e.agent.run("go")).value == "done"
    assert seen == [2.0, None]


async def test_a_sync_tool_alone_without_timeout_runs_on_the_event_loop_thread(
    env: EnvFactory,
) -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        """Records the thread it runs on."""
        threads.append(threading.get_ident())
        return "here"

    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("where"),)), "done"]
    async with env(script, tools=[where]) as e:
        assert (await e.agent.run("go")).value == "done"
    assert threads == [threading.get_ident()]
