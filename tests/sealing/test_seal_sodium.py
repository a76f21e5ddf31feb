"""The ``sodium`` sealer plugin, loaded through its ``agentrig.sealers`` entry point."""

from __future__ import annotations

import base64
import json
import stat
import threading
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from agentrig.host import PathEscapeError, UnsafeExistingError
from agentrig.kernel import check_factory
from agentrig.sealing import (
    ArtifactKind,
    ArtifactKinds,
    CorruptError,
    LockedError,
    Sealer,
    SealerKeyError,
    UnclassifiedKindError,
    framing,
)
from agentrig.testing.conformance_sealer import (
    SealerConformance,
    assert_leaks_nothing,
    expect_error,
)

Factory = Callable[[dict[str, Any]], Any]


def _factory() -> Factory:
    factory: Factory = entry_points(group="agentrig.sealers")["sodium"].load()
    return factory


def _sealer(directory: Path, **options: Any) -> Any:
    return _factory()({"options": {"directory": str(directory), **options}})


def _secret_material(directory: Path) -> list[bytes | str]:
    document = json.loads((directory / "sealer.key").read_text())
    raw = [base64.b64decode(document["box"]), base64.b64decode(document["sign"])]
    return [*raw, document["box"], document["sign"]]


class TestSodiumConformance(SealerConformance):
    @pytest.fixture
    def key_dir(self, tmp_path: Path) -> Path:
        self.key_dir_path = tmp_path / "keys"
        return self.key_dir_path

    @pytest.fixture
    def sealer(self, key_dir: Path) -> Sealer:
        sealer: Sealer = _sealer(key_dir)
        return sealer

    @pytest.fixture
    def locked_sealer(self, sealer: Sealer, key_dir: Path) -> Sealer:
        locked: Sealer = _sealer(key_dir, locked=True)
        return locked

    def sensitive_markers(self, sealer: Sealer) -> Sequence[str | bytes]:
        return [str(self.key_dir_path), *_secret_material(self.key_dir_path)]


def test_entry_point_passes_the_factory_contract() -> None:
    factory = _factory()
    check_factory(factory)
    assert factory.options_model.__name__ == "SodiumOptions"  # type: ignore[attr-defined]


def test_keys_are_generated_owner_only_on_first_use(tmp_path: Path) -> None:
    directory = tmp_path / "state" / "keys"
    _sealer(directory)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert sorted(p.name for p in directory.iterdir()) == ["sealer.key", "sealer.pub"]
    for name in ("sealer.key", "sealer.pub"):
        assert stat.S_IMODE((directory / name).stat().st_mode) == 0o600


def test_later_sealers_reuse_the_keys(tmp_path: Path) -> None:
    first = _sealer(tmp_path / "keys")
    secret = (tmp_path / "keys" / "sealer.key").read_bytes()
    sealed = first.seal("checkpoint", "owner", b"data")
    second = _sealer(tmp_path / "keys")
    assert (tmp_path / "keys" / "sealer.key").read_bytes() == secret
    assert second.open("checkpoint", "owner", sealed) == b"data"


def test_concurrent_first_use_agrees_on_one_key_pair(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    sealers: list[Any] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def build() -> None:
        start.wait()
        try:
            sealers.append(_sealer(directory))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    sealed = [s.seal("checkpoint", "owner", b"x") for s in sealers]
    assert all(s.open("checkpoint", "owner", blob) == b"x" for s in sealers for blob in sealed)


def test_a_locked_sealer_needs_a_public_key(tmp_path: Path) -> None:
    with pytest.raises(SealerKeyError, match="no public key"):
        _sealer(tmp_path / "keys", locked=True)
    assert not (tmp_path / "keys" / "sealer.key").exists()


def test_create_off_without_keys_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SealerKeyError, match="create is off"):
        _sealer(tmp_path / "keys", create=False)


def test_a_wide_secret_key_file_is_refused(tmp_path: Path) -> None:
    _sealer(tmp_path / "keys")
    (tmp_path / "keys" / "sealer.key").chmod(0o644)
    with pytest.raises(SealerKeyError) as info:
        _sealer(tmp_path / "keys")
    assert isinstance(info.value.__cause__, UnsafeExistingError)


def test_a_symlinked_key_file_is_refused(tmp_path: Path) -> None:
    _sealer(tmp_path / "real")
    (tmp_path / "keys").mkdir(mode=0o700)
    (tmp_path / "keys" / "sealer.key").symlink_to(tmp_path / "real" / "sealer.key")
    with pytest.raises(SealerKeyError) as info:
        _sealer(tmp_path / "keys")
    assert isinstance(info.value.__cause__, UnsafeExistingError | PathEscapeError)


def test_mismatched_key_files_are_refused(tmp_path: Path) -> None:
    _sealer(tmp_path / "one")
    _sealer(tmp_path / "two")
    pub = tmp_path / "one" / "sealer.pub"
    pub.write_bytes((tmp_path / "two" / "sealer.pub").read_bytes())
    with pytest.raises(SealerKeyError, match="does not match"):
        _sealer(tmp_path / "one")


def test_a_damaged_key_file_is_refused_without_its_content(tmp_path: Path) -> None:
    _sealer(tmp_path / "keys")
    key = tmp_path / "keys" / "sealer.key"
    text = key.read_text()
    key.write_text(text[:-10])
    with pytest.raises(SealerKeyError) as info:
        _sealer(tmp_path / "keys")
    assert info.value.__cause__ is None
    assert_leaks_nothing(info.value, [text[40:60]])


def test_sealed_to_another_key_pair_is_corrupt(tmp_path: Path) -> None:
    sealed = _sealer(tmp_path / "one").seal("checkpoint", "owner", b"data")
    expect_error(
        CorruptError,
        lambda: _sealer(tmp_path / "two").open("checkpoint", "owner", sealed),
        "an artifact sealed to another key",
    )


def test_unlock_runs_the_callbacks_and_opens(tmp_path: Path) -> None:
    owner = _sealer(tmp_path / "keys")
    sealed = owner.seal("checkpoint", "o", b"data")
    locked = _sealer(tmp_path / "keys", locked=True)
    calls: list[str] = []
    locked.on_unlock(lambda: calls.append("first"))
    remove = locked.on_unlock(lambda: calls.append("removed"))
    remove()
    assert "locked" in locked.describe()
    expect_error(LockedError, lambda: locked.open("checkpoint", "o", sealed), "before unlock")
    locked.unlock()
    assert locked.unlocked
    assert calls == ["first"]
    assert locked.open("checkpoint", "o", sealed) == b"data"
    tagged = locked.seal("checkpoint", "o", b"data", author_tag=True)
    assert owner.verify_author("checkpoint", "o", tagged) is True


def test_unlock_without_a_secret_key_stays_locked(tmp_path: Path) -> None:
    _sealer(tmp_path / "owner")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    public = elsewhere / "sealer.pub"
    public.write_bytes((tmp_path / "owner" / "sealer.pub").read_bytes())
    public.chmod(0o600)
    locked = _sealer(elsewhere, locked=True)
    sealed = locked.seal("checkpoint", "o", b"data")  # a public key is enough to seal
    exc = expect_error(LockedError, locked.unlock, "unlock() with no secret key")
    assert_leaks_nothing(exc, [str(elsewhere)])
    assert not locked.unlocked
    assert _sealer(tmp_path / "owner").open("checkpoint", "o", sealed) == b"data"


def test_lock_forgets_the_secret(tmp_path: Path) -> None:
    sealer = _sealer(tmp_path / "keys")
    record = sealer.open_appender("log.line", "o").seal_record(b"line")
    assert sealer.open("log.line", "o", record) == b"line"
    sealer.lock()
    assert not sealer.unlocked
    expect_error(LockedError, lambda: sealer.open("log.line", "o", record), "after lock()")


def test_describe_names_no_path(tmp_path: Path) -> None:
    sealer = _sealer(tmp_path / "keys")
    assert str(tmp_path) not in sealer.describe()
    assert "unlocked" in sealer.describe()


def test_a_kinds_registry_from_the_spec(tmp_path: Path) -> None:
    kinds = ArtifactKinds([ArtifactKind("app.snapshot", "whole")])
    sealer = _factory()({"options": {"directory": str(tmp_path / "k")}, "kinds": kinds})
    sealed = sealer.seal("app.snapshot", "o", b"x")
    assert sealer.open("app.snapshot", "o", sealed) == b"x"
    expect_error(UnclassifiedKindError, lambda: sealer.seal("checkpoint", "o", b"x"), "builtin")


def test_records_carry_their_own_wrapped_key(tmp_path: Path) -> None:
    writer = _sealer(tmp_path / "keys")
    records = [writer.open_appender("session.event", "s").seal_record(b"%d" % i) for i in range(3)]
    # a fresh process (no cached data key) opens each record alone, in any order
    reader = _sealer(tmp_path / "keys")
    assert [reader.open("session.event", "s", r) for r in reversed(records)] == [b"2", b"1", b"0"]
    assert all(framing.read_header(r).storage == "append" for r in records)
