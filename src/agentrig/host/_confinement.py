"""Who a reaped command runs as and under which limits (:func:`agentrig.host.open_reaped`).

The reaper applies a :class:`Confinement` itself, in the fork that becomes the command:
rlimits, no-new-privileges, the capability bounding, inheritable and ambient sets emptied,
supplementary groups cleared, then the gid and uid.  That is what ``prlimit`` and ``setpriv``
in front of the command would do, without the two extra execs per command (the workspace's
native sandbox paid ~2 ms a command for them, more than the command itself).
"""

from __future__ import annotations

import attrs

__all__ = ["Confinement"]


@attrs.frozen(slots=True)
class Confinement:
    """The identity and rlimits a command gets (applied between fork and exec).

    ``uid`` / ``gid``: the real, effective and saved ids (never root's); ``limits``:
    ``(resource.RLIMIT_*, value)`` pairs, each set as soft and hard limit.  Starting a confined
    command needs the privileges to change to that identity (root); without them it does not
    start (:class:`~agentrig.host.ReaperStartError`).
    """

    uid: int
    gid: int
    limits: tuple[tuple[int, int], ...] = ()

    def __attrs_post_init__(self) -> None:
        for name, value in (("uid", self.uid), ("gid", self.gid)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer (root's confines nothing)")
        for pair in self.limits:
            if len(pair) != 2 or not all(isinstance(n, int) and n >= 0 for n in pair):
                raise ValueError(f"a limit is (resource, value) of integers >= 0, not {pair!r}")

    def wire(self) -> str:
        """The reaper's ``--confine`` form: ``UID,GID[,RESOURCE=VALUE...]``."""
        pairs = "".join(f",{which}={value}" for which, value in self.limits)
        return f"{self.uid},{self.gid}{pairs}"
