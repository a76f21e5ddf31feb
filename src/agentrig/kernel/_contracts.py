"""The plugin kinds and the contract each kind's contributions are checked against.

A check receives the loaded object and raises :class:`ContractViolation` naming the broken
rule; discovery turns that into a :class:`~agentrig.errors.PluginLoadError` that also names
the distribution and entry point.  Checks are structural, so a broken plugin fails at
registration with a precise message instead of deep inside a run.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = [
    "KINDS",
    "ContractViolation",
    "Check",
    "check_factory",
    "group_of",
    "protocol_problems",
    "with_options",
]


_F = TypeVar("_F", bound=Callable[..., Any])

Check = Callable[[object, str | None], object]
"""``check(obj, entry_name)``: raises :class:`ContractViolation`, or returns the object to
register (None: ``obj`` itself)."""


def with_options(options_model: type[Any]) -> Callable[[_F], _F]:
    """Declare the pydantic model that validates a factory's ``options`` table::

        @with_options(MyOptions)
        def factory(config): ...

    The runtime validates ``[<kind>.<id>.options]`` with it before calling the factory, and
    ``agentrig config check`` reports each problem with its key path.
    """

    def mark(factory: _F) -> _F:
        vars(factory)["options_model"] = options_model
        return factory

    return mark


class ContractViolation(Exception):
    """A contribution breaks its kind's contract; ``rule`` says which rule."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


def check_hook_plugin(obj: object, name: str | None = None) -> None:
    """A listener plugin carries at least one ``@agentrig.hookimpl`` function, and every one
    of them would run: a known hook, no wrapper, ``(payload)`` or ``(payload, next)``."""
    from agentrig.kernel._dispatch import has_hookimpl, listener_refusals, marked_attributes

    marked = marked_attributes(obj)  # read afresh: a reloaded module may have lost its hooks
    if not has_hookimpl(marked):
        raise ContractViolation(
            "no @agentrig.hookimpl function found (a listener plugin needs one)"
        )
    problems = listener_refusals(obj, marked)
    if problems:
        raise ContractViolation("; ".join(problems))


def _is_model_class(obj: object) -> bool:
    from pydantic import BaseModel

    return isinstance(obj, type) and issubclass(obj, BaseModel)


def _takes_one_argument(obj: Callable[..., Any], rule: str) -> None:
    """Refuse ``obj`` when its signature is known and cannot bind one positional argument."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # no signature to read (some builtins): not judged here
        return
    try:
        signature.bind(object())
    except TypeError as exc:
        raise ContractViolation(f"{rule}: {exc}") from None


def check_factory(obj: object, name: str | None = None) -> None:
    """A factory kind: a callable taking one configuration argument."""
    if not callable(obj):
        raise ContractViolation(f"expected a callable factory, got {type(obj).__name__}")
    _takes_one_argument(obj, "factory must accept exactly one positional config argument")
    options_model = getattr(obj, "options_model", None)
    if options_model is not None and not _is_model_class(options_model):
        raise ContractViolation(
            f"options_model must be a pydantic BaseModel subclass, got {options_model!r}"
        )


def check_config_section(obj: object, name: str | None = None) -> None:
    """A pydantic model class: it validates the whole ``[<name>]`` table of the config."""
    if not _is_model_class(obj):
        raise ContractViolation(
            f"expected a pydantic BaseModel subclass for the table, got {obj!r}"
        )


def _layer_check(kind: str) -> Check:
    """The check of a kind a higher layer defines (``providers``, ``tools``, ``skills``): the
    core hands it over as its ``agentrig.contracts`` entry point of that name, loaded on first
    use."""

    def check(obj: object, name: str | None = None) -> object:
        return _layer_contract(kind)(obj, name)

    return check


@functools.cache
def _layer_contract(kind: str) -> Check:
    from agentrig.kernel._entry_points import CONTRACTS_GROUP, core_entry_points

    entry = core_entry_points(CONTRACTS_GROUP).get(kind)
    if entry is not None:
        check: Check = entry.load()
        return check
    raise ContractViolation(
        f"the core distribution declares no {CONTRACTS_GROUP} entry point {kind!r}, so a "
        f"{kind} contribution cannot be checked; reinstall agentrig (python3 dev.py setup)"
    )


def check_schema_registrar(obj: object, name: str | None = None) -> None:
    """A function taking the schema registry: ``register(registry) -> None``."""
    if not callable(obj) or isinstance(obj, type):
        raise ContractViolation(f"expected a function register(registry), got {type(obj).__name__}")
    _takes_one_argument(obj, "register(registry) must take one argument")


def check_variants(obj: object, name: str | None = None) -> tuple[Any, ...]:
    """A ``Variant`` subclass, or an iterable of them."""
    from agentrig.variants import Variant

    members: Any = (obj,) if isinstance(obj, type) else obj  # not yet known to be iterable
    try:
        items = tuple(members)
    except TypeError:
        raise ContractViolation(
            f"expected a Variant subclass or a list of them, got {type(obj).__name__}"
        ) from None
    for item in items:
        if not (isinstance(item, type) and issubclass(item, Variant) and item.family):
            raise ContractViolation(
                f"{item!r} is not a member of a variant family (subclass a family base such as "
                "agentrig.llm.StreamChunk or agentrig.session.SessionEvent)"
            )
    return items


# ---- what a factory built -------------------------------------------------------------------


# A protocol's declaration is read once per protocol class (a reloaded module makes a new
# class, so nothing read here outlives what it describes); the products are read every time.
@functools.lru_cache(maxsize=128)
def _protocol_members(protocol: type) -> tuple[tuple[str, object], ...]:
    """The public members a protocol declares (methods, properties, annotated attributes)."""
    members: dict[str, object] = {}
    for cls in reversed(protocol.__mro__):
        if Protocol not in cls.__bases__:  # object, Generic, Protocol itself
            continue
        for name in vars(cls).get("__annotations__", {}):
            if not name.startswith("_"):
                members[name] = None
        for name, value in vars(cls).items():
            if not name.startswith("_"):
                members[name] = value
    return tuple(members.items())


def _call_problem(name: str, declared: Callable[..., Any], found: Callable[..., Any]) -> str | None:
    """How ``found`` (bound) cannot be called as ``declared`` (unbound, with ``self``) is:
    the declared call must bind, each positional parameter landing in the one of its name (or
    in ``*args``) unless the protocol makes it positional-only."""
    shape = _shape(declared)  # equal shapes bind: a speed path (benchmarks/README.md)
    if shape is None or type(found) is not types.MethodType or shape != _shape(found.__func__):
        try:
            want = _declared_parameters(declared)
            have = inspect.signature(found)
        except (TypeError, ValueError):
            return None
        named = [p.name for p in want if p.kind is p.POSITIONAL_OR_KEYWORD]
        only = [p.name for p in want if p.kind is p.POSITIONAL_ONLY]
        keywords = {p.name: p.name for p in want if p.kind is p.KEYWORD_ONLY}
        try:  # each argument is its parameter's name, to see where it lands
            bound = have.bind(*only, *named, **keywords).arguments
            landed: dict[str, str] | None = {v: k for k, v in bound.items() if isinstance(v, str)}
        except TypeError:
            landed = None
        if landed is None or any(landed.get(given, given) != given for given in named):
            shown = _bare(have.parameters.values())
            return f"{name} must accept {name}({_bare(want)}), found {name}({shown})"
    if inspect.iscoroutinefunction(declared) and not _awaitable_method(found):
        return f"{name} must be 'async def'"
    return None


def _shape(function: object) -> tuple[object, ...] | None:
    """A plain function's parameters after the first as a call binds them (names, kinds, ``*``,
    ``**``), else None.  The declared shape found: every promised call binds, unread."""
    if type(function) is not types.FunctionType:
        return None
    code, held = function.__code__, function.__dict__
    if not code.co_argcount or "__wrapped__" in held or "__signature__" in held:
        return None
    stars = code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    size = code.co_argcount + code.co_kwonlyargcount + bin(stars).count("1")
    counts = (code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount)
    return (*counts, stars, code.co_varnames[1:size])


@functools.lru_cache(maxsize=512)
def _declared_parameters(declared: Callable[..., Any]) -> tuple[inspect.Parameter, ...]:
    return tuple(inspect.signature(declared).parameters.values())[1:]  # without ``self``


def _bare(params: Any) -> str:
    """Parameters as written, without annotations (``session_id, *, signal``)."""
    plain = [p.replace(annotation=p.empty) for p in params]
    return str(inspect.Signature(plain))[1:-1]


def _awaitable_method(found: Callable[..., Any]) -> bool:
    plain = inspect.unwrap(getattr(found, "__func__", found))
    if not inspect.isfunction(plain):  # a callable object, a builtin: not judged here
        return True
    return inspect.iscoroutinefunction(plain) or inspect.iscoroutinefunction(found)


def protocol_problems(obj: object, protocol: type) -> list[str]:
    """What ``obj`` lacks to be a ``protocol`` as its declaration promises: missing members,
    and methods whose parameters (names, keyword-only parameters, ``async``) differ.

    Empty when ``obj`` fits.  A factory's product is checked with this when the runtime is
    built, so a store or provider missing a method fails composition, not a later call.
    """
    if obj is None:
        return ["returned None"]
    problems: list[str] = []
    for name, declared in _protocol_members(protocol):
        try:
            found = getattr(obj, name)
        except AttributeError:
            problems.append(f"missing {name}")
            continue
        except Exception:  # a property that fails before the runtime is up: not judged here
            continue
        if not inspect.isfunction(declared):
            continue
        if not callable(found):
            problems.append(f"{name} is not a method")
            continue
        problem = _call_problem(name, declared, found)
        if problem is not None:
            problems.append(problem)
    return problems


#: Each plugin kind (entry-point group ``agentrig.<kind>``, the entry point's name being the
#: ID) and the check its contributions pass when they load.
KINDS: dict[str, Check] = {
    "plugins": check_hook_plugin,  # modules or objects with @agentrig.hookimpl listeners
    "providers": _layer_check("providers"),  # factory(ProviderConfig) -> Provider
    "tools": _layer_check("tools"),  # a tool or a toolset; a single tool's id is the name
    "hook_strategies": check_factory,  # hook executors (command, http, ...)
    "sealers": check_factory,
    "credential_stores": check_factory,
    "session_stores": check_factory,
    "skills": _layer_check("skills"),  # a package folder holding SKILL.md, named by the entry
    "config_sections": check_config_section,  # a pydantic model validating a top-level table
    "variants": check_variants,  # tagged-union members (session events, stream chunks, ...)
    "schemas": check_schema_registrar,  # register(registry): persisted-payload versions
}


def group_of(kind: str) -> str:
    """The entry-point group of plugin kind ``kind``."""
    return f"agentrig.{kind}"
