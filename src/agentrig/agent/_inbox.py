"""The inbox: two ordered lists of pending user messages an agent owns.

``next-turn`` holds input that starts a new turn; ``next-step`` holds input that enters the
current turn at its next step (steering, injected context).  Every mutation is recorded in
the session log as an ``agent/inbox/spliced`` event, so the pending queues can be rebuilt
from the log alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from agentrig.errors import AgentrigError
from agentrig.llm import UserMessage
from agentrig.session import InboxSpliced

__all__ = ["Inbox", "InboxError", "InboxTarget"]

InboxTarget = Literal["next-turn", "next-step"]
Cause = Literal["append", "prepend", "replace", "remove", "clear", "claim"]


class InboxError(AgentrigError, LookupError):
    """An inbox operation named a message that is not pending, or a duplicate id."""

    code = "inbox.invalid"
    category = "user"


class Inbox:
    """Pending input of one agent; ``record`` persists each splice."""

    def __init__(self, record: Callable[[InboxSpliced], None]) -> None:
        self._lists: dict[InboxTarget, list[UserMessage]] = {"next-turn": [], "next-step": []}
        self._record = record

    # ---- queries ---------------------------------------------------------------------------
    def pending(self, target: InboxTarget) -> tuple[UserMessage, ...]:
        return tuple(self._lists[target])

    def __len__(self) -> int:
        return len(self._lists["next-turn"]) + len(self._lists["next-step"])

    def has(self, target: InboxTarget) -> bool:
        return bool(self._lists[target])

    def _locate(self, message_id: str) -> tuple[InboxTarget, int]:
        for target, items in self._lists.items():
            for index, message in enumerate(items):
                if message.id == message_id:
                    return target, index
        raise InboxError(f"message {message_id!r} is not pending in the inbox")

    def _splice(
        self,
        target: InboxTarget,
        index: int,
        remove: int,
        insert: tuple[UserMessage, ...],
        cause: Cause,
    ) -> tuple[UserMessage, ...]:
        items = self._lists[target]
        pending_ids = {m.id for lst in self._lists.values() for m in lst}
        removed = tuple(items[index : index + remove])
        remaining = pending_ids - {m.id for m in removed}
        for message in insert:
            if message.id in remaining:
                raise InboxError(f"message {message.id!r} is already pending")
            remaining.add(message.id)
        items[index : index + remove] = insert
        self._record(
            InboxSpliced(
                target=target,
                index=index,
                removed=tuple(m.id for m in removed),
                inserted=insert,
                cause=cause,
            )
        )
        return removed

    # ---- mutations -----------------------------------------------------------------------
    def append(self, target: InboxTarget, message: UserMessage) -> None:
        self._splice(target, len(self._lists[target]), 0, (message,), "append")

    def prepend(self, target: InboxTarget, message: UserMessage) -> None:
        self._splice(target, 0, 0, (message,), "prepend")

    def replace(self, message_id: str, new: UserMessage) -> None:
        """Swap a pending message (wherever it is) for ``new``; identity may change."""
        target, index = self._locate(message_id)
        self._splice(target, index, 1, (new,), "replace")

    def remove(self, message_id: str) -> UserMessage:
        """Cancel a pending message."""
        target, index = self._locate(message_id)
        return self._splice(target, index, 1, (), "remove")[0]

    def clear(self, target: InboxTarget | None = None) -> tuple[UserMessage, ...]:
        """Cancel every pending message (of one list, or both)."""
        removed: tuple[UserMessage, ...] = ()
        for name in (target,) if target else ("next-turn", "next-step"):
            if self._lists[name]:
                removed += self._splice(name, 0, len(self._lists[name]), (), "clear")
        return removed

    def claim(self, *, turn_boundary: bool) -> tuple[UserMessage, ...]:
        """Take the next step's batch: all of ``next-step`` and, at a turn boundary, one
        ``next-turn`` message (which comes first)."""
        batch: tuple[UserMessage, ...] = ()
        if turn_boundary and self._lists["next-turn"]:
            batch += self._splice("next-turn", 0, 1, (), "claim")
        if self._lists["next-step"]:
            batch += self._splice("next-step", 0, len(self._lists["next-step"]), (), "claim")
        return batch

    def restore(self, event: InboxSpliced) -> None:
        """Re-apply a logged splice (rebuilding the inbox of a resumed session)."""
        items = self._lists[event.target]
        ids = set(event.removed)
        kept = [m for m in items if m.id not in ids]
        index = min(event.index, len(kept))
        kept[index:index] = list(event.inserted)
        self._lists[event.target] = kept
