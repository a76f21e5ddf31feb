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
    from agentrig.kernel import Commands

__all__ = ["ServeCommand", "plugin", "serve"]


def serve(args: argparse.Namespace) -> int:
    """Run ``agentrig serve``: compose the runtime, serve until interrupted."""
    import anyio

    anyio.run(_serve, args.config, args.ui, args.host, args.port, backend="asyncio")
    return 0


async def _serve(config: str, ui: bool, host: str | None, port: int | None) -> None:
    import logging

    from agentrig.diagnostics import enable_diagnostics

    # warnings and errors on stderr: an internal error's id, shown to the client, leads to
    # its exception here
    handler = enable_diagnostics(logging.WARNING)
    try:
        await _run(config, ui, host, port)
    finally:
        logging.getLogger("agentrig").removeHandler(handler)
    print("agentrig serve: stopped", file=sys.stderr, flush=True)


async def _run(config: str, ui: bool, host: str | None, port: int | None) -> None:
    from agentrig_server._serve import AgentServer
    from agentrig_server._settings import server_settings

    async with agentrig.open_runtime(config, resolver=agentrig.env_resolver()) as rt:
        settings = server_settings(rt)
        if ui:
            settings = settings.model_copy(update={"ui": True})
        server = AgentServer(rt, settings, host=host, port=port)

        def started() -> None:
            # on stderr, like "stopped" and errors (and agentrig mcp's listening line)
            print(f"agentrig serve: listening on {server.url}", file=sys.stderr, flush=True)

        await server.run(on_started=started)


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
        from agentrig_server._keys_cli import add_keys_command  # light: no Starlette

        add_keys_command(parser)


plugin = ServeCommand()
