"""``agentrig serve keys``: make, list, show and revoke the server's API keys.

Keys are written to ``keys.json`` in the server's owner-only state directory
(``server.state_dir``, relative to the config file); a running server picks a change up on
its next request.  A new key is printed once, on stdout, and kept only as its digest.  Keys
from the config (``[server.keys.<id>]``, ``server.api_keys``) are listed too, but changed only
in the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import agentrig
from agentrig.errors import ConfigError, Issue, did_you_mean

__all__ = ["add_keys_command"]


def add_keys_command(serve: argparse.ArgumentParser) -> None:
    """Add ``keys add|list|show|revoke`` under the ``agentrig serve`` parser."""
    commands = serve.add_subparsers(title="commands", metavar="COMMAND", dest="serve_command")
    keys = commands.add_parser("keys", help="make, list, show and revoke API keys")
    actions = keys.add_subparsers(title="actions", metavar="ACTION", dest="keys_action")
    add = actions.add_parser("add", help="make a key (printed once) with its own limits")
    add.add_argument("key_id", metavar="ID", help="the key's name (letters, digits, _ . -)")
    add.add_argument(
        "--model",
        action="append",
        dest="models",
        metavar="AGENT",
        help="an exposed agent the key may call (repeatable; default: every one)",
    )
    add.add_argument("--rpm-limit", type=int, help="requests per minute")
    add.add_argument("--tpm-limit", type=int, help="tokens per minute")
    add.add_argument("--max-parallel-requests", type=int, help="requests in progress at once")
    add.add_argument("--max-budget", type=float, help="USD the key may spend")
    add.add_argument("--max-budget-tokens", type=int, help="tokens the key may use")
    add.add_argument("--budget-duration", help="how often the budget starts again (30d, 24h)")
    listing = actions.add_parser("list", help="every key, with its spend and usage")
    show = actions.add_parser("show", help="one key's limits, spend and usage")
    show.add_argument("key_id", metavar="ID")
    revoke = actions.add_parser("revoke", help="revoke a key made by 'keys add'")
    revoke.add_argument("key_id", metavar="ID")
    for parser in (add, listing, show, revoke):
        # SUPPRESS: `agentrig serve -c FILE keys ...` keeps the FILE given before
        parser.add_argument(
            "-c", "--config", default=argparse.SUPPRESS, help="the composition file"
        )
        parser.set_defaults(handler=keys_command)
    for parser in (listing, show):
        parser.add_argument("--json", action="store_true", help="print JSON")
    keys.set_defaults(handler=_usage)


def _usage(args: argparse.Namespace) -> int:
    print(
        "usage: agentrig serve keys add ID [--model AGENT]... [--rpm-limit N] [--tpm-limit N]\n"
        "                          [--max-parallel-requests N] [--max-budget USD]\n"
        "                          [--max-budget-tokens N] [--budget-duration 30d]\n"
        "       agentrig serve keys list [--json]\n"
        "       agentrig serve keys show ID [--json]\n"
        "       agentrig serve keys revoke ID",
        file=sys.stderr,
    )
    return 2


def keys_command(args: argparse.Namespace) -> int:
    """Run one ``agentrig serve keys`` action."""
    from agentrig_server._keys import KeyFile, state_root
    from agentrig_server._settings import parse_settings

    loaded = agentrig.load_config(getattr(args, "config", "agentrig.toml"))
    settings = parse_settings(loaded.sections.get("server"), source=loaded.source)
    root = state_root(settings, loaded.base_dir)
    key_file = KeyFile(root)
    action = args.keys_action
    if action == "add":
        return _add(args, settings, key_file, loaded.source)
    if action == "revoke":
        if args.key_id in settings.keys:
            raise _refused(args.key_id, "it is in the config file: remove [server.keys.<id>]")
        key_file.revoke(args.key_id)
        print(f"agentrig serve keys: revoked {args.key_id!r}", file=sys.stderr)
        return 0
    described = _described(settings, key_file)
    if action == "show":
        found = described.get(args.key_id)
        if found is None:
            raise _refused(args.key_id, f"no such key{did_you_mean(args.key_id, described)}")
        _print(found, args.json)
        return 0
    if args.json:
        print(json.dumps(list(described.values()), indent=1))
    else:
        for info in described.values():
            usage = info["usage"]
            models = ",".join(info["models"]) or "*"
            print(
                f"{info['key_alias']:<20} {info['source']:<8} {info['status']:<8} "
                f"models={models} requests={usage['requests']} "
                f"tokens={usage['total_tokens']} spend=${usage['spend']:.6g}"
            )
    return 0


def _refused(key_id: str, why: str) -> ConfigError:
    return ConfigError([Issue("server.key", f"key {key_id!r}: {why}", ("server", "keys"))])


def _add(args: argparse.Namespace, settings: Any, key_file: Any, source: str | None) -> int:
    from agentrig_server._settings import KeyLimits, check_key_id

    key_id = args.key_id
    try:
        check_key_id(key_id)
    except ValueError as exc:
        raise _refused(key_id, str(exc)) from None
    if key_id in settings.keys:
        raise _refused(key_id, "the config file has a key of that id")
    for model in args.models or ():
        if model not in settings.agents:
            hint = did_you_mean(model, settings.agents)
            exposed = ", ".join(settings.agents) or "none"
            raise _refused(key_id, f"model {model!r} is not exposed{hint} (exposed: {exposed})")
    fields = {
        "models": tuple(args.models) if args.models else None,
        "rpm_limit": args.rpm_limit,
        "tpm_limit": args.tpm_limit,
        "max_parallel_requests": args.max_parallel_requests,
        "max_budget": args.max_budget,
        "max_budget_tokens": args.max_budget_tokens,
        "budget_duration": args.budget_duration,
    }
    from pydantic import ValidationError

    try:
        limits = KeyLimits.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        issues = [
            Issue("server.key", f"{'.'.join(map(str, e['loc'])) or key_id}: {e['msg']}")
            for e in exc.errors(include_url=False)
        ]
        raise ConfigError(issues, source=source) from None
    secret = key_file.add(key_id, limits)
    print(secret)
    print(
        f"agentrig serve keys: added {key_id!r} to {Path(key_file.root) / 'keys.json'}; "
        "this is the only time the key is shown",
        file=sys.stderr,
    )
    return 0


def _described(settings: Any, key_file: Any) -> dict[str, dict[str, Any]]:
    """Every key -- config, api_keys, the file's -- with its limits and totals."""
    from agentrig_server._keys import KeyPolicy
    from agentrig_server._settings import KeyLimits
    from agentrig_server._usage import Ledger

    ledger = Ledger(key_file.root)
    described: dict[str, dict[str, Any]] = {}

    def put(policy: KeyPolicy, status: str) -> None:
        from agentrig_server._key_info import describe_key

        info = describe_key(policy, ledger.totals.get(policy.key_id))
        described[policy.key_id] = {**info, "status": status}

    for key_id, entry in settings.keys.items():
        limits = KeyLimits.model_validate(entry.model_dump(exclude={"key"}))
        put(KeyPolicy(key_id, "config", limits), "active")
    for key_id in ledger.totals:  # server.api_keys: known by the id their totals carry
        if key_id.startswith("key-") and key_id not in described:
            put(KeyPolicy(key_id, "api_keys"), "active")
    for stored in key_file.load().values():
        policy = KeyPolicy(stored.key_id, "cli", stored.limits, stored.created_at)
        put(policy, "revoked" if stored.revoked_at is not None else "active")
    return described


def _print(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(info, indent=1))
        return
    for name, value in info.items():
        if name == "usage":
            for inner, number in value.items():
                print(f"usage.{inner}: {number}")
        elif value is not None and value != []:
            print(f"{name}: {value}")
