"""Every agentrig error -- the core's and each installed first-party plugin's -- crosses a
process boundary intact: pickled and unpickled (as DBOS stores a failed run's error, and a
process pool returns one) it is the same class with the same message, code and attributes.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
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


def _import_everything() -> None:
    for module in _modules(agentrig):
        importlib.import_module(module)
    for name in PLUGIN_PACKAGES:
        for module in _modules(importlib.import_module(name)):
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as missing:  # an optional extra of that plugin
                if (missing.name or "agentrig").startswith("agentrig"):
                    raise


def _all_errors() -> list[type[AgentrigError]]:
    _import_everything()
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


ERRORS = _all_errors()


def test_every_plugin_package_is_covered() -> None:
    assert "agentrig_dbos" in PLUGIN_PACKAGES
    assert "agentrig_postgres" in PLUGIN_PACKAGES
    modules = {cls.__module__.split(".")[0] for cls in ERRORS}
    assert {"agentrig", "agentrig_dbos"} <= modules


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_an_error_survives_pickling(cls: type[AgentrigError]) -> None:
    try:
        error = _build(cls)
    except LookupError as missing:
        pytest.fail(f"{cls.__qualname__}: add a sample to _samples() ({missing})")
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


def test_an_error_raised_at_its_raise_site_keeps_what_the_site_stated() -> None:
    """A code, category or recoverability given at the raise site survives too."""
    error = AgentrigError("x", code="custom.code", category="user", recoverable=True)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.category, copy.recoverable) == ("custom.code", "user", True)
