"""The ``command`` hook strategy: a subprocess given the event's JSON on stdin.

Claude Code's command-hook protocol, so existing hook scripts work unchanged::

    [[hooks.PreToolUse]]
    strategy = "command"
    matcher = "Bash|Write"
    options.command = "./hooks/deny_rm.sh"      # a string runs through /bin/sh -c
    options.timeout = 10                         # seconds (default 60)

The exit code is one input to the outcome, not the outcome itself:

* exit 0 -> :class:`~agentrig.hooks.Allow` carrying stdout; stdout that opens a JSON value
  is decoded as a Claude-Code answer (``permissionDecision``, ``updatedInput``,
  ``decision: "block"`` ...), and an undecodable one is an error;
* exit 2 -> :class:`~agentrig.hooks.Deny` with stderr as the reason (stdout is ignored);
* any other exit code, a kill by a signal, a timeout, output beyond ``max_output_bytes`` or
  a process that never started -> :class:`~agentrig.hooks.HookErrorOutcome` naming which.

The hook runs in its own session and process group (it cannot reach the terminal), under
a subreaper on Linux (:func:`agentrig.host.open_reaped`): when the hook exits, times out,
prints too much or the run's cancel signal fires, every descendant is SIGKILLed -- also
one that called ``setsid`` or changed its process group -- so none survives the hook.
stdout and stderr are read concurrently and bounded while they are read.  A hook that
exits without reading stdin is still decided by its exit code.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal as signal_module
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentrig.cancel import CancelSignal
from agentrig.hooks import (
    Deny,
    HookErrorOutcome,
    HookEvent,
    HookOutcome,
    decode_answer,
)
from agentrig.host import end_tree, kill_tree_group, open_reaped
from agentrig.kernel import with_options

__all__ = ["CommandHook", "CommandOptions", "factory"]

MIB = 1024 * 1024
_READ_CHUNK = 64 * 1024
#: after the hook exits, how long a descendant may keep its stdout/stderr open
_EXIT_GRACE = 1.0
#: how long cleanup waits for a killed group's leader to be reaped
_REAP_TIMEOUT = 5.0


class CommandOptions(BaseModel):
    """``options`` of a ``strategy = "command"`` hook entry."""

    model_config = ConfigDict(extra="forbid")

    command: str | list[str] = Field(
        description="a string runs through /bin/sh -c; a list is executed directly"
    )
    timeout: float = Field(default=60.0, gt=0, description="seconds before the group is killed")
    cwd: str | None = Field(default=None, description="working directory (relative: to the config)")
    env: dict[str, str] = Field(default_factory=dict, description="added to the environment")
    max_output_bytes: int = Field(default=MIB, gt=0, description="stdout + stderr bound")

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, str) and not value.strip():
            raise ValueError("command must not be empty")
        if isinstance(value, list) and (not value or not value[0]):
            raise ValueError("command list must name a program")
        return value

    @field_validator("timeout")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("timeout must be a finite number of seconds")
        return value


def _signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _seconds(value: float) -> str:
    return f"{value:g}s"


def _tail(data: bytes, limit: int = 300) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


class _Run:
    """The state of one hook process: its bounded buffers and group kill."""

    def __init__(self, process: anyio.abc.Process, limit: int) -> None:
        self.process = process
        self.limit = limit
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.total = 0
        self.overflow = False
        self.readers_left = 2
        self.readers_done = anyio.Event()

    def kill_group(self, *, after_exit: bool = False) -> None:
        """End the hook and its descendants (see :func:`agentrig.host.end_tree`).

        While the leader is unreaped, the reaper is asked to end the whole tree (without a
        reaper, the group is SIGKILLed).  After (``after_exit``), the group is SIGKILLed only
        while a descendant still holds our pipes, which keeps the group -- and so its id --
        alive.
        """
        if self.process.returncode is None:
            end_tree(self.process)
        elif after_exit:
            kill_tree_group(self.process.pid)

    async def feed(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            await stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the hook exited (or closed stdin) without reading: its exit code decides
        finally:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await stdin.aclose()

    async def read(self, stream: anyio.abc.ByteReceiveStream | None, buffer: bytearray) -> None:
        try:
            if stream is None:
                return
            while True:
                try:
                    chunk = await stream.receive(_READ_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                room = self.limit - self.total
                if len(chunk) > room:
                    buffer += chunk[: max(room, 0)]
                    self.total = self.limit
                    self.overflow = True
                    self.kill_group(after_exit=True)
                    return
                buffer += chunk
                self.total += len(chunk)
        finally:
            self.readers_left -= 1
            if self.readers_left == 0:
                self.readers_done.set()


class CommandHook:
    """A configured command hook (see the module docs)."""

    def __init__(self, options: CommandOptions, *, base_dir: Path | None = None) -> None:
        self.options = options
        self.base_dir = base_dir

    def __repr__(self) -> str:
        return f"<CommandHook {self.options.command!r}>"

    @property
    def argv(self) -> list[str]:
        command = self.options.command
        return ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)

    def _cwd(self) -> str | None:
        cwd = self.options.cwd
        if cwd is None:
            return os.fspath(self.base_dir) if self.base_dir is not None else None
        path = Path(cwd).expanduser()
        if not path.is_absolute() and self.base_dir is not None:
            path = self.base_dir / path
        return os.fspath(path)

    def _env(self, event: HookEvent) -> dict[str, str]:
        env = dict(os.environ)  # a fresh copy: this process's own environment is never changed
        project = event.payload.get("cwd")
        if isinstance(project, str) and project:
            env.setdefault("CLAUDE_PROJECT_DIR", project)
        if event.traceparent:
            env.pop("TRACESTATE", None)  # belongs to another parent
            env["TRACEPARENT"] = event.traceparent
            if event.tracestate:
                env["TRACESTATE"] = event.tracestate
        env.update(self.options.env)  # the hook's own configuration wins
        return env

    async def run(self, event: HookEvent, *, signal: CancelSignal) -> HookOutcome:
        """Run the hook for ``event``; raises only when ``signal`` fires (group killed)."""
        signal.raise_if_cancelled()
        timeout = self.options.timeout
        try:
            process = await open_reaped(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd(),
                env=self._env(event),
            )
        except (OSError, ValueError) as exc:
            return HookErrorOutcome(f"failed to start: {exc}")
        run = _Run(process, self.options.max_output_bytes)
        timed_out = False
        try:
            with anyio.move_on_after(timeout) as deadline, signal.scope():
                async with anyio.create_task_group() as tg:
                    tg.start_soon(run.feed, event.to_json())
                    tg.start_soon(run.read, process.stdout, run.stdout)
                    tg.start_soon(run.read, process.stderr, run.stderr)
                    await process.wait()
                    with anyio.move_on_after(_EXIT_GRACE):
                        await run.readers_done.wait()
                    if not run.readers_done.is_set():
                        # a descendant still holds our pipes: end the group, keep what we read
                        run.kill_group(after_exit=True)
                        tg.cancel_scope.cancel()
            timed_out = deadline.cancelled_caught and not signal.cancelled
        finally:
            await self._cleanup(run)
        if signal.cancelled:
            raise signal.abort_error()
        if timed_out:
            return HookErrorOutcome(f"timed out after {_seconds(timeout)}")
        return self._decide(event, run)

    async def _cleanup(self, run: _Run) -> None:
        with anyio.CancelScope(shield=True):
            run.kill_group()
            with anyio.move_on_after(_REAP_TIMEOUT):
                await run.process.wait()
            if run.process.returncode is None:  # the reaper did not answer: end the group
                kill_tree_group(run.process.pid)
                with anyio.move_on_after(_REAP_TIMEOUT):
                    await run.process.wait()
            with anyio.move_on_after(_REAP_TIMEOUT), contextlib.suppress(Exception):
                await run.process.aclose()

    def _decide(self, event: HookEvent, run: _Run) -> HookOutcome:
        if run.overflow:
            return HookErrorOutcome(f"output exceeded {self.options.max_output_bytes} bytes")
        code = run.process.returncode
        if code is None:  # pragma: no cover - cleanup reaps or the group was unkillable
            return HookErrorOutcome("the hook did not exit")
        if code < 0:
            return HookErrorOutcome(f"killed by signal {_signal_name(-code)}")
        if code == 2:
            reason = run.stderr.decode("utf-8", errors="replace").strip()
            return Deny(reason or "the hook exited with status 2 and gave no reason on stderr")
        if code != 0:
            hint = {126: " (not executable)", 127: " (command not found)"}.get(code, "")
            detail = _tail(bytes(run.stderr))
            return HookErrorOutcome(
                f"exited with status {code}{hint}" + (f": {detail}" if detail else "")
            )
        try:
            text = run.stdout.decode("utf-8")
        except UnicodeDecodeError as exc:
            return HookErrorOutcome(f"undecodable answer: stdout is not valid UTF-8 ({exc})")
        return decode_answer(text, event=event.name, steering=True)


@with_options(CommandOptions)
def factory(spec: Mapping[str, Any]) -> CommandHook:
    """Entry point ``command`` of ``agentrig.hook_strategies``.

    ``spec["options"]`` holds the :class:`CommandOptions`; ``spec["base_dir"]`` (the config's
    directory) anchors a relative ``cwd``.
    """
    options = CommandOptions.model_validate(dict(spec.get("options") or {}))
    base_dir = spec.get("base_dir")
    return CommandHook(options, base_dir=Path(base_dir) if base_dir is not None else None)
