"""Tool schemas: the JSON-Schema subset validator, pydantic conversion and provider projection.

* :func:`validate_json` -- the one bounded traversal that checks a value against a schema;
* :class:`SchemaAdapter` / :class:`PydanticSchemaAdapter` / :func:`parse_with` -- a tool's
  input schema plus its synchronous parser;
* :func:`tool_input_schema` -- a pydantic model as agentrig's canonical schema shape;
* :func:`project_schema` with the :class:`SchemaProfile` constants -- what each provider is
  shown; validation keeps using the unprojected schema.

See ``docs/tool-schemas.md`` for the rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

from ._jsonschema import (
    DEFAULT_LIMITS,
    Limits,
    SchemaAdapter,
    SchemaContractError,
    SchemaValidationError,
    check_bounds,
    parse_with,
    validate_json,
)
from ._pydantic_schema import PydanticSchemaAdapter, SchemaConversionError, tool_input_schema

# the projection is imported on first use: a provider projects, the agent loop validates
_LAZY: dict[str, str] = {
    "ANTHROPIC": "agentrig.tools._profile_anthropic",
    "GEMINI": "agentrig.tools._profile_gemini",
    "OPENAI": "agentrig.tools._profile_openai",
    "OPENAI_STRICT": "agentrig.tools._profile_openai_strict",
    **dict.fromkeys(
        (
            "Adapted",
            "Adopted",
            "Change",
            "NodeStep",
            "ProjectionResult",
            "Rejected",
            "SchemaProfile",
            "Site",
            "describe_with_note",
            "project_schema",
        ),
        "agentrig.tools._projection",
    ),
}

__all__ = [
    "ANTHROPIC",
    "DEFAULT_LIMITS",
    "GEMINI",
    "OPENAI",
    "OPENAI_STRICT",
    "Adapted",
    "Adopted",
    "Change",
    "Limits",
    "NodeStep",
    "ProjectionResult",
    "PydanticSchemaAdapter",
    "Rejected",
    "SchemaAdapter",
    "SchemaContractError",
    "SchemaConversionError",
    "SchemaProfile",
    "SchemaValidationError",
    "Site",
    "check_bounds",
    "describe_with_note",
    "parse_with",
    "project_schema",
    "tool_input_schema",
    "validate_json",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from ._profile_anthropic import ANTHROPIC
    from ._profile_gemini import GEMINI
    from ._profile_openai import OPENAI
    from ._profile_openai_strict import OPENAI_STRICT
    from ._projection import (
        Adapted,
        Adopted,
        Change,
        NodeStep,
        ProjectionResult,
        Rejected,
        SchemaProfile,
        Site,
        describe_with_note,
        project_schema,
    )
