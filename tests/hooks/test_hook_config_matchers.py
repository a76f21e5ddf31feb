"""A matcher on an event that has nothing to match is refused, not ignored.

``UserPromptSubmit`` and ``Stop`` hooks all run (there is no tool name or source to test), so
``matcher = "Bash"`` on them used to be accepted and have no effect.  ``agentrig.toml`` and
Claude Code settings files read into it both go through the check; a wildcard (absent,
``""``, ``"*"``) stays fine, as Claude Code writes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import ConfigError
from agentrig.hooks import matcher_problem
from agentrig.kernel import open_runtime

HOOK = {"strategy": "command", "options": {"command": "true"}}


@pytest.mark.anyio
@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop"])
async def test_a_matcher_on_an_event_without_a_subject_is_refused(event: str) -> None:
    config = {"hooks": {event: [HOOK, {**HOOK, "matcher": "Bash"}]}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.hook_matcher"
    assert issue.location() == f"hooks.{event}[1].matcher"
    assert f"{event} hooks have nothing to match" in issue.message


@pytest.mark.anyio
async def test_the_same_matcher_from_claude_code_settings_is_refused(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}
    settings.write_text(json.dumps({"hooks": {"Stop": [entry]}}), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        async with open_runtime({"claude_code": {"settings": [str(settings)]}}, environ={}):
            pytest.fail("must not compose")
    assert [i.location() for i in info.value.issues] == ["hooks.Stop[0].matcher"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("event", "matcher"),
    [
        ("Stop", ""),
        ("Stop", "*"),
        ("Stop", None),
        ("PreToolUse", "Bash"),
        ("SessionStart", "resume"),
    ],
)
async def test_wildcards_and_matchers_with_a_subject_compose(
    event: str, matcher: str | None
) -> None:
    entry: dict[str, Any] = {**HOOK} if matcher is None else {**HOOK, "matcher": matcher}
    assert matcher_problem(event, matcher) is None
    async with open_runtime({"hooks": {event: [entry]}}, environ={}):
        pass
