"""What a factory builds is checked against its kind's protocol when the runtime is composed
(issue 37, point 1): ``None``, a missing method, a renamed parameter or a missing ``async``
fail composition with one issue at the entry's key path, never later in a run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.hooks import HookEvent, HookOutcome, HookRunner, HookStrategy
from agentrig.kernel import MemorySource, open_runtime, protocol_problems
from agentrig.session import LoadReport, SessionEvent, SessionStore, SessionWriter


class Writer:
    async def append(self, events: Sequence[SessionEvent]) -> None:
        return None

    async def aclose(self) -> None:
        return None


class HalfStore:
    """A store written in a hurry: no ``list_sessions``, no ``aclose``."""

    async def open_writer(self, session_id: str) -> SessionWriter:
        return Writer()

    async def load(self, session_id: str) -> LoadReport:
        return LoadReport(session_id, ())

    async def exists(self, session_id: str) -> bool:
        return False


class Store(HalfStore):
    """Has every member of the SessionStore protocol, with the documented parameter names."""

    async def list_sessions(self) -> tuple[str, ...]:
        return ()

    async def aclose(self) -> None:
        return None


class RenamedStore(Store):
    async def load(self, sid: str) -> LoadReport:  # type: ignore[override]
        return LoadReport(sid, ())


class SyncStore(Store):
    def exists(self, session_id: str) -> bool:  # type: ignore[override]
        return False


class Lenient(Store):
    """Extra optional parameters and catch-alls keep a method callable as promised."""

    async def load(self, session_id: str, *, verify: bool = True) -> LoadReport:
        return LoadReport(session_id, ())

    async def exists(self, *args: Any, **kwargs: Any) -> bool:
        return False


class NeedsMore(Store):
    async def load(self, session_id: str, strict: bool) -> LoadReport:  # type: ignore[override]
        return LoadReport(session_id, ())


def test_a_complete_store_has_no_problems() -> None:
    assert protocol_problems(Store(), SessionStore) == []
    assert protocol_problems(Lenient(), SessionStore) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (None, ["returned None"]),
        (HalfStore(), ["missing list_sessions", "missing aclose"]),
        (RenamedStore(), ["load must accept load(session_id), found load(sid)"]),
        (SyncStore(), ["exists must be 'async def'"]),
        (
            NeedsMore(),
            ["load must accept load(session_id), found load(session_id, strict)"],
        ),
    ],
)
def test_what_a_store_lacks_is_named(obj: object, expected: list[str]) -> None:
    assert protocol_problems(obj, SessionStore) == expected


def store_config(kind: str = "custom") -> dict[str, Any]:
    return {"session_stores": {"disk": {"kind": kind}}}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("built", "detail"),
    [
        (None, "returned None, not a SessionStore"),
        (HalfStore(), "returned a HalfStore, not a SessionStore: missing list_sessions; missing"),
        (RenamedStore(), "not a SessionStore: load must accept load(session_id), found load(sid"),
    ],
)
async def test_a_session_store_factory_product_is_checked_at_composition(
    built: object, detail: str
) -> None:
    memory = MemorySource()
    memory.add("session_stores", "custom", lambda spec: built, distribution="my-store")
    with pytest.raises(ConfigError) as info:
        async with open_runtime(store_config(), memory=memory, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.factory_product"
    assert issue.path == ("session_stores", "disk")
    assert detail in issue.message
    assert str(issue).startswith("session_stores.disk: the session_stores factory 'custom'")
    assert "\n" not in str(issue)


@pytest.mark.anyio
async def test_a_store_that_fits_composes() -> None:
    memory = MemorySource()
    memory.add("session_stores", "custom", lambda spec: Store())
    async with open_runtime(store_config(), memory=memory, environ={}) as rt:
        assert rt.config.session_stores


class NoDelete:
    name = "half"

    def describe(self) -> str:
        return "nowhere"

    async def get(self, service: str, account: str) -> str | None:
        return None

    async def set(self, service: str, account: str, secret: str) -> None:
        return None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("kind", "built", "path", "detail"),
    [
        ("providers", None, ("providers", "p"), "returned None, not a Provider"),
        (
            "credential_stores",
            NoDelete(),
            ("credential_stores", "v"),
            "returned a NoDelete, not a CredentialStore: missing delete",
        ),
        ("sealers", None, ("sealers", "s"), "returned None, not a Sealer"),
    ],
)
async def test_every_factory_kind_checks_its_product(
    kind: str, built: object, path: tuple[str, str], detail: str
) -> None:
    memory = MemorySource()
    memory.add(kind, "custom", lambda spec: built)
    config = {kind: {path[1]: {"kind": "custom"}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, memory=memory, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert (issue.code, issue.path) == ("config.factory_product", path)
    assert detail in issue.message


class RenamedStrategy:
    async def run(self, evt: HookEvent, *, signal: CancelSignal) -> HookOutcome:
        raise AssertionError("never run")


class Strategy:
    async def run(self, event: HookEvent, *, signal: CancelSignal) -> HookOutcome:
        raise AssertionError("never run")


def _builds_nothing(spec: Any) -> Any:
    return None


def test_a_hook_strategy_with_a_renamed_parameter_is_refused() -> None:
    assert protocol_problems(Strategy(), HookStrategy) == []
    with pytest.raises(ConfigError) as info:
        HookRunner({"Stop": [{"strategy": "mine"}]}, {"mine": lambda spec: RenamedStrategy()})
    (issue,) = info.value.issues
    assert issue.path == ("hooks", "Stop", 0, "strategy")
    assert "run must accept run(event, *, signal), found run(evt, *, signal)" in issue.message
    with pytest.raises(ConfigError, match="built None, not a HookStrategy"):
        HookRunner({"Stop": [{"strategy": "mine"}]}, {"mine": _builds_nothing})


class PositionalSignal:
    """Takes ``signal`` by position or by name: a call ``run(event, signal=s)`` binds."""

    async def run(self, event: HookEvent, signal: CancelSignal) -> HookOutcome:
        raise AssertionError("never run")


class SignalInArgs:
    """``run(event, signal=s)`` fails: ``event`` falls into ``*events`` and ``signal`` is
    keyword-only, but the required keyword-only ``event`` is never given."""

    async def run(self, *events: HookEvent, signal: CancelSignal, event: Any) -> HookOutcome:
        raise AssertionError("never run")


def test_a_method_fits_when_the_declared_call_binds_to_it() -> None:
    """The check binds the call the protocol declares: a keyword-only parameter may be taken
    by position or name; a positional one landing in ``*args`` leaves a required
    keyword-only parameter of that name unfilled."""
    assert protocol_problems(PositionalSignal(), HookStrategy) == []
    assert protocol_problems(SignalInArgs(), HookStrategy) == [
        "run must accept run(event, *, signal), found run(*events, signal, event)"
    ]
