"""construct_trusted: an unvalidated instance indistinguishable from model_construct's."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agentrig._construct import construct_trusted
from agentrig.llm import AssistantMessage, TextBlock, ToolMessage, UserMessage
from agentrig.session import SessionEvent, UserMessageEvent


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["frozen"] = "frozen"
    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    note: str | None = None


class WithFactory(BaseModel):
    name: str
    items: list[int] = Field(default_factory=list)
    meta: dict[str, Any] = {}


class WithPrivate(BaseModel):
    name: str
    _cache: int = PrivateAttr(default=0)


class WithPostInit(BaseModel):
    name: str
    seen: bool = False

    def model_post_init(self, context: Any) -> None:
        object.__setattr__(self, "seen", True)


class Extra(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str


def test_equals_a_validated_instance_and_dumps_in_field_order() -> None:
    built = construct_trusted(Frozen, {"note": "n", "name": "a"})
    validated = Frozen(note="n", name="a")
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set == {"note", "name"}
    # pydantic serializes in __dict__ order: a caller's key order must not leak out
    assert built.model_dump_json() == validated.model_dump_json()
    assert list(built.model_dump()) == ["kind", "name", "count", "tags", "note"]
    assert repr(built) == repr(validated)


def test_instance_is_still_frozen_and_hashable() -> None:
    built = construct_trusted(Frozen, {"name": "a", "count": 2})
    with pytest.raises(Exception, match="frozen"):
        built.count = 3
    assert hash(built) == hash(Frozen(name="a", count=2))


def test_values_are_taken_as_given_without_validation() -> None:
    # the caller vouches for types: nothing is coerced (as with model_construct)
    built = construct_trusted(Frozen, {"name": "a", "count": "7"})
    assert built.count == "7"
    assert built == Frozen.model_construct(name="a", count="7")


def test_mutable_defaults_are_not_shared_between_instances() -> None:
    first = construct_trusted(WithFactory, {"name": "a"})
    second = construct_trusted(WithFactory, {"name": "b"})
    first.items.append(1)
    first.meta["k"] = 1
    assert second.items == []
    assert second.meta == {}
    assert first.model_fields_set == {"name"}


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        pytest.param(Frozen, {"count": 1}, id="missing-required-field"),
        pytest.param(Frozen, {"name": "a", "bogus": 1}, id="unknown-field"),
        pytest.param(WithPrivate, {"name": "a"}, id="private-attributes"),
        pytest.param(WithPostInit, {"name": "a"}, id="model-post-init"),
        pytest.param(Extra, {"name": "a", "more": 1}, id="extra-allow"),
    ],
)
def test_falls_back_to_model_construct(cls: type[BaseModel], values: dict[str, Any]) -> None:
    built = construct_trusted(cls, dict(values))
    expected = cls.model_construct(**values)
    assert built.__dict__ == expected.__dict__
    assert built.model_fields_set == expected.model_fields_set
    assert built.__pydantic_extra__ == expected.__pydantic_extra__
    assert built.__pydantic_private__ == expected.__pydantic_private__


def test_private_attributes_work_after_fallback() -> None:
    built = construct_trusted(WithPrivate, {"name": "a"})
    assert built._cache == 0


def test_loop_vocabulary_round_trips() -> None:
    message = UserMessage.of("hi")
    assert message == UserMessage.model_validate_json(message.model_dump_json())
    result = ToolMessage.of("c1", "lookup", "out")
    assert result == ToolMessage.model_validate_json(result.model_dump_json())
    assert result == ToolMessage(call_id="c1", name="lookup", content=(TextBlock(text="out"),))
    reply = construct_trusted(AssistantMessage, {"content": (TextBlock(text="x"),)})
    assert reply == AssistantMessage(content=(TextBlock(text="x"),))
    event = construct_trusted(
        SessionEvent, {"seq": 1, "time": 2.0, "data": UserMessageEvent(message=message)}
    )
    assert (
        event.model_dump_json()
        == SessionEvent.model_validate_json(event.model_dump_json()).model_dump_json()
    )
