"""``agentrig models``: the default model selection and the presets to pick from.

``agentrig models`` shows the current selection (and where it comes from: the settings file
or the config) and every preset the configured roots hold now; ``agentrig models set``
saves a preset, or a provider and model, as the default -- checked against the runtime
first, then written to ``[model_selection] settings``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from agentrig.cli._common import EXIT_OK, Subparsers, UsageError, config_path

if TYPE_CHECKING:
    from agentrig.agent import ModelSelection, ModelSelectionService

__all__ = ["register"]

_HELP = """\
Show the default model selection of a composition and the presets its [model_selection]
roots hold now (read again on every call), or save a new default with 'set'.

  agentrig models                       the selection, where it comes from, the presets
  agentrig models set PRESET            save the preset PRESET as the default
  agentrig models set --provider ID --model NAME [--effort LEVEL]

Agents with use_selection = true start on the default; 'set' writes it to the settings
file ([model_selection] settings) and is refused when none is configured.
"""

_EFFORTS = ("none", "minimal", "low", "medium", "high", "max", "auto")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "models",
        help="show or save the default model selection; list the model presets",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-c", "--config", default="agentrig.toml", help="the composition")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", dest="action")
    save = actions.add_parser("set", help="save a preset, or a provider and model, as default")
    save.add_argument("preset", nargs="?", help="the preset to save as the default")
    save.add_argument("--provider", help="the provider id ([providers.<id>])")
    save.add_argument("--model", help="the model name")
    save.add_argument("--effort", choices=_EFFORTS, help="the reasoning effort")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    path = config_path(args.config)
    if getattr(args, "action", None) == "set":
        _check_set_arguments(args)
    result: int = anyio.run(_models, str(path), args)
    return result


def _check_set_arguments(args: argparse.Namespace) -> None:
    by_name = args.preset is not None
    by_model = args.provider is not None or args.model is not None or args.effort is not None
    if by_name == by_model or (by_model and (args.provider is None or args.model is None)):
        raise UsageError(
            "give a preset, or --provider and --model (with --effort if wanted)",
            code="cli.models_set",
        )


async def _models(path: str, args: argparse.Namespace) -> int:
    import agentrig

    async with agentrig.open_runtime(path, resolver=agentrig.env_resolver()) as rt:
        service = rt.model_selection
        if getattr(args, "action", None) == "set":
            saved = service.save(_chosen(service, args))
            print(f"saved {_describe(saved)} to {service.settings_path}")
            return EXIT_OK
        _show(service, as_json=args.json)
    return EXIT_OK


def _chosen(service: ModelSelectionService, args: argparse.Namespace) -> ModelSelection:
    from agentrig.agent import ModelSelection
    from agentrig.ids import ProviderId

    if args.preset is not None:
        return service.presets.resolve(args.preset).selection
    return ModelSelection(ProviderId(args.provider), args.model, args.effort)


def _describe(selection: ModelSelection) -> str:
    effort = (
        f", reasoning effort {selection.reasoning_effort}" if selection.reasoning_effort else ""
    )
    return f"model {selection.model} (provider {selection.provider}{effort})"


def _show(service: ModelSelectionService, *, as_json: bool) -> None:
    found = service.lookup()
    presets = service.presets.list()
    if as_json:
        data: dict[str, Any] = {
            "selection": _plain(found[0]) if found else None,
            "source": found[1] if found else None,
            "settings": str(service.settings_path) if service.settings_path else None,
            "presets": [
                {
                    "name": p.name,
                    **_plain(p.selection),
                    "description": p.description,
                    "path": str(p.path),
                }
                for p in presets
            ],
        }
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    if found is None:
        print("no model selected (agentrig models set ...)")
    else:
        print(f"{_describe(found[0])}, from the {found[1]}")
    if not presets:
        print("no presets")
        return
    print("presets:")
    width = max(len(p.name) for p in presets)
    for preset in presets:
        about = f"  {preset.description}" if preset.description else ""
        print(f"  {preset.name:<{width}}  {_describe(preset.selection)}{about}")


def _plain(selection: ModelSelection) -> dict[str, Any]:
    return {
        "provider": selection.provider,
        "model": selection.model,
        "reasoning_effort": selection.reasoning_effort,
    }
