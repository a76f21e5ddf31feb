"""The quickstart demo: compose a runtime from agentrig.toml and show what it holds."""

from __future__ import annotations

from pathlib import Path

import anyio

import agentrig

HERE = Path(__file__).resolve().parent


async def main() -> None:
    async with agentrig.open_runtime(
        HERE / "agentrig.toml", resolver=agentrig.env_resolver()
    ) as rt:
        print("plugins discovered:")
        for row in rt.plugin_report():
            print(f"  {row.kind:<16} {row.id:<14} {row.status:<10} {row.distribution or ''}")
        for kind in ("providers", "tools", "session_stores"):
            print(f"{kind}: {', '.join(rt.catalog(kind).ids()) or '-'}")
    print("runtime closed cleanly:", rt.closed and rt.close_report == ())


if __name__ == "__main__":
    anyio.run(main)
