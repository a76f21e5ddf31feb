"""Every ``agentrig.toml`` sample in README.md and docs/ holds only keys and values agentrig
accepts.

A sample is a TOML block whose top-level tables are all config tables (core or an installed
plugin's).  It is loaded and checked as ``agentrig config check`` checks a file -- core keys,
plugin tables, provider options and credentials, hook options -- without composing.  A sample
is often a piece of a larger file, so what it refers to outside itself (a provider or tool
defined elsewhere, a file next to the config, a required key shown on another sample) is not
its problem; an unknown key, a wrong value or a credential nothing reads is.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from test_docs_samples import PAGES, ROOT, blocks

from agentrig.builtins._compose import check_composition
from agentrig.errors import ConfigError, Issue
from agentrig.kernel import PluginIndex, RuntimeConfig, installed_sections, load_config

# what a piece of a larger file may lack: things defined outside the sample
_ELSEWHERE = frozenset(
    {
        "config.unknown_id",
        "config.missing",
        "config.not_found",
        "config.tool_ref_file",
        "config.tool_ref_module",
    }
)


def _config_samples(page: Path) -> list[tuple[int, dict[str, Any]]]:
    tables = set(RuntimeConfig.model_fields) | installed_sections()
    samples = []
    for block in blocks(page):
        if block.language != "toml":
            continue
        data = tomllib.loads(block.text)
        if data and set(data) <= tables:
            samples.append((block.line, data))
    return samples


def _problems(data: dict[str, Any], index: PluginIndex) -> list[Issue]:
    try:
        issues = check_composition(load_config(data), index)
    except ConfigError as exc:
        issues = list(exc.issues)
    return [issue for issue in issues if issue.code not in _ELSEWHERE]


def test_the_samples_are_found() -> None:
    assert sum(len(_config_samples(page)) for page in PAGES) > 25


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_config_sample_of_the_page_is_accepted(page: Path) -> None:
    index = PluginIndex()
    found = [
        f"{page.name}:{line}: {issue.code}: {issue}"
        for line, data in _config_samples(page)
        for issue in _problems(data, index)
    ]
    assert not found, "config samples agentrig would refuse:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("sample", "code"),
    [
        ({"agents": {"a": {"provider": "p", "model": "m", "max_round": 3}}}, "extra_forbidden"),
        ({"providers": {"p": {"kind": "openai", "options": {"base_ur": "x"}}}}, "extra_forbidden"),
        ({"providers": {"p": {"kind": "openai", "credentials": {"org": "x"}}}}, "credential"),
        ({"server": {"port": 70000}}, "config.less_than_equal"),
    ],
)
def test_a_sample_with_a_wrong_key_or_value_is_caught(sample: dict[str, Any], code: str) -> None:
    problems = _problems(sample, PluginIndex())
    assert problems
    assert code in problems[0].code
