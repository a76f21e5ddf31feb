"""MCP elicitation: a server built with the official SDK (FastMCP's ``ctx.elicit``) asks the
person for input in the middle of an agent's tool call, over stdio.

The question reaches the ``elicitation`` hook (who asks, the message, the form's schema);
an accepted form is checked against the schema before it is sent (an invalid one is not
sent: the server gets ``cancel``); declining is passed on; with nobody to answer -- no
listener, ``agentrig run`` without a terminal -- the server gets ``decline``; a schema MCP
does not allow (nested) is refused with an error naming the property.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import AGENTRIG

import agentrig
from agentrig.ids import AgentId
from agentrig.lifecycle import ElicitationAnswer, ElicitationQuestion
from agentrig.testing import Reply, ScriptedCall, ScriptedProvider

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

ASKING = str(Path(__file__).with_name("_mcp_asking_server.py"))


def config(**server: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"assistant": {"provider": "local", "model": "m", "tools": ["mcp__asking"]}},
        "mcp_servers": {
            "asking": {"command": sys.executable, "args": [ASKING], "trust_content": True, **server}
        },
        "permissions": {"allow": ["mcp__asking__*"]},
    }


class Person:
    """Answers every question with ``answer`` and keeps the questions."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.questions: list[ElicitationQuestion] = []

    @agentrig.hookimpl
    def elicitation(self, payload: ElicitationQuestion) -> object:
        self.questions.append(payload)
        return self.answer


async def run_tool(tool: str, person: object | None, **server: Any) -> str:
    provider = ScriptedProvider([Reply(tool_calls=(ScriptedCall(tool, {}),)), "done"])
    overrides = [("providers", "local", provider)]
    async with agentrig.open_runtime(config(**server), overrides=overrides) as rt:
        if person is not None:
            rt.add_plugin("person", person)
        agent = rt.agent(AgentId("assistant"))
        await agent.run("go")
        (result,) = [m.text for m in agent.session.derive_messages() if m.role == "tool"]
    return result


async def test_an_accepted_form_reaches_the_server() -> None:
    person = Person(ElicitationAnswer.accept({"name": "Ada", "guests": 2}))
    assert await run_tool("mcp__asking__book", person) == "booked Ada x2 vegetarian=False"
    (question,) = person.questions
    assert question.source == "MCP server 'asking'"
    assert question.message == "Who is coming to dinner?"
    assert question.agent_id == "assistant"
    assert question.mode == "form"
    assert question.schema is not None
    assert set(question.schema["properties"]) == {"name", "guests", "vegetarian"}
    assert set(question.schema["required"]) == {"name", "guests"}


async def test_declined_and_cancelled_answers_are_passed_on() -> None:
    declined = await run_tool("mcp__asking__book", Person(ElicitationAnswer.decline()))
    assert declined == "not booked: decline"
    cancelled = await run_tool("mcp__asking__book", Person(ElicitationAnswer.cancel()))
    assert cancelled == "not booked: cancel"


async def test_an_answer_outside_the_schema_is_never_sent(caplog: pytest.LogCaptureFixture) -> None:
    person = Person(ElicitationAnswer.accept({"name": "Ada", "guests": 50}))
    assert await run_tool("mcp__asking__book", person) == "not booked: cancel"
    assert "did not match its schema" in caplog.text
    assert "guests" in caplog.text
    missing = Person(ElicitationAnswer.accept({"guests": 2}))  # the required name left out
    assert await run_tool("mcp__asking__book", missing) == "not booked: cancel"


async def test_without_anyone_to_answer_the_server_gets_decline() -> None:
    assert await run_tool("mcp__asking__book", None) == "not booked: decline"
    # an answer that is not an ElicitationAnswer is nobody's answer either
    assert await run_tool("mcp__asking__book", Person("yes")) == "not booked: decline"


class SlowPerson:
    """Takes longer to answer than the call's ``timeout``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    @agentrig.hookimpl
    async def elicitation(self, payload: ElicitationQuestion) -> ElicitationAnswer:
        # what is tested is time passing beyond the call's timeout while a person answers
        await anyio.sleep(self.seconds)
        return ElicitationAnswer.accept({"name": "Ada", "guests": 2})


async def test_the_calls_timeout_waits_while_the_person_answers() -> None:
    # timeout = 1 s; the person takes 1.5 s: the server was waiting for us, not stuck
    result = await run_tool("mcp__asking__book", SlowPerson(1.5), timeout=1.0)
    assert result == "booked Ada x2 vegetarian=False"
    # max_call_time still bounds the whole call
    late = await run_tool("mcp__asking__book", SlowPerson(1.5), timeout=1.0, max_call_time=1.2)
    assert "did not answer the call to 'book' within 1s" in late


async def test_a_nested_form_is_refused_with_the_property_named() -> None:
    result = await run_tool("mcp__asking__nested_form", Person(ElicitationAnswer.cancel()))
    assert result.startswith("refused: property 'address' must be")


async def test_agentrig_run_without_a_terminal_declines_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(
        f"""
[providers.local]
kind = "scripted"
options.script = [
  {{ tool_calls = [{{ name = "mcp__asking__book", arguments = {{}} }}] }},
  {{ text = "done" }},
]

[agents.assistant]
provider = "local"
model = "m"
tools = ["mcp__asking"]

[mcp_servers.asking]
command = {sys.executable!r}
args = [{ASKING!r}]
trust_content = true

[permissions]
allow = ["mcp__asking__*"]
""",
        encoding="utf-8",
    )
    done = await anyio.run_process(
        [AGENTRIG, "run", "-c", str(tmp_path / "agentrig.toml"), "--json", "book dinner"],
        check=False,
        env={**os.environ},
        cwd=tmp_path,
    )
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "MCP server 'asking' asked for input ('Who is coming to dinner?')" in err
    assert "no terminal to answer: declined" in err
