"""Conformance failures say exactly what is wrong.

Each test runs a check of a conformance suite against a deliberately broken plugin and reads
the failure a plugin author would see: a mismatch names the differing field (a diff, not two
reprs), a stream that ignores cancellation fails within 2 s with "did not stop after cancel",
a capability that should have been refused is named.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import test_conformance_scripted as scripted

from agentrig.builtins._scripted import ScriptedProvider
from agentrig.cancel import CancelSignal
from agentrig.llm import (
    Capabilities,
    ModelRequest,
    ModelResponse,
    Provider,
    StreamChunk,
    TextBlock,
    ToolCallBlock,
)
from agentrig.testing._diff import field_diff, mismatch
from agentrig.testing.conformance_provider import STOP_DEADLINE, Scenario

pytestmark = pytest.mark.anyio


class _Broken(scripted.TestScriptedConformance):
    """The scripted suite with ``provider_class`` built instead (not collected: no Test)."""

    provider_class: type[ScriptedProvider] = ScriptedProvider
    capabilities: Capabilities | None = None

    def make_provider(self, scenario: Scenario) -> Provider:
        return self.provider_class(
            [scripted.reply_for(scenario)], on_exhausted="repeat", capabilities=self.capabilities
        )


class Deaf(ScriptedProvider):
    """Streams its first chunk, then ignores the cancel signal (no ``signal.scope()``)."""

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]:
        first = True
        async for chunk in super().stream(request, signal=CancelSignal()):
            yield chunk
            if first:
                first = False
                await anyio.sleep(3600)  # deaf to `signal`


class Disagreeing(ScriptedProvider):
    """``complete()`` changes one argument of the first tool call."""

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        response = await super().complete(request, signal=signal)
        content = list(response.message.content)
        for index, block in enumerate(content):
            if isinstance(block, ToolCallBlock) and index == 0:
                content[index] = block.model_copy(
                    update={"arguments": {**block.arguments, "city": "Lisboa"}}
                )
        message = response.message.model_copy(update={"content": tuple(content)})
        return response.model_copy(update={"message": message})


async def test_a_stream_that_ignores_cancellation_fails_with_did_not_stop() -> None:
    suite = type("DeafSuite", (_Broken,), {"provider_class": Deaf})()
    started = anyio.current_time()
    with pytest.raises(AssertionError, match="did not stop after cancel") as caught:
        await suite.test_cancelling_mid_stream_aborts_promptly_and_closes_it()
    assert f"{STOP_DEADLINE:g}s" in str(caught.value)
    # the suite gives up on its own; it does not wait for the deaf provider's hour
    assert anyio.current_time() - started < STOP_DEADLINE + 10


async def test_stream_and_complete_disagreeing_names_the_field() -> None:
    suite = type("DisagreeingSuite", (_Broken,), {"provider_class": Disagreeing})()
    with pytest.raises(AssertionError) as caught:
        await suite.test_stream_and_complete_agree(Scenario.TOOL_CALLS)
    message = str(caught.value)
    assert "differ in 1 field(s)" in message
    assert "content[0].arguments.city: expected 'Lisboa', got 'Paris'" in message


async def test_a_capability_declared_absent_but_not_refused_is_named() -> None:
    lying = Capabilities(tool_choice=False, streaming=True)
    suite = type("LyingSuite", (_Broken,), {"capabilities": lying})()
    with pytest.raises(AssertionError) as caught:
        await suite.test_declared_tool_choice_is_honest()
    message = str(caught.value)
    assert "declares capability 'tool_choice' absent" in message
    assert "was not refused" in message


# ---- the diff itself ---------------------------------------------------------------------------


def test_field_diff_walks_models_mappings_and_sequences() -> None:
    one = (TextBlock(text="a"), {"x": [1, 2], "y": "same"})
    two = (TextBlock(text="b"), {"x": [1, 2, 3], "z": True, "y": "same"})
    assert field_diff(one, two) == [
        "[0].text: expected 'a', got 'b'",
        "[1].x: expected 2 items, got 3",
        "[1].z: unexpected (got True)",
    ]
    assert field_diff({"n": 1}, {"n": 1.0}) == ["n: expected int, got float"]
    assert mismatch("equal things", [1], [1]) is None


def test_mismatch_bounds_its_report() -> None:
    expected: dict[str, Any] = {f"k{i}": i for i in range(50)}
    actual = {f"k{i}": -i - 1 for i in range(50)}
    report = mismatch("two mappings", expected, actual)
    assert report is not None
    assert report.startswith("two mappings differ in 50 field(s):")
    assert report.endswith("... and 30 more")
