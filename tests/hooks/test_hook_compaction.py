"""``PreCompact`` and ``PostCompact``: real command hooks, written to Claude Code's hook
reference (``scripts/record.*``), around a compaction -- Claude Code's input fields, a block
that leaves the history as it is, context that becomes the summary's instructions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from lifecycle_support import hook, records

import agentrig
from agentrig.builtins._scripted import ScriptedProvider
from agentrig.ids import AgentId
from agentrig.kernel import load_config
from agentrig.llm import SystemMessage
from agentrig.session import SessionEvent

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]


@attrs.frozen
class Compacted:
    event: Any
    provider: ScriptedProvider
    log: list[SessionEvent]


async def _compact(
    tmp_path: Path,
    hooks: Mapping[str, Sequence[Mapping[str, Any]]],
    instructions: str | None = None,
) -> Compacted:
    provider = ScriptedProvider(["one", "two", "They counted to two."])
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {
            "a": {
                "provider": "local",
                "model": "m",
                "compaction": {"keep_last": 2, "auto": False},
            }
        },
        "hooks": {name: list(entries) for name, entries in hooks.items()},
    }
    loaded = attrs.evolve(load_config(config), base_dir=tmp_path)
    async with agentrig.open_runtime(
        loaded, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        agent = rt.agent(AgentId("a"))
        await agent.run("count to one")
        await agent.run("and to two")
        event = await agent.compact(instructions)
        return Compacted(event, provider, list(agent.session.events))


@pytest.mark.parametrize("language", ["bash", "python"])
async def test_pre_and_post_compact_get_claude_codes_input(tmp_path: Path, language: str) -> None:
    log = tmp_path / "hooks.jsonl"
    hooks = {"PreCompact": [hook(log, language)], "PostCompact": [hook(log, language)]}
    done = await _compact(tmp_path, hooks, "Keep the numbers.")
    assert done.event is not None
    pre, post = (r["input"] for r in records(log))
    assert pre["hook_event_name"] == "PreCompact"
    assert (pre["trigger"], pre["custom_instructions"]) == ("manual", "Keep the numbers.")
    assert {"session_id", "transcript_path", "cwd"} <= set(pre)
    assert post["hook_event_name"] == "PostCompact"
    assert post["trigger"] == "manual"
    assert post["compact_summary"].endswith("They counted to two.")


async def test_a_blocking_pre_compact_hook_leaves_the_history(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    blocking = hook(log, stderr="not now: a release is in progress", exit=2)
    done = await _compact(tmp_path, {"PreCompact": [blocking], "PostCompact": [hook(log)]})
    assert done.event is None
    assert len(done.provider.requests) == 2  # no summary call
    assert [r["input"]["hook_event_name"] for r in records(log)] == ["PreCompact"]
    assert not [e for e in done.log if e.type == "context/compaction"]
    blocked = [e.data for e in done.log if e.type == "notice" and e.data.kind == "blocked"]
    assert blocked
    assert "release is in progress" in blocked[-1].text


async def test_pre_compact_context_becomes_the_summarys_instructions(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreCompact",
            "additionalContext": "Keep the codename HERON.",
        }
    }
    done = await _compact(tmp_path, {"PreCompact": [hook(log, answer=answer)]}, "Be short.")
    assert done.event is not None
    assert done.event.instructions == "Be short.\nKeep the codename HERON."
    system = done.provider.requests[-1].messages[0]
    assert isinstance(system, SystemMessage)
    assert "Keep the codename HERON." in system.text
    assert "Be short." in system.text


async def test_the_trigger_is_the_matcher_subject(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    done = await _compact(tmp_path, {"PreCompact": [hook(log, matcher="auto")]})
    assert done.event is not None
    assert records(log) == []  # a manual compaction: the auto-only hook does not run


async def test_session_start_fires_with_source_compact_and_its_context_follows_the_summary(
    tmp_path: Path,
) -> None:
    log = tmp_path / "hooks.jsonl"
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "Reminder: the codename is HERON.",
        }
    }
    hooks = {
        "SessionStart": [hook(log), hook(log, answer=answer, matcher="compact")],
        "PostCompact": [hook(log)],
    }
    done = await _compact(tmp_path, hooks)
    assert done.event is not None
    fired = [(r["input"]["hook_event_name"], r["input"].get("source")) for r in records(log)]
    # the matcher-less hook hears both starts; the "compact" one only the compaction's
    assert fired == [
        ("SessionStart", "startup"),
        ("PostCompact", None),
        ("SessionStart", "compact"),
        ("SessionStart", "compact"),
    ]
    summary, context = done.event.messages
    assert summary.source == "compaction-summary"
    assert context.source == "hook-context"
    assert context.text.endswith("Reminder: the codename is HERON.")
    assert "SessionStart hook" in context.text  # labelled as a hook's, not the user's


async def test_no_session_start_when_the_compaction_is_blocked(tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    hooks = {
        "PreCompact": [hook(log, exit=2, stderr="not now")],
        "SessionStart": [hook(log, matcher="compact")],
    }
    done = await _compact(tmp_path, hooks)
    assert done.event is None
    assert [r["input"]["hook_event_name"] for r in records(log)] == ["PreCompact"]
