"""MCP elicitation: a server asks the person for input (``elicitation/create``).

Offered to a server unless its ``elicitation`` is ``false``.  The question goes to the
runtime's ``elicitation`` hook (the CLI prompt on a terminal); where nobody answers -- a
script, a served request, no listener -- the answer is ``decline``.  In form mode the
server's schema must be the flat object MCP allows (each property a string, number,
integer, boolean, or a list of enum strings), and an accepted answer is checked against it
before it is sent: one that does not match is never sent, the server gets ``cancel`` (the
person's input never arrived in a usable form) and a warning says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp import types

from agentrig.diagnostics import get_logger
from agentrig.ids import AgentId
from agentrig.plugin import ElicitationAnswer, ElicitationQuestion
from agentrig.tools.schema import validate_json

if TYPE_CHECKING:
    from agentrig.kernel import HookDispatcher
    from agentrig_mcp._callers import Caller

__all__ = ["BadSchema", "answer_elicitation", "form_problem"]

_PRIMITIVES = frozenset({"string", "number", "integer", "boolean"})


class BadSchema(Exception):
    """The server's ``requestedSchema`` is not the flat form MCP allows."""


def form_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a flat form (None when it is one)."""
    if schema.get("type") != "object":
        return "requestedSchema must be an object schema"
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return "requestedSchema needs a 'properties' object"
    for name, prop in properties.items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        items = prop.get("items") if isinstance(prop, Mapping) else None
        enum_list = kind == "array" and isinstance(items, Mapping) and items.get("type") == "string"
        if kind not in _PRIMITIVES and not enum_list:
            return (
                f"property {name!r} must be a string, number, integer, boolean or a list of "
                "strings (MCP forms are flat)"
            )
    required = schema.get("required", [])
    if not isinstance(required, list) or not set(required) <= set(properties):
        return "requestedSchema 'required' must name its properties"
    return None


def _question(
    server: str, caller: Caller | None, params: types.ElicitRequestParams
) -> ElicitationQuestion:
    agent_id = AgentId(caller.agent.id) if caller is not None else None
    source = f"MCP server {server!r}"
    if isinstance(params, types.ElicitRequestURLParams):
        return ElicitationQuestion(agent_id, source, params.message, url=params.url)
    schema: dict[str, Any] = params.requested_schema
    problem = form_problem(schema)
    if problem is not None:
        raise BadSchema(problem)
    return ElicitationQuestion(agent_id, source, params.message, schema=schema)


async def _ask(hooks: HookDispatcher, question: ElicitationQuestion, caller: Caller | None) -> Any:
    if not hooks.has_listeners("elicitation"):
        return None
    if caller is None:
        return await hooks.first_result("elicitation", question)
    answer: Any = None
    # the run stopped: the question is withdrawn (cancel); while the person answers, the
    # call's timeout is suspended (the server waits for them, it is not stuck)
    with caller.signal.scope(), caller.answering():
        answer = await hooks.first_result("elicitation", question)
    return answer if not caller.signal.cancelled else ElicitationAnswer.cancel()


async def answer_elicitation(
    server: str,
    hooks: HookDispatcher,
    caller: Caller | None,
    params: types.ElicitRequestParams,
) -> types.ElicitResult:
    """Ask the person (see the module docs); :class:`BadSchema` for a form MCP forbids."""
    question = _question(server, caller, params)
    answer = await _ask(hooks, question, caller)
    log = get_logger(f"mcp.{server}")
    if not isinstance(answer, ElicitationAnswer):
        if answer is not None:
            log.warning("an elicitation listener answered %r, not an ElicitationAnswer", answer)
        return types.ElicitResult(action="decline")  # nobody could answer
    if answer.action != "accept":
        return types.ElicitResult(action=answer.action)
    if question.schema is None:
        return types.ElicitResult(action="accept")  # URL mode: consent, no content
    content = dict(answer.content or {})
    issues = validate_json(content, question.schema)
    if issues:
        why = "; ".join(f"{'.'.join(map(str, i.path)) or '(form)'}: {i.message}" for i in issues)
        log.warning("an answer to the server's form did not match its schema, not sent: %s", why)
        return types.ElicitResult(action="cancel")
    return types.ElicitResult(action="accept", content=content)
