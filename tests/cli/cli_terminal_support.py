"""Drive the real ``agentrig`` command in a pseudo-terminal (stdlib ``pty``), as a person would.

The child gets the terminal as its controlling TTY, so ``send("\\x03")`` is a real Ctrl-C
(the line discipline signals the child's process group) and ``send("\\x04")`` a real Ctrl-D.
``expect`` reads until a text appears; its timeout only bounds a hang, it measures nothing.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ANSI", "Terminal", "agentrig_script", "command_env", "open_terminal", "scripted_config"]

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
HANG = 90.0  # seconds before a test gives up waiting (a hang, not a measurement)


def agentrig_script() -> str:
    script = shutil.which("agentrig", path=str(Path(sys.executable).parent))
    assert script is not None, "the agentrig console script is not installed in this venv"
    return script


def command_env(
    extra: Mapping[str, str] | None = None, *, pythonpath: Sequence[Path] = ()
) -> dict[str, str]:
    """The environment of a command under test: no AGENTRIG_* switches, no NO_COLOR."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_") and k != "NO_COLOR"}
    env["TERM"] = "xterm-256color"
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    env.update(extra or {})
    return env


def scripted_config(tmp_path: Path, replies: Sequence[str], *, agent: str = "") -> Path:
    """``agentrig.toml`` with a scripted provider replaying ``replies`` (TOML inline tables)
    and one agent ``assistant``; ``agent`` is appended to the agent's table (and may open
    more tables after it)."""
    script = ",\n".join(f"  {r}" for r in replies)
    path = tmp_path / "agentrig.toml"
    path.write_text(
        f'[providers.local]\nkind = "scripted"\noptions.script = [\n{script}\n]\n\n'
        f'[agents.assistant]\nprovider = "local"\nmodel = "scripted-cli"\n{agent}',
        encoding="utf-8",
    )
    return path


def open_terminal(
    tmp_path: Path,
    *args: str,
    pythonpath: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> Terminal:
    """``agentrig ARGS...`` in a pseudo-terminal, in ``tmp_path`` (where the chat's history
    is kept too, unless ``env`` names another ``XDG_STATE_HOME``)."""
    state = {"XDG_STATE_HOME": str(tmp_path / "state"), **(env or {})}
    return Terminal(
        [agentrig_script(), *args],
        cwd=tmp_path,
        env=command_env(state, pythonpath=pythonpath),
    )


def _controlling_tty() -> None:
    # after setsid (start_new_session): make the pty on fd 0 this session's terminal
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """One command running in a pseudo-terminal of 40 rows and 100 columns."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=_controlling_tty,  # fd 0 is the pty by now
        )
        os.close(slave)
        self.master = master
        self._raw = b""
        self._seen = 0
        self._prompts = 0
        self._closed = False

    @property
    def text(self) -> str:
        """Everything the command wrote so far, with terminal control sequences removed."""
        return ANSI.sub("", self._raw.decode("utf-8", "replace"))

    @property
    def raw(self) -> str:
        return self._raw.decode("utf-8", "replace")

    def _emulated(self) -> Any:
        import pyte

        screen = pyte.Screen(100, 40)
        pyte.Stream(screen).feed(self.raw.replace("\n", "\r\n").replace("\r\r\n", "\r\n"))
        return screen

    def screen(self) -> list[str]:
        """The screen as a person sees it now (pyte emulates the terminal), blank lines cut."""
        screen = self._emulated()
        lines = [line.rstrip() for line in screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the child closed the terminal
            data = b""
        if not data:
            self._closed = True
            return False
        self._raw += data
        for _ in range(data.count(b"\x1b[6n")):  # a cursor position request, as a terminal
            cursor = self._emulated().cursor  # answers it (a line editor asks on start)
            os.write(self.master, f"\x1b[{cursor.y + 1};{cursor.x + 1}R".encode())
        return True

    def expect(self, wanted: str) -> None:
        """Read until ``wanted`` appears (after what earlier ``expect`` calls consumed)."""
        deadline = time.monotonic() + HANG
        while True:
            found = self.text.find(wanted, self._seen)
            if found >= 0:
                self._seen = found + len(wanted)
                return
            if self._closed or time.monotonic() > deadline:
                raise AssertionError(f"{wanted!r} never appeared; the terminal shows:\n{self.text}")
            self._read(0.5)

    def expect_prompt(self) -> None:
        """Read until the line editor draws its next prompt (it reads the keys from then on).

        prompt_toolkit switches bracketed paste on each time it starts reading a line; the
        terminal is in raw mode by then, so what is sent next reaches the editor as keys.
        """
        deadline = time.monotonic() + HANG
        while self._raw.count(b"\x1b[?2004h") <= self._prompts:
            if self._closed or time.monotonic() > deadline:
                raise AssertionError(f"no prompt appeared; the terminal shows:\n{self.text}")
            self._read(0.5)
        self._prompts += 1
        self._seen = len(self.text)

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait(self) -> int:
        """Read to the end of output and return the exit code."""
        deadline = time.monotonic() + HANG
        while not self._closed and time.monotonic() < deadline:
            self._read(0.5)
        return self.process.wait(timeout=HANG)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        os.close(self.master)
