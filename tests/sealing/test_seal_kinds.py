"""The artifact-kind registry: every kind classified ``whole`` or ``append``."""

from __future__ import annotations

import pytest

from agentrig.sealing import (
    BUILTIN_KINDS,
    ArtifactKind,
    ArtifactKinds,
    KindClassError,
    UnclassifiedKindError,
    artifact_kinds,
)


def test_builtin_kinds_are_classified() -> None:
    for kind in BUILTIN_KINDS:
        assert artifact_kinds.classify(kind.name) == kind
    assert artifact_kinds.classify("session.event").storage == "append"
    assert artifact_kinds.classify("checkpoint").storage == "whole"


def test_register_and_classify() -> None:
    kinds = ArtifactKinds(())
    assert len(kinds) == 0
    kind = kinds.register(ArtifactKind("plugin.cache", "whole", "a cache file"))
    assert kinds.classify("plugin.cache") is kind
    assert "plugin.cache" in kinds
    assert kinds.names() == ("plugin.cache",)
    assert kinds.require("plugin.cache", "whole") is kind


def test_unclassified_kind_lists_the_known_ones() -> None:
    kinds = ArtifactKinds([ArtifactKind("a.one", "whole")])
    with pytest.raises(UnclassifiedKindError, match=r"a\.one") as info:
        kinds.classify("b.two")
    assert info.value.kind == "b.two"


def test_reregistering_same_class_is_harmless_other_class_refused() -> None:
    kinds = ArtifactKinds([ArtifactKind("x.log", "append")])
    assert kinds.register(ArtifactKind("x.log", "append", "again")).description == ""
    with pytest.raises(KindClassError, match="already classified 'append'"):
        kinds.register(ArtifactKind("x.log", "whole"))
    assert kinds.classify("x.log").storage == "append"


def test_require_refuses_the_other_class() -> None:
    kinds = ArtifactKinds([ArtifactKind("x.log", "append")])
    with pytest.raises(KindClassError, match="open_appender"):
        kinds.require("x.log", "whole")


@pytest.mark.parametrize("name", ["", "Upper", "1digit", "a..b", "trailing.", "sp ace", "x" * 129])
def test_invalid_names(name: str) -> None:
    with pytest.raises(ValueError, match="invalid artifact kind name"):
        ArtifactKind(name, "whole")


def test_invalid_storage() -> None:
    with pytest.raises(ValueError, match="'whole' or 'append'"):
        ArtifactKind("a.b", "stream")  # type: ignore[arg-type]
