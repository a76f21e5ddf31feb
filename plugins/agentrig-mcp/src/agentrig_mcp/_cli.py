"""``agentrig mcp serve -c agentrig.toml [--agent NAME]... [--http HOST:PORT]``.

Over stdio by default (stdout carries the protocol: everything else goes to stderr).  With
``--http`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` and prints
``agentrig mcp: listening on URL`` on stderr once listening (port 0 picks a free port).  Exit
codes: 0 when the client closed the session, 1 on a composition error, 2 on a usage error, 130
when interrupted.  Over HTTP, ``[mcp.serve]`` in the config holds the bearer keys and the
host names and origins served (see docs/mcp.md); without keys only loopback is served.
Errors are the core's one-line ``agentrig mcp: error [code]: ...`` shape (no traceback): a
failure is raised to the ``agentrig`` command, which prints it as it prints every command's.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentrig.errors import ConfigError, Issue

if TYPE_CHECKING:
    from agentrig_mcp._config import ServeSettings

__all__ = ["add_subcommands", "login_command", "logout_command", "serve_command", "usage"]


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
    approve = commands.add_parser(
        "approve",
        help="print the approvals of the project file's servers, by content",
        description=(
            "Show each server of the project file (.mcp.json) as written, with the "
            "approved_project_servers entry that lets exactly that content start. Nothing "
            "is written: review the entries, then copy the line into [mcp]."
        ),
    )
    approve.add_argument("-c", "--config", default="agentrig.toml", help="the composition file")
    approve.add_argument("names", nargs="*", metavar="NAME", help="only these servers")
    approve.set_defaults(handler=approve_command)
    sign_in = (
        ("login", "sign in to an HTTP server with OAuth now (its oauth table)", login_command),
        ("logout", "forget a server's kept OAuth registration and tokens", logout_command),
    )
    for name, summary, handler in sign_in:
        command = commands.add_parser(name, help=summary, description=handler.__doc__)
        command.add_argument("-c", "--config", default="agentrig.toml", help="the config file")
        command.add_argument("name", metavar="NAME", help="the server")
        command.set_defaults(handler=handler)


def usage(args: argparse.Namespace) -> int:
    """``agentrig mcp`` without a subcommand."""
    print(
        "usage: agentrig mcp serve [-c FILE] [--agent NAME] [--http HOST:PORT]\n"
        "       agentrig mcp approve [-c FILE] [NAME ...]\n"
        "       agentrig mcp login [-c FILE] NAME\n"
        "       agentrig mcp logout [-c FILE] NAME",
        file=sys.stderr,
    )
    return 2


def _mcp_table(config: Path) -> dict[str, object]:
    """The config file's ``[mcp]`` table as written (read without composing a runtime)."""
    import tomllib

    try:
        table = tomllib.loads(config.read_text(encoding="utf-8")).get("mcp", {})
    except (OSError, ValueError) as exc:
        raise ConfigError([Issue("config.unreadable", str(exc))], source=str(config)) from None
    return table if isinstance(table, dict) else {}


def approve_command(args: argparse.Namespace) -> int:
    """Print each project server's entry and the approval of exactly that content."""
    import json

    from agentrig_mcp._config import mcp_json_digests, read_project_servers

    config = Path(args.config)
    table = _mcp_table(config)
    name = table.get("project_file", ".mcp.json")
    if name is False:
        print(f"agentrig {args.command}: [mcp] project_file = false: no project servers")
        return 0
    path = config.parent / str(name)
    if not path.is_file():
        print(f"agentrig {args.command}: no project file at {path}")
        return 0
    entries = read_project_servers(path)
    digests = mcp_json_digests(path)
    chosen = args.names or sorted(digests)
    unknown = [n for n in chosen if n not in digests]
    if unknown:
        raise ConfigError(
            [Issue("mcp.unknown_server", f"not in {path}: {', '.join(unknown)}")],
            source=str(path),
        )
    for server in chosen:
        print(f"# {server}: {json.dumps(entries[server], sort_keys=True)}")
    approvals = ", ".join(f'"{n}@sha256:{digests[n]}"' for n in chosen)
    print("[mcp]")
    print(f"approved_project_servers = [{approvals}]")
    return 0


def login_command(args: argparse.Namespace) -> int:
    """Start the server, signing in when no usable token is kept: the sign-in address is
    printed (and opened in the browser unless oauth.open_browser = false)."""
    import anyio

    async def main() -> None:
        from agentrig.kernel import env_resolver, open_runtime
        from agentrig_mcp._config import HttpServerSpec
        from agentrig_mcp._service import MCP

        async with open_runtime(args.config, resolver=env_resolver()) as rt:
            connection = rt.services.require(MCP).connection(args.name)
            if not isinstance(connection.spec, HttpServerSpec) or connection.spec.oauth is None:
                raise ConfigError(
                    [Issue("mcp.no_oauth", f"server {args.name!r} has no oauth table")],
                    source=rt.loaded.source,
                )
            await connection.start()
            login = connection.login
            where = login.store.path() if login is not None else "?"
            print(f"agentrig {args.command}: signed in to {args.name!r} (kept in {where})")

    anyio.run(main)  # a failure propagates: the core prints it in one line, with its code
    return 0


def logout_command(args: argparse.Namespace) -> int:
    """Remove <[mcp] state_dir>/oauth/NAME.json, so the next use signs in again (nothing is
    started). The authorization server is not told: revoke the grant there if it must end
    now."""
    from agentrig_mcp._config import McpSettings
    from agentrig_mcp._oauth import OAuthStore

    if not re.fullmatch(r"[A-Za-z0-9_-]{1,48}", args.name):
        raise ConfigError([Issue("mcp.unknown_server", f"{args.name!r} is not a server name")])
    config = Path(args.config)
    state_dir = Path(str(_mcp_table(config).get("state_dir", McpSettings().state_dir)))
    root = config.parent / state_dir.expanduser() / "oauth"
    if not root.is_dir() or not OAuthStore(root, args.name, "").forget():
        print(f"agentrig {args.command}: no sign-in kept for {args.name!r} in {root}")
        return 0
    print(f"agentrig {args.command}: signed out of {args.name!r} (removed from {root})")
    return 0


def _address(text: str) -> tuple[str, int] | None:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        return None
    return host.strip("[]"), int(port)


def _no_grants_on_stdio(settings: ServeSettings, source: str | None) -> None:
    """Grants need a caller to authenticate, which stdio has not: refuse, never ignore."""
    if settings.clients:
        raise ConfigError(
            [
                Issue(
                    "mcp.unauthenticated_grant",
                    "[mcp.serve] clients grant tools to authenticated callers, and stdio has "
                    "none to authenticate; serve with --http, or remove the clients",
                    ("mcp", "serve", "clients"),
                )
            ],
            source=source,
        )


def serve_command(args: argparse.Namespace) -> int:
    """Open the composition and serve it until the client goes away."""
    import anyio

    address = None
    if args.http is not None:
        address = _address(args.http)
        if address is None:
            print(
                f"agentrig {args.command}: error [mcp.bad_address]: --http wants HOST:PORT, "
                f"got {args.http!r}",
                file=sys.stderr,
            )
            return 2

    async def main() -> None:
        from agentrig.kernel import env_resolver, open_runtime
        from agentrig_mcp._config import McpSettings
        from agentrig_mcp._serve import build_server, serve_http, serve_stdio
        from agentrig_mcp._serve_http import check_bind, resolve_access

        async with open_runtime(args.config, resolver=env_resolver()) as rt:
            server = build_server(rt, args.agents)
            settings = (rt.config_section("mcp", McpSettings) or McpSettings()).serve
            if address is None:
                _no_grants_on_stdio(settings, rt.loaded.source)
                await serve_stdio(server)
            else:
                # before a key is read
                check_bind(address[0], [*settings.api_keys, *(c.key for c in settings.clients)])
                keys, policy = await resolve_access(rt, settings)
                where = [("mcp", "serve", "clients", i) for i in range(len(settings.clients))]
                policy.check_names(server.served_names(), where, source=rt.loaded.source)

                def announce(url: str) -> None:
                    # the shape of every agentrig command's lines (agentrig serve's too)
                    print(
                        f"agentrig {args.command}: listening on {url}", file=sys.stderr, flush=True
                    )

                await serve_http(
                    server,
                    *address,
                    on_listening=announce,
                    keys=keys,
                    allowed_hosts=settings.allowed_hosts,
                    allowed_origins=settings.allowed_origins,
                    policy=policy if settings.clients else None,
                )

    anyio.run(main)  # a failure propagates: the core prints it in one line, with its code
    return 0
