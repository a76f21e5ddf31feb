"""Children started in their own session and process group, ended as a group.

Why: a child that shares our session can open ``/dev/tty`` and inject keystrokes into the
user's terminal (``TIOCSTI``), and killing only the child's pid leaves the grandchildren
it started (``sh -c 'a & b'``) running.  :func:`spawn_in_group` therefore starts every child
as the leader of a new session (``start_new_session=True``), refuses to hand it any of our
terminal descriptors, and :class:`ChildGroup` signals the whole group (``os.killpg``).

The group is registered with the exit registry: if this process ends while the leader has
not been reaped, the group is killed.  Once the leader is reaped its pid -- and so the
group id -- may be reused by an unrelated process, so nothing is signalled after that and
the registration is dropped; a descendant that outlives its reaped leader keeps running
(a documented residual).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Self

import anyio
import anyio.abc

from agentrig.host._exit import exit_registry

__all__ = ["ChildGroup", "spawn_in_group"]

_StdSpec = int | IO[Any]


def _leader_unreaped(pid: int) -> bool:
    """True while ``pid`` is our child and not yet reaped (running or a zombie).

    ``WNOWAIT`` peeks without reaping, so this never races the event loop's own ``wait``
    into losing an exit status.
    """
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _kill_group_if_leader_unreaped(pid: int, signum: int) -> bool:
    if not _leader_unreaped(pid):
        return False
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        return False
    return True


def _checked_stream(spec: _StdSpec | None, name: str) -> _StdSpec:
    if spec is None:
        raise ValueError(f"{name}=None would inherit this process's {name}; pass PIPE or DEVNULL")
    if isinstance(spec, int):
        if spec in (subprocess.PIPE, subprocess.DEVNULL):
            return spec
        if spec in (0, 1, 2) or os.isatty(spec):
            raise ValueError(f"{name} must not be a terminal or one of this process's std streams")
        return spec
    fileno = spec.fileno()
    if fileno in (0, 1, 2) or os.isatty(fileno):
        raise ValueError(f"{name} must not be a terminal or one of this process's std streams")
    return spec


class ChildGroup:
    """A child process leading its own session and process group.

    ``signal``/``kill`` reach every process of the group while the leader is unreaped.
    Use as an async context manager: leaving it kills the group (if still there), waits for
    the leader and closes its pipes.
    """

    def __init__(self, process: anyio.abc.Process, *, registered: bool) -> None:
        self.process = process
        self._registered = registered

    @property
    def pid(self) -> int:
        """The leader's pid, which is also the process group and session id."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to the whole group; ``False`` if the leader was already reaped."""
        return _kill_group_if_leader_unreaped(self.pid, signum)

    def kill(self) -> bool:
        """SIGKILL the whole group (see :meth:`signal`)."""
        return self.signal(signal.SIGKILL)

    async def wait(self) -> int:
        """Wait for the leader to exit; drops the exit registration once it is reaped."""
        code = await self.process.wait()
        self._release()
        return code

    def _release(self) -> None:
        if self._registered:
            exit_registry().unregister(("child-group", self.pid))
            self._registered = False

    async def aclose(self) -> None:
        """Kill the group if it is still there, reap the leader and close the pipes."""
        try:
            if self.process.returncode is None:
                self.kill()
            with anyio.CancelScope(shield=True):
                await self.process.aclose()
        finally:
            self._release()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def spawn_in_group(
    command: str | Sequence[str],
    *,
    stdin: _StdSpec | None = subprocess.DEVNULL,
    stdout: _StdSpec | None = subprocess.PIPE,
    stderr: _StdSpec | None = subprocess.PIPE,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    register: bool = True,
) -> ChildGroup:
    """Start ``command`` as the leader of a new session and process group.

    A string command runs through the shell, a sequence directly (as
    :func:`anyio.open_process`).  Standard streams default to no stdin and piped output;
    inheriting ours (``None``) or passing a terminal is refused.  With ``register`` (the
    default) the group is killed at process exit while its leader is unreaped.
    """
    process = await anyio.open_process(
        command,
        stdin=_checked_stream(stdin, "stdin"),
        stdout=_checked_stream(stdout, "stdout"),
        stderr=_checked_stream(stderr, "stderr"),
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    if register:
        pid = process.pid
        exit_registry().register(
            ("child-group", pid), lambda: _kill_group_if_leader_unreaped(pid, signal.SIGKILL)
        )
    return ChildGroup(process, registered=register)
