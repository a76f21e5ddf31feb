"""Conformance suite for :class:`~agentrig.session.SessionStore` implementations.

Inherit :class:`SessionStoreConformance` in a test class of your own and provide a
``make_session_store`` pytest fixture: a function that builds a store over the *same* storage
each time it is called (the suite opens a second instance to check that it reads what the
first wrote, and that it sees the first one's writer)::

    import pytest
    from agentrig.testing.conformance_session_store import SessionStoreConformance

    class TestMyStore(SessionStoreConformance):
        @pytest.fixture
        def make_session_store(self, tmp_path):
            return lambda: MyStore(tmp_path / "sessions")

The inherited ``test_conformance_*`` coroutines request anyio's ``anyio_backend`` fixture, so
they run on whichever backends your ``anyio_backend`` fixture names.  Stores are closed by the
suite.  A failure names what is wrong: a loaded event that differs from the appended one is
reported field by field.  What only you can provoke -- a crash mid-write, a full disk -- is
for your own tests (see ``docs/session-stores.md``).

Importing this module has no side effect: it registers no plugin or fixture.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from agentrig.errors import InvalidIdError
from agentrig.ids import session_id as _session_id
from agentrig.llm import AssistantMessage, TextBlock, ToolCallBlock, ToolMessage, UserMessage
from agentrig.session import (
    AssistantMessageEvent,
    Session,
    SessionEvent,
    SessionStore,
    SessionStoreError,
    SessionWriter,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
    WriterConflictError,
    parse_event,
)
from agentrig.testing._diff import mismatch

__all__ = ["PLUGIN_VARIANT_EVENT", "SessionStoreConformance", "assert_same_events", "sample_log"]

StoreFactory = Callable[[], SessionStore]

#: A persisted event of a plugin variant no installed plugin knows: kept and written back as is.
PLUGIN_VARIANT_EVENT: dict[str, Any] = {
    "seq": 2,
    "time": 1722.25,
    "data": {
        "type": "acme/bookmark",
        "label": "héllo — wörld",
        "nested": {"items": [1, 2.5, None, True, "x"], "empty": {}},
        "zeta": 0,
        "alpha": [],
    },
}


def sample_log(session_id: str, turns: int = 2) -> list[SessionEvent]:
    """A realistic log: per turn a user message, a tool call and its result, an answer."""
    session = Session(_session_id(session_id))
    for turn in range(1, turns + 1):
        call = ToolCallBlock(id=f"call_{turn}", name="lookup", arguments={"q": f"ünï {turn}"})
        session.append(TurnStart(turn=turn))
        session.append(UserMessageEvent(message=UserMessage.of(f"question {turn} — 漢字 🔑")))
        session.append(AssistantMessageEvent(message=AssistantMessage(content=(call,))))
        session.append(ToolCallEvent(call=call, invocation_id=f"{turn}.1.0"))
        session.append(
            ToolResultEvent(message=ToolMessage.of(call.id, call.name, "found\nit"), duration_ms=2)
        )
        answer = AssistantMessage(content=(TextBlock(text=f"answer {turn}"),), stop_reason="end")
        session.append(AssistantMessageEvent(message=answer))
        session.append(TurnEnd(turn=turn, reason="completed"))
    return list(session.events)


def assert_same_events(expected: Sequence[SessionEvent], loaded: Sequence[SessionEvent]) -> None:
    """Assert ``loaded`` equals ``expected``, naming every differing field when not."""
    problem = mismatch(
        "the appended events (expected) and the loaded ones (got)",
        [e.model_dump(mode="json") for e in expected],
        [e.model_dump(mode="json") for e in loaded],
    )
    assert problem is None, problem


class SessionStoreConformance:
    """The session-store contract as tests.  Provide a ``make_session_store`` fixture."""

    @asynccontextmanager
    async def _store(self, make: StoreFactory) -> AsyncIterator[SessionStore]:
        store = make()
        assert isinstance(store, SessionStore), (
            f"make_session_store built {type(store).__name__}, which does not implement the "
            "SessionStore protocol (open_writer, load, exists, list_sessions, aclose)"
        )
        try:
            yield store
        finally:
            await store.aclose()

    async def _write(
        self, store: SessionStore, session_id: str, *batches: Sequence[SessionEvent]
    ) -> None:
        writer = await store.open_writer(session_id)
        try:
            for batch in batches:
                await writer.append(batch)
        finally:
            await writer.aclose()

    # ---- round trip -------------------------------------------------------------------------

    async def test_conformance_is_a_session_store(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        async with self._store(make_session_store) as store:
            writer = await store.open_writer("ses_conformance_kind")
            try:
                assert isinstance(writer, SessionWriter), (
                    f"open_writer returned {type(writer).__name__}, which does not implement "
                    "the SessionWriter protocol (append, aclose)"
                )
            finally:
                await writer.aclose()

    async def test_conformance_round_trip(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        events = sample_log("ses_conformance_round")
        async with self._store(make_session_store) as store:
            # in several batches, as an agent appends them
            await self._write(store, "ses_conformance_round", events[:1], events[1:6], events[6:])
            report = await store.load("ses_conformance_round")
        assert report.session_id == "ses_conformance_round"
        assert not report.damaged, f"an intact log loaded as damaged: {report.detail}"
        assert_same_events(events, report.events)

    async def test_conformance_another_instance_reads_it(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        events = sample_log("ses_conformance_reopen", turns=1)
        async with self._store(make_session_store) as first:
            await self._write(first, "ses_conformance_reopen", events)
        async with self._store(make_session_store) as second:
            assert await second.exists("ses_conformance_reopen"), (
                "a second store over the same storage does not see the session"
            )
            assert_same_events(events, (await second.load("ses_conformance_reopen")).events)

    async def test_conformance_appending_continues_a_log(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        events = sample_log("ses_conformance_more", turns=2)
        half = len(events) // 2
        async with self._store(make_session_store) as store:
            await self._write(store, "ses_conformance_more", events[:half])
        async with self._store(make_session_store) as store:
            await self._write(store, "ses_conformance_more", events[half:])
            assert_same_events(events, (await store.load("ses_conformance_more")).events)

    async def test_conformance_sessions_are_independent(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        one, two = sample_log("ses_conformance_one", 1), sample_log("ses_conformance_two", 2)
        async with self._store(make_session_store) as store:
            await self._write(store, "ses_conformance_one", one)
            await self._write(store, "ses_conformance_two", two)
            assert_same_events(one, (await store.load("ses_conformance_one")).events)
            assert_same_events(two, (await store.load("ses_conformance_two")).events)

    async def test_conformance_plugin_variants_are_written_back_unchanged(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        known = sample_log("ses_conformance_variant", turns=1)
        raw = [
            known[0].model_dump(mode="json"),
            PLUGIN_VARIANT_EVENT,
            *({**e.model_dump(mode="json"), "seq": e.seq + 1} for e in known[1:]),
        ]
        events = [parse_event(r) for r in raw]
        async with self._store(make_session_store) as store:
            await self._write(store, "ses_conformance_variant", events)
            loaded = (await store.load("ses_conformance_variant")).events
        problem = mismatch(
            "the written raw events (expected) and the loaded ones (got)",
            raw,
            [e.model_dump(mode="json") for e in loaded],
        )
        assert problem is None, problem

    # ---- what exists ------------------------------------------------------------------------

    async def test_conformance_exists_and_list_only_sessions_with_events(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        async with self._store(make_session_store) as store:
            assert await store.list_sessions() == (), "a new store lists sessions"
            assert not await store.exists("ses_conformance_a")
            await self._write(store, "ses_conformance_a", sample_log("ses_conformance_a", 1))
            await self._write(store, "ses_conformance_idle")  # opened, nothing written
            assert await store.exists("ses_conformance_a")
            assert not await store.exists("ses_conformance_idle"), (
                "a session whose writer wrote nothing must not exist"
            )
            listed = await store.list_sessions()
        assert listed == ("ses_conformance_a",), f"list_sessions() returned {listed!r}"

    async def test_conformance_loading_a_missing_session_raises(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        refusal: SessionStoreError | None = None
        async with self._store(make_session_store) as store:
            try:
                report = await store.load("ses_conformance_missing")
            except SessionStoreError as exc:
                refusal = exc
            else:
                raise AssertionError(
                    "load() of a session never written must raise SessionStoreError, "
                    f"not return {len(report.events)} event(s)"
                )
        assert "ses_conformance_missing" in str(refusal), (
            f"the error for a missing session does not name it: {refusal}"
        )

    async def test_conformance_an_invalid_session_id_is_refused(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        async with self._store(make_session_store) as store:
            for bad in ("../escape", "a/b", ""):
                try:
                    writer = await store.open_writer(bad)
                except InvalidIdError:
                    continue
                await writer.aclose()
                raise AssertionError(
                    f"open_writer({bad!r}) was accepted; validate ids with "
                    "agentrig.ids.session_id before touching storage"
                )

    # ---- writers ----------------------------------------------------------------------------

    async def test_conformance_a_closed_writer_refuses_to_append(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        async with self._store(make_session_store) as store:
            writer = await store.open_writer("ses_conformance_closed")
            await writer.aclose()
            await writer.aclose()  # idempotent
            try:
                await writer.append(sample_log("ses_conformance_closed", 1))
            except SessionStoreError:
                pass
            else:
                raise AssertionError("a closed writer appended; it must raise SessionStoreError")
            assert not await store.exists("ses_conformance_closed")

    async def test_conformance_one_writer_per_session(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        events = sample_log("ses_conformance_busy", turns=2)
        half = len(events) // 2
        async with self._store(make_session_store) as store:
            first = await store.open_writer("ses_conformance_busy")
            await first.append(events[:half])
            for where, candidate in (("the same store", store), ("a second store", None)):
                async with self._maybe_other(make_session_store, candidate) as other:
                    try:
                        extra = await other.open_writer("ses_conformance_busy")
                    except WriterConflictError:
                        continue
                    await extra.aclose()
                    raise AssertionError(
                        f"a second writer of a session was opened through {where} while the "
                        "first was open; it must raise WriterConflictError"
                    )
            await first.aclose()
            second = await store.open_writer("ses_conformance_busy")  # free again
            await second.append(events[half:])
            await second.aclose()
            assert_same_events(events, (await store.load("ses_conformance_busy")).events)

    @asynccontextmanager
    async def _maybe_other(
        self, make: StoreFactory, given: SessionStore | None
    ) -> AsyncIterator[SessionStore]:
        if given is not None:
            yield given
            return
        async with self._store(make) as other:
            yield other

    async def test_conformance_closing_twice_is_harmless(
        self, make_session_store: StoreFactory, anyio_backend: str
    ) -> None:
        store = make_session_store()
        await store.aclose()
        await store.aclose()
