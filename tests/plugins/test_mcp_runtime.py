"""agentrig-mcp as an installed plugin: ``[mcp_servers.*]`` in a composition, the tools in an
agent's runs (through permissions and hooks), ``.mcp.json`` approval, deferral, cancellation,
``tools/list_changed`` between turns, the egress policy and no process left behind."""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import AGENTRIG, RAW, SERVER, alive, cancel_once, eventually, marked
from agentrig_mcp import MCP, McpClient, McpError, StdioServerSpec, name_tools

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.ids import AgentId
from agentrig.lifecycle import Observation
from agentrig.plugin import TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]


def server(*args: str, **options: Any) -> dict[str, Any]:
    # results compared exactly: without the untrusted-data label (test_mcp_trust.py has it)
    return {"command": sys.executable, "args": [SERVER, *args], "trust_content": True, **options}


def config(script: list[dict[str, Any]], tools: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        "agents": {"assistant": {"provider": "local", "model": "scripted-1", "tools": tools}},
        **extra,
    }


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def tool_texts(rt: agentrig.Runtime) -> list[tuple[str, str, str]]:
    messages = rt.agent(AgentId("assistant")).session.derive_messages()
    return [(m.name, m.status, m.text) for m in messages if m.role == "tool"]


async def test_an_agent_calls_mcp_tools_through_permissions() -> None:
    cfg = config(
        [call("mcp__demo__add", a=2, b=3), call("mcp__demo__remove", path="/"), {"text": "done"}],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__add"], "deny": ["mcp__demo__remove"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        assert "mcp__demo__add" in rt.catalog(TOOLS).ids()
        result = await rt.agent(AgentId("assistant")).run("go")
        assert result.value == "done"
        results = tool_texts(rt)
    assert results[0] == ("mcp__demo__add", "ok", "5")
    assert results[1][0] == "mcp__demo__remove"
    assert results[1][1] == "error"
    assert "removed" not in results[1][2]


async def test_is_error_reaches_the_model_as_an_error_result() -> None:
    cfg = config(
        [call("mcp__demo__fail", message="no such repo"), {"text": "sorry"}],
        ["mcp__demo__fail"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        [(name, status, text)] = tool_texts(rt)
    assert (name, status) == ("mcp__demo__fail", "error")
    assert "no such repo" in text


async def test_servers_stop_with_the_runtime() -> None:
    cfg = config([call("mcp__demo__whoami"), {"text": "ok"}], ["mcp__demo"])
    cfg["mcp_servers"] = {"demo": server()}
    cfg["permissions"] = {"allow": ["mcp__demo__whoami"]}
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("who?")
        pid = int(tool_texts(rt)[0][2].split()[0])
        assert alive(pid)
    assert not alive(pid)


async def test_unused_servers_do_not_start_until_used() -> None:
    cfg = config([], [], mcp_servers={"idle": server(), "eager": server(startup="open")})
    async with agentrig.open_runtime(cfg) as rt:
        client = rt.services.require(MCP)
        assert isinstance(client, McpClient)
        assert client.connection("eager").starts == 1  # startup = "open"
        assert "mcp__eager__add" in rt.catalog(TOOLS).ids()
        assert client.connection("idle").starts == 0
        listed = await client.list_resources("idle")
        assert str(listed[0].uri) == "note://hello"
        assert client.connection("idle").starts == 1


async def test_project_file_servers_need_approval(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "proj": {
                        "command": "${PYTHON}",
                        "args": [SERVER],
                        "env": {"MCP_TEST_GREETING": "${GREETING:-hello}"},
                    }
                }
            }
        )
    )
    toml = tmp_path / "agentrig.toml"
    base = """
[providers.local]
kind = "scripted"
options.script = [
  { tool_calls = [{ name = "mcp__proj__whoami", arguments = {} }] },
  { text = "ok" },
]

[agents.assistant]
provider = "local"
model = "scripted-1"
tools = ["mcp__proj"]

[permissions]
allow = ["mcp__proj__*"]
"""
    toml.write_text(base)
    env = {"PYTHON": sys.executable}
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(toml, resolver=env.get):
            pass
    assert info.value.issues[0].code == "mcp.not_approved"
    assert info.value.issues[0].location() == "agents.assistant.tools[0]"
    # approval by name alone is refused: it names the content to approve
    toml.write_text(base + '\n[mcp]\napproved_project_servers = ["proj"]\n')
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(toml, resolver=env.get):
            pass
    assert info.value.issues[0].code == "mcp.approval_by_name"
    # `agentrig mcp approve` prints the approval of exactly this content
    code, printed = await approve(toml)
    assert code == 0
    line = printed.splitlines()[-1]
    assert line.startswith('approved_project_servers = ["proj@sha256:')
    toml.write_text(base + "\n[mcp]\n" + line + "\n")
    async with agentrig.open_runtime(toml, resolver=env.get) as rt:
        await rt.agent(AgentId("assistant")).run("who?")
        assert tool_texts(rt)[0][2].endswith(" hello")
    # a changed entry is not approved any more: it asks again, saying what changed
    project = tmp_path / ".mcp.json"
    changed = json.loads(project.read_text())
    changed["mcpServers"]["proj"]["args"].append("--tools=1")
    project.write_text(json.dumps(changed))
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(toml, resolver=env.get):
            pass
    assert info.value.issues[0].code == "mcp.not_approved"
    assert "changed since it was approved" in info.value.issues[0].message


async def approve(toml: Path) -> tuple[int, str]:
    done = await anyio.run_process([AGENTRIG, "mcp", "approve", "-c", str(toml)], check=False)
    return done.returncode, done.stdout.decode()


async def test_unknown_and_disabled_servers_are_refused() -> None:
    cfg = config([], ["mcp__dmeo"], mcp_servers={"demo": server()})
    with pytest.raises(ConfigError, match="did you mean 'demo'"):
        async with agentrig.open_runtime(cfg):
            pass
    cfg = config([], ["mcp__demo"], mcp_servers={"demo": server(enabled=False)})
    with pytest.raises(ConfigError, match="disabled"):
        async with agentrig.open_runtime(cfg):
            pass


async def test_bad_server_config_names_the_key() -> None:
    cfg = config([], [], mcp_servers={"demo": {"command": "x", "timout": 3}})
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(cfg):
            pass
    assert [i.location() for i in info.value.issues] == ["mcp_servers.demo.timout"]


async def test_large_servers_are_deferred_and_found_through_tool_search() -> None:
    cfg = config(
        [
            call("tool_search", query="Numbered tool 499"),
            call("mcp__many__t499", x=1),
            {"text": "found it"},
        ],
        ["mcp__many", "tool_search"],
        mcp_servers={"many": server("--tools", "500", defer_above=50, resident_tools=["add"])},
        permissions={"allow": ["mcp__many__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        agent = rt.agent(AgentId("assistant"))
        offered = {t.id for t in agent.offered_tools()}
        assert "mcp__many__t499" not in offered
        assert offered == {"tool_search", "mcp__many__add"}
        await agent.run("find the tool")
        results = tool_texts(rt)
    assert "mcp__many__t499" in results[0][2]
    assert results[1] == ("mcp__many__t499", "ok", "500")


async def test_progress_becomes_observations() -> None:
    seen: list[Observation] = []

    class Watcher:
        @agentrig.hookimpl
        def observe(self, payload: Observation) -> None:
            if payload.kind == "mcp/progress":
                seen.append(payload)

    cfg = config(
        [call("mcp__demo__progress", steps=2), {"text": "ok"}],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg, plugins=[("watcher", Watcher())]) as rt:
        await rt.agent(AgentId("assistant")).run("go")
    assert [o.data["progress"] for o in seen] == [1, 2]
    assert seen[0].agent_id == "assistant"


async def test_cancelling_a_run_cancels_the_mcp_request(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    cfg = config(
        [call("mcp__demo__hang"), {"text": "never"}],
        ["mcp__demo"],
        mcp_servers={"demo": server(env={"MCP_TEST_MARKER": str(marker)})},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        signal = CancelSignal()

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once, marker, "started", signal, "user pressed stop")
            result = await rt.agent(AgentId("assistant")).run("go", signal=signal)
        assert result.interrupted
        await eventually(marked(marker, "cancelled"))
        [(name, status, text)] = tool_texts(rt)
    assert (name, status) == ("mcp__demo__hang", "error")
    assert "interrupted" in text


async def test_list_changed_refreshes_the_tools_between_turns() -> None:
    cfg = config(
        [
            call("mcp__demo__grow", name="sprout"),
            {"text": "grown"},
            call("mcp__demo__sprout"),
            {"text": "called"},
        ],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        agent = rt.agent(AgentId("assistant"))
        await agent.run("grow")
        client = rt.services.require(MCP)
        await eventually(lambda: client.is_stale("demo"))
        assert "mcp__demo__sprout" not in {t.id for t in agent.all_tools()}
        await agent.run("call it")
        assert "mcp__demo__sprout" in {t.id for t in agent.all_tools()}
        results = tool_texts(rt)
    assert results[-1] == ("mcp__demo__sprout", "ok", "sprout says hi")


async def test_tools_added_later_pass_the_start_up_gate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a server adds, after a first call, a tool the registration scanner refuses, one with a
    # 200 KB description and two names that collide once made valid: the next turn sees each
    # handled as at start-up, and a plain tool added alongside works
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    dotted = name_tools("demo", ["sum_up", "sum.up"]).ids["sum.up"]
    cfg = config(
        [
            call("mcp__demo__smuggle"),
            {"text": "smuggled"},
            call("mcp__demo__claude_helper"),
            call("mcp__demo__sane"),
            call("mcp__demo__sum_up"),
            call(str(dotted)),
            {"text": "called"},
        ],
        ["mcp__demo"],
        # untrusted content (the default): descriptions carry the label, as at start-up
        mcp_servers={
            "demo": {"command": sys.executable, "args": [SERVER], "max_description_chars": 1000}
        },
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        agent = rt.agent(AgentId("assistant"))
        await agent.run("smuggle")
        await eventually(lambda: rt.services.require(MCP).is_stale("demo"))
        await agent.run("use them")
        tools = {str(t.id): t for t in agent.all_tools()}
        results = tool_texts(rt)[-4:]
    # (a) refused with a warning, and a call to it is a call to no tool
    assert "mcp__demo__claude_helper" not in tools
    assert any(
        "mcp__demo__claude_helper left out: refused by the registration scanner" in r.getMessage()
        for r in caplog.records
    )
    name, status, text = results[0]
    assert (name, status) == ("mcp__demo__claude_helper", "skipped")
    assert "is not available" in text
    # (b) capped, and labelled as the server's words
    verbose = tools["mcp__demo__verbose"].description
    assert verbose.startswith("[untrusted, from the MCP server 'demo'] ")
    assert "[description cut by agentrig: 1000 of 200000 characters shown]" in verbose
    assert len(verbose) < 1200
    # (c) disambiguated: both names reach their own tool
    assert str(dotted) != "mcp__demo__sum_up"
    assert str(dotted) in tools
    assert [(status, text.split("\n")[-1]) for _, status, text in results[1:]] == [
        ("ok", "sane says hi"),
        ("ok", "plain sum_up"),
        ("ok", "dotted sum.up"),
    ]
    assert all(text.startswith("[data from the MCP server 'demo'") for *_, text in results[1:])


async def test_claude_code_style_hooks_match_mcp_tool_names(tmp_path: Path) -> None:
    # a PreToolUse command hook (exit 2 = deny) with Claude Code's matcher for MCP tools
    script = tmp_path / "deny.py"
    script.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "print('blocked ' + event['tool_name'], file=sys.stderr)\n"
        "sys.exit(2)\n"
    )
    cfg = config(
        [call("mcp__demo__add", a=1, b=2), {"text": "done"}],
        ["mcp__demo"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
        hooks={
            "PreToolUse": [
                {
                    "strategy": "command",
                    "matcher": "mcp__.*",
                    "options": {"command": [sys.executable, str(script)]},
                }
            ]
        },
    )
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        [(name, status, text)] = tool_texts(rt)
    assert (name, status) == ("mcp__demo__add", "error")
    assert "blocked mcp__demo__add" in text


async def test_env_references_resolve_through_the_callers_resolver() -> None:
    cfg = config(
        [call("mcp__demo__whoami"), {"text": "ok"}],
        ["mcp__demo"],
        mcp_servers={"demo": server(env={"MCP_TEST_GREETING": "$ENV:GREETING"})},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg, resolver={"GREETING": "bonjour"}.get) as rt:
        await rt.agent(AgentId("assistant")).run("who?")
        assert tool_texts(rt)[0][2].endswith(" bonjour")
    with pytest.raises(ConfigError) as info:
        async with agentrig.open_runtime(cfg, resolver=dict[str, str]().get):
            pass
    assert info.value.issues[0].location() == "mcp_servers.demo.env.MCP_TEST_GREETING"


async def test_a_model_lists_and_reads_resources_through_tools() -> None:
    cfg = config(
        [
            call("list_mcp_resources"),
            call("read_mcp_resource", server="demo", uri="note://hello"),
            call("read_mcp_resource", server="demo", uri="note://missing"),
            call("read_mcp_resource", server="demo", uri="note://blob"),
            {"text": "read"},
        ],
        ["mcp_resources"],
        mcp_servers={
            "demo": server(),
            # a server without resources is left out, one that cannot start says so
            "tools_only": {"command": sys.executable, "args": [RAW, ""], "trust_content": True},
            "broken": {
                "command": sys.executable,
                "args": [RAW, "crash-at:initialize"],
                "trust_content": True,
            },
        },
    )
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("what is there?")
        listed, read, missing, blob = tool_texts(rt)
    assert listed[1] == "ok"
    entries = json.loads(listed[2])
    assert entries[:2] == [
        {
            "server": "demo",
            "uri": "note://hello",
            "name": "hello",
            "mimeType": "text/plain",
            "description": "A greeting.",
        },
        {
            "server": "demo",
            "uri": "note://blob",
            "name": "blob",
            "mimeType": "text/plain",
            "description": "Text sent as a blob.",
        },
    ]
    assert len(entries) == 3
    assert entries[2]["server"] == "broken"
    assert "exited with status 4" in entries[2]["error"]
    assert read[1:] == ("ok", "hello from a resource")
    assert missing[1] == "error"
    assert "mcp.error" in missing[2]
    # a text/plain blob is read as its text, not a placeholder
    assert blob[1:] == ("ok", "[resource note://blob]\nplain text in a blob, caf\u00e9")


async def test_a_cut_result_says_its_true_size_and_the_whole_is_kept(tmp_path: Path) -> None:
    cfg = config(
        [call("mcp__demo__huge", size=300_000), {"text": "done"}],
        ["mcp__demo__huge"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    cfg["agents"]["assistant"]["state_dir"] = str(tmp_path / "state")
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        ((_, status, text),) = tool_texts(rt)
    assert status == "ok"
    assert "it is 300000 bytes long and only the first 65536 bytes are shown" in text
    saved = re.search(r"saved in the file (\S+);", text)
    assert saved is not None
    assert await anyio.Path(saved[1]).read_text() == "x" * 300_000


async def test_an_image_result_reaches_the_model_as_an_image_block() -> None:
    from _mcp_support import PNG

    from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
    from agentrig.llm import ImageBlock, TextBlock, ToolMessage

    provider = ScriptedProvider(
        [Reply(tool_calls=(ScriptedCall("mcp__demo__picture", {}),)), "a small chart"]
    )
    cfg = config(
        [],
        ["mcp__demo__picture"],
        mcp_servers={"demo": server()},
        permissions={"allow": ["mcp__demo__*"]},
    )
    async with agentrig.open_runtime(cfg, overrides=[("providers", "local", provider)]) as rt:
        result = await rt.agent(AgentId("assistant")).run("show me")
    assert result.value == "a small chart"
    seen = [m for m in provider.requests[1].messages if isinstance(m, ToolMessage)]
    assert [m.content for m in seen] == [
        (TextBlock(text="a tiny chart"), ImageBlock(media_type="image/png", data=PNG))
    ]


async def test_servers_learn_their_roots_and_unoffered_features_are_named(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cfg = config(
        [call("mcp__demo__roots"), call("mcp__plain__roots"), {"text": "done"}],
        ["mcp__demo__roots", "mcp__plain__roots"],
        mcp_servers={"demo": server(roots=[str(work)]), "plain": server(roots=[])},
        permissions={"allow": ["mcp__demo__*", "mcp__plain__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("where?")
        (_, status, text), (_, plain_status, plain_text) = tool_texts(rt)
        # a server without resources is told so, not sent a request it would refuse
        client = rt.services.require(MCP)
        raw = McpClient(
            {"raw": StdioServerSpec(command=sys.executable, args=(RAW, ""))},
            spawn=rt.spawn,
        )
        try:
            with pytest.raises(McpError, match="does not offer resources") as info:
                await raw.list_resources("raw")
            assert info.value.code == "mcp.unsupported"
            with pytest.raises(McpError, match="does not offer prompts"):
                await raw.get_prompt("raw", "review")
        finally:
            await raw.aclose()
        assert client.connection("demo").spec.roots == (str(work.resolve()),)
    assert (status, text) == ("ok", work.resolve().as_uri())
    # no roots configured: none advertised, and the server's request is refused
    assert plain_status == "error"
    assert "roots" in plain_text.lower() or "not supported" in plain_text.lower()


async def test_configured_subscriptions_show_the_model_what_changed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``subscribe`` URIs are subscribed once the server starts; a changed one is marked
    ``updated`` in ``list_mcp_resources`` until the model reads it.  A server that did not
    advertise subscriptions is told nothing, and a warning names what it lacks."""
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    subscriber = str(Path(__file__).with_name("_mcp_subscribe_server.py"))
    listing = call("list_mcp_resources", server="sub")
    cfg = config(
        [
            call("mcp__sub__bump"),
            listing,
            call("read_mcp_resource", server="sub", uri="note://counter"),
            listing,
            call("mcp__plain__add", a=1, b=1),
            {"text": "done"},
        ],
        ["mcp__sub", "mcp__plain__add", "mcp_resources"],
        mcp_servers={
            "sub": {
                "command": sys.executable,
                "args": [subscriber],
                "trust_content": True,
                "subscribe": ["note://counter"],
            },
            "plain": server(subscribe=["note://hello"]),
        },
        permissions={"allow": ["mcp__sub__*", "mcp__plain__*"]},
    )
    async with agentrig.open_runtime(cfg) as rt:
        await rt.agent(AgentId("assistant")).run("go")
        texts = [text for _name, _status, text in tool_texts(rt)]
    assert texts[0] == "subscribed=['note://counter']"
    before, after = json.loads(texts[1]), json.loads(texts[3])
    assert [(e["uri"], e.get("updated")) for e in before] == [
        ("note://counter", True),
        ("note://other", None),  # announced by the server, never subscribed: not marked
    ]
    assert texts[2] == "count=1"
    assert [e.get("updated") for e in after] == [None, None]  # read since
    assert texts[4] == "2"
    assert any(
        "does not offer resource subscriptions" in r.getMessage()
        and "note://hello" in r.getMessage()
        for r in caplog.records
    )
