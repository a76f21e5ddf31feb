"""Which hook implementations the kernel accepts, and why it refuses the others.

A listener that registers must run: "loaded" means "will run".  So every implementation of a
plugin is checked before pluggy registers it -- it names a known hook, it is not a wrapper
(agentrig drives its hooks itself, a wrapper would never run), and it takes ``(payload)`` or,
on a waterfall hook, ``(payload, next)``.  Each refusal is one sentence naming the function
and the rule, with a "did you mean" for a misspelt hook name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import pluggy

from agentrig.errors import did_you_mean

__all__ = ["SHAPES", "listener_problems"]

#: the two accepted parameter lists, by whether the listener takes ``next``
SHAPES: tuple[tuple[str, ...], ...] = (("payload",), ("payload", "next"))


def _parameters(function: Callable[..., object]) -> tuple[str, ...] | str:
    """The parameter names a caller must supply, or a reason the signature is unusable."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        return f"its signature cannot be read ({exc})"
    names: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            return f"it takes *{parameter.name}/**{parameter.name} arguments"
        if parameter.kind is parameter.KEYWORD_ONLY:
            return f"it takes the keyword-only argument {parameter.name!r}"
        names.append(parameter.name)
    return tuple(names)


def listener_problems(
    pm: pluggy.PluginManager, plugin: object, waterfall: Callable[[str], bool | None]
) -> list[str]:
    """Why the implementations of ``plugin`` cannot run (empty: every one is accepted).

    ``waterfall(hook)`` tells whether ``hook`` is a waterfall hook, or None when the kernel
    has no such hook.
    """
    problems: list[str] = []
    known = sorted(
        name for name in dir(pm.hook) if not name.startswith("_") and waterfall(name) is not None
    )
    for attribute in dir(plugin):
        options: Mapping[str, object] | None = pm.parse_hookimpl_opts(plugin, attribute)
        if options is None:
            continue
        function = getattr(plugin, attribute)
        hook = str(options.get("specname") or attribute)
        takes_next = waterfall(hook)
        if takes_next is None:
            hint = did_you_mean(hook, known) or f" (hooks: {', '.join(known)})"
            problems.append(f"{attribute}: {hook!r} is not an agentrig hook{hint}")
            continue
        if options.get("wrapper") or options.get("hookwrapper"):
            problems.append(
                f"{attribute}: a hook wrapper on {hook}; agentrig drives its hooks itself, so a "
                "wrapper would never run -- use a waterfall hook (payload, next) instead"
            )
            continue
        names = _parameters(function)
        if isinstance(names, str):
            problems.append(
                f"{attribute}: {hook} listeners take (payload) or (payload, next); {names}"
            )
        elif names == ("payload", "next") and not takes_next:
            problems.append(
                f"{attribute}: {hook} is not a waterfall hook, so its listeners take (payload) "
                "only -- there is no 'next' to call"
            )
        elif names not in SHAPES:
            shown = f"({', '.join(names)})"
            wanted = "(payload) or (payload, next)" if takes_next else "(payload)"
            problems.append(f"{attribute}: {hook} listeners take {wanted}, not {shown}")
    return problems
