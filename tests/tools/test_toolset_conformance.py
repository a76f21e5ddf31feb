"""The toolset conformance suite: a well-behaved toolset passes it; broken ones fail it
saying exactly what is wrong (the tool, the field, "did not stop after cancel")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from agentrig.testing.conformance_toolset import ToolsetConformance
from agentrig.tools import ToolContext, ToolOutput, Toolset, tool


@tool(risk="inspect")
def add(a: int, b: int = 0) -> int:
    """Add two numbers."""
    return a + b


@tool(risk="inspect")
async def wait_for(seconds: float, ctx: ToolContext) -> ToolOutput:
    """Wait, unless cancelled."""
    with ctx.signal.scope():
        await anyio.sleep(seconds)
    return ToolOutput({"waited": not ctx.signal.cancelled}, view="display only")


class TestAWellBehavedToolset(ToolsetConformance):
    def contribution(self) -> object:
        return Toolset(tools=(add, wait_for))

    def sample_inputs(self) -> Mapping[str, Mapping[str, Any]]:
        return {"add": {"a": 1, "b": 2}, "wait_for": {"seconds": 0}}


class _Suite(ToolsetConformance):
    def __init__(self, tools: tuple[Any, ...], samples: Mapping[str, Mapping[str, Any]]) -> None:
        self.tools = tools
        self.samples = samples

    def contribution(self) -> object:
        return list(self.tools)

    def sample_inputs(self) -> Mapping[str, Mapping[str, Any]]:
        return self.samples


pytestmark = pytest.mark.anyio


async def test_duplicate_ids_are_named() -> None:
    suite = _Suite((add, add), {"add": {"a": 1}})
    # the registration check refuses it first, and the suite reports that reason
    with pytest.raises(AssertionError, match=r"refuse this contribution: .*'add' twice"):
        await suite.test_conformance_ids_are_unique("asyncio")


async def test_a_tool_deaf_to_cancel_did_not_stop() -> None:
    @tool(id="deaf")
    async def deaf(ctx: ToolContext) -> str:
        """Ignores its signal."""
        await anyio.sleep(3600)
        return "late"

    suite = _Suite((add, deaf), {"add": {"a": 1}, "deaf": {}})
    with pytest.raises(AssertionError, match="tool 'deaf' did not stop after cancel"):
        await suite.test_conformance_a_cancelled_signal_is_honoured("asyncio")


async def test_an_invalid_sample_names_the_issue() -> None:
    suite = _Suite((add,), {"add": {"a": "one"}})
    with pytest.raises(
        AssertionError, match=r"tool 'add': the sample input .* does not validate: a"
    ):
        await suite.test_conformance_sample_inputs_run_to_a_readable_result("asyncio")


async def test_a_missing_sample_and_a_refused_contribution_are_named() -> None:
    with pytest.raises(AssertionError, match="gives no input for: wait_for"):
        await _Suite(
            (add, wait_for), {"add": {"a": 1}}
        ).test_conformance_every_tool_has_a_sample_input("asyncio")
    with pytest.raises(AssertionError, match="agentrig would refuse this contribution"):
        await _Suite((), {}).test_conformance_passes_the_registration_check("asyncio")
