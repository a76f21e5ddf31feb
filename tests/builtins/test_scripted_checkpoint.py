"""The scripted provider's ``checkpoint`` option: how often a stream yields to the loop."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

pytestmark = pytest.mark.anyio


def _request() -> Any:
    from agentrig.llm import ModelRequest, UserMessage

    return ModelRequest(model="m", messages=(UserMessage.of("hi"),))


def _count_checkpoints(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = anyio.lowlevel.checkpoint

    async def counting() -> None:
        calls[0] += 1
        await real()

    monkeypatch.setattr(anyio.lowlevel, "checkpoint", counting)
    return calls


@pytest.mark.parametrize(("checkpoint", "expected"), [("chunk", 4), ("reply", 1)])
async def test_stream_yields_per_chunk_or_once_per_reply(
    monkeypatch: pytest.MonkeyPatch, checkpoint: str, expected: int
) -> None:
    from agentrig.builtins.scripted import Reply, ScriptedProvider
    from agentrig.cancel import CancelSignal
    from agentrig.llm import TextDelta

    provider = ScriptedProvider([Reply(text="abcdefghi", chunk_size=3)], checkpoint=checkpoint)  # type: ignore[arg-type]
    calls = _count_checkpoints(monkeypatch)
    chunks = [c async for c in provider.stream(_request(), signal=CancelSignal())]
    # three text pieces and the finish chunk, whichever the checkpoint mode
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["abc", "def", "ghi"]
    assert len(chunks) == 4
    assert calls[0] == expected


async def test_reply_mode_still_checks_the_signal_before_every_chunk() -> None:
    from agentrig.builtins.scripted import Reply, ScriptedProvider
    from agentrig.cancel import CancelSignal, is_abort

    provider = ScriptedProvider([Reply(text="abcdef", chunk_size=2)], checkpoint="reply")
    signal = CancelSignal()
    seen: list[Any] = []

    async def consume() -> None:
        async for chunk in provider.stream(_request(), signal=signal):
            seen.append(chunk)
            signal.cancel("stop")

    with pytest.raises(BaseException) as caught:  # noqa: PT011 - the classifier decides
        await consume()
    assert is_abort(caught.value, signal)
    assert len(seen) == 1


@pytest.mark.parametrize(("checkpoint", "interleaved"), [("chunk", True), ("reply", False)])
async def test_other_tasks_run_between_chunks_only_in_chunk_mode(
    checkpoint: str, interleaved: bool
) -> None:
    from agentrig.builtins.scripted import Reply, ScriptedProvider
    from agentrig.cancel import CancelSignal

    provider = ScriptedProvider([Reply(text="abcdef", chunk_size=1)], checkpoint=checkpoint)  # type: ignore[arg-type]
    order: list[str] = []

    async def other() -> None:
        for _ in range(20):
            order.append("other")
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        async for _ in provider.stream(_request(), signal=CancelSignal()):
            order.append("chunk")
    first, last = order.index("chunk"), len(order) - order[::-1].index("chunk")
    assert order.count("chunk") == 7  # six one-letter pieces and the finish chunk
    assert ("other" in order[first:last]) is interleaved


def test_checkpoint_is_validated_and_configurable() -> None:
    from pydantic import ValidationError

    from agentrig.builtins.scripted import ScriptedProvider, factory
    from agentrig.llm import ProviderConfig

    # a ValueError naming the option (typeguard, when it instruments the package, refuses
    # the argument first with its own error naming it)
    with pytest.raises(Exception, match="checkpoint") as caught:
        ScriptedProvider(checkpoint="token")  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError) or type(caught.value).__name__ == "TypeCheckError"
    with pytest.raises(ValidationError, match="checkpoint"):
        factory(ProviderConfig(id="local", kind="scripted", options={"checkpoint": "token"}))
    built = factory(ProviderConfig(id="local", kind="scripted", options={"checkpoint": "reply"}))
    assert built.checkpoint == "reply"
    assert factory(ProviderConfig(id="local", kind="scripted")).checkpoint == "chunk"
