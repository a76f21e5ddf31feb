"""An agentrig tool call to a stdio MCP server vs the same call with a bare SDK ClientSession.

    python benchmarks/bench_mcp.py [--quick]

Both sides talk to their own copy of the same server program (the SDK's MCPServer with one
``add`` tool, in a subprocess over stdio).  The agentrig side calls the tool through
``agent.call_tool`` -- argument validation, the permission gate, ``tool_execution`` hooks,
the MCP client's connection supervision, timeout and cancellation bookkeeping.  The floor is
``ClientSession.call_tool`` on an SDK ``stdio_client``.  Rounds alternate between the two
sides; the result is the median of the per-round times.  Issue 15 target: ratio <= 1.3.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import compare, gc_paused, median

SERVER = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("bench", log_level="WARNING")


@app.tool()
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b


app.run("stdio")
"""

CONFIG: dict[str, Any] = {
    "providers": {"local": {"kind": "scripted", "options": {"script": []}}},
    "agents": {"bench": {"provider": "local", "model": "scripted-1"}},
    "permissions": {"allow": ["mcp__bench__add"]},
}


async def bench(calls: int, rounds: int, server_file: Path) -> tuple[float, float]:
    from agentrig_mcp import McpClient, StdioServerSpec
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    import agentrig

    params = StdioServerParameters(command=sys.executable, args=[str(server_file)])
    spec = StdioServerSpec(command=sys.executable, args=(str(server_file),))
    floor_rounds: list[float] = []
    rig_rounds: list[float] = []
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
        agentrig.open_runtime(CONFIG) as rt,
        anyio.create_task_group() as tg,
    ):
        await session.initialize()
        client = McpClient({"bench": spec}, spawn=tg.start_soon)
        tools = list(await client.tools("bench"))
        agent = await rt.agents.create(
            "bench-mcp", provider="local", model="scripted-1", tools=tools
        )
        arguments = {"a": 2, "b": 3}
        # warm up both paths (imports, caches, the servers' first requests)
        for _ in range(20):
            await session.call_tool("add", arguments)
            await agent.call_tool("mcp__bench__add", arguments)
        with gc_paused():
            for _ in range(rounds):
                start = time.perf_counter_ns()
                for _ in range(calls):
                    await session.call_tool("add", arguments)
                floor_rounds.append((time.perf_counter_ns() - start) / calls / 1000)
                start = time.perf_counter_ns()
                for _ in range(calls):
                    result = await agent.call_tool("mcp__bench__add", arguments)
                rig_rounds.append((time.perf_counter_ns() - start) / calls / 1000)
                # the answer follows the untrusted-data label
                assert result.value.text.endswith("\n5"), result.value
        await client.aclose()
        tg.cancel_scope.cancel()
    return median(rig_rounds), median(floor_rounds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="finish in well under a minute")
    args = parser.parse_args()
    calls, rounds = (100, 5) if args.quick else (300, 15)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        server_file = Path(tmp) / "bench_server.py"
        server_file.write_text(SERVER)
        rig, floor = anyio.run(bench, calls, rounds, server_file)
    compare(
        "mcp.stdio_tool_call",
        rig,
        floor,
        "us/call",
        1.3,
        calls=calls,
        rounds=rounds,
        floor_name="bare SDK ClientSession.call_tool",
    )


if __name__ == "__main__":
    main()
