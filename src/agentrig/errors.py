"""The error base, the kernel's and the primitives' errors, :func:`error_info`, and the
"did you mean" of every unknown-name message (:func:`did_you_mean`).

Callers branch on an error's ``code``, ``category`` (who must act: ``user``, ``provider`` or
``system``) and ``recoverable``, never on its message.  ``docs/errors.md`` draws the whole tree
by defining package (``tests/test_error_tree.py`` keeps it true).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

import attrs

__all__ = [
    "AbortError",
    "AgentrigError",
    "CatalogError",
    "Category",
    "ConfigError",
    "DuplicateIdError",
    "ErrorInfo",
    "HookError",
    "InvalidIdError",
    "Issue",
    "PluginConflictError",
    "PluginDisabledError",
    "PluginError",
    "PluginLoadError",
    "RuntimeClosedError",
    "SealedCatalogError",
    "UnknownIdError",
    "VariantError",
    "closest_match",
    "did_you_mean",
    "error_info",
    "is_cancellation",
]

Category = Literal["user", "provider", "system"]
PathPart = str | int

_CODE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
_CATEGORIES = frozenset(get_args(Category))


@attrs.frozen(slots=True)
class Issue:
    """One problem found by a check: a code, a message and where (a key path)."""

    code: str
    message: str
    path: tuple[PathPart, ...] = ()

    def location(self) -> str:
        """The path as ``a.b[0].c`` (empty for the root)."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message


class AgentrigError(Exception):
    """Base of every agentrig error: a message plus ``code``, ``category`` and ``recoverable``."""

    code: str = "agentrig.error"
    category: Category = "system"
    recoverable: bool = False
    issues: tuple[Issue, ...] = ()

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        category: Category | None = None,
        recoverable: bool | None = None,
        issues: Sequence[Issue] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        _override(self, code=code, category=category, recoverable=recoverable)
        if issues:
            self.issues = tuple(issues)

    def __init_subclass__(
        cls,
        *,
        code: str | None = None,
        category: Category | None = None,
        recoverable: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """``class X(Base, code="a.b", category="user")``: a subclass states what differs from
        its base in its header; a malformed code or an unknown category fails at definition."""
        super().__init_subclass__(**kwargs)
        _override(cls, code=code, category=category, recoverable=recoverable)
        if _CODE.fullmatch(cls.code) is None:
            raise TypeError(f"{cls.__name__}: error code {cls.code!r} is not like 'area.name'")
        if cls.category not in _CATEGORIES:
            raise TypeError(
                f"{cls.__name__}: category {cls.category!r} is not one of {sorted(_CATEGORIES)}"
            )

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle without calling ``__init__`` again: a subclass's own keyword arguments
        are in its ``__dict__``, so the error crosses a process boundary (DBOS stores a
        failed run's error pickled; a worker's multiprocessing queue pickles it) intact."""
        return (_restore, (type(self), self.args), self.__dict__)


def _restore(cls: type[AgentrigError], args: tuple[Any, ...]) -> AgentrigError:
    """The unpickled error: its class and ``args``; ``__setstate__`` adds its attributes."""
    error = cls.__new__(cls, *args)
    error.args = args  # OSError's __new__ leaves them to an overridden __init__
    return error


def _override(target: object, **given: str | bool | None) -> None:
    """Set what an instance (a raise site) or a class (a subclass header) states; ``None``
    keeps the class's or base's value."""
    for name, value in given.items():
        if value is not None:
            setattr(target, name, value)


class InvalidIdError(AgentrigError, ValueError, code="ids.invalid", category="user"):
    """An identifier does not have the syntax of its type."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class ConfigError(AgentrigError, ValueError, code="config.invalid", category="user"):
    """A composition is invalid; each issue names the file and the key path."""

    def __init__(self, issues: Sequence[Issue], *, source: str | None = None) -> None:
        self.source = source
        prefix = f"{source}: " if source else ""
        lines = [f"{prefix}{issue}" for issue in issues]
        head = "invalid configuration" + (f" in {source}" if source else "")
        super().__init__(head + ":\n  " + "\n  ".join(lines), issues=issues)


class CatalogError(AgentrigError, code="catalog.error"):
    """Base of catalog misuse."""


class DuplicateIdError(CatalogError, ValueError, code="catalog.duplicate", category="user"):
    """An id is registered twice without ``replace=True``."""


class SealedCatalogError(CatalogError, RuntimeError, code="catalog.sealed"):
    """A registration arrived after the catalog was sealed."""


class UnknownIdError(CatalogError, LookupError, code="catalog.unknown_id", category="user"):
    """``require(id)`` found nothing; carries the known ids and the closest match."""

    def __init__(
        self, message: str, *, id: str, known: Sequence[str], suggestion: str | None
    ) -> None:
        super().__init__(message)
        self.id = id
        self.known = tuple(known)
        self.suggestion = suggestion


class VariantError(AgentrigError, ValueError, code="variant.invalid", category="user"):
    """A union variant is malformed or clashes with a registered one."""


class PluginError(AgentrigError, code="plugin.error"):
    """Base of plugin discovery and loading failures."""


class PluginLoadError(PluginError, ImportError, code="plugin.load_failed"):
    """A plugin entry could not be imported or broke its kind's contract."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        name: str,
        distribution: str | None,
        entry_point: str | None,
        rule: str,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.distribution = distribution
        self.entry_point = entry_point
        self.rule = rule


class PluginDisabledError(PluginError, LookupError, code="plugin.disabled", category="user"):
    """A composition needs a plugin that was disabled by config or environment."""


class PluginConflictError(PluginError, LookupError, code="plugin.conflict", category="user"):
    """Two distributions register one (group, name) and the config does not say which wins."""

    def __init__(self, message: str, *, kind: str, name: str, distributions: Sequence[str]) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.distributions = tuple(distributions)


class HookError(AgentrigError, code="hook.invalid"):
    """A hook implementation or a hook call broke the dispatch contract."""


class RuntimeClosedError(AgentrigError, RuntimeError, code="runtime.closed", category="user"):
    """The runtime (or agent) was closed; it refuses new work."""


class AbortError(AgentrigError, code="aborted", category="user"):
    """A run was cancelled before or while it ran; ``reason`` is what the canceller gave."""

    #: how foreign code recognises an abort without importing this class (``is_abort``)
    name = "AbortError"

    def __init__(self, message: str = "the run was aborted", *, reason: object = None) -> None:
        super().__init__(message)
        self.reason = reason


@attrs.frozen(slots=True)
class ErrorInfo:
    """A normalised view of any exception (:func:`error_info`); ``cause`` is the exception."""

    code: str
    codes: tuple[str, ...]
    message: str
    category: Category
    issues: tuple[Issue, ...] = ()
    is_retryable: bool | None = None
    stage_id: str | None = None
    cause: BaseException | None = attrs.field(default=None, eq=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the cause is rendered by its type name)."""
        return {
            "code": self.code,
            "codes": list(self.codes),
            "message": self.message,
            "category": self.category,
            "issues": [
                {"code": i.code, "message": i.message, "path": list(i.path)} for i in self.issues
            ],
            "is_retryable": self.is_retryable,
            "stage_id": self.stage_id,
            "cause": type(self.cause).__name__ if self.cause is not None else None,
        }


def _issue_of(item: object) -> Issue:
    # one entry of an external "errors array" (pydantic's ValidationError.errors(), ...)
    if not isinstance(item, Mapping):
        return Issue("invalid", str(item))
    location = item.get("loc", item.get("path")) or ()
    return Issue(
        str(item.get("type", item.get("code", "invalid"))),
        str(item.get("msg", item.get("message", item))),
        tuple(part for part in location if isinstance(part, str | int)),
    )


def error_info(error: BaseException, *, stage_id: str | None = None) -> ErrorInfo:
    """Normalise any exception into an :class:`ErrorInfo`.

    agentrig errors keep their code, category, recoverability and issues; an exception group
    lists the codes of its members; an external exception exposing an ``errors`` array (as
    pydantic's ``ValidationError`` does) contributes its issues; a cancellation is ``aborted``;
    anything else is ``python.<TypeName>`` in the ``system`` category.
    """
    message, retryable = str(error), None
    codes: tuple[str, ...]
    if isinstance(error, AgentrigError):
        code, category, issues = error.code, error.category, error.issues
        codes, retryable = (code,), error.recoverable
    elif isinstance(error, BaseExceptionGroup):
        members = [error_info(e) for e in error.exceptions]  # a group is never empty
        code, category = members[0].code, members[0].category
        codes = tuple(dict.fromkeys(c for m in members for c in m.codes))
        issues = tuple(i for m in members for i in m.issues)
        retryable = all(m.is_retryable for m in members)
    elif is_cancellation(error) or getattr(error, "name", None) == "AbortError":
        code, codes, category, issues = "aborted", ("aborted",), "user", ()
        message = message or "cancelled"
    else:
        code = f"python.{type(error).__name__}"
        codes, category, issues = (code,), "system", _external_issues(error)
        message = message or type(error).__name__
    return ErrorInfo(code, codes, message, category, issues, retryable, stage_id, error)


def _external_issues(error: BaseException) -> tuple[Issue, ...]:
    errors = getattr(error, "errors", None)
    try:
        items = errors() if callable(errors) else errors
    except Exception:  # an external errors() that fails gives no issues, not a crash
        return ()
    if isinstance(items, Sequence) and not isinstance(items, str | bytes):
        return tuple(_issue_of(item) for item in items)
    return ()


def closest_match(word: str, choices: Iterable[str]) -> str | None:
    """The choice nearest a misspelt ``word`` (difflib's ratio of at least 0.6), or None."""
    import difflib  # only when a name is unknown: keeps it off every import

    return next(iter(difflib.get_close_matches(word, choices, n=1)), None)


def did_you_mean(word: str, choices: Iterable[str], *, show: Callable[[str], str] = repr) -> str:
    """``"; did you mean 'x'?"`` for the choice nearest ``word``, else ``""``: the tail of an
    "unknown name" message, so every such message suggests the same way."""
    close = closest_match(word, choices)
    return f"; did you mean {show(close)}?" if close is not None else ""


def is_cancellation(error: BaseException) -> bool:
    """Is ``error`` the async backend's cancellation (asyncio's ``CancelledError``, trio's
    ``Cancelled``, or a subclass)?  Checked by module and name, so no backend is imported;
    :func:`agentrig.cancel.is_abort` and :func:`error_info` share this one rule."""
    return any(
        (cls.__module__, cls.__name__)
        in {("asyncio.exceptions", "CancelledError"), ("trio", "Cancelled")}
        for cls in type(error).__mro__
    )
