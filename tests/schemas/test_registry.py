"""The schema registry: positive ordered versions, checked steps, newer data refused by name."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter

import agentrig.session  # noqa: F401  (defines agentrig.session.event)
from agentrig.cli import plugin_report
from agentrig.kernel import MemorySource, PluginIndex, register_schemas
from agentrig.schemas import (
    SCHEMAS,
    MigrationFailedError,
    SchemaDefinitionError,
    SchemaRegistry,
    SchemaTooNewError,
    UnknownSchemaError,
)


class V1(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class V2(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str


def _registry() -> SchemaRegistry:
    registry = SchemaRegistry()
    registry.define("demo.doc", 1, V1, owner="demo-plugin")
    registry.define("demo.doc", 2, V2, owner="demo-plugin")

    @registry.migration("demo.doc", 1, owner="demo-plugin")
    def rename(doc: dict[str, Any]) -> dict[str, Any]:
        return {"title": doc.pop("name")}

    registry.define("demo.doc", 3, TypeAdapter(dict[str, str]), owner="demo-plugin")
    registry.add_migration("demo.doc", 2, lambda doc: {**doc, "kind": "doc"}, owner="demo-plugin")
    return registry


def test_upgrade_runs_every_step_in_order_without_touching_the_source() -> None:
    registry = _registry()
    source = {"name": "a"}
    assert registry.upgrade("demo.doc", 1, source) == {"title": "a", "kind": "doc"}
    assert source == {"name": "a"}
    assert registry.upgrade("demo.doc", 2, {"title": "b"}) == {"title": "b", "kind": "doc"}
    assert registry.current("demo.doc") == 3
    info = registry.info("demo.doc")
    assert (info.versions, info.owner) == ((1, 2, 3), "demo-plugin")


def test_newer_data_is_refused_naming_schema_versions_and_upgrade() -> None:
    with pytest.raises(SchemaTooNewError) as caught:
        _registry().upgrade("demo.doc", 4, {"title": "x"})
    error = caught.value
    assert (error.code, error.schema, error.found, error.current) == (
        "persisted.too_new",
        "demo.doc",
        4,
        3,
    )
    assert "demo.doc" in str(error)
    assert "version 4" in str(error)
    assert "up to version 3" in str(error)
    assert "pip install --upgrade demo-plugin" in str(error)


def test_the_source_and_each_migrated_version_are_checked() -> None:
    registry = _registry()
    with pytest.raises(MigrationFailedError, match="does not fit version 1"):
        registry.upgrade("demo.doc", 1, {"name": "a", "extra": 1})
    broken = SchemaRegistry()
    broken.define("demo.x", 1, V1)
    broken.define("demo.x", 2, V2)
    broken.add_migration("demo.x", 1, lambda doc: {"wrong": doc["name"]})
    with pytest.raises(MigrationFailedError, match="does not fit version 2"):
        broken.upgrade("demo.x", 1, {"name": "a"})
    failing = SchemaRegistry()
    failing.define("demo.y", 1, V1)
    failing.define("demo.y", 2, V2)
    failing.add_migration("demo.y", 1, lambda doc: doc["missing"])
    with pytest.raises(MigrationFailedError, match="from version 1 to 2 failed: KeyError"):
        failing.upgrade("demo.y", 1, {"name": "a"})


@pytest.mark.parametrize("version", [0, -1, True, 1.0, "1", None])
def test_versions_are_positive_integers(version: Any) -> None:
    registry = SchemaRegistry()
    if isinstance(version, int):  # other types are refused by the annotation (typeguard)
        with pytest.raises(SchemaDefinitionError, match="positive integer"):
            registry.define("demo.doc", version, V1)
        with pytest.raises(SchemaDefinitionError, match="positive integer"):
            registry.add_migration("demo.doc", version, lambda d: d)
    registry.define("demo.doc", 1, V1)
    with pytest.raises(MigrationFailedError, match="positive integer"):
        registry.upgrade("demo.doc", version, {"name": "a"})


def test_bad_definitions_are_refused() -> None:
    registry = SchemaRegistry()
    with pytest.raises(SchemaDefinitionError, match="non-empty"):
        registry.define(" ", 1, V1)
    registry.define("demo.doc", 1, V1, owner="a")
    with pytest.raises(SchemaDefinitionError, match="defined twice"):
        registry.define("demo.doc", 1, V1, owner="a")
    with pytest.raises(SchemaDefinitionError, match="owned by a"):
        registry.define("demo.doc", 2, V2, owner="b")
    with pytest.raises(SchemaDefinitionError, match="before its migrations"):
        registry.add_migration("demo.doc", 1, lambda d: d, owner="b")
    registry.define("demo.doc", 3, V2, owner="a")
    with pytest.raises(SchemaDefinitionError, match="version 2 is missing"):
        registry.current("demo.doc")
    registry.define("demo.doc", 2, V2, owner="a")
    with pytest.raises(SchemaDefinitionError, match="no migration from version 1"):
        registry.current("demo.doc")
    registry.add_migration("demo.doc", 1, lambda d: d, owner="a")
    with pytest.raises(SchemaDefinitionError, match="registered twice"):
        registry.add_migration("demo.doc", 1, lambda d: d, owner="a")


def test_unknown_schema_names_the_known_ones() -> None:
    with pytest.raises(UnknownSchemaError, match=r"'nope'.*agentrig\.session\.event"):
        SCHEMAS.info("nope")


def register_demo(registry: SchemaRegistry) -> None:
    """An ``agentrig.schemas`` entry point."""
    registry.define("demo.plugin", 1, V1, owner="demo-plugin")


def test_plugins_define_schemas_through_the_entry_point_group() -> None:
    source = MemorySource()
    source.add("schemas", "demo", register_demo)
    source.add("schemas", "broken", object())
    index = PluginIndex(sources=[source])
    registry = SchemaRegistry(loader=lambda r: register_schemas(r, index))
    assert registry.current("demo.plugin") == 1
    assert registry.names() == ("demo.plugin",)
    broken = {row.id: row for row in plugin_report(index)}["broken"]
    assert broken.status == "failed"
    assert "register(registry)" in str(broken.error)


def test_an_installed_plugin_declares_its_schema_through_the_entry_point() -> None:
    """agentrig-dbos versions the outputs it leaves in DBOS: a newer one is refused by name."""
    from agentrig_dbos._schemas import LINK_OUTPUT_SCHEMA, checked_output, versioned

    info = SCHEMAS.info(LINK_OUTPUT_SCHEMA)  # found through agentrig.schemas entry points
    assert (info.owner, info.current) == ("agentrig-dbos", 1)
    stored = versioned({"agent": "a", "session_id": "ses-x", "text": "hi"})
    assert stored["v"] == 1
    assert checked_output(stored) is stored
    assert checked_output({"agent": "a", "session_id": "s", "text": ""}) is not None  # v1
    with pytest.raises(SchemaTooNewError, match="pip install --upgrade agentrig-dbos"):
        checked_output({**stored, "v": 2})
