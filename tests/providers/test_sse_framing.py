"""The plugins' incremental SSE framing gives the same events however the body is cut."""

from __future__ import annotations

from agentrig.llm.http import SSEDecoder

BODY = (
    ": keep-alive comment\r\n"
    "event: message\r\n"
    'data: {"a": 1}\r\n'
    "\r\n"
    "data: first line\n"
    "data: second line\n"
    "\n"
    "id: 7\r"
    "data:no-space\r"
    "\r"
    "data: [DONE]\n\n"
    "data: trailing without blank line"
)
EXPECTED = [
    ("message", '{"a": 1}'),
    (None, "first line\nsecond line"),
    (None, "no-space"),
    (None, "[DONE]"),
    (None, "trailing without blank line"),
]


def test_every_cut_of_the_body_frames_the_same_events() -> None:
    # the one SSE framing both provider plugins use (agentrig.llm.http)
    decoder_class = SSEDecoder
    for cut in range(len(BODY) + 1):
        for step in (1, 3, len(BODY)):
            decoder = decoder_class()
            pieces = [BODY[:cut]] + [BODY[i : i + step] for i in range(cut, len(BODY), step)]
            events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.flush()
            assert [(e.event, e.data) for e in events] == EXPECTED, (cut, step)
