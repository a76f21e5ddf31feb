"""The vocabulary's fast layer: validated instances with shared fields-sets, nothing more."""

from __future__ import annotations

import pickle
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from agentrig.ids import new_session_id
from agentrig.llm import (
    AssistantMessage,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    Usage,
    UserMessage,
)
from agentrig.messages import _build, _fast
from agentrig.messages._fast import build_shared
from agentrig.session import (
    AssistantMessageEvent,
    Session,
    SessionEvent,
    ToolResultEvent,
    UserMessageEvent,
)


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


class Aliased(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str = Field(alias="Name")


class Extra(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str


def test_equals_a_validated_instance_and_dumps_in_field_order() -> None:
    built = build_shared(Frozen, {"note": "n", "name": "a"})
    validated = Frozen(note="n", name="a")
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set == {"note", "name"}
    # pydantic serializes in __dict__ order: a caller's key order must not leak out
    assert built.model_dump_json() == validated.model_dump_json()
    assert list(built.model_dump()) == ["kind", "name", "count", "tags", "note"]
    assert repr(built) == repr(validated)


def test_instance_is_still_frozen_and_hashable() -> None:
    built = build_shared(Frozen, {"name": "a", "count": 2})
    with pytest.raises(Exception, match="frozen"):
        built.count = 3
    assert hash(built) == hash(Frozen(name="a", count=2))


def test_values_are_validated_as_model_validate_does() -> None:
    # lax coercion as pydantic's own validation does it, and its error for a bad value
    built = build_shared(Frozen, {"name": "a", "count": "7"})
    assert built.count == 7
    assert built == Frozen.model_validate({"name": "a", "count": "7"})
    with pytest.raises(ValidationError, match="count"):
        build_shared(Frozen, {"name": "a", "count": "seven"})
    with pytest.raises(ValidationError, match="name"):
        build_shared(Frozen, {"count": 1})


def test_mutable_defaults_are_not_shared_between_instances() -> None:
    first = build_shared(WithFactory, {"name": "a"})
    second = build_shared(WithFactory, {"name": "b"})
    first.items.append(1)
    first.meta["k"] = 1
    assert second.items == []
    assert second.meta == {}
    assert first.model_fields_set == {"name"}


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        pytest.param(Frozen, {"name": "a", "bogus": 1}, id="unknown-field"),
        pytest.param(WithPrivate, {"name": "a"}, id="private-attributes"),
        pytest.param(WithPostInit, {"name": "a"}, id="model-post-init"),
        pytest.param(Extra, {"name": "a", "more": 1}, id="extra-allow"),
        pytest.param(Aliased, {"Name": "a"}, id="alias"),
    ],
)
def test_builds_what_model_validate_builds(cls: type[BaseModel], values: dict[str, Any]) -> None:
    for _ in range(2):  # the first build of a shape, then one that shares its set
        built = build_shared(cls, dict(values))
        expected = cls.model_validate(values)
        assert built.__dict__ == expected.__dict__
        assert built.model_fields_set == expected.model_fields_set
        assert built.model_extra == expected.model_extra
        assert built == expected


class Open(BaseModel):
    name: str
    count: int = 0


def test_the_names_given_decide_the_fields_set_each_time() -> None:
    # the fields set is remembered per list of given names: the same names share one set
    # on a frozen class, a non-frozen class gets its own each time (it may be changed)
    one = build_shared(Frozen, {"name": "a", "count": 1})
    two = build_shared(Frozen, {"name": "b", "count": 2})
    assert one.model_fields_set == two.model_fields_set == {"name", "count"}
    assert one.model_fields_set is two.model_fields_set
    assert build_shared(Frozen, {"count": 3, "name": "c"}).model_fields_set == {
        "name",
        "count",
    }
    assert build_shared(Frozen, {"name": "d"}).model_fields_set == {"name"}
    first = build_shared(Open, {"name": "a"})
    second = build_shared(Open, {"name": "b"})
    assert first.model_fields_set == second.model_fields_set == {"name"}
    first.count = 5  # a non-frozen instance records its own assignments only
    assert first.model_fields_set == {"name", "count"}
    assert second.model_fields_set == {"name"}


def test_private_attributes_keep_their_defaults() -> None:
    built = build_shared(WithPrivate, {"name": "a"})
    assert built._cache == 0


def test_loop_vocabulary_round_trips() -> None:
    message = UserMessage.of("hi")
    assert message == UserMessage.model_validate_json(message.model_dump_json())
    result = ToolMessage.of("c1", "lookup", "out")
    assert result == ToolMessage.model_validate_json(result.model_dump_json())
    assert result == ToolMessage(call_id="c1", name="lookup", content=(TextBlock(text="out"),))
    reply = build_shared(AssistantMessage, {"content": (TextBlock(text="x"),)})
    assert reply == AssistantMessage(content=(TextBlock(text="x"),))
    event = build_shared(
        SessionEvent, {"seq": 1, "time": 2.0, "data": UserMessageEvent(message=message)}
    )
    assert (
        event.model_dump_json()
        == SessionEvent.model_validate_json(event.model_dump_json()).model_dump_json()
    )


# ---- the vocabulary: what an idle agent's history keeps --------------------------------------
def _built_and_validated() -> list[tuple[BaseModel, type[BaseModel]]]:
    call = ToolCallBlock.from_json("c1", "lookup", '{"q": "x"}')
    return [
        (UserMessage.of("hi", source="hook"), UserMessage),
        (build_shared(TextBlock, {"text": "x"}), TextBlock),
        (call, ToolCallBlock),
        (build_shared(ReasoningBlock, {"text": "why"}), ReasoningBlock),
        (ToolMessage.of("c1", "lookup", "out", status="error"), ToolMessage),
        (
            build_shared(
                AssistantMessage, {"content": (call,), "stop_reason": "tool_calls", "model": "m"}
            ),
            AssistantMessage,
        ),
        (Usage.of(3, 4, cache_read=1), Usage),
    ]


def _hash(instance: BaseModel) -> int | str:
    try:
        return hash(instance)
    except TypeError as exc:
        return str(exc)


@pytest.mark.parametrize("index", range(7))
def test_vocabulary_instances_equal_validated_ones_in_every_public_way(index: int) -> None:
    built, cls = _built_and_validated()[index]
    validated = cls.model_validate(built.model_dump())
    assert built.model_dump_json() == validated.model_dump_json()
    assert list(built.model_dump()) == list(cls.model_fields)  # field order, as pydantic's
    assert repr(built) == repr(validated)
    assert _hash(built) == _hash(validated)  # an arguments dict makes a call unhashable
    assert built == validated
    assert validated == built
    assert pickle.loads(pickle.dumps(built)) == validated
    assert built.model_copy() == validated
    with pytest.raises(ValidationError, match="frozen"):
        built.__setattr__("type", "other")


def test_vocabulary_instances_built_alike_share_one_fields_set() -> None:
    # the memory the layer buys: one set per class and names, not one per instance
    first, second = ToolMessage.of("c1", "t", "a"), ToolMessage.of("c2", "t", "b")
    assert first.model_fields_set is second.model_fields_set
    copied = first.model_copy(update={"name": "u"})
    assert copied.model_fields_set is not first.model_fields_set  # pydantic copies it
    assert first.model_fields_set == second.model_fields_set


def test_session_log_keeps_messages_and_events_unchanged() -> None:
    session = Session(new_session_id())
    reply = build_shared(
        AssistantMessage,
        {"content": (ToolCallBlock.from_json("c1", "noop", '{"x": 1}'),), "model": "m"},
    )
    result = ToolMessage.of("c1", "noop", "0")
    appended = [
        session.append(AssistantMessageEvent(message=reply)),
        session.append(ToolResultEvent(message=result, invocation_id="i", duration_ms=0.5)),
    ]
    assert [e.model_dump_json() for e in session.events] == [e.model_dump_json() for e in appended]
    assert list(session.derive_messages()) == [reply, result]
    assert session.derive_messages()[0] is reply


def test_the_fast_layer_writes_only_the_documented_fields_set() -> None:
    # DESIGN §2.10: no private name of a dependency.  The layer validates with the constructor
    # and assigns one attribute pydantic documents on BaseModel, an instance's fields-set, as
    # any attribute is assigned (through pydantic's own __setattr__)
    import ast
    from pathlib import Path

    tree = ast.parse(Path(_fast.__file__).read_text(encoding="utf-8"))
    names = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
    }
    assert names == {"__pydantic_fields_set__"}
    writes = [
        target
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute)
    ]
    assert [w.attr for w in writes] == ["__pydantic_fields_set__"]
    assert "object" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert _build._build is build_shared


def test_usage_of_validates_every_count() -> None:
    assert Usage.of(3, 4) == Usage(prompt=3, completion=4, total=7, partial=False)
    coerced = Usage.of(3, 4, total=True)  # not an int: validated (lax, as pydantic does)
    assert coerced.total == 1
    assert type(coerced.total) is int
    assert Usage.of(3, 4).model_fields_set is Usage.of(5, 6).model_fields_set
    assert coerced.model_fields_set is Usage.of(3, 4).model_fields_set  # the same names


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        (UserMessage, {"id": "msg_1", "content": (TextBlock(text="hi"),), "source": "user"}),
        (AssistantMessage, {"content": (TextBlock(text="a"),), "model": "m"}),
        (ToolMessage, {"call_id": "c", "name": "t", "content": (), "status": "ok"}),
        (TextBlock, {"text": "t"}),
        (ToolCallBlock, {"id": "c", "name": "t", "arguments": {"x": 1}, "raw_arguments": None}),
        (ReasoningBlock, {"text": "r"}),
        (Usage, {"prompt": 1, "completion": 2, "total": 3, "partial": False}),
    ],
)
def test_the_fast_layer_builds_what_the_plain_seam_builds(
    cls: type[BaseModel], values: dict[str, Any]
) -> None:
    fast = build_shared(cls, dict(values))
    plain = _build._plain(cls, dict(values))
    assert fast == plain
    assert fast.model_dump_json() == plain.model_dump_json()
    assert fast.model_fields_set == plain.model_fields_set
    assert fast == cls.model_validate(fast.model_dump())


def test_the_pinned_pydantic_keeps_what_the_layer_relies_on() -> None:
    # the layer is tested on the range pyproject.toml pins; each assumption is checked here
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    from packaging.requirements import Requirement

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    pins = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    pin = next(Requirement(p) for p in pins if Requirement(p).name == "pydantic")
    assert pin.specifier.contains(version("pydantic"))
    # model_fields_set is the instance's __pydantic_fields_set__, read, not copied
    validated = Frozen.model_validate({"name": "a"})
    assert validated.model_fields_set is validated.__pydantic_fields_set__
    shared = {"name"}
    validated.__pydantic_fields_set__ = shared  # a frozen model's __setattr__ takes this name
    assert validated.model_fields_set is shared
    # copies and pickles get a set of their own; the frozen instance refuses changes
    assert validated.model_copy().model_fields_set is not shared
    assert validated.model_copy(update={"count": 2}).model_fields_set == {"name", "count"}
    assert shared == {"name"}
    assert pickle.loads(pickle.dumps(validated)).model_fields_set == {"name"}
    with pytest.raises(ValidationError, match="frozen"):
        validated.count = 3
