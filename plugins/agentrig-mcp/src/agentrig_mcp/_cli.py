"""``agentrig mcp serve -c agentrig.toml [--agent NAME]... [--http HOST:PORT]``.

Over stdio by default (stdout carries the protocol: everything else goes to stderr).  With
``--http`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` and prints that address on
stderr once listening (port 0 picks a free port).  Exit codes: 0 when the client closed the
session, 1 on a composition error (``error [code]: ...`` lines, no traceback), 2 on a usage
error, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_subcommands", "serve_command", "usage"]


def add_subcommands(mcp: argparse.ArgumentParser) -> None:
    """Add ``serve`` under the ``agentrig mcp`` parser."""
    commands = mcp.add_subparsers(title="commands", metavar="COMMAND", dest="mcp_command")
    serve = commands.add_parser(
        "serve",
        help="expose the configured tools and agents as an MCP server",
        description=(
            "Expose the tools of the chosen agents (through the same permissions and hooks) and "
            "each agent as a tool named ask_<agent>, over stdio or streamable HTTP."
        ),
    )
    serve.add_argument("-c", "--config", default="agentrig.toml", help="the composition file")
    serve.add_argument(
        "--agent",
        action="append",
        dest="agents",
        metavar="NAME",
        help="serve this agent (repeatable; default: every agent)",
    )
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP instead of stdio")
    serve.set_defaults(handler=serve_command)


def usage(args: argparse.Namespace) -> int:
    """``agentrig mcp`` without a subcommand."""
    print("usage: agentrig mcp serve [-c FILE] [--agent NAME] [--http HOST:PORT]", file=sys.stderr)
    return 2


def _address(text: str) -> tuple[str, int] | None:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        return None
    return host.strip("[]"), int(port)


def _error_lines(exc: BaseException, source: str) -> list[str]:
    from agentrig.errors import AgentrigError

    if isinstance(exc, AgentrigError):
        if exc.issues:
            return [
                f"error [{i.code}]: {source}: {i.location() + ': ' if i.path else ''}{i.message}"
                for i in exc.issues
            ]
        return [f"error [{exc.code}]: {exc}"]
    return [f"error [{type(exc).__name__}]: {exc}"]


def serve_command(args: argparse.Namespace) -> int:
    """Open the composition and serve it until the client goes away."""
    import anyio

    address = None
    if args.http is not None:
        address = _address(args.http)
        if address is None:
            print(
                f"agentrig mcp serve: error: --http wants HOST:PORT, got {args.http!r}",
                file=sys.stderr,
            )
            return 2

    async def main() -> None:
        from agentrig.kernel import env_resolver, open_runtime
        from agentrig_mcp._serve import build_server, serve_http, serve_stdio

        async with open_runtime(args.config, resolver=env_resolver()) as rt:
            server = build_server(rt, args.agents)
            if address is None:
                await serve_stdio(server)
            else:

                def announce(url: str) -> None:
                    print(f"agentrig mcp serve: listening on {url}", file=sys.stderr, flush=True)

                await serve_http(server, *address, on_listening=announce)

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        for line in _error_lines(_unwrap(exc), args.config):
            print(line, file=sys.stderr)
        return 1
    return 0


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
