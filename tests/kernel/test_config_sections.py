"""Plugin-owned config sections: a top-level table an installed plugin declares is kept for it;
a table nobody reads fails the composition; every other unknown key is still an error."""

from __future__ import annotations

import pytest

import agentrig
from agentrig.errors import ConfigError
from agentrig.kernel import load_config

pytestmark = pytest.mark.anyio


def test_declared_sections_are_kept_raw() -> None:
    loaded = load_config({"weather": {"city": "Oslo"}, "agents": {}}, sections=["weather"])
    assert loaded.sections == {"weather": {"city": "Oslo"}}
    assert "weather" not in loaded.config.model_dump()


def test_undeclared_tables_are_still_refused() -> None:
    with pytest.raises(ConfigError) as info:
        load_config({"weather": {"city": "Oslo"}}, sections=["other"])
    assert info.value.issues[0].location() == "weather"


async def test_a_section_nobody_reads_fails_the_composition() -> None:
    loaded = load_config({"weather": {"city": "Oslo"}}, sections=["weather"])
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(loaded):
            pass
    assert info.value.issues[0].code == "config.section_unused"
    assert info.value.issues[0].location() == "weather"
