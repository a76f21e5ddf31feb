"""Every event fired from the loop with Claude Code's payload (issue 13, points 2 and 4).

Real hook programs (bash, Python and Node, ``scripts/record.*``) record the JSON they get
and the transcript they read at ``transcript_path``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from lifecycle_support import LANGUAGES, RAN, hook, records, run_agent

import agentrig
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.errors import ConfigError
from agentrig.hooks import FIREABLE_EVENTS, NOT_FIRED, HookRunner, event_name_problem
from agentrig.ids import AgentId
from agentrig.lifecycle import PermissionQuestion

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess]

COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}


def _one_tool_round(command: str = "ls") -> list[Reply | str]:
    call = ScriptedCall("Bash", {"command": command}, id="c1")
    return [Reply(text="Let me look.", tool_calls=(call,)), "All done."]


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
async def test_every_event_fires_in_order_with_claude_codes_payload(
    tmp_path: Path, language: str
) -> None:
    log = tmp_path / "log.jsonl"
    names = [e for e in FIREABLE_EVENTS if e not in ("PermissionRequest", "PostToolUseFailure")]
    out = await run_agent(
        tmp_path,
        {name: [hook(log, language)] for name in names},
        _one_tool_round(),
        prompt="please list",
    )
    assert out.result.value == "All done."
    seen = records(log)
    assert [r["input"]["hook_event_name"] for r in seen] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "Notification",
        "SessionEnd",
    ]
    by_name = {r["input"]["hook_event_name"]: r["input"] for r in seen}
    for record in seen:
        event = record["input"]
        assert set(event) >= COMMON, event
        assert event["session_id"] == out.result.invocation.session_id
        assert event["cwd"] == str(tmp_path)
        assert event["permission_mode"] == "bypassPermissions"
        assert Path(event["transcript_path"]).name.endswith(".jsonl")
        assert record["project_dir"] == str(tmp_path)  # CLAUDE_PROJECT_DIR
    assert by_name["SessionStart"]["source"] == "startup"
    assert by_name["UserPromptSubmit"]["prompt"] == "please list"
    pre, post = by_name["PreToolUse"], by_name["PostToolUse"]
    assert (pre["tool_name"], pre["tool_input"], pre["tool_use_id"]) == (
        "Bash",
        {"command": "ls"},
        "c1",
    )
    assert (post["tool_name"], post["tool_input"], post["tool_response"]) == (
        "Bash",
        {"command": "ls"},
        "ran ls",
    )
    assert by_name["Stop"]["stop_hook_active"] is False
    assert by_name["Stop"]["last_assistant_message"] == "All done."
    assert by_name["Notification"]["notification_type"] == "idle_prompt"
    assert by_name["Notification"]["message"]
    assert by_name["SessionEnd"]["reason"] == "other"


@pytest.mark.parametrize("language", ["python", "node"])
async def test_the_transcript_is_current_before_each_hook(tmp_path: Path, language: str) -> None:
    log = tmp_path / "log.jsonl"
    await run_agent(
        tmp_path,
        {name: [hook(log, language)] for name in ("UserPromptSubmit", "PostToolUse", "Stop")},
        _one_tool_round(),
        prompt="please list",
    )
    seen = {r["input"]["hook_event_name"]: r["transcript"] for r in records(log)}
    # UserPromptSubmit runs before the prompt enters the conversation
    assert seen["UserPromptSubmit"] == []
    post = seen["PostToolUse"]
    assert [(line["type"], line["message"]["role"]) for line in post] == [
        ("user", "user"),
        ("assistant", "assistant"),
    ]
    assert post[0]["message"]["content"] == [{"type": "text", "text": "please list"}]
    assert post[1]["message"]["content"][1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "Bash",
        "input": {"command": "ls"},
    }
    stop = seen["Stop"]
    assert stop[:2] == post
    assert stop[2]["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "ran ls", "is_error": False}
    ]
    assert stop[3]["message"]["content"] == [{"type": "text", "text": "All done."}]
    assert [line["parentUuid"] for line in stop[1:]] == [line["uuid"] for line in stop[:-1]]
    assert {line["sessionId"] for line in stop} == {stop[0]["sessionId"]}


async def test_a_failing_call_fires_post_tool_use_failure(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    await run_agent(
        tmp_path,
        {"PostToolUse": [hook(log)], "PostToolUseFailure": [hook(log, "node")]},
        [Reply(tool_calls=(ScriptedCall("Bash", {"command": "fail now"}, id="c9"),)), "ok"],
    )
    (record,) = records(log)
    event = record["input"]
    assert event["hook_event_name"] == "PostToolUseFailure"
    assert event["tool_use_id"] == "c9"
    assert "fail now failed" in event["error"]
    assert event["is_interrupt"] is False


async def test_permission_request_and_the_waiting_notification_fire_before_the_approver(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log.jsonl"
    asked: list[PermissionQuestion] = []

    class Approver:
        @agentrig.hookimpl
        def permission_approver(self, payload: PermissionQuestion) -> str:
            asked.append(payload)
            return "allow"

    out = await run_agent(
        tmp_path,
        {
            "PermissionRequest": [hook(log, "bash", matcher="Bash")],
            "Notification": [hook(log, "node", matcher="permission_prompt")],
        },
        _one_tool_round("make build"),
        plugins=[Approver()],
        permissions={"mode": "default"},
    )
    assert out.tool_texts() == ["ran make build"]
    seen = [r["input"] for r in records(log)]
    assert [e["hook_event_name"] for e in seen] == ["PermissionRequest", "Notification"]
    assert seen[0]["tool_name"] == "Bash"
    assert seen[0]["tool_input"] == {"command": "make build"}
    assert seen[0]["permission_mode"] == "default"
    assert seen[1]["notification_type"] == "permission_prompt"
    assert "Bash" in seen[1]["message"]
    assert len(asked) == 1


async def test_session_start_fires_once_per_session(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    provider_replies: list[Reply | str] = ["one", "two"]
    RAN.clear()
    from agentrig.builtins._scripted import ScriptedProvider
    from agentrig.kernel import load_config

    provider = ScriptedProvider(provider_replies)
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m"}},
        "hooks": {"SessionStart": [hook(log)], "UserPromptSubmit": [hook(log, "bash")]},
    }
    loaded = attrs.evolve(load_config(config), base_dir=tmp_path)
    async with agentrig.open_runtime(
        loaded, overrides=[("providers", "local", provider)], environ={}
    ) as rt:
        await rt.agent(AgentId("a")).run("first")
        await rt.agent(AgentId("a")).run("second")
    assert [r["input"]["hook_event_name"] for r in records(log)] == [
        "SessionStart",
        "UserPromptSubmit",
        "UserPromptSubmit",
    ]


# ---- config: the one list of fireable events -------------------------------------------------


def test_fireable_events_are_one_list_and_unfireable_ones_are_refused_with_the_reason() -> None:
    for name in FIREABLE_EVENTS:
        assert event_name_problem(name) is None
    assert not NOT_FIRED  # every Claude Code event agentrig knows by name is fired
    problem = event_name_problem("PreToolUser")
    assert problem is not None
    assert "did you mean 'PreToolUse'?" in problem


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("PostToolBatch", "unknown hook event"),
        ("Stopp", "did you mean 'Stop'?"),
    ],
)
async def test_a_config_naming_an_unfireable_or_unknown_event_is_refused(
    tmp_path: Path, name: str, expected: str
) -> None:
    entry: dict[str, Any] = {"strategy": "command", "options": {"command": "true"}}
    with pytest.raises(ConfigError) as caught:
        await run_agent(tmp_path, {name: [entry]}, ["hi"])
    assert expected in str(caught.value)
    assert "hooks" in str(caught.value)
    assert name in str(caught.value)
    with pytest.raises(ConfigError):
        HookRunner({name: [entry]}, {})


async def test_a_resumed_session_starts_with_source_resume(tmp_path: Path) -> None:
    import attrs

    from agentrig.builtins._scripted import ScriptedProvider
    from agentrig.kernel import load_config

    log = tmp_path / "log.jsonl"
    config = {
        "providers": {"local": {"kind": "scripted"}},
        "session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(tmp_path)}}},
        "hooks": {"SessionStart": [hook(log)]},
    }
    loaded = attrs.evolve(load_config(config), base_dir=tmp_path)
    settings: dict[str, Any] = {"provider": "local", "model": "m", "session_store": "disk"}
    first = ScriptedProvider(["one"])
    async with agentrig.open_runtime(
        loaded, overrides=[("providers", "local", first)], environ={}
    ) as rt:
        agent = await rt.agents.create(AgentId("w"), **settings)
        await agent.run("first")
        session_id = agent.session_id
    second = ScriptedProvider(["two"])
    async with agentrig.open_runtime(
        loaded, overrides=[("providers", "local", second)], environ={}
    ) as rt:
        resumed = await rt.agents.resume(session_id, agent_id=AgentId("w"), **settings)
        await resumed.run("second")
    starts = [r["input"] for r in records(log)]
    assert [(s["source"], s["session_id"]) for s in starts] == [
        ("startup", session_id),
        ("resume", session_id),
    ]
