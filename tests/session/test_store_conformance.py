"""The built-in session stores pass the session-store conformance suite (through their
entry points, as a runtime builds them); a broken store fails it naming what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from _store_support import StoreFactory, build_store

from agentrig.session import LoadReport, SessionEvent, SessionStore, SessionWriter
from agentrig.testing.conformance_session_store import SessionStoreConformance


class TestJsonlStoreConformance(SessionStoreConformance):
    @pytest.fixture
    def make_session_store(self, tmp_path: Path) -> StoreFactory:
        return lambda: build_store("jsonl", tmp_path)


class TestSqliteStoreConformance(SessionStoreConformance):
    @pytest.fixture
    def make_session_store(self, tmp_path: Path) -> StoreFactory:
        return lambda: build_store("sqlite", tmp_path)


# ---- a broken store fails with the field named ---------------------------------------------


class _TrimmingWriter:
    """Writes every text block stripped of trailing space: a subtle data loss."""

    def __init__(self, inner: SessionWriter) -> None:
        self.inner = inner

    async def append(self, events: Sequence[SessionEvent]) -> None:
        trimmed = []
        for event in events:
            raw = event.model_dump(mode="json")
            for block in raw["data"].get("message", {}).get("content", []):
                if block.get("type") == "text":
                    block["text"] = block["text"].rstrip("🔑 ")
            trimmed.append(SessionEvent.model_validate(raw))
        await self.inner.append(trimmed)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _TrimmingStore:
    def __init__(self, inner: SessionStore) -> None:
        self.inner = inner

    async def open_writer(self, session_id: str) -> SessionWriter:
        return _TrimmingWriter(await self.inner.open_writer(session_id))

    async def load(self, session_id: str) -> LoadReport:
        return await self.inner.load(session_id)

    async def exists(self, session_id: str) -> bool:
        return await self.inner.exists(session_id)

    async def list_sessions(self) -> tuple[str, ...]:
        return await self.inner.list_sessions()

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
async def test_a_store_that_alters_an_event_fails_naming_the_field(tmp_path: Path) -> None:
    suite = SessionStoreConformance()
    with pytest.raises(AssertionError) as caught:
        await suite.test_conformance_round_trip(
            lambda: _TrimmingStore(build_store("jsonl", tmp_path)), "asyncio"
        )
    message = str(caught.value)
    assert "differ in 2 field(s)" in message
    assert "[1].data.message.content[0].text: expected 'question 1 — 漢字 🔑', got" in message
