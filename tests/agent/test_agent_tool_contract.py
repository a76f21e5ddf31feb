"""The tool contract as the loop and ``agent.call_tool()`` keep it (spec 004).

* ``parse`` is synchronous: an async one is refused at registration with the reason; an
  awaitable returned by mistake is never handed to the tool as its input;
* ``agent.call_tool()`` has one error channel: a failure raises with the failure's class, the
  fixed invocation result comes back only on success;
* ``check_input`` returns the spec's check-result shape;
* permission is asked only after the arguments validated (``tests/builtins/test_gate.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import pytest
from agentloop_support import EnvFactory, check_invariant, events

from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.kernel import ContractViolation
from agentrig.llm import ContentBlock, ImageBlock, TextBlock
from agentrig.tools import (
    FunctionTool,
    ToolOutput,
    ToolRefusedError,
    ToolReportedError,
    check_input,
    check_tool_contribution,
    tool,
)
from agentrig.tools.schema import SchemaContractError, SchemaValidationError

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode() -> str:
    """Always fails."""
    raise LookupError("nothing here")


@tool
def complain() -> ToolOutput:
    """Answers with an error result of its own."""
    return ToolOutput("the disk is full", is_error=True)


# ---- parse is synchronous --------------------------------------------------------------------


class _AsyncParse:
    json_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    async def parse(self, value: object) -> object:
        return value


class _AwaitableParse:
    """A sync ``parse`` that returns a coroutine by mistake."""

    json_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    def parse(self, value: object) -> object:
        async def later() -> object:
            return value

        return later()


def _tool_with(schema: object) -> FunctionTool:
    received: list[object] = []

    def fetch() -> str:
        """Fetch something."""
        return "fetched"

    built = FunctionTool(fetch, id="fetch")
    built._schema = schema  # type: ignore[assignment]
    built.received = received  # type: ignore[attr-defined]
    return built


def test_an_async_parse_is_refused_at_registration_with_the_reason() -> None:
    with pytest.raises(ContractViolation, match="parse is async; parse must be synchronous"):
        check_tool_contribution(_tool_with(_AsyncParse()))


async def test_an_awaitable_from_parse_never_reaches_the_tool(env: EnvFactory) -> None:
    broken = _tool_with(_AwaitableParse())
    script: list[Reply | str] = [Reply(tool_calls=(ScriptedCall("fetch"),)), "done"]
    async with env(script, tools=[broken]) as e:
        with warnings.catch_warnings():
            # "coroutine ... was never awaited" (a RuntimeWarning) would fail; not other
            # tests' leftovers a collection may meet here (an unclosed socket's ResourceWarning)
            warnings.simplefilter("error", RuntimeWarning)
            await e.agent.run("go")
        (result,) = [ev.message for ev in events(e.agent, "tool/result")]
        assert result.status == "error"
        assert result.text.startswith(SchemaContractError.code)
        check_invariant(e.agent)


# ---- call_tool: one error channel ------------------------------------------------------------


async def test_call_tool_returns_the_invocation_result_on_success(env: EnvFactory) -> None:
    async with env(tools=[add]) as e:
        result = await e.agent.call_tool("add", {"a": 2, "b": 3})
        assert result.value.text == "5"
        assert result.invocation.executed
        assert result.invocation.tool == "add"
        assert result.invocation.started_at_ms > 0


@pytest.mark.parametrize(
    ("name", "arguments", "error", "text"),
    [
        pytest.param("add", {"a": "two", "b": 3}, SchemaValidationError, "a:", id="invalid"),
        pytest.param("explode", {}, LookupError, "nothing here", id="raises"),
        pytest.param("complain", {}, ToolReportedError, "the disk is full", id="error-output"),
    ],
)
async def test_call_tool_raises_the_failures_own_class(
    env: EnvFactory, name: str, arguments: dict[str, Any], error: type[Exception], text: str
) -> None:
    async with env(tools=[add, explode, complain]) as e:
        with pytest.raises(error, match=text):
            await e.agent.call_tool(name, arguments)


async def test_call_tool_raises_a_refusal(env: EnvFactory) -> None:
    async with env(tools=[add], config={"permissions": {"deny": ["add"]}}) as e:
        with pytest.raises(ToolRefusedError, match="refused") as caught:
            await e.agent.call_tool("add", {"a": 1, "b": 2})
        assert caught.value.code == "tool.refused"


async def test_the_loop_still_records_failures_as_results(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("explode"), ScriptedCall("complain"))),
        "ok",
    ]
    async with env(script, tools=[explode, complain]) as e:
        assert (await e.agent.run("go")).value == "ok"
        texts = [ev.message.text for ev in events(e.agent, "tool/result")]
        assert texts == ["LookupError: nothing here", "the disk is full"]


# ---- check functions -------------------------------------------------------------------------


def test_check_input_returns_the_check_result_shape() -> None:
    passed = check_input(add, {"a": 1, "b": 2})
    assert passed.status == "passed"
    assert passed.issues == ()
    assert passed.has_value
    assert (passed.value.a, passed.value.b) == (1, 2)

    failed = check_input(add, {"a": "x"})
    assert failed.status == "failed"
    assert not failed.has_value
    assert {issue.path for issue in failed.issues} == {("a",), ("b",)}


def test_check_input_raises_a_broken_adapter_as_a_program_error() -> None:
    with pytest.raises(SchemaContractError):
        check_input(_tool_with(_AwaitableParse()), {})


# ---- multimodal results ------------------------------------------------------------------------


@tool
def snapshot() -> list[ContentBlock]:
    """A caption and an image: kept as blocks, not rendered as JSON text."""
    return [TextBlock(text="the screen"), ImageBlock(media_type="image/png", data="iVBO")]


@tool
def blurry() -> ToolOutput:
    """An error result that carries an image."""
    return ToolOutput([ImageBlock(media_type="image/png", data="iVBO")], is_error=True)


async def test_content_blocks_from_a_tool_are_its_result_blocks(env: EnvFactory) -> None:
    script: list[Reply | str] = [
        Reply(tool_calls=(ScriptedCall("snapshot"), ScriptedCall("blurry"))),
        "done",
    ]
    async with env(script, tools=[snapshot, blurry]) as e:
        await e.agent.run("look")
        shot, failed = [ev.message for ev in events(e.agent, "tool/result")]
        assert (shot.status, shot.content) == (
            "ok",
            (TextBlock(text="the screen"), ImageBlock(media_type="image/png", data="iVBO")),
        )
        assert (failed.status, failed.content) == (
            "error",
            (ImageBlock(media_type="image/png", data="iVBO"),),
        )
        check_invariant(e.agent)
