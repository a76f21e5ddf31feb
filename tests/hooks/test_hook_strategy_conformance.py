"""The built-in ``command`` and ``http`` hook strategies pass the hook-strategy conformance
suite (built through their entry points); a strategy that breaks the contract fails it saying
how."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentrig.cancel import CancelSignal
from agentrig.hooks import Allow, HookEvent, HookOutcome, HookStrategy
from agentrig.testing.conformance_hook_strategy import (
    DENY_REASON,
    HookScenario,
    HookStrategyConformance,
)

COMMANDS = {
    HookScenario.ALLOW: "exit 0",
    HookScenario.DENY: f"echo '{DENY_REASON}' >&2; exit 2",
    HookScenario.FAIL: "echo 'something broke' >&2; exit 1",
    HookScenario.GARBLED: "echo '{not json'",
    HookScenario.HANG: "sleep 3600",
}


@pytest.mark.subprocess
class TestCommandStrategyConformance(HookStrategyConformance):
    @pytest.fixture(autouse=True)
    def _base_dir(self, tmp_path: Path) -> None:
        self.base_dir = tmp_path

    def make_strategy(self, scenario: HookScenario) -> HookStrategy:
        factory = entry_points(group="agentrig.hook_strategies")["command"].load()
        spec: dict[str, Any] = {
            "event": "PreToolUse",
            "strategy": "command",
            "matcher": None,
            "options": {"command": COMMANDS[scenario], "timeout": 600},
            "base_dir": self.base_dir,
        }
        strategy: HookStrategy = factory(spec)
        return strategy


class _Credulous:
    """Reads any answer as an allow, and ignores its signal."""

    async def run(self, event: HookEvent, *, signal: CancelSignal) -> HookOutcome:
        return Allow("")


class _CredulousSuite(HookStrategyConformance):
    def make_strategy(self, scenario: HookScenario) -> HookStrategy:
        return _Credulous()


@pytest.mark.anyio
async def test_a_garbled_answer_read_as_allow_fails_the_suite() -> None:
    with pytest.raises(AssertionError, match="could not be decoded was read as an allow"):
        await _CredulousSuite().test_conformance_a_garbled_answer_never_allows("asyncio")


@pytest.mark.anyio
async def test_a_strategy_deaf_to_cancel_fails_the_suite() -> None:
    with pytest.raises(AssertionError, match="must raise the abort"):
        await _CredulousSuite().test_conformance_a_cancelled_signal_raises_at_once("asyncio")


def _http_answer(
    scenario: HookScenario,
) -> Callable[[httpx.Request], Coroutine[None, None, httpx.Response]]:
    async def answer(request: httpx.Request) -> httpx.Response:
        if scenario is HookScenario.ALLOW:
            return httpx.Response(200, json={"allow": True})
        if scenario is HookScenario.DENY:
            return httpx.Response(200, json={"allow": False, "reason": DENY_REASON})
        if scenario is HookScenario.FAIL:
            return httpx.Response(500, text="internal error")
        if scenario is HookScenario.GARBLED:
            return httpx.Response(200, text="{not json")
        await anyio.sleep_forever()  # HANG: the server never answers
        raise AssertionError("unreachable")

    return answer


class TestHttpStrategyConformance(HookStrategyConformance):
    def make_strategy(self, scenario: HookScenario) -> HookStrategy:
        factory = entry_points(group="agentrig.hook_strategies")["http"].load()
        transport = httpx.MockTransport(_http_answer(scenario))
        spec: dict[str, Any] = {
            "event": "PreToolUse",
            "strategy": "http",
            "matcher": None,
            "options": {"url": "https://policy.example/hooks", "timeout": 600},
            "http": lambda: httpx.AsyncClient(transport=transport),
        }
        strategy: HookStrategy = factory(spec)
        return strategy
