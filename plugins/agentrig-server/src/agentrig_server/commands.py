"""``agentrig serve``: the command this distribution adds to the ``agentrig`` CLI.

This module is the plugin's entry point (``agentrig.plugins``: ``server``); it imports nothing
heavy, so listing commands or composing a runtime does not load Starlette or uvicorn.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NamedTuple

import agentrig

if TYPE_CHECKING:
    from agentrig.kernel import Runtime
    from agentrig.plugin import Commands

__all__ = ["ServeCommand", "plugin", "serve"]


def serve(args: argparse.Namespace) -> int:
    """Run ``agentrig serve``: compose the runtime, serve until interrupted (exit 1 when the
    start-up model check finds a model its endpoint does not list)."""
    import anyio

    options = _Start(args.ui, args.host, args.port, args.validate_models)
    code: int = anyio.run(_serve, args.config, options, backend="asyncio")
    return code


class _Start(NamedTuple):
    """The command line's choices for one start."""

    ui: bool
    host: str | None
    port: int | None
    validate_models: bool


async def _serve(config: str, options: _Start) -> int:
    import logging

    from agentrig.diagnostics import enable_diagnostics

    # warnings and errors on stderr: an internal error's id, shown to the client, leads to
    # its exception here
    logger = logging.getLogger("agentrig")
    level = logger.level  # restored with the handler: an embedding host keeps its own setting
    handler = enable_diagnostics(logging.WARNING)
    try:
        served = await _run(config, options)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    if not served:
        return 1
    print("agentrig serve: stopped", file=sys.stderr, flush=True)
    return 0


async def _models_listed(rt: Runtime) -> bool:
    """The start-up check: is every configured model listed by its endpoint?  Each model
    that is not is one error line; a provider that cannot list is one warning line."""
    from agentrig.builtins import check_listed_models

    report = await check_listed_models(rt)
    for note in report.notes:
        print(f"agentrig serve: warning [{note.code}]: {note}", file=sys.stderr, flush=True)
    for issue in report.problems:
        print(f"agentrig serve: error [{issue.code}]: {issue}", file=sys.stderr, flush=True)
    return report.ok


async def _run(config: str, options: _Start) -> bool:
    """Serve until interrupted (True), or refuse to start (False: a model is not listed)."""
    from agentrig_server._serve import AgentServer
    from agentrig_server._settings import server_settings

    async with agentrig.open_runtime(config, resolver=agentrig.env_resolver()) as rt:
        settings = server_settings(rt)
        if options.ui:
            settings = settings.model_copy(update={"ui": True})
        if (options.validate_models or settings.validate_models) and not await _models_listed(rt):
            return False
        server = AgentServer(rt, settings, host=options.host, port=options.port)

        def started() -> None:
            # on stderr, like "stopped" and errors (and agentrig mcp's listening line)
            print(f"agentrig serve: listening on {server.url}", file=sys.stderr, flush=True)

        await server.run(on_started=started)
    return True


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
        parser.add_argument(
            "--validate-models",
            action="store_true",
            help="before listening, ask each provider's endpoint for its models and refuse "
            "to start when a configured model is not listed (one error line per model; "
            "default: server.validate_models)",
        )
        from agentrig_server._keys_cli import add_keys_command  # light: no Starlette

        add_keys_command(parser)


plugin = ServeCommand()
