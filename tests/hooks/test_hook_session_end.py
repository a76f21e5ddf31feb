"""``SessionEnd``'s ``reason`` and ``SessionStart``'s ``source`` as Claude Code documents them.

The chat CLI is driven through ``agentrig.cli.main`` with a real bash hook (``scripts/
record.sh``) that records the JSON it read from stdin: leaving the prompt (``/exit`` or end
of input) is ``prompt_input_exit``, ``/clear`` is ``clear`` (and the next session starts with
``source: "clear"``), a runtime that closes on its own is ``other``.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lifecycle_support import SCRIPTS, records

import agentrig
from agentrig.cli import main
from agentrig.errors import AgentrigError
from agentrig.ids import AgentId

pytestmark = [pytest.mark.subprocess]


def _config(tmp_path: Path, log: Path, replies: int) -> Path:
    script = ",\n".join(f'  {{ text = "answer {i}" }}' for i in range(replies))
    hook = f"""strategy = "command"
options.command = ["bash", {json.dumps(str(SCRIPTS / "record.sh"))}]
options.env = {{ HOOK_LOG = {json.dumps(str(log))} }}
options.timeout = 30
"""
    text = f"""[providers.local]
kind = "scripted"
options.script = [
{script}
]

[agents.assistant]
provider = "local"
model = "scripted-chat"

[[hooks.SessionStart]]
{hook}
[[hooks.SessionEnd]]
{hook}"""
    path = tmp_path / "agentrig.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _chat(monkeypatch: pytest.MonkeyPatch, config: Path, stdin: str) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return main(["chat", "-c", str(config)])


def _inputs(log: Path) -> list[dict[str, Any]]:
    return [r["input"] for r in records(log)]


@pytest.mark.parametrize("leaving", ["/exit\nnever read\n", "", "/exit"])
def test_leaving_the_chat_is_prompt_input_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leaving: str
) -> None:
    log = tmp_path / "log.jsonl"
    assert _chat(monkeypatch, _config(tmp_path, log, 1), "hello\n" + leaving) == 0
    seen = _inputs(log)
    assert [(e["hook_event_name"], e.get("source"), e.get("reason")) for e in seen] == [
        ("SessionStart", "startup", None),
        ("SessionEnd", None, "prompt_input_exit"),
    ]
    assert seen[0]["session_id"] == seen[1]["session_id"]


def test_clear_ends_the_session_and_starts_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.jsonl"
    config = _config(tmp_path, log, 2)
    assert _chat(monkeypatch, config, "first\n/clear\nsecond\n/exit\n") == 0
    seen = _inputs(log)
    assert [(e["hook_event_name"], e.get("source"), e.get("reason")) for e in seen] == [
        ("SessionStart", "startup", None),
        ("SessionEnd", None, "clear"),
        ("SessionStart", "clear", None),
        ("SessionEnd", None, "prompt_input_exit"),
    ]
    first, second = seen[0]["session_id"], seen[2]["session_id"]
    assert first != second
    assert (seen[1]["session_id"], seen[3]["session_id"]) == (first, second)


@pytest.mark.anyio
async def test_a_runtime_closing_on_its_own_ends_with_other(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    config = _config(tmp_path, log, 1)
    async with agentrig.open_runtime(config) as rt:
        await rt.agent(AgentId("assistant")).run("hello")
    assert [(e["hook_event_name"], e.get("reason")) for e in _inputs(log)] == [
        ("SessionStart", None),
        ("SessionEnd", "other"),
    ]


@pytest.mark.anyio
async def test_an_unknown_reason_is_refused_by_name(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    async with agentrig.open_runtime(_config(tmp_path, log, 1)) as rt:
        with pytest.raises(AgentrigError, match=r"'quit'.*prompt_input_exit") as caught:
            await rt.agents.dispose(AgentId("assistant"), reason="quit")
        assert caught.value.code == "agent.end_reason"
        assert rt.agents.get(AgentId("assistant")) is not None  # refused before anything happened
