"""Catalogs and registries: every rule of DESIGN §4.2."""

from __future__ import annotations

from collections.abc import Mapping

import pydantic
import pytest

from agentrig.catalog import ReadonlyCatalog, Registry, Replacement
from agentrig.errors import DuplicateIdError, SealedCatalogError, UnknownIdError


class Tool:
    """An object with behaviour."""

    def __init__(self, id: str) -> None:
        self.id = id
        self.calls = 0

    def run(self) -> int:
        self.calls += 1
        return self.calls


def test_readonly_surface() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    a, b = Tool("a"), Tool("b")
    reg.register_all([a, b])
    assert reg.ids() == ("a", "b")
    assert list(reg.values()) == [a, b]
    assert list(reg.entries()) == [("a", a), ("b", b)]
    assert reg.has("a")
    assert not reg.has("zzz")
    assert reg.get("a") is a
    assert reg.get("zzz") is None
    assert reg.require("b") is b
    assert len(reg) == 2
    assert "a" in reg
    assert list(reg) == ["a", "b"]
    assert isinstance(reg, ReadonlyCatalog)


def test_duplicate_id_refused_without_replace() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    reg.register(Tool("a"), source="dist-one")
    with pytest.raises(DuplicateIdError, match=r"'a'.*dist-one.*replace=True") as info:
        reg.register(Tool("a"), source="dist-two")
    assert info.value.code == "catalog.duplicate"
    assert reg.source_of("a") == "dist-one"  # the first registration stands


def test_replacement_is_explicit_and_recorded() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    first, second = Tool("a"), Tool("a")
    reg.register(first, source="core")
    assert reg.replacements() == ()
    reg.register(second, replace=True, source="plugin-x")
    assert reg.require("a") is second
    assert reg.replacements() == (Replacement("a", previous="core", replaced_by="plugin-x"),)
    assert reg.source_of("a") == "plugin-x"


def test_replace_on_new_id_is_not_a_replacement() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    reg.register(Tool("a"), replace=True, source="x")
    assert reg.replacements() == ()


def test_register_all_does_not_seal() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    reg.register_all([Tool("a")])
    assert not reg.sealed
    reg.register(Tool("b"))  # still open
    assert reg.ids() == ("a", "b")


def test_registration_after_seal_raises() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    reg.register(Tool("a"))
    view = reg.seal()
    assert reg.sealed
    assert view.require("a").id == "a"
    with pytest.raises(SealedCatalogError, match="sealed") as info:
        reg.register(Tool("b"))
    assert info.value.code == "catalog.sealed"
    with pytest.raises(SealedCatalogError):
        reg.register(Tool("a"), replace=True)
    with pytest.raises(SealedCatalogError):
        reg.register_all([Tool("c")])
    assert reg.ids() == ("a",)


def test_require_missing_lists_known_ids_and_closest_match() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    reg.register_all([Tool("read_file"), Tool("write_file"), Tool("search")])
    with pytest.raises(UnknownIdError) as info:
        reg.require("read_fil")
    error = info.value
    assert error.suggestion == "read_file"
    assert error.known == ("read_file", "search", "write_file")
    assert error.id == "read_fil"
    message = str(error)
    assert "did you mean 'read_file'" in message
    for known in ("read_file", "search", "write_file"):
        assert known in message
    assert isinstance(error, LookupError)


def test_require_missing_without_close_match() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    with pytest.raises(UnknownIdError, match="known: none") as info:
        reg.require("anything")
    assert info.value.suggestion is None


def test_pure_data_mapping_is_copied_and_frozen() -> None:
    reg: Registry[str, Mapping[str, object]] = Registry("model")
    data: dict[str, object] = {"id": "m1", "limits": {"context": 100}, "tags": ["a"]}
    stored = reg.register(data)
    data["id"] = "changed"
    data["limits"]["context"] = 1  # type: ignore[index]
    data["tags"].append("b")  # type: ignore[attr-defined]
    got = reg.require("m1")
    assert got is stored
    assert got["id"] == "m1"
    assert got["limits"]["context"] == 100  # type: ignore[index]
    assert got["tags"] == ("a",)
    with pytest.raises(TypeError):
        got["id"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        got["limits"]["context"] = 5  # type: ignore[index]


def test_mutable_pydantic_model_is_deep_copied() -> None:
    class Info(pydantic.BaseModel):
        id: str
        tags: list[str]

    info = Info(id="m", tags=["a"])
    reg: Registry[str, Info] = Registry("model")
    reg.register(info)
    info.tags.append("leak")
    assert reg.require("m").tags == ["a"]
    assert reg.require("m") is not info


def test_frozen_pydantic_model_is_stored_as_is() -> None:
    class Info(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(frozen=True)
        id: str

    info = Info(id="m")
    reg: Registry[str, Info] = Registry("model")
    reg.register(info)
    assert reg.require("m") is info


def test_objects_with_behaviour_are_stored_as_the_same_object() -> None:
    tool = Tool("t")
    reg: Registry[str, Tool] = Registry("tool")
    stored = reg.register(tool)
    assert stored is tool
    assert reg.require("t") is tool
    reg.require("t").run()
    assert tool.calls == 1  # never deep-copied


def test_explicit_id_and_custom_id_of() -> None:
    reg: Registry[str, Tool] = Registry("tool", id_of=lambda t: t.id.upper())
    reg.register(Tool("x"))
    reg.register(Tool("y"), id="custom")
    assert reg.ids() == ("X", "custom")


def test_internal_mapping_is_never_exposed() -> None:
    reg: Registry[str, Tool] = Registry("tool")
    reg.register(Tool("a"))
    ids = reg.ids()
    assert isinstance(ids, tuple)
    entries = reg.entries()
    values = reg.values()
    reg.register(Tool("b"))  # mutating during iteration of earlier views is safe
    assert [k for k, _ in entries] == ["a"]
    assert [v.id for v in values] == ["a"]
    public = [getattr(reg, n) for n in dir(reg) if not n.startswith("_")]
    assert not any(isinstance(v, dict) for v in public)
    assert all(not isinstance(v, dict) for v in (reg.ids(), reg.replacements()))
