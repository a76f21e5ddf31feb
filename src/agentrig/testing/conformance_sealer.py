"""Conformance suite for :class:`~agentrig.sealing.Sealer` implementations.

Inherit :class:`SealerConformance` in a test class of your own and provide two pytest
fixtures over the *same* key pair:

* ``sealer`` -- an unlocked sealer (it can open and make authorship tags);
* ``locked_sealer`` -- a sealer holding only the public key.

::

    import pytest
    from agentrig.testing.conformance_sealer import SealerConformance

    class TestMySealer(SealerConformance):
        @pytest.fixture
        def sealer(self, tmp_path):
            return MySealer(tmp_path / "keys")

        @pytest.fixture
        def locked_sealer(self, sealer, tmp_path):
            return MySealer(tmp_path / "keys", locked=True)

        def sensitive_markers(self, sealer):
            return [str(sealer.key_path), sealer.secret_key_bytes]

The suite seals with the kinds named by the class attributes (the built-in ones by
default, see :data:`agentrig.sealing.BUILTIN_KINDS`); override them if your sealer uses a
registry without those.  :meth:`SealerConformance.sensitive_markers` lists what no error may
carry besides the plaintext (key bytes, the key directory) -- override it.

Importing this module has no side effect: it registers no plugin or fixture and does not
import pytest.
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial

from agentrig.sealing import (
    CorruptError,
    KindClassError,
    LockedError,
    Sealer,
    SealerError,
    UnclassifiedKindError,
    UnsupportedFramingError,
    framing,
)

__all__ = ["SealerConformance", "assert_leaks_nothing", "expect_error"]

_OWNER = "owner-a"
_OTHER_OWNER = "owner-b"
_MARKER = b"PLAINTEXT-MARKER-7f3a"


def expect_error(error: type[SealerError], action: Callable[[], object], what: str) -> SealerError:
    """Run ``action``; assert it raises ``error`` (exactly that class or a subclass)."""
    try:
        result = action()
    except error as exc:
        return exc
    except SealerError as exc:
        raise AssertionError(
            f"{what}: expected {error.__name__}, got {type(exc).__name__}: {exc}"
        ) from exc
    raise AssertionError(f"{what}: expected {error.__name__}, but it returned {result!r}")


def _renderings(marker: str | bytes) -> list[str]:
    if isinstance(marker, str):
        return [marker] if marker else []
    if not marker:
        return []
    out = [repr(marker)[2:-1], marker.hex(), base64.b64encode(marker).decode("ascii")]
    with contextlib.suppress(UnicodeDecodeError):
        out.append(marker.decode("utf-8"))
    return out


def assert_leaks_nothing(exc: BaseException, markers: Iterable[str | bytes]) -> None:
    """Assert that no marker shows in ``str``, ``repr``, ``args``, attributes or cause of ``exc``.

    Byte markers are searched as text, as ``repr`` text, as hex and as base64.
    """
    texts = [str(exc), repr(exc), repr(exc.args), repr(getattr(exc, "__dict__", {}))]
    texts.append(repr(getattr(exc, "__notes__", [])))
    for value in (*exc.args, *getattr(exc, "__dict__", {}).values()):
        if isinstance(value, bytes | bytearray):
            texts.append(bytes(value).hex())
    haystack = "\n".join(texts)
    for marker in markers:
        for rendering in _renderings(marker):
            assert rendering not in haystack, (
                f"{type(exc).__name__} carries sensitive data ({rendering[:12]}...)"
            )
    assert exc.__cause__ is None, f"{type(exc).__name__} chains a cause that may carry data"
    assert exc.__context__ is None or exc.__suppress_context__, (
        f"{type(exc).__name__} shows its context, which may carry data"
    )


def _flip(data: bytes, index: int) -> bytes:
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


def _windows(data: bytes, size: int) -> set[bytes]:
    return {data[i : i + size] for i in range(len(data) - size + 1)}


class SealerConformance:
    """The sealer contract as tests.  Provide ``sealer`` and ``locked_sealer`` fixtures."""

    whole_kind = "checkpoint"
    other_whole_kind = "tool.spill"
    append_kind = "session.event"
    other_append_kind = "log.line"
    unclassified_kind = "conformance.never-classified"

    def sensitive_markers(self, sealer: Sealer) -> Sequence[str | bytes]:
        """Key material and paths no error may carry (override; the plaintext is added)."""
        return ()

    def _markers(self, sealer: Sealer) -> list[str | bytes]:
        return [_MARKER, *self.sensitive_markers(sealer)]

    # -- the port's shape ----------------------------------------------------------------

    def test_conformance_is_a_sealer(self, sealer: Sealer, locked_sealer: Sealer) -> None:
        for candidate in (sealer, locked_sealer):
            assert isinstance(candidate, Sealer), f"{type(candidate).__name__} is not a Sealer"
            assert isinstance(candidate.name, str)
            assert candidate.name, "a sealer needs a non-empty name"
            assert isinstance(candidate.describe(), str)
            assert candidate.describe().strip(), "describe() must say something"
        assert sealer.unlocked is True
        assert locked_sealer.unlocked is False

    # -- whole artifacts -----------------------------------------------------------------

    def test_conformance_round_trip(self, sealer: Sealer) -> None:
        for plaintext in (b"", b"x", _MARKER, os.urandom(70_000)):
            sealed = sealer.seal(self.whole_kind, _OWNER, plaintext)
            assert sealer.open(self.whole_kind, _OWNER, sealed) == plaintext

    def test_conformance_output_is_framed_and_hides_plaintext(self, sealer: Sealer) -> None:
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER * 4)
        assert framing.is_sealed(sealed)
        assert framing.classify(sealed) == "sealed"
        assert framing.read_header(sealed).storage == "whole"
        assert _MARKER not in sealed

    def test_conformance_moved_to_other_owner_does_not_open(self, sealer: Sealer) -> None:
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        expect_error(
            CorruptError,
            lambda: sealer.open(self.whole_kind, _OTHER_OWNER, sealed),
            "an artifact opened for another owner",
        )

    def test_conformance_other_kind_does_not_open(self, sealer: Sealer) -> None:
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        expect_error(
            CorruptError,
            lambda: sealer.open(self.other_whole_kind, _OWNER, sealed),
            "a whole artifact opened as another whole kind",
        )
        expect_error(
            CorruptError,
            lambda: sealer.open(self.append_kind, _OWNER, sealed),
            "a whole artifact opened as an append kind",
        )

    def test_conformance_truncated_does_not_open(self, sealer: Sealer) -> None:
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        for length in range(len(sealed)):
            expect_error(
                CorruptError,
                partial(sealer.open, self.whole_kind, _OWNER, sealed[:length]),
                f"an artifact truncated to {length} of {len(sealed)} bytes",
            )
        expect_error(
            CorruptError,
            lambda: sealer.open(self.whole_kind, _OWNER, sealed + b"\x00"),
            "an artifact with a byte appended",
        )

    def test_conformance_bit_flips_do_not_open(self, sealer: Sealer) -> None:
        for tagged in (False, True):
            sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER, author_tag=tagged)
            for index in range(len(sealed)):
                expect_error(
                    CorruptError,
                    partial(sealer.open, self.whole_kind, _OWNER, _flip(sealed, index)),
                    f"an artifact (tagged={tagged}) with a bit flipped at byte {index}",
                )

    def test_conformance_plaintext_does_not_open(self, sealer: Sealer) -> None:
        for data in (b"", _MARKER, b'{"type": "turn/start"}\n'):
            expect_error(
                CorruptError,
                partial(sealer.open, self.whole_kind, _OWNER, data),
                "plaintext given to open()",
            )

    def test_conformance_newer_framing_version_is_sealed_but_unsupported(
        self, sealer: Sealer
    ) -> None:
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        future = sealed[:8] + (0xFFFE).to_bytes(2, "big") + sealed[10:]
        assert framing.is_sealed(future)
        assert framing.classify(future) == "unsupported"
        exc = expect_error(
            UnsupportedFramingError,
            lambda: sealer.open(self.whole_kind, _OWNER, future),
            "an artifact in a newer framing version",
        )
        assert isinstance(exc, CorruptError)

    def test_conformance_each_whole_artifact_has_its_own_key(self, sealer: Sealer) -> None:
        first = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        second = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        assert first != second, "two seals of the same plaintext must differ"
        a, b = framing.read_header(first), framing.read_header(second)
        assert a.key_block != b.key_block
        shared = _windows(a.key_block + a.nonce, 8) & _windows(b.raw, 8)
        assert not shared, "two whole artifacts share key material in their headers"

    # -- locked --------------------------------------------------------------------------

    def test_conformance_locked_seals_but_does_not_open(
        self, sealer: Sealer, locked_sealer: Sealer
    ) -> None:
        sealed = locked_sealer.seal(self.whole_kind, _OWNER, _MARKER)
        expect_error(
            LockedError,
            lambda: locked_sealer.open(self.whole_kind, _OWNER, sealed),
            "a locked sealer opening an intact artifact",
        )
        assert sealer.open(self.whole_kind, _OWNER, sealed) == _MARKER
        record = locked_sealer.open_appender(self.append_kind, _OWNER).seal_record(_MARKER)
        expect_error(
            LockedError,
            lambda: locked_sealer.open(self.append_kind, _OWNER, record),
            "a locked sealer opening an intact record",
        )
        assert sealer.open(self.append_kind, _OWNER, record) == _MARKER

    def test_conformance_locked_still_reports_broken_framing(
        self, sealer: Sealer, locked_sealer: Sealer
    ) -> None:
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        for broken in (sealed[:5], b"plain text", sealed[:8] + b"\x00"):
            expect_error(
                CorruptError,
                partial(locked_sealer.open, self.whole_kind, _OWNER, broken),
                "a locked sealer given a broken framing",
            )

    # -- append kinds --------------------------------------------------------------------

    def test_conformance_append_records_share_a_key_and_open_alone(self, sealer: Sealer) -> None:
        appender = sealer.open_appender(self.append_kind, _OWNER)
        assert appender.kind == self.append_kind
        assert appender.owner_id == _OWNER
        plaintexts = [b"record-%d" % i for i in range(5)]
        records = [appender.seal_record(p) for p in plaintexts]
        headers = [framing.read_header(r) for r in records]
        assert all(h.storage == "append" for h in headers)
        assert len({h.key_block for h in headers}) == 1, "one writer's records share one key"
        assert len(set(records)) == len(records)
        for plaintext, record in reversed(list(zip(plaintexts, records, strict=True))):
            assert sealer.open(self.append_kind, _OWNER, record) == plaintext

    def test_conformance_writers_do_not_share_keys(self, sealer: Sealer) -> None:
        one = sealer.open_appender(self.append_kind, _OWNER).seal_record(_MARKER)
        two = sealer.open_appender(self.append_kind, _OWNER).seal_record(_MARKER)
        assert framing.read_header(one).key_block != framing.read_header(two).key_block

    def test_conformance_records_are_bound(self, sealer: Sealer) -> None:
        record = sealer.open_appender(self.append_kind, _OWNER).seal_record(_MARKER)
        for kind, owner in (
            (self.append_kind, _OTHER_OWNER),
            (self.other_append_kind, _OWNER),
            (self.whole_kind, _OWNER),
        ):
            expect_error(
                CorruptError,
                partial(sealer.open, kind, owner, record),
                f"a record opened as {kind!r} for {owner!r}",
            )
        for index in range(len(record)):
            expect_error(
                CorruptError,
                partial(sealer.open, self.append_kind, _OWNER, _flip(record, index)),
                f"a record with a bit flipped at byte {index}",
            )

    # -- classification ------------------------------------------------------------------

    def test_conformance_unclassified_kind_is_refused(self, sealer: Sealer) -> None:
        kind = self.unclassified_kind
        expect_error(UnclassifiedKindError, lambda: sealer.seal(kind, _OWNER, _MARKER), "seal()")
        expect_error(
            UnclassifiedKindError, lambda: sealer.open_appender(kind, _OWNER), "open_appender()"
        )
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        expect_error(UnclassifiedKindError, lambda: sealer.open(kind, _OWNER, sealed), "open()")

    def test_conformance_kind_used_against_its_class_is_refused(self, sealer: Sealer) -> None:
        expect_error(
            KindClassError,
            lambda: sealer.seal(self.append_kind, _OWNER, _MARKER),
            "seal() of an append kind",
        )
        expect_error(
            KindClassError,
            lambda: sealer.open_appender(self.whole_kind, _OWNER),
            "open_appender() of a whole kind",
        )

    # -- authorship ----------------------------------------------------------------------

    def test_conformance_author_tags_when_unlocked(self, sealer: Sealer) -> None:
        tagged = sealer.seal(self.whole_kind, _OWNER, _MARKER, author_tag=True)
        untagged = sealer.seal(self.whole_kind, _OWNER, _MARKER)
        assert sealer.open(self.whole_kind, _OWNER, tagged) == _MARKER
        assert sealer.verify_author(self.whole_kind, _OWNER, tagged) is True
        assert sealer.verify_author(self.whole_kind, _OWNER, untagged) is False
        record = sealer.open_appender(self.append_kind, _OWNER, author_tag=True).seal_record(b"r")
        assert sealer.verify_author(self.append_kind, _OWNER, record) is True
        expect_error(
            CorruptError,
            lambda: sealer.verify_author(self.whole_kind, _OTHER_OWNER, tagged),
            "verify_author() for another owner",
        )

    def test_conformance_no_author_tags_when_locked(self, locked_sealer: Sealer) -> None:
        expect_error(
            LockedError,
            lambda: locked_sealer.seal(self.whole_kind, _OWNER, _MARKER, author_tag=True),
            "seal(author_tag=True) while locked",
        )
        expect_error(
            LockedError,
            lambda: locked_sealer.open_appender(self.append_kind, _OWNER, author_tag=True),
            "open_appender(author_tag=True) while locked",
        )
        sealed = locked_sealer.seal(self.whole_kind, _OWNER, _MARKER)
        expect_error(
            LockedError,
            lambda: locked_sealer.verify_author(self.whole_kind, _OWNER, sealed),
            "verify_author() while locked",
        )

    def test_conformance_on_unlock_when_already_unlocked(self, sealer: Sealer) -> None:
        calls: list[str] = []
        remove = sealer.on_unlock(lambda: calls.append("unlocked"))
        assert calls == ["unlocked"], "an unlocked sealer calls on_unlock callbacks at once"
        assert callable(remove)
        remove()

    # -- errors --------------------------------------------------------------------------

    def test_conformance_errors_leak_nothing(self, sealer: Sealer, locked_sealer: Sealer) -> None:
        markers = self._markers(sealer)
        sealed = sealer.seal(self.whole_kind, _OWNER, _MARKER, author_tag=True)
        record = sealer.open_appender(self.append_kind, _OWNER).seal_record(_MARKER)
        future = sealed[:8] + (0xFFFE).to_bytes(2, "big") + sealed[10:]
        failures: list[tuple[type[SealerError], Callable[[], object]]] = [
            (CorruptError, lambda: sealer.open(self.whole_kind, _OTHER_OWNER, sealed)),
            (CorruptError, lambda: sealer.open(self.other_whole_kind, _OWNER, sealed)),
            (CorruptError, lambda: sealer.open(self.whole_kind, _OWNER, _flip(sealed, -70))),
            (CorruptError, lambda: sealer.open(self.whole_kind, _OWNER, _flip(sealed, -1))),
            (CorruptError, lambda: sealer.open(self.whole_kind, _OWNER, sealed[:40])),
            (CorruptError, lambda: sealer.open(self.whole_kind, _OWNER, _MARKER)),
            (CorruptError, lambda: sealer.open(self.append_kind, _OTHER_OWNER, record)),
            (CorruptError, lambda: sealer.open(self.whole_kind, _OWNER, future)),
            (LockedError, lambda: locked_sealer.open(self.whole_kind, _OWNER, sealed)),
            (LockedError, lambda: locked_sealer.open(self.append_kind, _OWNER, record)),
            (
                LockedError,
                lambda: locked_sealer.seal(self.whole_kind, _OWNER, _MARKER, author_tag=True),
            ),
        ]
        for error, action in failures:
            assert_leaks_nothing(expect_error(error, action, "a failing open"), markers)
