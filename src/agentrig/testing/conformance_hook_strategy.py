"""Conformance suite for :class:`~agentrig.hooks.HookStrategy` plugins (``hook_strategies``).

Inherit :class:`HookStrategyConformance` and implement :meth:`make_strategy`: for each
:class:`HookScenario`, a strategy configured with a hook that behaves that way (for a command
strategy, a command; for an HTTP one, an endpoint of a server your test starts)::

    from agentrig.testing.conformance_hook_strategy import (
        DENY_REASON, HookScenario, HookStrategyConformance,
    )

    class TestMyStrategy(HookStrategyConformance):
        def make_strategy(self, scenario):
            return my_factory({"options": {"script": SCRIPTS[scenario]}})

The inherited ``test_conformance_*`` coroutines request anyio's ``anyio_backend`` fixture.
What they hold a strategy to: an answer is decoded into the right outcome; a hook's own
failure -- and an answer that cannot be decoded -- is a :class:`~agentrig.hooks.HookErrorOutcome`
with a reason, never an exception and never an allow; a cancelled run stops the hook within
:data:`STOP_DEADLINE` seconds ("did not stop after cancel" otherwise) and raises the abort.

Importing this module has no side effect: it registers no plugin or fixture.
"""

from __future__ import annotations

import enum

import anyio

from agentrig.cancel import CancelSignal, is_abort
from agentrig.hooks import Allow, Deny, HookErrorOutcome, HookEvent, HookOutcome, HookStrategy

__all__ = ["DENY_REASON", "STOP_DEADLINE", "HookScenario", "HookStrategyConformance"]

DENY_REASON = "conformance: this call is not allowed"
"""The reason the ``DENY`` hook gives (a command prints it on stderr and exits 2)."""

STOP_DEADLINE = 2.0
"""Seconds within which a hook must stop after its run was cancelled."""


class HookScenario(enum.Enum):
    """How the configured hook behaves."""

    ALLOW = "allow"  # answers "allow" (a command: exits 0 printing nothing)
    DENY = "deny"  # refuses with DENY_REASON (a command: DENY_REASON on stderr, exit 2)
    FAIL = "fail"  # fails (a command: exits 1; a server: answers 500)
    GARBLED = "garbled"  # answers something that opens JSON but does not decode ("{not json")
    HANG = "hang"  # never answers until stopped


def conformance_event() -> HookEvent:
    """The event every scenario is run with: a ``PreToolUse`` of a shell command."""
    return HookEvent.pre_tool_use(
        "Bash", {"command": "ls -la"}, session_id="ses_conformance", tool_use_id="call_1"
    )


class HookStrategyConformance:
    """The hook-strategy contract as tests.  Implement :meth:`make_strategy`."""

    def make_strategy(self, scenario: HookScenario) -> HookStrategy:
        """A strategy whose hook behaves as ``scenario`` says."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement make_strategy(scenario) -> HookStrategy"
        )

    def _strategy(self, scenario: HookScenario) -> HookStrategy:
        built = self.make_strategy(scenario)
        assert isinstance(built, HookStrategy), (
            f"make_strategy returned {type(built).__name__}, which does not implement the "
            "HookStrategy protocol (async run(event, *, signal) -> HookOutcome)"
        )
        return built

    async def _run(self, scenario: HookScenario) -> HookOutcome:
        strategy = self._strategy(scenario)
        try:
            outcome = await strategy.run(conformance_event(), signal=CancelSignal())
        except Exception as exc:
            raise AssertionError(
                f"{scenario.value}: run() raised {type(exc).__name__}: {exc}; a hook's own "
                "failure must be a HookErrorOutcome with a reason, never an exception"
            ) from exc
        assert isinstance(outcome, Allow | Deny | HookErrorOutcome), (
            f"{scenario.value}: run() returned {outcome!r}, not an Allow, Deny or HookErrorOutcome"
        )
        return outcome

    async def test_conformance_allow(self, anyio_backend: str) -> None:
        outcome = await self._run(HookScenario.ALLOW)
        assert isinstance(outcome, Allow), f"an allowing hook gave {outcome!r}"

    async def test_conformance_deny_carries_the_reason(self, anyio_backend: str) -> None:
        outcome = await self._run(HookScenario.DENY)
        assert isinstance(outcome, Deny), f"a denying hook gave {outcome!r}"
        assert DENY_REASON in outcome.reason, (
            f"the deny outcome lost the hook's reason: {outcome.reason!r}"
        )

    async def test_conformance_a_failure_is_an_error_outcome(self, anyio_backend: str) -> None:
        outcome = await self._run(HookScenario.FAIL)
        assert isinstance(outcome, HookErrorOutcome), (
            f"a failing hook must give a HookErrorOutcome, not {outcome!r}"
        )
        assert outcome.reason.strip(), "the error outcome must say why"

    async def test_conformance_a_garbled_answer_never_allows(self, anyio_backend: str) -> None:
        outcome = await self._run(HookScenario.GARBLED)
        assert not isinstance(outcome, Allow), (
            f"an answer that could not be decoded was read as an allow: {outcome!r}; it must "
            "be a HookErrorOutcome naming why (or an explicit deny)"
        )

    async def test_conformance_cancel_stops_a_hanging_hook(self, anyio_backend: str) -> None:
        strategy = self._strategy(HookScenario.HANG)
        signal = CancelSignal()
        failure: BaseException | None = None
        outcome: object = None

        async def cancel_soon() -> None:
            await anyio.sleep(0.2)  # let the hook start
            signal.cancel("conformance: cancelled")

        with anyio.move_on_after(0.2 + STOP_DEADLINE) as waited:
            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_soon)
                try:
                    outcome = await strategy.run(conformance_event(), signal=signal)
                except Exception as exc:
                    failure = exc
        assert not waited.cancelled_caught, (
            f"the hook did not stop after cancel: run() was still waiting {STOP_DEADLINE:g}s "
            "after its signal fired"
        )
        assert failure is not None, (
            f"a cancelled run() must raise the abort, but it returned {outcome!r}"
        )
        assert is_abort(failure, signal), (
            f"a cancelled run() must raise the abort (AbortError), not "
            f"{type(failure).__name__}: {failure}"
        )

    async def test_conformance_a_cancelled_signal_raises_at_once(self, anyio_backend: str) -> None:
        signal = CancelSignal()
        signal.cancel("conformance: cancelled before the hook")
        strategy = self._strategy(HookScenario.ALLOW)
        failure: BaseException | None = None
        with anyio.move_on_after(STOP_DEADLINE):
            try:
                await strategy.run(conformance_event(), signal=signal)
            except Exception as exc:
                failure = exc
        assert failure is not None, "run() with an already cancelled signal must raise the abort"
        assert is_abort(failure, signal), (
            f"run() with an already cancelled signal must raise the abort, got {failure!r}"
        )
