"""A served agent offers the workspace toolset its config lists: its tools run server-side
against the workspace, Bash in bubblewrap, and the client sees only the answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import openai
import pytest
from server_support import KEY, RunningServer, scripted_config

from agentrig.testing import Reply, ScriptedCall, ScriptedProvider

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
]


@pytest.mark.slow
def test_a_served_agent_runs_the_workspace_tools(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the launch is on Friday\n")
    calls = (
        ScriptedCall("Read", {"file_path": "notes.txt"}),
        ScriptedCall("Bash", {"command": "wc -l < notes.txt"}),
    )
    provider = ScriptedProvider([Reply(tool_calls=calls), "The launch is on Friday."])
    agents = {"assistant": {"provider": "local", "model": "m", "tools": ["workspace"]}}
    config = scripted_config(
        agents=agents,
        repeat=False,
        extra={
            "permissions": {"workspace": str(tmp_path), "allow": ["Bash(wc -l:*)"]},
            "workspace": {"sandbox": {"backend": "bubblewrap"}},
        },
    )
    settings = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}
    overrides = [("providers", "local", provider)]
    with RunningServer(config, settings, environ={"SERVER_KEY": KEY}, overrides=overrides) as srv:
        client = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        answer = client.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": "When is the launch?"}]
        )
        assert answer.choices[0].message.content == "The launch is on Friday."
    results = [m.text for m in provider.requests[1].messages if m.role == "tool"]
    assert results == ["     1\tthe launch is on Friday", "1\n"]
