"""The chat's line editor on a terminal: prompt_toolkit, with an owner-only history file.

Arrow keys and the usual editing keys work on the line; Up and Down walk the history, which
is kept across chats in ``$XDG_STATE_HOME/agentrig/chat-history`` (default
``~/.local/state/agentrig``), a file only its owner may read.  A paste of several lines
(the terminal's bracketed paste) stays in the line as one message; Alt-Enter (or Esc then
Enter) adds a line break by hand.  In multi-line mode Enter adds a line break and Alt-Enter
sends (a ``/command`` alone on the line is still sent by Enter).  Ctrl-C raises
:class:`KeyboardInterrupt`, Ctrl-D on an empty line ends the input.

prompt_toolkit reads the keys only while it prompts; between prompts the terminal is in its
usual mode, so a Ctrl-C during an answer is the signal the chat's watcher stops it with.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.cli._common import UsageError

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings

__all__ = ["LineEditor", "history_file"]

_HISTORY_NAME = "chat-history"


def history_file(environ: Mapping[str, str]) -> Path:
    """Where the chat history lives: ``$XDG_STATE_HOME/agentrig/chat-history``."""
    state = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "agentrig" / _HISTORY_NAME


def _owner_only(path: Path) -> Path:
    """Create ``path`` (and its folder) readable by its owner only, or make it so.

    A symlink in its place, or a file or folder someone else owns, is refused: the history
    holds what was typed, secrets included.
    """
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_folder(folder)
    if (folder.stat().st_mode & 0o077) != 0:
        os.chmod(folder, 0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise UsageError(
            f"cannot open the chat history {path}: {exc.strerror or exc} (a symlink is refused)",
            code="cli.history",
        ) from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or not stat.S_ISREG(info.st_mode):
            raise UsageError(
                f"the chat history {path} is not a file of yours; remove it", code="cli.history"
            )
        if info.st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


def _check_folder(path: Path) -> None:
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise UsageError(
            f"the chat history folder {path} is not a folder of yours; remove it or set "
            "XDG_STATE_HOME",
            code="cli.history",
        )


class LineEditor:
    """One prompt_toolkit session per chat: the history file, the key bindings, the mode."""

    def __init__(self, history: Path) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        self.multiline = False
        self._session: PromptSession[str] = PromptSession(
            history=FileHistory(str(_owner_only(history))),
            key_bindings=_bindings(self),
            enable_history_search=False,
        )
        self._answers: PromptSession[str] = PromptSession(key_bindings=_bindings(self))

    async def prompt(self, message: str = "> ") -> str | None:
        """The next message (None at the end of input); Ctrl-C raises KeyboardInterrupt."""
        try:
            return await self._session.prompt_async(
                message,
                multiline=self.multiline,
                prompt_continuation=lambda width, line, wrap: "." * (width - 1) + " ",
                handle_sigint=False,
            )
        except EOFError:
            return None

    async def answer(self) -> str | None:
        """A short answer (an approval), kept out of the history; None at the end of input."""
        try:
            return await self._answers.prompt_async("", multiline=False, handle_sigint=False)
        except EOFError:
            return None


def _bindings(editor: LineEditor) -> KeyBindings:
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()
    single = Condition(lambda: not editor.multiline)
    command = Condition(lambda: editor.multiline and _is_command(get_app().current_buffer.text))

    @bindings.add("escape", "enter", filter=single)
    def _line_break(event: KeyPressEvent) -> None:
        """Alt-Enter (Esc, Enter): a line break in the message instead of sending it."""
        event.current_buffer.insert_text("\n")

    @bindings.add("enter", filter=command)
    def _send_command(event: KeyPressEvent) -> None:
        """In multi-line mode Enter still sends a ``/command`` typed alone on the line."""
        event.current_buffer.validate_and_handle()

    return bindings


def _is_command(text: str) -> bool:
    from agentrig.cli._slash import parse

    return "\n" not in text and isinstance(parse(text.strip()), tuple)
