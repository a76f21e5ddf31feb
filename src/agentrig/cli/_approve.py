"""Who answers a permission ``ask`` for ``run`` and ``chat``: the person, ``--yes``, or nobody.

The command registers a :class:`CliApprover` as a listener of ``permission_approver``, last
in order (an approver plugin of the config answers first).  Its answer depends on the
command line:

* ``--yes`` is the documented consent "approve every ask": every question is allowed --
  except the always-ask cases (an ask rule, a rule that cannot be evaluated, a catastrophic
  call), which even bypass mode asks about: a blanket consent given in advance is not an
  evaluation of them, so they go to the terminal, or are refused without one;
* on a terminal (stdin and stderr are TTYs) the call is shown -- the tool and its arguments
  as indented JSON, long values shortened, each saying how much it hides -- and the person
  answers ``y`` (allow once),
  ``a`` (allow this tool for the rest of the session: it is not asked again; not offered
  for an always-ask case, which is never remembered) or ``n`` (deny; also an empty line or
  the end of input);
* otherwise nobody can answer: the call is refused, and the command reports it afterwards
  and exits with :data:`EXIT_REFUSED` naming ``--yes`` and ``--mode``.

The same listener answers ``elicitation`` (an MCP server asking the person for input): on a
terminal the form is filled in (:mod:`agentrig.cli._elicit`); without one it is declined,
with a note on stderr.  ``--yes`` types no input for anyone.

Questions are asked one at a time even when tool calls run concurrently.  The listener
also watches the gate's ``permission`` observations, so a call refused by a rule, a mode or
the person is mentioned when the command's output did not show it -- a refused call never
passes under an unexplained exit code 0.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, Any, Literal

from agentrig._markers import hookimpl
from agentrig.cli._common import MODES
from agentrig.cli._render import Renderer, short

if TYPE_CHECKING:
    import anyio

    from agentrig.cancel import CancelSignal
    from agentrig.lifecycle import (
        ElicitationAnswer,
        ElicitationQuestion,
        Observation,
        PermissionQuestion,
    )

__all__ = [
    "EXIT_REFUSED",
    "MODES",
    "CliApprover",
    "denial_note",
    "describe_call",
    "refusal_message",
    "shorten",
]

EXIT_REFUSED = 3
"""A tool call needed approval and nobody could give it (no terminal, no ``--yes``)."""


_LONG_TEXT = 160
_LONG_LIST = 20
_DEEP = 6

Answer = Literal["allow", "deny"] | tuple[str, str, str]


def _hidden(value: str) -> str:
    """What a cut string hides, so the person knows the preview is not all of it."""
    rest = value[_LONG_TEXT:]
    lines = rest.count("\n")
    where = f", {lines} more line{'s' if lines != 1 else ''}" if lines else ""
    return f"; the last {len(rest)} not shown{where}"


def shorten(value: Any, depth: int = 0) -> Any:
    """``value`` with long strings and lists cut, so a question fits on the screen."""
    if isinstance(value, str) and len(value) > _LONG_TEXT:
        return f"{value[:_LONG_TEXT]}... ({len(value)} characters{_hidden(value)})"
    if isinstance(value, dict):
        if depth >= _DEEP:
            return f"{{... {len(value)} keys}}"
        return {str(k): shorten(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth >= _DEEP:
            return f"[... {len(value)} items]"
        items = [shorten(v, depth + 1) for v in value[:_LONG_LIST]]
        if len(value) > _LONG_LIST:
            items.append(f"... {len(value) - _LONG_LIST} more items")
        return items
    return value


def describe_call(question: PermissionQuestion) -> str:
    """The question as the person reads it: tool, why it asks, the arguments as JSON."""
    arguments = json.dumps(
        shorten(dict(question.arguments)), indent=2, ensure_ascii=False, default=str
    )
    lines = [
        f"The agent wants to run the tool {question.tool!r}.",
        f"  why it asks: {question.reason}" + (f" (rule {question.rule})" if question.rule else ""),
        "  arguments:",
        *(f"    {line}" for line in arguments.splitlines()),
    ]
    return "\n".join(lines) + "\n"


_WITHDRAWN = "\x00withdrawn"
"""What :meth:`CliApprover._answer` returns when the turn was cancelled during the question."""

_CHOICES = "Allow? [y] once  [a] for this session  [n] deny: "
_CHOICES_ONCE = "Allow? [y] once  [n] deny (asked every time): "


def refusal_message(refused: list[PermissionQuestion], *, consent: bool) -> str:
    """The one line a command prints when asks were refused for want of a person."""
    names = ", ".join(repr(tool) for tool in dict.fromkeys(q.tool for q in refused))
    head = (
        f"error [cli.approval_required]: {len(refused)} tool call(s) needed approval "
        f"({names}) and there was no terminal to ask"
    )
    if consent:  # only always-ask cases reach here under --yes
        why = "; ".join(dict.fromkeys(q.reason for q in refused))
        return (
            f"{head}; --yes does not answer the cases asked in every mode ({why}): "
            "run on a terminal to answer them, or change the rule"
        )
    return (
        f"{head}; run on a terminal, approve every ask with --yes, or choose a --mode "
        "that decides them (accept-edits, bypass, plan)"
    )


def denial_note(denied: list[tuple[str, str]]) -> str:
    """The line naming the calls the gate refused (a rule, the mode or the person)."""
    shown = "; ".join(f"{tool}: {short(reason, 160)}" for tool, reason in denied[:5])
    more = f"; and {len(denied) - 5} more" if len(denied) > 5 else ""
    return f"note: {len(denied)} tool call(s) were refused ({shown}{more})"


class CliApprover:
    """The ``permission_approver`` listener of ``run`` and ``chat`` (see the module docs).

    ``read_line`` reads the person's answer (None at the end of input); without it, every
    question ``consent`` does not answer is refused and kept in :attr:`refused`.
    ``turn_signal`` gives the running turn's cancel signal: when it fires (Ctrl-C in a
    chat) the question is withdrawn and the call denied, so the turn can end interrupted.
    """

    def __init__(
        self,
        *,
        consent: bool,
        read_line: Callable[[], Awaitable[str | None]] | None,
        err: IO[str],
        renderer: Renderer | None = None,
        turn_signal: Callable[[], CancelSignal | None] | None = None,
    ) -> None:
        import anyio

        self.turn_signal = turn_signal
        self.consent = consent
        self.read_line = read_line
        self.err = err
        self.renderer = renderer or Renderer()
        self.refused: list[PermissionQuestion] = []
        self.denied: list[tuple[str, str]] = []
        self._one_at_a_time: anyio.Lock = anyio.Lock()

    @hookimpl
    def observe(self, payload: Observation) -> None:
        """Keep every call the gate refused: ``(tool, reason)``."""
        if payload.kind == "permission" and not payload.data.get("allowed", True):
            self.denied.append((str(payload.data.get("tool")), str(payload.data.get("reason"))))

    @hookimpl(trylast=True)
    async def elicitation(self, payload: ElicitationQuestion) -> ElicitationAnswer:
        """An MCP server asks for input: the person answers on a terminal; without one the
        request is declined (and the command says so)."""
        from agentrig.cli._elicit import ask_elicitation
        from agentrig.lifecycle import ElicitationAnswer

        if self.read_line is None:
            self.err.write(
                f"note: {payload.source} asked for input ({payload.message!r}) and there is "
                "no terminal to answer: declined\n"
            )
            self.err.flush()
            return ElicitationAnswer.decline()

        async def read() -> str | None:
            line = await self._answer()
            return None if line is _WITHDRAWN else line

        async with self._one_at_a_time:
            with self.renderer.paused():
                return await ask_elicitation(payload, read, self.err)

    @hookimpl(trylast=True)
    async def permission_approver(self, payload: PermissionQuestion) -> Answer:
        if self.consent and not payload.always_ask:
            return "allow"
        if self.read_line is None:
            self.refused.append(payload)
            return "deny"
        async with self._one_at_a_time:
            with self.renderer.paused():
                return await self._ask(payload)

    async def _answer(self) -> str | None:
        """The person's next line; :data:`_WITHDRAWN` when the turn was cancelled meanwhile."""
        assert self.read_line is not None
        signal = self.turn_signal() if self.turn_signal is not None else None
        if signal is None:
            return await self.read_line()
        line: str | None = None
        with signal.scope() as scope:  # our scope: it ends the read, nothing outside it
            line = await self.read_line()
        return _WITHDRAWN if scope.cancelled_caught else line

    async def _ask(self, payload: PermissionQuestion) -> Answer:
        assert self.read_line is not None
        self.err.write(describe_call(payload))
        remember = not payload.always_ask
        while True:
            self.err.write(_CHOICES if remember else _CHOICES_ONCE)
            self.err.flush()
            line = await self._answer()
            if line is _WITHDRAWN:
                self.err.write("\n(question withdrawn: the turn was interrupted)\n")
                self.err.flush()
                return "deny"
            choice = (line or "").strip().lower()
            if line is None or choice in ("", "n", "no", "d", "deny"):
                self.err.write("denied\n" if line is not None else "\ndenied (end of input)\n")
                self.err.flush()
                return "deny"
            if choice in ("y", "yes", "o", "once"):
                return "allow"
            if remember and choice in ("a", "always", "s", "session"):
                self.err.write(f"allowed {payload.tool!r} for this session\n")
                self.err.flush()
                return ("allow", "remember", payload.tool)
            options = "y, a or n" if remember else "y or n"
            self.err.write(f"{line.strip()!r} is not an answer; type {options}\n")
