"""A compaction's summary call is the run's: its usage is in ``RunResult`` (in ``usage`` and
apart as ``compaction_usage``); when it fails, the failure is a ``model/error`` event naming
the summary's provider and model and the run fails with the call's own error, as a failed
round does; a cancellation while summarising interrupts the run."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agentloop_support import EnvFactory, WatchedProvider, events

from agentrig.builtins._scripted import Reply
from agentrig.cancel import CancelSignal
from agentrig.llm import (
    AssistantMessage,
    ModelInfo,
    ModelRequest,
    ModelResponse,
    OverloadedError,
    SystemMessage,
    TextBlock,
    Usage,
)

pytestmark = pytest.mark.anyio

SUMMARY_MARK = "Summarise the conversation transcript"
COMPACTION = {"at": 0.5, "keep_last": 2, "model": "summarizer"}


class Summaries(WatchedProvider):
    """Scripted turns; a summary request is answered (with usage), fails, or waits."""

    def __init__(self, script: Any, mode: str = "answer") -> None:
        super().__init__(script)
        self.mode = mode
        self.summaries: list[ModelRequest] = []
        self.summarising = anyio.Event()

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        head = request.messages[0]
        if not (isinstance(head, SystemMessage) and head.text.startswith(SUMMARY_MARK)):
            return await super().complete(request, signal=signal)
        self.summaries.append(request)
        if self.mode == "fail":
            raise OverloadedError("the summary model is overloaded", provider="local")
        if self.mode == "wait":
            self.summarising.set()
            await anyio.sleep_forever()
        message = AssistantMessage(
            content=(TextBlock(text="They talked."),), stop_reason="end", usage=Usage.of(300, 20)
        )
        return ModelResponse(message=message)


def turns() -> list[Any]:
    return [
        Reply(text="one " * 50, usage=Usage.of(100, 50)),
        Reply(text="two", usage=Usage.of(7, 3)),
    ]


async def test_the_summary_calls_usage_is_in_the_runs_usage_and_apart(env: EnvFactory) -> None:
    provider = Summaries(turns())
    async with env(provider=provider, model="small", compaction=COMPACTION) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=250))
        first = await e.agent.run("first question " * 5)
        assert first.invocation.compaction_usage is None  # nothing compacted
        second = await e.agent.run("second")  # past half the window: compacted first
        (compacted,) = events(e.agent, "context/compaction")
    assert len(provider.summaries) == 1
    assert provider.summaries[0].model == "summarizer"
    record = second.invocation
    assert record.compaction_usage == Usage.of(300, 20)
    assert record.usage == Usage.of(307, 23)  # the round's and the summary's
    assert record.total_usage == Usage.of(307, 23)
    assert compacted.usage == Usage.of(300, 20)


async def test_a_failed_summary_call_is_a_model_error_and_fails_the_run(env: EnvFactory) -> None:
    provider = Summaries(turns(), mode="fail")
    async with env(provider=provider, model="small", compaction=COMPACTION) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=250))
        await e.agent.run("first question " * 5)
        with pytest.raises(OverloadedError):  # the call's own error, as a failed round's
            await e.agent.run("second")
        (error,) = events(e.agent, "model/error")
        assert (error.provider, error.model, error.code) == (
            "local",
            "summarizer",
            "provider.overloaded",
        )
        assert "overloaded" in error.message
        assert events(e.agent, "context/compaction") == []
        assert len(provider.requests) == 1  # the round itself was never sent
        # the failure stays out of what the model sees; the history is whole
        view = e.agent.session.derive_messages()
        assert [m.role for m in view if m.role != "system"] == ["user", "assistant", "user"]
        # a manual compaction that fails is logged the same way
        with pytest.raises(OverloadedError):
            await e.agent.compact()
        assert [x.model for x in events(e.agent, "model/error")] == ["summarizer", "summarizer"]


async def test_a_cancellation_while_summarising_interrupts_the_run(env: EnvFactory) -> None:
    provider = Summaries(turns(), mode="wait")
    async with env(provider=provider, model="small", compaction=COMPACTION) as e:
        e.rt.models.register(ModelInfo(model="small", context_window=250))
        await e.agent.run("first question " * 5)
        signal = CancelSignal()
        result: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def second() -> None:
                result.append(await e.agent.run("second", signal=signal))

            tg.start_soon(second)
            await provider.summarising.wait()
            signal.cancel()
        (interrupted,) = result
        assert interrupted.interrupted
        assert events(e.agent, "model/error") == []  # a cancellation is no failure
        assert events(e.agent, "context/compaction") == []
