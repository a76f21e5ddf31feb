"""Calling a plugin's factory while a runtime is composed.

A factory that raises (a provider refusing its options, a store that cannot open its
directory ...) is a problem of the config entry that named it: it becomes a
:class:`~agentrig.errors.ConfigError` at that entry's key path (``providers.local: ...``) with
the cause, never a bare exception from deep inside composition.  Cancellation is not an
``Exception`` and passes through untouched.

What the factory returns is checked against its kind's protocol at once (members, parameter
names, ``async``): a store factory returning ``None`` or an object missing ``load`` fails
composition with one line at ``session_stores.<id>``, not a later call in the middle of a run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentrig.errors import ConfigError, Issue
from agentrig.kernel import protocol_problems

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["call_factory"]


def call_factory(
    rt: Runtime,
    kind: str,
    name: str,
    path: tuple[str | int, ...],
    factory: Callable[[Any], object],
    spec: Any,
    protocol: type,
) -> Any:
    """``factory(spec)``: the ``kind`` factory ``name`` building the entry at ``path``, which
    must build a ``protocol``."""
    try:
        built = factory(spec)
    except Exception as exc:
        cause = f"{type(exc).__name__}: {exc}"
        raise _failed(rt, "config.factory_failed", kind, name, path, f"raised {cause}") from exc
    problems = protocol_problems(built, protocol)
    if problems:
        what = protocol.__name__
        detail = f"returned None, not a {what}"
        if built is not None:
            name_of = type(built).__name__
            article = "an" if name_of[:1].lower() in "aeiou" else "a"
            detail = f"returned {article} {name_of}, not a {what}: {'; '.join(problems)}"
        raise _failed(rt, "config.factory_product", kind, name, path, detail)
    return built


def _failed(
    rt: Runtime, code: str, kind: str, name: str, path: tuple[str | int, ...], detail: str
) -> ConfigError:
    entry = rt.index.find(kind, name)
    origin = f" ({entry.describe()})" if entry is not None and entry.distribution else ""
    message = f"the {kind} factory {name!r}{origin} {detail}"
    return ConfigError([Issue(code, message, path)], source=rt.loaded.source)
