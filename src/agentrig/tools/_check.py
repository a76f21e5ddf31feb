"""The report of a ``check_*`` function (:func:`~agentrig.tools.check_input`)."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

import attrs

from agentrig.errors import Issue

__all__ = ["CheckResult", "CheckStatus"]

_V = TypeVar("_V")

CheckStatus = Literal["passed", "failed", "unavailable", "not-run"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@attrs.frozen(slots=True)
class CheckResult(Generic[_V]):
    """The report of a ``check_*`` function.

    ``passed`` has no issues and ``failed`` at least one; ``unavailable`` and ``not-run`` are
    never a pass.  ``value`` replaces the checked input only when :attr:`has_value` says it
    was provided (``None`` is a legitimate value), never by truthiness.
    """

    status: CheckStatus
    issues: tuple[Issue, ...] = ()
    value: Any = MISSING

    def __attrs_post_init__(self) -> None:
        if self.status == "passed" and self.issues:
            raise ValueError("a passed CheckResult cannot carry issues")
        if self.status == "failed" and not self.issues:
            raise ValueError("a failed CheckResult needs at least one issue")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def has_value(self) -> bool:
        return self.value is not MISSING

    @classmethod
    def ok(cls, value: Any = MISSING) -> CheckResult[Any]:
        return cls("passed", (), value)

    @classmethod
    def fail(cls, *issues: Issue) -> CheckResult[Any]:
        return cls("failed", tuple(issues))
