"""``agentrig serve``: the command this distribution adds to the ``agentrig`` CLI.

This module is the plugin's entry point (``agentrig.plugins``: ``server``); it imports nothing
heavy, so listing commands or composing a runtime does not load Starlette or uvicorn.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import agentrig

if TYPE_CHECKING:
    from agentrig.kernel import Commands, LoadedConfig
    from agentrig_server._settings import ServerSettings

__all__ = ["ServeCommand", "plugin", "serve"]


def serve(args: argparse.Namespace) -> int:
    """Run ``agentrig serve``: compose the runtime, serve until interrupted."""
    import anyio

    from agentrig_server._config import load_server_config

    loaded, settings = load_server_config(args.config)
    if args.ui:
        settings = settings.model_copy(update={"ui": True})
    anyio.run(_serve, loaded, settings, args.host, args.port, backend="asyncio")
    return 0


async def _serve(
    loaded: LoadedConfig, settings: ServerSettings, host: str | None, port: int | None
) -> None:
    from agentrig_server._serve import AgentServer

    async with agentrig.open_runtime(loaded, resolver=agentrig.env_resolver()) as rt:
        server = AgentServer(rt, settings, host=host, port=port)

        def started() -> None:
            print(f"agentrig serve: listening on {server.url}", flush=True)

        await server.run(on_started=started)
    print("agentrig serve: stopped", file=sys.stderr, flush=True)


class ServeCommand:
    """Adds ``agentrig serve`` through the ``register_commands`` hook."""

    @agentrig.hookimpl
    def register_commands(self, payload: Commands) -> None:
        parser = payload.add(
            "serve",
            help="serve agents as OpenAI- and Anthropic-compatible models",
            handler=serve,
        )
        parser.add_argument("-c", "--config", default="agentrig.toml", help="the composition")
        parser.add_argument("--host", default=None, help="listen address (default: server.host)")
        parser.add_argument("--port", type=int, default=None, help="port (default: server.port)")
        parser.add_argument("--ui", action="store_true", help="serve the chat page at /")


plugin = ServeCommand()
