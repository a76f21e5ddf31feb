"""Helpers of the session-store behaviour suite: build a built-in store, sample events.

The stores are built the way a runtime builds them -- through their ``agentrig.session_stores``
entry points (they are ordinary plugins registered by the core's own distribution), with the
options a ``[session_stores.<id>]`` table would give.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from agentrig.ids import SessionId
from agentrig.llm import AssistantMessage, TextBlock, UserMessage
from agentrig.session import (
    AssistantMessageEvent,
    Session,
    SessionEvent,
    SessionStore,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)

STORE_KINDS = ("jsonl", "sqlite")

#: Options of each kind, relative to the base directory (nested, to check every created
#: directory is owner-only).
STORE_OPTIONS: dict[str, dict[str, Any]] = {
    "jsonl": {"directory": "state/sessions"},
    "sqlite": {"path": "state/db/sessions.sqlite3"},
}

StoreFactory = Callable[[], SessionStore]


def build_store(kind: str, base_dir: Path, **options: Any) -> SessionStore:
    """Build a store of ``kind`` through its entry point, like a runtime composer does."""
    factory = entry_points(group="agentrig.session_stores")[kind].load()
    store: SessionStore = factory(
        {"id": "main", "options": {**STORE_OPTIONS[kind], **options}, "base_dir": base_dir}
    )
    assert isinstance(store, SessionStore)
    return store


def sample_events(session_id: str = "ses_sample", turns: int = 2) -> list[SessionEvent]:
    """A small realistic log: user message, assistant answer, turn boundaries."""
    session = Session(SessionId(session_id))
    for turn in range(1, turns + 1):
        session.append(TurnStart(turn=turn))
        session.append(UserMessageEvent(message=UserMessage.of(f"question {turn} — ünïcode")))
        session.append(
            AssistantMessageEvent(
                message=AssistantMessage(content=(TextBlock(text=f"answer {turn}"),))
            )
        )
        session.append(TurnEnd(turn=turn, reason="completed"))
    return list(session.events)
