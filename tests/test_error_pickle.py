"""Every agentrig error -- the core's and each installed first-party plugin's -- crosses a
process boundary intact: pickled and unpickled (as DBOS stores a failed run's error, and a
process pool returns one) it is the same class with the same message, code and attributes.

The plugins' errors are checked in a child process (``python tests/test_error_pickle.py``):
importing every module of every plugin changes process-wide state (a dependency installs
its own ``importlib_metadata`` finder) that the other tests of this process must not see.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pickle
import pkgutil
import subprocess
import sys
import typing
from collections.abc import Callable, Iterator
from importlib.metadata import distributions
from types import ModuleType
from typing import Any

import pytest

import agentrig
from agentrig.errors import AgentrigError, Issue

#: the first-party plugin packages installed beside agentrig (agentrig_dbos, ...)
PLUGIN_PACKAGES = sorted(
    {
        name
        for dist in distributions()
        if (dist.metadata["Name"] or "").startswith("agentrig-")
        for name in (dist.read_text("top_level.txt") or "").split()
        or [str(dist.metadata["Name"]).replace("-", "_")]
        if name.startswith("agentrig_")
    }
)


def _modules(package: ModuleType) -> Iterator[str]:
    yield package.__name__
    for found in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        yield found.name


def _import_everything(*, plugins: bool) -> None:
    for module in _modules(agentrig):
        importlib.import_module(module)
    for name in PLUGIN_PACKAGES if plugins else ():
        for module in _modules(importlib.import_module(name)):
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as missing:  # an optional extra of that plugin
                if (missing.name or "agentrig").startswith("agentrig"):
                    raise


def _all_errors(*, plugins: bool) -> list[type[AgentrigError]]:
    _import_everything(plugins=plugins)
    found: list[type[AgentrigError]] = []
    todo: list[type[AgentrigError]] = [AgentrigError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(type.__subclasses__(cls))
    ours = {c for c in found if c.__module__.startswith("agentrig")}
    return sorted(ours, key=lambda c: (c.__module__, c.__qualname__))


def _value(name: str, annotation: Any) -> Any:
    """A plausible argument for a parameter, from its name and annotation."""
    text = str(annotation)
    if name in {"cause"}:
        return ValueError("the backend's own error")
    if name == "issues" or ("Issue" in text and "Sequence" in text):
        return [Issue("x.y", "a problem", ("key",))]
    if name == "issue" or text == "Issue":
        return Issue("x.y", "a problem", ("key",))
    if name == "items":
        from agentrig.journal import Unproven

        return [Unproven("tool_effect", "m1/c1", "started, never settled")]
    if "None" in text:
        return None
    if text.endswith("OwnerState"):
        return "alive"
    if "agentrig.ids." in text:
        return f"{name}_1"
    for marker, value in (
        ("dict", {"k": "v"}),
        ("Mapping", {"k": "v"}),
        ("Sequence", ("a",)),
        ("tuple", ("a",)),
        ("list", ["a"]),
        ("float", 1.5),
        ("bool", True),
        ("int", 3),
        ("str", f"some {name}"),
        ("object", f"some {name}"),
    ):
        if marker in text:
            return value
    raise LookupError(f"no sample for {name}: {text}")


def _samples() -> dict[str, Callable[[], AgentrigError]]:
    """Errors whose constructor takes a richer object than :func:`_value` makes."""
    from agentrig.host import EgressRejected
    from agentrig.permissions import ActionBlocked

    blocked = ActionBlocked(rule="Bash(rm:*)", reason="a rule denies it")
    rejected = EgressRejected(
        reason="scheme.not_allowed", message="not allowed", url="ftp://example.com"
    )
    return {
        "EgressRejectedError": lambda: _build_with(
            "agentrig.host", "EgressRejectedError", rejected
        ),
        "ActionBlockedError": lambda: _build_with(
            "agentrig.permissions", "ActionBlockedError", blocked, tool="Bash"
        ),
    }


def _build_with(module: str, name: str, *args: Any, **kwargs: Any) -> AgentrigError:
    error: AgentrigError = getattr(importlib.import_module(module), name)(*args, **kwargs)
    return error


def _build(cls: type[AgentrigError]) -> AgentrigError:
    special = _samples().get(cls.__name__)
    if special is not None:
        return special()
    init = cls.__init__
    try:
        hints = typing.get_type_hints(init)
    except Exception:
        hints = {}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for name, param in inspect.signature(init).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.default is not param.empty and name not in {"cause", "reason", "source"}:
            continue
        value = _value(name, hints.get(name, param.annotation))
        if param.kind == param.KEYWORD_ONLY:
            kwargs[name] = value
        else:
            args.append(value)
    return cls(*args, **kwargs)


def _check(cls: type[AgentrigError]) -> None:
    try:
        error = _build(cls)
    except LookupError as missing:
        raise AssertionError(
            f"{cls.__qualname__}: add a sample to _samples() ({missing})"
        ) from None
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls
    assert str(copy) == str(error)
    assert copy.args == error.args
    assert (copy.code, copy.category, copy.recoverable) == (
        error.code,
        error.category,
        error.recoverable,
    )
    assert copy.issues == error.issues
    assert set(vars(copy)) == set(vars(error))
    for name, value in vars(error).items():
        if isinstance(value, BaseException):
            assert type(vars(copy)[name]) is type(value)
            assert str(vars(copy)[name]) == str(value)
        else:
            assert vars(copy)[name] == value, name


ERRORS = _all_errors(plugins=False)


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_an_error_survives_pickling(cls: type[AgentrigError]) -> None:
    _check(cls)


@pytest.mark.subprocess
def test_every_plugin_error_survives_pickling_in_a_fresh_process() -> None:
    assert "agentrig_dbos" in PLUGIN_PACKAGES
    assert "agentrig_postgres" in PLUGIN_PACKAGES
    done = subprocess.run(
        [sys.executable, __file__], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked = json.loads(done.stdout.splitlines()[-1])
    assert {name.split(".")[0] for name in checked} >= {"agentrig_dbos", "agentrig_server"}


def test_an_error_raised_at_its_raise_site_keeps_what_the_site_stated() -> None:
    """A code, category or recoverability given at the raise site survives too."""
    error = AgentrigError("x", code="custom.code", category="user", recoverable=True)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.category, copy.recoverable) == ("custom.code", "user", True)


def _main() -> int:
    """The child process: every error of agentrig and its plugins, checked."""
    failures: list[str] = []
    checked: list[str] = []
    for cls in _all_errors(plugins=True):
        try:
            _check(cls)
        except AssertionError as failed:
            failures.append(f"{cls.__module__}.{cls.__qualname__}: {failed}")
        checked.append(f"{cls.__module__}.{cls.__qualname__}")
    print("\n".join(failures))
    print(json.dumps(checked))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(_main())
