"""Start a command whose whole process tree ends with it, even descendants that left its group.

:func:`open_reaped` runs the command under a small reaper process (Linux) that
is a child subreaper: when the command exits, or when :func:`end_tree` asks, the reaper
SIGKILLs and reaps every descendant -- ones that called ``setsid`` or changed their process
group included -- and then exits the way the command did.  The reaper also ends the tree if
this process dies (``PR_SET_PDEATHSIG``).  The reaper is forked by this process's reaper
launcher (``_launcher.py``, one per process, see :mod:`agentrig.host._launching`), so a
command costs no interpreter start; when the launcher cannot serve a command, ``_reaper.py``
is started for it instead.

Elsewhere (no subreapers) the command runs directly as the leader of a new session, and
:func:`end_tree` kills its process group: descendants that left the group survive there.
What neither can end is written down in ``docs/security.md``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc

from agentrig.host._confinement import Confinement
from agentrig.host._launching import ReaperStartError, launch

__all__ = [
    "REAPING",
    "Confinement",
    "ReaperStartError",
    "end_tree",
    "kill_tree_group",
    "open_reaped",
]

REAPING: bool = sys.platform.startswith("linux")
"""Whether commands run under the subreaper (Linux), rather than as plain group leaders."""

_REAPER = Path(__file__).with_name("_reaper.py")
_Std = int | IO[Any] | None


def _reaper_argv(status_fd: int) -> list[str]:
    # -I: no PYTHON* variables, no user site; -S: no site-packages (stdlib only, fast start)
    return [sys.executable, "-I", "-S", str(_REAPER), str(status_fd), str(os.getpid())]


async def _read_status(fd: int) -> bytes:
    data = bytearray()
    while True:
        await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if not chunk:
            return bytes(data)
        data += chunk


async def open_reaped(
    command: Sequence[str],
    *,
    stdin: _Std,
    stdout: _Std,
    stderr: _Std,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    confine: Confinement | None = None,
) -> anyio.abc.Process:
    """Start ``command`` (an argv) in a new session, under the reaper where there is one.

    Returns once the command runs; raises :class:`OSError` (:class:`ReaperStartError` when
    the reaper reports it) when it cannot start.  ``process.pid`` is the reaper's, which
    leads the session and process group the command runs in.  With ``confine`` the reaper
    starts the command as that user under those limits (:class:`Confinement`); without a
    reaper (not Linux) a confined command is refused.
    """
    if confine is not None and not REAPING:
        raise ReaperStartError("a confined command needs the reaper (Linux)")
    if REAPING:
        launched = await launch(
            command, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env, confine=confine
        )
        if launched is not None:
            return launched

    async def start(argv: list[str], pass_fds: tuple[int, ...]) -> anyio.abc.Process:
        return await anyio.open_process(
            argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=pass_fds,
        )

    if not REAPING:
        return await start(list(command), ())
    read_fd, write_fd = os.pipe()
    try:
        try:
            options = [f"--confine={confine.wire()}"] if confine is not None else []
            argv = [*_reaper_argv(write_fd), *options, "--", *command]
            process = await start(argv, (write_fd,))
        finally:
            os.close(write_fd)
        os.set_blocking(read_fd, False)
        try:
            message = await _read_status(read_fd)
        except BaseException:
            end_tree(process)  # cancelled while it started: the reaper ends what it began
            with anyio.CancelScope(shield=True):
                await process.aclose()
            raise
    finally:
        os.close(read_fd)
    if message:
        with anyio.CancelScope(shield=True):
            await process.aclose()
        raise ReaperStartError(message.decode("utf-8", "replace"))
    return process


def end_tree(process: anyio.abc.Process) -> None:
    """End the command and every descendant: SIGTERM to the reaper, which kills them all.

    Without a reaper, SIGKILL the process group.  Nothing is sent once the leader was reaped
    (its pid may belong to someone else by then).
    """
    if process.returncode is not None:
        return
    try:
        if REAPING:
            process.send_signal(signal.SIGTERM)  # a launched reaper: through its pidfd
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid`` (the last resort when the reaper did not answer)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
