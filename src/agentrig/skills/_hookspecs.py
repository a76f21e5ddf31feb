# mypy: disable-error-code="empty-body"
# (hook specifications are signatures with docstrings; pluggy never calls their bodies)
"""The skills' hook: ``registration_guard``, a model's review of a skill read from a folder.

The skills contract (:class:`~agentrig.skills.Registration`, :class:`~agentrig.skills.Verdict`,
:func:`~agentrig.skills.review`) lives here, so the hook asking for a verdict does too.  This
module reaches pluggy as a spec module of every plugin manager through the core
distribution's ``agentrig.seams`` entry point ``skills_hookspecs``
(:func:`agentrig.kernel._dispatch.spec_modules`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import attrs

from agentrig.kernel import Mode, declare_hook
from agentrig.skills._scanner import Registration, Verdict

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["RegistrationReview", "registration_guard"]


@final
@attrs.frozen(slots=True)
class RegistrationReview:
    """Something about to be registered from outside the code (a skill folder): judge it.

    ``registration`` holds the kind, the name, every text field a model would read and the
    SHA-256 of a skill's files; ``runtime`` is the runtime being composed (its providers are
    built).  Answer a :class:`~agentrig.skills.Verdict`.
    """

    registration: Registration
    runtime: Runtime


@declare_hook(Mode.FIRST_RESULT)
def registration_guard(payload: RegistrationReview) -> Verdict | None:
    """Judge a skill installed from the filesystem, after the deterministic scanner passed it.

    First result: the first :class:`~agentrig.skills.Verdict` wins.  No answer at all, a
    raised error or anything but a verdict blocks the skill -- the guard fails closed.  The
    built-in ``skill-guard`` plugin answers with a model when ``[skills.guard]`` names one.
    """
