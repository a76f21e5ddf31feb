"""The terminal renderer in-process: a long streamed answer ends up on the screen once, in order.

The renderer writes to a stand-in terminal; pyte replays what it wrote, on a screen taller
than the answer, so every line that scrolled is still visible to the assertions.
"""

from __future__ import annotations

import io

import pyte
import pytest

from agentrig.cli._render import PlainRenderer, RichRenderer, make_renderer


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _screen(raw: str, rows: int = 400) -> list[str]:
    screen = pyte.Screen(80, rows)
    pyte.Stream(screen).feed(raw.replace("\n", "\r\n"))
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.mark.parametrize("redraw_every", [0.0, 0.05], ids=["eager", "throttled"])
def test_a_long_answer_streamed_in_small_pieces_is_shown_once_in_order(
    redraw_every: float,
) -> None:
    out = _Terminal()
    renderer = RichRenderer(out, out, redraw_every=redraw_every)
    # a list, then a code block whose opening fence reflows what follows it until it closes
    answer = "".join(f"- item number {n}\n" for n in range(60))
    answer += "\n```\n" + "".join(f"code line {n}\n" for n in range(20)) + "```\n"
    renderer.begin()
    for start in range(0, len(answer), 7):
        renderer.text(answer[start : start + 7])
    renderer.end()

    shown = [line.strip() for line in _screen(out.getvalue()) if line.strip()]
    assert shown == [
        *(f"• item number {n}" for n in range(60)),
        *(f"code line {n}" for n in range(20)),
    ]


def test_tool_lines_sit_between_the_answer_parts() -> None:
    out = _Terminal()
    renderer = RichRenderer(out, out)
    renderer.begin()
    renderer.text("Let me **look**.")
    renderer.tool_call("lookup", '{"q": "' + "x" * 300 + '"}')
    renderer.tool_result("lookup", "ok", "found\nit")
    renderer.text("Found it.")
    renderer.end()

    shown = _screen(out.getvalue())
    assert shown[0] == "Let me look."
    assert shown[1].startswith('⚙ lookup({"q": "xxx')
    assert len(shown[1]) <= 80  # cut to the terminal's width
    assert shown[2] == "  ↳ lookup -> ok: found it"
    assert shown[3] == "Found it."
    assert len(shown) == 4  # the status line left nothing behind


def test_no_color_or_a_pipe_gets_the_plain_renderer() -> None:
    terminal, pipe = _Terminal(), io.StringIO()
    assert isinstance(make_renderer(terminal, terminal, environ={}), RichRenderer)
    assert isinstance(make_renderer(terminal, terminal, environ={"NO_COLOR": "1"}), PlainRenderer)
    assert isinstance(make_renderer(terminal, terminal, environ={"TERM": "dumb"}), PlainRenderer)
    assert isinstance(make_renderer(pipe, pipe, environ={}), PlainRenderer)
    # NO_COLOR counts only when it is not empty (no-color.org)
    assert isinstance(make_renderer(terminal, terminal, environ={"NO_COLOR": ""}), RichRenderer)
