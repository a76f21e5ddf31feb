"""A server cannot take the runtime down: hostile listings and results from a server built
with the official SDK, and raw JSON-RPC abuse over stdio (a crash or hang at each protocol
step, huge lines, notification storms, endless progress and pages, bad bytes, garbage) --
each ends in a clear error or a usable result, bounded in time, with nothing left running."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import RAW, alive, eventually
from agentrig_mcp import (
    McpClient,
    McpError,
    McpServerUnavailable,
    McpTool,
    StdioServerSpec,
    name_tools,
)

import agentrig
from agentrig.cancel import CancelSignal
from agentrig.ids import AgentId
from agentrig.llm import ImageBlock, TextBlock
from agentrig.plugin import TOOLS
from agentrig.tools import ToolContext

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]

HOSTILE = str(Path(__file__).with_name("_mcp_hostile.py"))
VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def hostile(**options: Any) -> StdioServerSpec:
    options.setdefault("trust_content", True)  # compared exactly: no untrusted-data label
    return StdioServerSpec(command=sys.executable, args=(HOSTILE,), **options)


def raw(mode: str, **options: Any) -> StdioServerSpec:
    options.setdefault("restart_backoff", 0)
    options.setdefault("trust_content", True)
    return StdioServerSpec(command=sys.executable, args=(RAW, mode), **options)


def ctx() -> ToolContext:
    return ToolContext(signal=CancelSignal(), tool_id="t", call_id="c", invocation_id="i")


@pytest.fixture
async def client() -> AsyncIterator[Any]:
    async with anyio.create_task_group() as tg:
        made: list[McpClient] = []

        def make(**servers: StdioServerSpec) -> McpClient:
            made.append(McpClient(servers, spawn=tg.start_soon))
            return made[-1]

        yield make
        for c in made:
            await c.aclose()


async def by_name(c: McpClient, server: str) -> dict[str, McpTool]:
    return {t.definition.name: t for t in await c.tools(server)}


async def test_names_are_valid_unique_deterministic_and_bad_entries_skipped(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    c = client(h=hostile())
    tools = await by_name(c, "h")
    ids = [t.id for t in tools.values()]
    assert all(VALID.match(i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    # a valid name keeps its id; the one that sanitises onto it gets a hash of the original
    assert tools["read_file"].id == "mcp__h__read_file"
    assert re.fullmatch(r"mcp__h__read_file_[0-9a-f]{6}", tools["read.file"].id)
    # two changed names that collide: the first in sorted order keeps the plain form
    assert tools["a.b"].id == "mcp__h__a_b"
    assert re.fullmatch(r"mcp__h__a_b_[0-9a-f]{6}", tools["a:b"].id)
    assert re.fullmatch(r"mcp__h___[0-9a-f]{6}", tools[""].id)
    assert len(tools["x" * 100].id) == 64
    # the same name twice: the first entry is kept, the second skipped with a warning
    assert "dup" in tools
    assert any("'dup': listed twice" in s for s in c.skipped["h"])
    assert any("listed twice" in r.getMessage() for r in caplog.records)
    # the ids depend on the set of names, never on their order
    names = [t.definition.name for t in tools.values()]
    assert name_tools("h", names).ids == name_tools("h", names[::-1]).ids
    assert name_tools("h", names).ids == {n: t.id for n, t in tools.items()}
    # a call reaches the tool by its original name
    out = await tools["read.file"].execute({}, ctx())
    assert out.content == "called 'read.file'"


async def test_descriptions_and_schemas_are_capped_with_a_note(client: Any) -> None:
    c = client(h=hostile(max_description_chars=1000))
    tools = await by_name(c, "h")
    verbose = tools["verbose"]
    assert len(verbose.description) < 1200
    assert "[description cut by agentrig: 1000 of 200000 characters shown]" in verbose.description
    bloated = tools["bloated"]
    assert bloated.input_schema.json_schema == {"type": "object", "properties": {}}
    assert "input schema omitted by agentrig: its JSON is" in bloated.description
    # still callable: the server checks the arguments
    assert (await bloated.execute({"p1": "x"}, ctx())).content == "called 'bloated'"


async def test_an_input_schema_whose_root_is_no_object_is_replaced_with_a_note(
    client: Any,
) -> None:
    c = client(r=raw("scalar-schema"))
    scalar = (await by_name(c, "r"))["scalar"]
    assert scalar.input_schema.json_schema == {"type": "object", "properties": {}}
    assert "its root type is 'string'" in scalar.description


async def test_structured_content_that_differs_from_the_text_is_kept(client: Any) -> None:
    c = client(h=hostile())
    out = await (await by_name(c, "h"))["mixed"].execute({}, ctx())
    assert "a summary for people" in out.content
    assert '"answer": 42' in out.content


@pytest.mark.parametrize("tool", ["spawn", "hold"])
async def test_descendants_end_with_the_server_and_closing_is_quick(
    client: Any, tmp_path: Path, tool: str
) -> None:
    marker = tmp_path / "marker"
    c = client(h=hostile(env={"MCP_TEST_MARKER": str(marker)}))
    out = await (await by_name(c, "h"))[tool].execute({}, ctx())
    grandchild = int(out.content)
    assert alive(grandchild)
    started = anyio.current_time()
    await c.aclose()
    assert anyio.current_time() - started < 5  # not the 10 s close grace
    await eventually(lambda: not alive(grandchild), 10)


async def test_a_runtime_with_a_hostile_server_opens_and_its_agent_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agentrig.mcp")
    script = [
        {"tool_calls": [{"name": "mcp__h__read_file", "arguments": {}}]},
        {"text": "done"},
    ]
    cfg = {
        "providers": {"local": {"kind": "scripted", "options": {"script": script}}},
        # more tools than the deferral threshold, a 200 KB description, no tool_search
        "agents": {"a": {"provider": "local", "model": "scripted-1", "tools": ["mcp__h"]}},
        "mcp_servers": {"h": {"command": sys.executable, "args": [HOSTILE]}},
        "permissions": {"allow": ["mcp__h__*"]},
    }
    async with agentrig.open_runtime(cfg) as rt:
        ids = [str(i) for i in rt.catalog(TOOLS).ids() if str(i).startswith("mcp__h__")]
        assert len(ids) == len(set(ids)) > 10
        # the tool the registration scanner refuses is left out, not the runtime
        assert "mcp__h__claude_helper" not in ids
        result = await rt.agent(AgentId("a")).run("go")
        assert result.value == "done"
    assert any(
        "mcp__h__claude_helper left out: refused by the registration scanner" in r.getMessage()
        for r in caplog.records
    )


# ---- raw JSON-RPC abuse --------------------------------------------------------------------


@pytest.mark.parametrize("method", ["initialize", "tools/list"])
async def test_a_crash_at_start_up_or_listing_says_why(client: Any, method: str) -> None:
    c = client(r=raw(f"crash-at:{method}"))
    with anyio.fail_after(20), pytest.raises(McpServerUnavailable) as info:
        await c.tools("r")
    message = str(info.value)
    assert "exited with status 4" in message
    assert "giving up at" in message  # its stderr, shown


async def test_a_crash_during_a_call_is_an_error_and_the_server_restarts(client: Any) -> None:
    c = client(r=raw("crash-at:tools/call"))
    probe = (await by_name(c, "r"))["probe"]
    with anyio.fail_after(20), pytest.raises(McpServerUnavailable, match="status 4"):
        await probe.execute({}, ctx())
    assert [t.definition.name for t in await c.tools("r", refresh=True)] == ["probe"]
    assert c.connection("r").starts == 2


@pytest.mark.parametrize("method", ["initialize", "tools/list", "tools/call"])
async def test_a_hang_at_each_step_times_out(client: Any, method: str) -> None:
    c = client(r=raw(f"hang-at:{method}", timeout=0.5, startup_timeout=0.5))
    with anyio.fail_after(20):
        if method != "tools/call":
            expected = "initialize within 0.5s" if method == "initialize" else "within 0.5s"
            with pytest.raises(McpError, match=re.escape(expected)):
                await c.tools("r")
            return
        probe = (await by_name(c, "r"))["probe"]
        with pytest.raises(McpError, match=r"did not answer the call to 'probe' within 0\.5s"):
            await probe.execute({}, ctx())


async def test_a_line_over_the_limit_ends_the_connection_with_an_error(client: Any) -> None:
    c = client(r=raw("huge:5000000", max_message_bytes=1_000_000))
    probe = (await by_name(c, "r"))["probe"]
    with anyio.fail_after(20), pytest.raises(McpServerUnavailable, match="over 1000000 bytes"):
        await probe.execute({}, ctx())


async def test_a_notification_storm_does_not_lose_the_answer(client: Any) -> None:
    c = client(r=raw("storm:20000"))
    probe = (await by_name(c, "r"))["probe"]
    with anyio.fail_after(60):
        assert (await probe.execute({}, ctx())).content == "after the storm"


async def test_endless_progress_is_bounded_by_max_call_time(client: Any) -> None:
    c = client(r=raw("endless-progress", timeout=0.3, max_call_time=1.5))
    probe = (await by_name(c, "r"))["probe"]
    started = anyio.current_time()
    with anyio.fail_after(20), pytest.raises(McpError, match="max_call_time") as info:
        await probe.execute({}, ctx())
    assert info.value.code == "mcp.timeout"
    # progress kept it alive past its 0.3 s timeout, up to the 1.5 s bound
    assert 1.2 < anyio.current_time() - started < 10


async def test_an_invalid_utf8_byte_keeps_the_session(client: Any) -> None:
    c = client(r=raw("bad-utf8"))
    probe = (await by_name(c, "r"))["probe"]
    assert (await probe.execute({}, ctx())).content == "caf\ufffd ok"
    assert (await probe.execute({}, ctx())).content == "caf\ufffd ok"
    assert c.connection("r").starts == 1


async def test_garbage_lines_are_ignored(client: Any) -> None:
    c = client(r=raw("garbage"))
    probe = (await by_name(c, "r"))["probe"]
    assert (await probe.execute({}, ctx())).content == "probed"


async def test_an_unknown_block_is_dropped_with_a_note(client: Any) -> None:
    c = client(r=raw("unknown-block"))
    out = await (await by_name(c, "r"))["probe"].execute({}, ctx())
    assert out.content.startswith("first\nlast\n[agentrig: dropped 1 part(s)")
    assert "'hologram'" in out.content


async def test_endless_pages_stop(client: Any) -> None:
    c = client(r=raw("endless-pages"))
    with anyio.fail_after(60):
        tools = await c.tools("r")
    assert [t.definition.name for t in tools] == ["probe"]
    assert any("past 100 pages" in s for s in c.skipped["r"])


async def test_a_bad_tool_entry_is_skipped(client: Any) -> None:
    c = client(r=raw("bad-tool"))
    tools = await c.tools("r")
    assert [t.definition.name for t in tools] == ["probe"]
    assert any("entry 1" in s for s in c.skipped["r"])


async def test_image_data_is_not_repeated_in_the_structured_content(client: Any) -> None:
    c = client(h=hostile())
    out = await (await by_name(c, "h"))["photo"].execute({}, ctx())
    texts = [b.text for b in out.content if isinstance(b, TextBlock)]
    images = [b for b in out.content if isinstance(b, ImageBlock)]
    assert len(images) == 1
    assert texts[0] == "a photo"
    assert '"caption": "a photo"' in texts[-1]
    assert "[binary data: the image or audio block of this result]" in texts[-1]
    assert sum(len(t) for t in texts) < 300  # not 400,000 characters of base64


async def test_a_server_that_offers_no_tools_is_not_asked_for_them(client: Any) -> None:
    c = client(r=raw("no-tools"))
    assert await c.tools("r") == ()
    assert c.connection("r").starts == 1
    assert c.connection("r").running  # it was never sent a request it would refuse
