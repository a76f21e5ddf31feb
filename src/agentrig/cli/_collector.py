"""``agentrig run`` and ``chat`` start without the cyclic garbage collector (issue 37 point 6).

Starting either command creates about 90,000 tracked objects that live until the process
ends (classes, functions, validators, schemas) and leaves little garbage (about 4,000
objects in cycles).  The collector would walk the survivors again and again while they are
created, and all of them once more at exit: 8 % of the instructions of a cold one-shot run.
So when ``agentrig`` runs as the program, :func:`pause` turns collection off before the
command starts, and :func:`resume` -- called once the runtime is composed, or when the
command returns, whichever comes first -- moves every object made so far into the permanent
generation (:func:`gc.freeze`: never walked again, start-up's garbage kept until exit) and
turns collection back on, so the turn and a chat session are collected as usual.

``main(argv)`` called from code (tests, an embedding program) never pauses: freezing a host's
objects would keep its garbage for good.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False


def pause() -> None:
    """Turn the collector off for start-up (unless it is off already: then leave it)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what start-up made and turn the collector back on; no-op unless paused."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
