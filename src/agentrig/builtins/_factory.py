"""Calling a plugin's factory while a runtime is composed.

A factory that raises (a provider refusing its options, a store that cannot open its
directory ...) is a problem of the config entry that named it: it becomes a
:class:`~agentrig.errors.ConfigError` at that entry's key path (``providers.local: ...``) with
the cause, never a bare exception from deep inside composition.  Cancellation is not an
``Exception`` and passes through untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from agentrig.errors import ConfigError, Issue

if TYPE_CHECKING:
    from agentrig.kernel.runtime import Runtime

__all__ = ["call_factory"]

_T = TypeVar("_T")


def call_factory(
    rt: Runtime,
    kind: str,
    name: str,
    path: tuple[str | int, ...],
    factory: Callable[[Any], _T],
    spec: Any,
) -> _T:
    """``factory(spec)``: the ``kind`` factory ``name`` building the entry at ``path``."""
    try:
        return factory(spec)
    except Exception as exc:
        entry = rt.index.find(kind, name)
        origin = f" ({entry.describe()})" if entry is not None and entry.distribution else ""
        cause = f"{type(exc).__name__}: {exc}"
        raise ConfigError(
            [
                Issue(
                    "config.factory_failed",
                    f"the {kind} factory {name!r}{origin} raised {cause}",
                    path,
                )
            ],
            source=rt.loaded.source,
        ) from exc
