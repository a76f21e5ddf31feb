"""Conformance suite for ``agentrig.tools`` contributions: one tool or a toolset.

Inherit :class:`ToolsetConformance`, return what your entry point names from
:meth:`contribution`, and give one valid input per tool in :meth:`sample_inputs`::

    from agentrig.testing.conformance_toolset import ToolsetConformance

    class TestWeatherTools(ToolsetConformance):
        def contribution(self):
            return weather_toolset          # a Toolset, a list of tools, or one tool

        def sample_inputs(self):
            return {"get_weather": {"city": "Paris"}, "get_forecast": {"city": "Oslo", "days": 2}}

The inherited ``test_conformance_*`` coroutines request anyio's ``anyio_backend`` fixture.
What they hold the contribution to: it passes the registration check agentrig applies
(with its reason when not); its ids are unique; every schema can be shown to each provider
profile in :attr:`ToolsetConformance.profiles` (the tool, the profile and why, when not);
each sample input validates (the issues, when not), is authorized by ``authorize`` (which
must return ``None``) and runs to a result the model can read; and a tool handed an already
cancelled signal returns or raises within :data:`STOP_DEADLINE` seconds.

Importing this module has no side effect: it registers no plugin or fixture.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Mapping
from typing import Any, ClassVar

import anyio

from agentrig.cancel import CancelSignal
from agentrig.kernel import ContractViolation
from agentrig.tools import Tool, ToolContext, ToolOutput, check_input, check_tool_contribution
from agentrig.tools import render_output as _render
from agentrig.tools.schema import ANTHROPIC, GEMINI, OPENAI, Rejected, SchemaProfile, project_schema

__all__ = ["STOP_DEADLINE", "ToolsetConformance"]

STOP_DEADLINE = 2.0
"""Seconds within which a tool given a cancelled signal must return or raise."""


class ToolsetConformance:
    """The tool contract as tests.  Implement :meth:`contribution` and :meth:`sample_inputs`."""

    #: the provider schema profiles every tool must project onto (not be rejected by)
    profiles: ClassVar[tuple[SchemaProfile, ...]] = (OPENAI, ANTHROPIC, GEMINI)

    def contribution(self) -> object:
        """What the ``agentrig.tools`` entry point names: a tool, a Toolset or a list."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement contribution() -> the entry point's object"
        )

    def sample_inputs(self) -> Mapping[str, Mapping[str, Any]]:
        """One valid input per tool id."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement sample_inputs() -> {{tool id: arguments}}"
        )

    def _tools(self) -> tuple[Tool, ...]:
        try:
            return check_tool_contribution(self.contribution())
        except ContractViolation as exc:
            raise AssertionError(f"agentrig would refuse this contribution: {exc}") from exc

    def _context(self, tool: Tool, signal: CancelSignal) -> ToolContext:
        return ToolContext(
            signal=signal,
            tool_id=tool.id,
            call_id="call_conformance",
            invocation_id="inv_conformance",
        )

    async def _execute(self, tool: Tool, arguments: Mapping[str, Any], signal: CancelSignal) -> Any:
        checked = check_input(tool, arguments)
        assert checked.passed, (
            f"tool {tool.id!r}: the sample input {dict(arguments)!r} does not validate: "
            + "; ".join(str(issue) for issue in checked.issues)
        )
        ctx = self._context(tool, signal)
        verdict: object = tool.authorize(checked.value, ctx)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        assert verdict is None, (
            f"tool {tool.id!r}: authorize() returned {verdict!r}; it must return None to "
            "approve and raise to refuse"
        )
        result = tool.execute(checked.value, ctx)
        if inspect.isawaitable(result):
            result = await result
        return result

    # ---- registration ------------------------------------------------------------------------

    async def test_conformance_passes_the_registration_check(self, anyio_backend: str) -> None:
        assert self._tools(), "the contribution holds no tool"

    async def test_conformance_ids_are_unique(self, anyio_backend: str) -> None:
        ids = [tool.id for tool in self._tools()]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        assert not repeated, f"tool ids appear more than once: {', '.join(repeated)}"

    async def test_conformance_schemas_project_for_every_profile(self, anyio_backend: str) -> None:
        problems = []
        for tool in self._tools():
            for profile in self.profiles:
                projected = project_schema(tool.input_schema.json_schema, profile)
                if isinstance(projected, Rejected):
                    where = "/".join(str(p) for p in projected.path) or "the input"
                    problems.append(
                        f"tool {tool.id!r}, profile {profile.name}: rejected at {where}: "
                        f"{projected.reason}"
                    )
        assert not problems, "schemas a provider cannot be shown:\n  " + "\n  ".join(problems)

    # ---- running -----------------------------------------------------------------------------

    async def test_conformance_every_tool_has_a_sample_input(self, anyio_backend: str) -> None:
        samples = self.sample_inputs()
        ids = {tool.id for tool in self._tools()}
        missing, unknown = sorted(ids - set(samples)), sorted(set(samples) - ids)
        assert not missing, f"sample_inputs() gives no input for: {', '.join(missing)}"
        assert not unknown, f"sample_inputs() names tools the contribution lacks: {unknown}"

    async def test_conformance_sample_inputs_run_to_a_readable_result(
        self, anyio_backend: str
    ) -> None:
        samples = self.sample_inputs()
        for tool in self._tools():
            if tool.id not in samples:
                continue
            result = await self._execute(tool, samples[tool.id], CancelSignal())
            content = result.content if isinstance(result, ToolOutput) else result
            text = _render(tool.parse_output(content))
            assert isinstance(text, str), f"tool {tool.id!r}: the result renders to {text!r}"

    async def test_conformance_a_cancelled_signal_is_honoured(self, anyio_backend: str) -> None:
        samples = self.sample_inputs()
        for tool in self._tools():
            if tool.id not in samples:
                continue
            signal = CancelSignal()
            signal.cancel("conformance: cancelled before the call")
            finished = False
            with anyio.move_on_after(STOP_DEADLINE):
                with contextlib.suppress(Exception):  # raising the abort honours it too
                    await self._execute(tool, samples[tool.id], signal)
                finished = True
            assert finished, (
                f"tool {tool.id!r} did not stop after cancel: it was still running "
                f"{STOP_DEADLINE:g}s after being called with a cancelled signal "
                "(wait inside ctx.signal.scope())"
            )
