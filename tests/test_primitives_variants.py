"""The variant registry of DESIGN §4.3: declaration-merged tagged unions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pydantic
import pytest

from agentrig.errors import SealedCatalogError, VariantError
from agentrig.variants import Variant, VariantRegistry


class Event(Variant):
    family: ClassVar[str] = "test_event"


class Started(Event):
    type: Literal["started"] = "started"
    at: int


class Stopped(Event):
    type: Literal["stopped"] = "stopped"
    reason: str = "done"


class OtherFamily(Variant):
    family: ClassVar[str] = "other"


class Foreign(OtherFamily):
    type: Literal["foreign"] = "foreign"


def fresh() -> VariantRegistry[Event]:
    registry: VariantRegistry[Event] = VariantRegistry(Event)
    registry.register_all([Started, Stopped], source="core")
    return registry


def test_register_seal_parse() -> None:
    registry = fresh()
    assert registry.tags() == ("started", "stopped")
    assert registry.member("started") is Started
    assert not registry.sealed
    registry.seal()
    assert registry.sealed
    started = registry.parse({"type": "started", "at": 3})
    assert isinstance(started, Started)
    assert started.at == 3
    assert registry.parse_json('{"type": "stopped"}') == Stopped()
    assert registry.dump(started) == {"type": "started", "at": 3}


def test_parse_seals_on_first_use() -> None:
    registry = fresh()
    registry.parse({"type": "stopped"})
    assert registry.sealed


def test_known_tag_with_bad_fields_is_a_validation_error_not_unknown() -> None:
    registry = fresh()
    with pytest.raises(pydantic.ValidationError):
        registry.parse({"type": "started", "at": "not-a-number"})


def test_duplicate_tag_refused() -> None:
    registry = fresh()

    class Started2(Event):
        type: Literal["started"] = "started"

    with pytest.raises(VariantError, match=r"already registered.*replace=True"):
        registry.register(Started2)
    assert registry.member("started") is Started


def test_replace_is_recorded() -> None:
    registry = fresh()

    class BetterStopped(Event):
        type: Literal["stopped"] = "stopped"
        reason: str = "done"
        code: int = 0

    registry.register(BetterStopped, replace=True, source="plugin-x")
    assert registry.member("stopped") is BetterStopped
    assert registry.replacements() == (("stopped", "core", "plugin-x"),)
    assert isinstance(registry.parse({"type": "stopped", "code": 2}), BetterStopped)


def test_registration_after_seal_refused() -> None:
    registry = fresh()
    registry.seal()

    class Late(Event):
        type: Literal["late"] = "late"

    with pytest.raises(SealedCatalogError, match="sealed"):
        registry.register(Late)
    assert "late" not in registry.tags()


def test_wrong_base_refused() -> None:
    registry = fresh()
    with pytest.raises(VariantError, match="not a subclass"):
        registry.register(Foreign)  # type: ignore[arg-type]
    assert "foreign" not in registry.tags()


def test_member_needs_a_single_literal_tag() -> None:
    registry = fresh()

    class Untagged(Event):
        type: str = "x"

    with pytest.raises(VariantError, match="Literal"):
        registry.register(Untagged)


def test_family_base_must_name_its_family() -> None:
    class Nameless(Variant):
        pass

    with pytest.raises(VariantError, match="family"):
        VariantRegistry(Nameless)


def test_unknown_tag_is_kept_opaque_and_written_back_unchanged() -> None:
    registry = fresh()
    raw = {"type": "from_newer_plugin", "payload": {"x": [1, 2, {"y": None}]}, "n": 1.5}
    parsed = registry.parse(raw)
    assert parsed.is_unknown
    assert isinstance(parsed, Event)
    assert parsed.type == "from_newer_plugin"
    assert registry.dump(parsed) == raw
    # a second trip changes nothing either
    assert registry.dump(registry.parse(registry.dump(parsed))) == raw
    assert not registry.parse({"type": "stopped"}).is_unknown


# A containing model: the session-log shape -- a list of events of the family.
REGISTRY = fresh()
if TYPE_CHECKING:  # what the fields hold, for the type checker
    EventField = Event
    EventsField = tuple[Event, ...]
else:  # what pydantic parses them with: through the registry
    EventField = REGISTRY.annotation()
    EventsField = REGISTRY.many_annotation()


class Log(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)
    name: str
    head: EventField
    events: EventsField


def test_unknown_tag_round_trips_inside_a_containing_model() -> None:
    document: dict[str, Any] = {
        "name": "log",
        "head": {"type": "mystery", "deep": {"keep": ["me"]}},
        "events": [
            {"type": "started", "at": 1},
            {"type": "plugin/thing", "extra": True, "nested": {"a": 1}},
            {"type": "stopped", "reason": "bye"},
        ],
    }
    log = Log.model_validate(document)
    assert isinstance(log.events[0], Started)
    assert log.events[1].is_unknown
    assert isinstance(log.events[2], Stopped)
    assert log.head.is_unknown
    assert log.model_dump(mode="json") == document
    # and through JSON text, as a persisted file would be
    again = Log.model_validate_json(log.model_dump_json())
    assert json.loads(again.model_dump_json()) == document


def test_built_members_pass_as_they_are_and_the_rest_is_parsed() -> None:
    built = (Started(at=1), Stopped())
    log = Log(name="a", head=Stopped(), events=built)
    assert all(a is b for a, b in zip(log.events, built, strict=True))  # kept as they are
    mixed: Any = (Started(at=2), {"type": "stopped", "reason": "r"})
    parsed = Log(name="b", head=Stopped(), events=mixed).events
    assert parsed[0] is mixed[0]
    assert isinstance(parsed[1], Stopped)
    assert parsed[1].reason == "r"
    listed: Any = [Started(at=3)]
    assert Log(name="c", head=Stopped(), events=listed).events == (Started(at=3),)
    foreign: Any = (Foreign(),)
    with pytest.raises(pydantic.ValidationError):
        Log(name="d", head=Stopped(), events=foreign)


def test_loader_runs_once_when_sealing() -> None:
    calls: list[int] = []

    def loader(registry: VariantRegistry[Event]) -> None:
        calls.append(1)
        registry.register(Stopped, source="entry-point")

    registry: VariantRegistry[Event] = VariantRegistry(Event, loader=loader)
    registry.register(Started)
    assert calls == []
    registry.seal()
    registry.seal()
    assert calls == [1]
    assert isinstance(registry.parse({"type": "stopped"}), Stopped)


def test_the_vocabulary_reaches_the_kernels_discovery_through_the_core_seam() -> None:
    # the message vocabulary sits below the kernel: its families load plugin members through
    # the core distribution's own entry point, not by importing the kernel
    import importlib.metadata as metadata

    from agentrig.kernel import register_variants
    from agentrig.variants import SEAMS_GROUP

    seams = [
        e
        for e in metadata.distribution("agentrig").entry_points
        if e.group == SEAMS_GROUP and e.name == "variants"
    ]
    assert [e.load() for e in seams] == [register_variants]
