"""How ``run`` and ``chat`` show a streamed answer: Markdown on a terminal, plain text elsewhere.

:func:`make_renderer` picks the form.  On a terminal (stdout is a TTY and ``NO_COLOR`` is
not set) the answer is rendered as Markdown with Rich while it streams, tool calls and
results are one dim line each, and a status line with the elapsed time shows while the
command waits for the model's first token or for a tool.  Otherwise the text is written as
it arrives and tool activity is one ``[tool]`` line each on stderr -- what scripts and pipes
have always read.  Rich is imported only when it renders (cold start, issue 20).

:func:`stream_turn` drives one streamed run through a renderer; an approval question asks
the renderer to step aside (:meth:`Renderer.paused`) so the prompt is not drawn over.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.segment import Segment
    from rich.spinner import Spinner

    from agentrig.agent import Agent, RunResult
    from agentrig.cancel import CancelSignal

__all__ = [
    "PlainRenderer",
    "Renderer",
    "RichRenderer",
    "ToolLines",
    "make_renderer",
    "short",
    "stream_turn",
]

_TAIL_LINES = 8
"""Rendered lines kept redrawable at the end of a streaming answer (Markdown may reflow them)."""
_REDRAW_EVERY = 0.05
"""Seconds between two Markdown renderings of a growing answer (the last one always runs);
at least twice the last rendering's own duration, so a long answer never keeps a core busy."""


def short(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters with ``...``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _call_line(name: str, arguments: str) -> str:
    return f"{name}({short(arguments, 120)})"


def _result_line(name: str, status: str, text: str) -> str:
    return f"{name} -> {status}: {short(text, 120)}"


class Renderer:
    """The interface ``stream_turn`` talks to; see :class:`PlainRenderer` for the plain form."""

    def begin(self) -> None:
        """A turn starts: the command waits for the model."""

    def text(self, delta: str) -> None:
        """A piece of the answer arrived."""

    def tool_call(self, name: str, arguments: str) -> None:
        """The model called ``name`` with ``arguments`` (JSON text); the tool is about to run."""

    def tool_result(self, name: str, status: str, text: str) -> None:
        """A tool call settled; the command waits for the model again."""

    def end(self) -> None:
        """The turn ended (completed, failed or interrupted): finish the answer's last line."""

    def note(self, line: str) -> None:
        """A line about the turn (``[interrupted]``, a hook's message) outside the answer."""

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Step aside while the command asks the person something on the terminal."""
        yield


class PlainRenderer(Renderer):
    """Text to ``out`` as it arrives; one ``[tool]`` line per call and per result on ``err``."""

    def __init__(self, out: IO[str], err: IO[str]) -> None:
        self.out, self.err = out, err
        self._ended_line = True

    def _finish_line(self) -> None:
        if not self._ended_line:
            self.out.write("\n")
            self.out.flush()
            self._ended_line = True

    def text(self, delta: str) -> None:
        self.out.write(delta)
        self.out.flush()
        self._ended_line = delta.endswith("\n")

    def tool_call(self, name: str, arguments: str) -> None:
        self._finish_line()
        self.err.write(f"[tool] {_call_line(name, arguments)}\n")
        self.err.flush()

    def tool_result(self, name: str, status: str, text: str) -> None:
        self.err.write(f"[tool] {_result_line(name, status, text)}\n")
        self.err.flush()

    def end(self) -> None:
        self._finish_line()

    def note(self, line: str) -> None:
        self._finish_line()
        self.err.write(line + "\n")
        self.err.flush()


class ToolLines(PlainRenderer):
    """``run`` into a pipe: only the ``[tool]`` lines (and notes) on ``err`` as they happen;
    the command prints the final answer alone on ``out`` once the run ends."""

    def text(self, delta: str) -> None:
        """The answer is printed whole at the end, not streamed."""

    def end(self) -> None:
        """Nothing of the answer was written, so there is no line to finish."""


class _Waiting:
    """The status line: a spinner, what the command waits for and the seconds so far."""

    def __init__(self, label: str) -> None:
        from rich.spinner import Spinner

        self.label = label
        self.started = time.monotonic()
        self.spinner: Spinner = Spinner("dots", style="cyan")

    def __rich__(self) -> RenderableType:
        elapsed = time.monotonic() - self.started
        self.spinner.update(text=f"{self.label} ({elapsed:.1f}s)")
        return self.spinner


class _Area:
    """What the live display redraws: the answer's unsettled tail, then the status line."""

    def __init__(self) -> None:
        self.tail: list[list[Segment]] = []
        self.waiting: _Waiting | None = None

    def __rich__(self) -> RenderableType:
        from rich.console import Group
        from rich.segment import Segment, Segments

        parts: list[RenderableType] = []
        if self.tail:
            parts.append(Segments([s for line in self.tail for s in (*line, Segment.line())]))
        if self.waiting is not None:
            parts.append(self.waiting)
        return Group(*parts)


class RichRenderer(Renderer):
    """Markdown on a terminal, redrawn as it streams; settled lines are printed once.

    The answer's Markdown is rendered whole on every change (at most every
    :data:`_REDRAW_EVERY` seconds); all but its last :data:`_TAIL_LINES` lines are settled and
    printed above a transient live area that holds the tail and the status line.  A long
    answer therefore scrolls like plain output instead of being cut at the screen's height.
    """

    def __init__(self, out: IO[str], err: IO[str], *, redraw_every: float = _REDRAW_EVERY) -> None:
        from rich.console import Console

        self.console: Console = Console(file=out, highlight=False)
        self._redraw_every = self._pause = redraw_every
        self._err = err
        self._err_is_screen = err.isatty()
        self._area = _Area()
        self._live: Live | None = None
        self._markdown = ""
        self._printed = 0
        self._drawn_at = 0.0

    # ---- the live area -------------------------------------------------------------------

    def _start(self) -> None:
        from rich.live import Live

        if self._live is None:
            self._live = Live(
                self._area,
                console=self.console,
                transient=True,
                refresh_per_second=10,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def _stop(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    def _line(self, text: str, *, style: str = "dim") -> None:
        """A line outside the answer: on the screen when stderr is the terminal too."""
        if self._err_is_screen:
            from rich.text import Text

            self.console.print(Text(text, style=style), no_wrap=True, overflow="ellipsis")
        else:
            self._err.write(text + "\n")
            self._err.flush()

    def _wait_for(self, label: str) -> None:
        self._area.waiting = _Waiting(label)
        self._start()
        if self._live is not None:
            self._live.refresh()

    # ---- the answer ----------------------------------------------------------------------

    def _rendered(self) -> list[list[Segment]]:
        from rich.markdown import Markdown

        lines = self.console.render_lines(Markdown(self._markdown), self.console.options, pad=False)
        while lines and not "".join(seg.text for seg in lines[-1]).strip():
            lines.pop()
        return lines

    def _draw(self, *, final: bool) -> None:
        from rich.segment import Segment, Segments

        started = time.monotonic()
        lines = self._rendered() if self._markdown.strip() else []
        self._pause = max(self._redraw_every, 2 * (time.monotonic() - started))
        settled = len(lines) if final else max(self._printed, len(lines) - _TAIL_LINES)
        for line in lines[self._printed : settled]:
            self.console.print(Segments([*line, Segment.line()]))
        self._printed = settled
        self._area.tail = lines[settled:]
        self._drawn_at = time.monotonic()
        if self._live is not None:
            self._live.refresh()

    def _settle_answer(self) -> None:
        if self._markdown:
            self._draw(final=True)
        self._markdown, self._printed, self._area.tail = "", 0, []

    def begin(self) -> None:
        self._wait_for("waiting for the model")

    def text(self, delta: str) -> None:
        self._markdown += delta
        self._area.waiting = None
        self._start()
        if time.monotonic() - self._drawn_at >= self._pause:
            self._draw(final=False)

    def tool_call(self, name: str, arguments: str) -> None:
        self._settle_answer()
        self._line(f"⚙ {_call_line(name, arguments)}")
        self._wait_for(f"running {name}")

    def tool_result(self, name: str, status: str, text: str) -> None:
        style = "dim" if status == "ok" else "yellow"
        self._line(f"  ↳ {_result_line(name, status, text)}", style=style)
        self._wait_for("waiting for the model")

    def end(self) -> None:
        self._settle_answer()
        self._area.waiting = None
        self._stop()

    def note(self, line: str) -> None:
        self._line(line, style="yellow")

    @contextmanager
    def paused(self) -> Iterator[None]:
        running = self._live is not None
        waiting, self._area.waiting = self._area.waiting, None
        self._stop()
        try:
            yield
        finally:
            if waiting is not None:
                self._area.waiting = _Waiting(waiting.label)
            if running:
                self._start()


def make_renderer(
    out: IO[str], err: IO[str], *, environ: Mapping[str, str] | None = None
) -> Renderer:
    """Rich Markdown when ``out`` is a terminal and ``NO_COLOR`` is unset; plain otherwise."""
    env = os.environ if environ is None else environ
    if out.isatty() and not env.get("NO_COLOR") and env.get("TERM") != "dumb":
        return RichRenderer(out, err)
    return PlainRenderer(out, err)


async def stream_turn(
    agent: Agent,
    prompt: str,
    renderer: Renderer,
    *,
    signal: CancelSignal | None = None,
) -> RunResult[Any]:
    """Stream one run of ``agent`` through ``renderer``; the run's result when it ends.

    A tool call is shown once its arguments are complete (when its result or the end of the
    model's reply arrives).  ``signal`` cancels the run (the result is then ``interrupted``).
    """
    from agentrig.llm import TextDelta, ToolCallDelta, ToolCallStart, ToolResultChunk

    stream = agent.stream(prompt, signal=signal)
    calls: dict[int, list[str]] = {}

    def flush_calls() -> None:
        for name, *parts in calls.values():
            renderer.tool_call(name, "".join(parts))
        calls.clear()

    renderer.begin()
    try:
        async for chunk in stream:
            if isinstance(chunk, TextDelta):
                renderer.text(chunk.text)
            elif isinstance(chunk, ToolCallStart):
                calls[chunk.index] = [chunk.name]
            elif isinstance(chunk, ToolCallDelta) and chunk.index in calls:
                calls[chunk.index].append(chunk.arguments)
            elif isinstance(chunk, ToolResultChunk):
                flush_calls()
                renderer.tool_result(chunk.name, chunk.status, chunk.text)
            else:  # usage, finish: the model's reply is complete, so are its calls
                flush_calls()
        flush_calls()
    finally:
        renderer.end()
    return stream.result
