"""The scripted provider's ``checkpoint`` option: how often a stream yields to the loop."""

from __future__ import annotations

from typing import Any, Literal

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
    monkeypatch: pytest.MonkeyPatch, checkpoint: Literal["chunk", "reply"], expected: int
) -> None:
    from agentrig.builtins._scripted import Reply, ScriptedProvider
    from agentrig.cancel import CancelSignal
    from agentrig.llm import TextDelta

    provider = ScriptedProvider([Reply(text="abcdefghi", chunk_size=3)], checkpoint=checkpoint)
    calls = _count_checkpoints(monkeypatch)
    chunks = [c async for c in provider.stream(_request(), signal=CancelSignal())]
    # three text pieces and the finish chunk, whichever the checkpoint mode
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["abc", "def", "ghi"]
    assert len(chunks) == 4
    assert calls[0] == expected


async def test_reply_mode_still_checks_the_signal_before_every_chunk() -> None:
    from agentrig.builtins._scripted import Reply, ScriptedProvider
    from agentrig.cancel import CancelSignal, is_abort
    from agentrig.errors import AbortError

    provider = ScriptedProvider([Reply(text="abcdef", chunk_size=2)], checkpoint="reply")
    signal = CancelSignal()
    seen: list[Any] = []

    async def consume() -> None:
        async for chunk in provider.stream(_request(), signal=signal):
            seen.append(chunk)
            signal.cancel("stop")

    with pytest.raises(AbortError) as caught:
        await consume()
    assert is_abort(caught.value, signal)
    assert len(seen) == 1


@pytest.mark.parametrize(("checkpoint", "interleaved"), [("chunk", True), ("reply", False)])
async def test_other_tasks_run_between_chunks_only_in_chunk_mode(
    checkpoint: Literal["chunk", "reply"], interleaved: bool
) -> None:
    from agentrig.builtins._scripted import Reply, ScriptedProvider
    from agentrig.cancel import CancelSignal

    provider = ScriptedProvider([Reply(text="abcdef", chunk_size=1)], checkpoint=checkpoint)
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
    from typeguard import suppress_type_checks

    from agentrig.builtins._scripted import ScriptedProvider, factory
    from agentrig.llm import ProviderConfig

    wrong: Any = "token"  # deliberately outside the Literal, as untyped callers may pass
    with suppress_type_checks(), pytest.raises(ValueError, match='checkpoint must be "chunk"'):
        ScriptedProvider(checkpoint=wrong)  # the provider's own check, not typeguard's
    with pytest.raises(ValidationError, match="checkpoint"):
        factory(ProviderConfig(id="local", kind="scripted", options={"checkpoint": "token"}))
    built = factory(ProviderConfig(id="local", kind="scripted", options={"checkpoint": "reply"}))
    assert built.checkpoint == "reply"
    assert factory(ProviderConfig(id="local", kind="scripted")).checkpoint == "chunk"
