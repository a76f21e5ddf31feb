"""Branded ids are checked by mypy: a ``SessionId`` is refused where an ``AgentId`` is expected.

Between packages the brands are required; at the user's edge (``rt.agent``, ``rt.agents.*``)
a plain string is accepted -- validated at run time, not by mypy.

The snippet is type-checked with ``mypy.api.run`` (strict), the way a user's code would be; the
test asserts the exact errors, and that the correct uses in the same snippet pass.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from mypy import api

SNIPPET = """
from agentrig.agent import Agent
from agentrig.ids import AgentId, SessionId, ToolId, agent_id, new_session_id, tool_id
from agentrig.kernel import Runtime
from agentrig.tools import TOOLS, Tool


async def use(rt: Runtime, agent: Agent) -> None:
    assistant: AgentId = agent_id("assistant")
    session: SessionId = new_session_id()
    rt.agent(assistant)  # fine
    rt.agent("assistant")  # fine: the user's edge takes a plain string (validated)
    await rt.agents.resume(session, agent_id=assistant)  # fine
    await rt.agents.resume("ses_1", agent_id="assistant")  # fine: plain strings
    tool: Tool = rt.catalog(TOOLS).require(tool_id("add"))  # fine: typed by the key
    rt.catalog(TOOLS).require(session)  # refused: the tools catalog is keyed by ToolId
    name: ToolId = agent.id  # refused: an agent's id is an AgentId
    same: AgentId = agent.id  # fine
"""


def _errors(tmp_path: Path) -> list[str]:
    module = tmp_path / "snippet.py"
    module.write_text(textwrap.dedent(SNIPPET), encoding="utf-8")
    stdout, stderr, status = api.run(
        [
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--hide-error-context",
            "--no-error-summary",
            "--show-error-codes",
            str(module),
        ]
    )
    assert status in (0, 1), stderr
    return [line.split(": error: ", 1)[1] for line in stdout.splitlines() if ": error: " in line]


@pytest.mark.slow
def test_mypy_refuses_one_branded_id_where_another_is_expected(tmp_path: Path) -> None:
    assert _errors(tmp_path) == [
        'Argument 1 to "require" of "ReadonlyCatalog" has incompatible type "SessionId"; '
        'expected "ToolId"  [arg-type]',
        'Incompatible types in assignment (expression has type "AgentId", variable has type '
        '"ToolId")  [assignment]',
    ]
