"""A scripted ``agentrig run`` imports only what it needs (issue 20 point 5).

Checked in a fresh interpreter through ``sys.modules`` -- never by time -- with every plugin
of this checkout installed (agentrig-server, agentrig-otel and agentrig-mcp autoload their
listener plugins and config sections on every command).
"""

from __future__ import annotations

from pathlib import Path

from cli_child_support import run_reporting, scripted_config

# what a one-reply scripted run never uses: the egress client stack (httpx, httpcore and,
# through it, trio), sqlite, rich, and the plugins' servers and SDKs
HEAVY = (
    "trio",
    "httpcore",
    "httpx",
    "sqlite3",
    "rich",
    "starlette",
    "uvicorn",
    "opentelemetry",
    "mcp",
    "agentrig.host._client",
    "agentrig.builtins._egress_http",
)

CHILD = """
import json, sys
from agentrig.cli import main
code = main()
print(json.dumps({"code": code, "loaded": [m for m in HEAVY if m in sys.modules]}))
"""

CONFIG = scripted_config("hello from the script")


def run_child(tmp_path: Path, code: str, *args: str) -> tuple[str, dict[str, object]]:
    output, report, _ = run_reporting(f"HEAVY = {HEAVY!r}\n{code}", *args, cwd=tmp_path)
    return "\n".join(output), report


def test_scripted_run_imports_no_network_stack(tmp_path: Path) -> None:
    (tmp_path / "agentrig.toml").write_text(CONFIG, encoding="utf-8")
    output, report = run_child(tmp_path, CHILD, "run", "-c", "agentrig.toml", "hi")
    assert output == "hello from the script"
    assert report == {"code": 0, "loaded": []}


def test_a_runtime_client_loads_the_egress_stack_on_first_use(tmp_path: Path) -> None:
    code = """
import json, sys, anyio
from agentrig.kernel import open_runtime
async def main():
    async with open_runtime({}, environ={}) as rt:
        before = [m for m in HEAVY if m in sys.modules]
        client = rt.http(timeout=1.0)
        import httpx
        print(json.dumps({"before": before, "client": isinstance(client, httpx.AsyncClient),
                          "after": "agentrig.builtins._egress_http" in sys.modules}))
anyio.run(main)
"""
    _, report = run_child(tmp_path, code)
    assert report == {"before": [], "client": True, "after": True}
