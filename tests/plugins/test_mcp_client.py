"""The MCP client against a real MCP server (the SDK's FastMCP) run as a subprocess over stdio:
tool mapping, errors, a crash mid-call and the restart, a hang (timeout), cancellation,
progress, huge outputs, list_changed, resources and prompts, and no process left behind."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_support import PNG, SERVER, alive, cancel_once, eventually, marked
from agentrig_mcp import (
    McpClient,
    McpError,
    McpServerUnavailable,
    McpTool,
    StdioServerSpec,
)
from mcp import types

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError, UnknownIdError
from agentrig.ids import ToolId
from agentrig.lifecycle import Observation
from agentrig.llm import ImageBlock, TextBlock
from agentrig.tools import ToolContext, ToolInputError, ToolOutput, is_idempotent

pytestmark = [pytest.mark.anyio, pytest.mark.subprocess, pytest.mark.slow]


def stdio(*args: str, **options: Any) -> StdioServerSpec:
    # the transport's behaviour, compared exactly: without the untrusted-data label
    # (test_mcp_trust.py checks the label)
    options.setdefault("trust_content", True)
    return StdioServerSpec(command=sys.executable, args=(SERVER, *args), **options)


class Client:
    """A client whose supervisor tasks run in a task group of the test."""

    def __init__(self, client: McpClient, observed: list[Observation]) -> None:
        self.client = client
        self.observed = observed

    async def tool(self, server: str, name: str) -> McpTool:
        tools = {t.id: t for t in await self.client.tools(server)}
        return tools[ToolId(f"mcp__{server}__{name}")]


@pytest.fixture
async def make_client() -> AsyncIterator[Any]:
    async with anyio.create_task_group() as tg:
        clients: list[McpClient] = []

        def make(**servers: StdioServerSpec) -> Client:
            observed: list[Observation] = []
            client = McpClient(servers, spawn=tg.start_soon, notify=observed.append)
            clients.append(client)
            return Client(client, observed)

        yield make
        for client in clients:
            await client.aclose()


def ctx(signal: CancelSignal | None = None) -> ToolContext:
    return ToolContext(
        signal=signal or CancelSignal(), tool_id="t", call_id="call-1", invocation_id="inv-1"
    )


async def test_tools_are_named_typed_and_classified(make_client: Any) -> None:
    c = make_client(demo=stdio(), trusted=stdio(trust_annotations=True))
    tools = {t.id: t for t in await c.client.tools("demo")}
    assert "mcp__demo__add" in tools
    add = tools["mcp__demo__add"]
    assert add.description == "Add two integers."
    schema = add.input_schema.json_schema
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"a", "b"}
    # annotations are hints: read-only is believed only when config trusts the server
    assert add.risk == "modify"
    assert tools["mcp__demo__remove"].risk == "execute"
    assert tools["mcp__demo__fail"].risk == "modify"
    trusted = {t.id: t for t in await c.client.tools("trusted")}
    assert trusted["mcp__trusted__add"].risk == "inspect"
    assert trusted["mcp__trusted__remove"].risk == "execute"
    # re-run after a crash only on a trusted read-only (or idempotentHint) annotation
    assert [is_idempotent(t) for t in (add, trusted["mcp__trusted__add"])] == [False, True]
    assert not is_idempotent(trusted["mcp__trusted__remove"])


async def test_call_returns_text_and_validates_input(make_client: Any) -> None:
    c = make_client(demo=stdio())
    add = await c.tool("demo", "add")
    out = await add.execute(add.input_schema.parse({"a": 2, "b": 3}), ctx())
    assert out == ToolOutput("5", is_error=False)
    with pytest.raises(ToolInputError, match="mcp__demo__add"):
        add.input_schema.parse({"a": "two", "b": 3})


async def test_is_error_becomes_an_error_result(make_client: Any) -> None:
    c = make_client(demo=stdio())
    fail = await c.tool("demo", "fail")
    out = await fail.execute({"message": "disk on fire"}, ctx())
    assert out.is_error
    assert "disk on fire" in out.content


async def test_structured_content_and_images_are_rendered(make_client: Any) -> None:
    c = make_client(demo=stdio())
    weather = await c.tool("demo", "weather")
    out = await weather.execute({"city": "Oslo"}, ctx())
    assert '"celsius": 21' in out.content
    picture = await c.tool("demo", "picture")
    out = await picture.execute({}, ctx())
    # an image reaches the model as an image block, after the text that preceded it
    assert out.content == [
        TextBlock(text="a tiny chart"),
        ImageBlock(media_type="image/png", data=PNG),
    ]


async def test_huge_output_is_cut_with_a_note(make_client: Any) -> None:
    c = make_client(demo=stdio())
    huge = await c.tool("demo", "huge")
    out = await huge.execute({"size": 3_000_000}, ctx())
    assert len(out.content) < 100_200
    # outside an agent (which would keep the whole result on disk) the tool cuts it itself
    assert out.content.endswith(
        "[agentrig: output cut: the server sent 3000000 characters; only the first 100000 "
        "are shown and the rest was not kept]"
    )


async def test_crash_mid_call_gives_an_error_and_the_server_restarts(
    make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agentrig.mcp")
    c = make_client(demo=stdio(restart_backoff=0.01))
    whoami = await c.tool("demo", "whoami")
    first_pid = int((await whoami.execute({}, ctx())).content.split()[0])
    crash = await c.tool("demo", "crash")
    with pytest.raises(
        McpServerUnavailable,
        match=r"exited with status 3 \(its last stderr line: about to crash\) during the call",
    ):
        await crash.execute({}, ctx())
    second_pid = int((await whoami.execute({}, ctx())).content.split()[0])
    assert second_pid != first_pid
    assert c.client.connection("demo").starts == 2
    assert not alive(first_pid)
    # the server's stderr went to the log, line by line
    assert any("stderr: about to crash" in r.getMessage() for r in caplog.records)


async def test_a_server_that_cannot_start_is_reported(make_client: Any) -> None:
    c = make_client(bad=stdio("--crash-at-start", restart_backoff=0))
    with pytest.raises(McpServerUnavailable, match="'bad' is not available"):
        await c.client.tools("bad")


async def test_hanging_call_times_out_and_is_cancelled_on_the_server(
    make_client: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    c = make_client(demo=stdio(timeout=0.5, env={"MCP_TEST_MARKER": str(marker)}))
    hang = await c.tool("demo", "hang")
    with pytest.raises(McpError, match=r"did not answer the call to 'hang' within 0\.5s") as info:
        await hang.execute({}, ctx())
    assert info.value.code == "mcp.timeout"
    # notifications/cancelled reached the server: its handler was cancelled
    await eventually(marked(marker, "cancelled"))
    # the connection is still usable
    add = await c.tool("demo", "add")
    assert (await add.execute({"a": 1, "b": 1}, ctx())).content == "2"


async def test_run_cancel_signal_cancels_the_request(make_client: Any, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    c = make_client(demo=stdio(env={"MCP_TEST_MARKER": str(marker)}))
    hang = await c.tool("demo", "hang")
    signal = CancelSignal()

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once, marker, "started", signal, "user pressed stop")
            with pytest.raises(AbortError, match="user pressed stop"):
                await hang.execute({}, ctx(signal))
    await eventually(marked(marker, "cancelled"))


async def test_progress_notifications_become_observations(make_client: Any) -> None:
    c = make_client(demo=stdio())
    progress = await c.tool("demo", "progress")
    out = await progress.execute({"steps": 3}, ctx())
    assert out.content == "3 steps done"
    seen = [o for o in c.observed if o.kind == "mcp/progress"]
    assert [o.data["progress"] for o in seen] == [1, 2, 3]
    assert seen[-1].data["total"] == 3
    assert seen[-1].data["message"] == "step 3"
    assert seen[-1].data["tool"] == "mcp__demo__progress"
    # reported once: not again as the raw notification
    assert not [o for o in c.observed if o.kind == "mcp/notifications/progress"]


async def test_list_changed_marks_the_toolset_stale(make_client: Any) -> None:
    c = make_client(demo=stdio())
    grow = await c.tool("demo", "grow")
    before = await c.client.tools("demo")
    assert not c.client.is_stale("demo")
    await grow.execute({"name": "sprout"}, ctx())
    await eventually(lambda: c.client.is_stale("demo"))
    after = await c.client.tools("demo")
    assert "mcp__demo__sprout" in {t.id for t in after}
    # unchanged tools keep their identity (agents cache schemas per tool object)
    assert {t.id: t for t in after}["mcp__demo__add"] is {t.id: t for t in before}["mcp__demo__add"]
    assert any(o.kind == "mcp/notifications/tools/list_changed" for o in c.observed)


async def test_500_tools_are_listed_and_deferred_above_the_threshold(make_client: Any) -> None:
    c = make_client(many=stdio("--tools", "500", defer_above=50))
    tools = await c.client.tools("many")
    assert len(tools) == 500 + 14  # the demo tools plus t0..t499
    assert all(t.deferred is True for t in tools)
    t499 = {t.id: t for t in tools}["mcp__many__t499"]
    assert (await t499.execute({"x": 1}, ctx())).content == "500"


async def test_resources_and_prompts(make_client: Any) -> None:
    c = make_client(demo=stdio())
    resources = await c.client.list_resources("demo")
    assert [str(r.uri) for r in resources] == ["note://hello", "note://blob"]
    read = await c.client.read_resource("demo", "note://hello")
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == "hello from a resource"
    prompts = await c.client.list_prompts("demo")
    assert [p.name for p in prompts] == ["review"]
    rendered = await c.client.get_prompt("demo", "review", {"code": "x = 1"})
    first = rendered.messages[0].content
    assert isinstance(first, types.TextContent)
    assert "Please review:\nx = 1" in first.text


async def test_unknown_server_names_the_known_ones(make_client: Any) -> None:
    c = make_client(demo=stdio())
    with pytest.raises(UnknownIdError, match="did you mean 'demo'"):
        c.client.connection("dem")


async def test_servers_start_lazily_and_stop_on_close(make_client: Any) -> None:
    c = make_client(demo=stdio())
    connection = c.client.connection("demo")
    assert connection.starts == 0
    whoami = await c.tool("demo", "whoami")
    pid = int((await whoami.execute({}, ctx())).content.split()[0])
    assert connection.starts == 1
    assert alive(pid)
    await c.client.aclose()
    assert not alive(pid)
    with pytest.raises(McpServerUnavailable, match="closed"):
        await whoami.execute({}, ctx())


SUBSCRIBER = str(Path(__file__).with_name("_mcp_subscribe_server.py"))


async def test_resource_subscriptions_are_honoured(make_client: Any) -> None:
    made = make_client(
        sub=StdioServerSpec(command=sys.executable, args=(SUBSCRIBER,), trust_content=True),
        plain=stdio(),
    )
    client: McpClient = made.client
    # FastMCP does not advertise resources.subscribe: nothing is sent, the lack is named
    with pytest.raises(McpError, match="does not offer resource subscriptions") as info:
        await client.subscribe_resource("plain", "note://hello")
    assert info.value.code == "mcp.unsupported"
    await client.subscribe_resource("sub", "note://counter")
    bump = await made.tool("sub", "bump")
    out = await bump.execute({}, ctx())
    assert out.content == "subscribed=['note://counter']"  # the server got the subscription
    await eventually(lambda: "note://counter" in client.updated_resources("sub"), 10)
    updates = [o for o in made.observed if o.kind == "mcp/notifications/resources/updated"]
    assert [o.data["uri"] for o in updates] == ["note://counter"]  # not the unasked note://other
    assert client.updated_resources("sub") == {"note://counter"}
    (read,) = (await client.read_resource("sub", "note://counter")).contents
    assert isinstance(read, types.TextResourceContents)
    assert read.text == "count=1"
    assert client.updated_resources("sub") == frozenset()  # read: seen again
    # a server that crashed is subscribed again once restarted
    with pytest.raises(McpServerUnavailable):
        await bump.execute({"crash": True}, ctx())
    out = await bump.execute({}, ctx())
    assert out.content == "subscribed=['note://counter']"
    await client.unsubscribe_resource("sub", "note://counter")
    out = await bump.execute({}, ctx())
    assert out.content == "subscribed=[]"
