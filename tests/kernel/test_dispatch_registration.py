"""Registration reads a plugin afresh each time: a reloaded plugin is judged by what it is now,
and the attributes registration skips unread are exactly the ones pluggy finds unmarked."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentrig
from agentrig.errors import HookError
from agentrig.kernel import HookDispatcher, new_plugin_manager
from agentrig.kernel._contracts import ContractViolation, check_hook_plugin
from agentrig.lifecycle import Observation

_FIRST = """
import agentrig

SEEN = []

@agentrig.hookimpl
def observe(payload):
    SEEN.append("observe")
"""

_SECOND = (
    _FIRST
    + """
@agentrig.hookimpl
def runtime_started(payload):
    SEEN.append("started")
"""
)

_BROKEN = """
import agentrig

@agentrig.hookimpl
def observe(payload, extra):
    pass
"""


def _reload(module: types.ModuleType, path: Path, source: str) -> types.ModuleType:
    path.write_text(source, encoding="utf-8")  # a new size: the cached bytecode is stale
    importlib.invalidate_caches()
    return importlib.reload(module)


@pytest.fixture
def listener_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[types.ModuleType, Path]]:
    """A listener module imported from a file of its own (``_FIRST``), forgotten after."""
    name = f"listener_{tmp_path.name}"
    path = tmp_path / f"{name}.py"
    path.write_text(_FIRST, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module(name), path
    sys.modules.pop(name, None)


def test_a_reloaded_module_plugin_is_judged_by_what_it_is_now(
    listener_file: tuple[types.ModuleType, Path],
) -> None:
    module, path = listener_file
    hooks = HookDispatcher()
    hooks.register(module, "reloaded")
    assert hooks.plan("runtime_started") == ()

    module = _reload(module, path, _SECOND)  # the same module object gains a listener
    hooks = HookDispatcher()
    hooks.register(module, "reloaded")
    hooks.notify("runtime_started", object())
    assert module.SEEN == ["started"]

    module = _reload(module, path, _BROKEN)  # ... and then one registration refuses
    with pytest.raises(HookError, match=r"observe listeners take \(payload\)"):
        HookDispatcher().register(module, "reloaded")


def test_a_listener_plugin_that_lost_its_hooks_fails_its_contract_again(
    listener_file: tuple[types.ModuleType, Path],
) -> None:
    module, path = listener_file
    check_hook_plugin(module, "emptied")  # a listener plugin: it passes
    # reloading keeps the old names, so the source also deletes the one hook it had
    module = _reload(module, path, "SEEN = []\ndel observe\n")
    assert not hasattr(module, "observe")
    with pytest.raises(ContractViolation, match=r"no @agentrig\.hookimpl function found"):
        check_hook_plugin(module, "emptied")


def _listener(payload: Observation) -> None:
    return None


_marked_listener = agentrig.hookimpl(_listener)


class _Slotted:
    __slots__ = ("observe",)
    observe: Callable[[Observation], None]


class _OnTheClass:
    @agentrig.hookimpl
    @staticmethod
    def observe(payload: Observation) -> None:
        return None

    @agentrig.hookimpl
    @classmethod
    def agent_created(cls, payload: object) -> None:
        return None

    def pre_step(self, payload: object) -> None:  # not marked: never a listener
        return None


class _Stored:
    def __init__(self) -> None:
        self.observe = _marked_listener  # a function kept on the instance
        self.agent_created = self.agent_disposed  # a bound method kept on the instance

    @agentrig.hookimpl
    def agent_disposed(self, payload: object) -> None:
        return None


def _plugins() -> list[object]:
    slotted = _Slotted()
    slotted.observe = _marked_listener
    empty_slot = _Slotted()
    return [slotted, empty_slot, _OnTheClass, _OnTheClass(), _Stored()]


@pytest.mark.parametrize("plugin", _plugins(), ids=lambda p: repr(p)[:40])
def test_registration_finds_what_pluggy_finds(plugin: object) -> None:
    # a plain pluggy manager reads every attribute; the dispatcher's skips the ones that
    # cannot carry a marker, and must end with the same listeners
    plain = new_plugin_manager()
    plain.register(plugin, "p")
    hooks = HookDispatcher()
    hooks.register(plugin, "p")
    for hook in ("observe", "agent_created", "agent_disposed", "pre_step"):
        expected = [impl.function for impl in plain.hook.__dict__[hook].get_hookimpls()]
        assert [impl.fn for impl in hooks.plan(hook)] == expected


def test_a_runtime_manager_holds_registrations_only() -> None:
    # the specs live in one manager per process, which judges every listener first
    hooks = HookDispatcher()
    assert not [name for name in vars(hooks.pm.hook) if not name.startswith("_")]
    assert hooks.plan("observe") == ()
    with pytest.raises(HookError, match="unknown agentrig hook 'observ'"):
        hooks.plan("observ")
