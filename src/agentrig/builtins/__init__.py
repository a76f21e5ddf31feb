"""Built-in plugins and composition steps of the core distribution.

Every built-in contribution is registered through the core's own entry points (see
``pyproject.toml``), so it is listed, disabled and replaced like any third-party plugin.
The modules are private; the names here are what the rest of agentrig (the ``agentrig``
command, :mod:`agentrig.testing`) uses of them, imported on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "FallbackProvider": "agentrig.builtins._fallback",
    "PlaceholderResolver": "agentrig.builtins._dry_run",
    "Reply": "agentrig.builtins._scripted",
    "Rule": "agentrig.builtins._scripted",
    "ScriptedCall": "agentrig.builtins._scripted",
    "ScriptedProvider": "agentrig.builtins._scripted",
    "ModelListingReport": "agentrig.builtins._model_check",
    "check_listed_models": "agentrig.builtins._model_check",
    "anchored": "agentrig.builtins._tool_refs",
    "check_composition": "agentrig.builtins._compose",
    "describe_skills": "agentrig.builtins._compose_skills",
    "instruction_sources": "agentrig.builtins._instructions",
    "is_tool_ref": "agentrig.builtins._tool_refs",
}

__all__ = [
    "FallbackProvider",
    "ModelListingReport",
    "PlaceholderResolver",
    "Reply",
    "Rule",
    "ScriptedCall",
    "ScriptedProvider",
    "anchored",
    "check_composition",
    "check_listed_models",
    "describe_skills",
    "instruction_sources",
    "is_tool_ref",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from agentrig.builtins._compose import check_composition
    from agentrig.builtins._compose_skills import describe_skills
    from agentrig.builtins._dry_run import PlaceholderResolver
    from agentrig.builtins._fallback import FallbackProvider
    from agentrig.builtins._instructions import instruction_sources
    from agentrig.builtins._model_check import ModelListingReport, check_listed_models
    from agentrig.builtins._scripted import Reply, Rule, ScriptedCall, ScriptedProvider
    from agentrig.builtins._tool_refs import anchored, is_tool_ref
