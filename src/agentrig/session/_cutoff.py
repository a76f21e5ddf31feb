"""Closing a turn the process never finished: the repair a resumed session needs first.

A process that stops between a model's tool call and that call's result (killed, out of
power, out of memory) leaves a log whose last turn has no ``turn/end`` and calls without a
result.  Sent as it is, the next request would carry a call without its result, which every
provider refuses and no model should have to explain.  :func:`find_cut_off_turn` finds that
turn and the events that close it: a "not executed: the process stopped" result for each
call without one, then ``turn/end`` with reason ``interrupted``.  Nothing is guessed about
whether a call's effect happened -- the result says it was not *recorded* as executed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import attrs

from agentrig.llm import ToolCallBlock, ToolMessage
from agentrig.session._events import (
    AssistantMessageEvent,
    SessionEvent,
    SessionEventData,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
)

__all__ = ["CUT_OFF_CODE", "CUT_OFF_TEXT", "CutOffTurn", "find_cut_off_turn"]

#: The result text recorded for a call the stopped process never answered.
CUT_OFF_TEXT = "not executed: the process stopped"
#: The ``error.code`` of the ``turn/end`` that closes a cut-off turn.
CUT_OFF_CODE = "session.cut_off"


@attrs.frozen(slots=True)
class CutOffTurn:
    """The last turn of a log, left open by a process that stopped."""

    turn: int
    #: calls of the turn that have no result, in the order the model made them
    unanswered: tuple[ToolCallBlock, ...]

    def closing_events(self) -> tuple[SessionEventData, ...]:
        """What to append before anything new is sent: the missing results, then turn/end."""
        results = tuple(
            ToolResultEvent(
                message=ToolMessage.of(call.id, call.name, CUT_OFF_TEXT, status="not_executed")
            )
            for call in self.unanswered
        )
        why = "the process stopped before the turn finished"
        end = TurnEnd(
            turn=self.turn,
            reason="interrupted",
            error={"code": CUT_OFF_CODE, "message": why},
            detail=why,
        )
        return (*results, end)

    def describe(self) -> str:
        """One line for a person: which turn, and how many calls it left unanswered."""
        calls = len(self.unanswered)
        detail = (
            f"; {calls} tool call(s) without a result were recorded as not executed"
            if calls
            else ""
        )
        return f"turn {self.turn} was cut off when the process stopped{detail}"


def find_cut_off_turn(events: Sequence[SessionEvent]) -> CutOffTurn | None:
    """The last turn if it started and never ended (``None`` when the log is settled).

    Provider call ids are matched within the turn only: a provider may reuse an id in
    another turn, and a result answers the earliest call of its id still unanswered.
    """
    turn: int | None = None
    calls: list[ToolCallBlock] = []
    answered: Counter[str] = Counter()
    for event in events:
        data = event.data
        if isinstance(data, TurnStart):
            turn, calls, answered = data.turn, [], Counter()
        elif isinstance(data, TurnEnd):
            turn = None
        elif turn is not None and isinstance(data, AssistantMessageEvent):
            calls.extend(b for b in data.message.content if isinstance(b, ToolCallBlock))
        elif turn is not None and isinstance(data, ToolResultEvent):
            answered[data.message.call_id] += 1
    if turn is None:
        return None
    unanswered: list[ToolCallBlock] = []
    for call in calls:
        if answered[call.id] > 0:
            answered[call.id] -= 1
        else:
            unanswered.append(call)
    return CutOffTurn(turn, tuple(unanswered))
