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


# Only "\n" line ends: the decoder's event-at-a-time path, with every event shape it must
# hand over to line parsing (comments, names, ids, multi-line data, blank-line runs) and a
# trailing event of two unterminated lines.
LF_BODY = (
    'data: {"n": 1}\n\n'
    "data:tight\n\n"
    ": comment\n"
    "data: after comment\n\n"
    "\n\n"
    "event: ping\n"
    "data: named\n\n"
    "data: one\n"
    "data: two\n\n"
    "id: 9\n"
    "data: with id\n\n"
    "data:\n\n"
    "retry: 100\n\n"
    "data: tail one\n"
    "data: tail two"
)
LF_EXPECTED = [
    (None, '{"n": 1}'),
    (None, "tight"),
    (None, "after comment"),
    ("ping", "named"),
    (None, "one\ntwo"),
    (None, "with id"),
    (None, ""),
    (None, "tail one\ntail two"),
]


def test_newline_only_bodies_frame_the_same_events_however_cut() -> None:
    for cut in range(len(LF_BODY) + 1):
        for step in (1, 2, 7, len(LF_BODY)):
            decoder = SSEDecoder()
            pieces = [LF_BODY[:cut]] + [
                LF_BODY[i : i + step] for i in range(cut, len(LF_BODY), step)
            ]
            events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.flush()
            assert [(e.event, e.data) for e in events] == LF_EXPECTED, (cut, step)


def test_a_carriage_return_arriving_mid_body_keeps_the_framing() -> None:
    decoder = SSEDecoder()
    events = decoder.feed("data: a\n\ndata: b\n")  # an unfinished event, "\n" only so far
    events += decoder.feed("data: c\r\n\r\ndata: d\n\n")
    events += decoder.flush()
    assert [(e.event, e.data) for e in events] == [(None, "a"), (None, "b\nc"), (None, "d")]
