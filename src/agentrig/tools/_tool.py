"""The tool contract: what a tool is, how it is declared, and how a contribution is checked.

A tool has an id, a description, an input schema adapter (``json_schema`` shown to the
model, ``parse`` validating what the model sent), a risk class, an optional permission
argument, ``authorize`` and ``execute(input, ctx)``.  The quickest way to get one is to
decorate a typed function with :func:`tool`; the function's parameters become a pydantic
model, which generates both the schema and the validation.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Protocol,
    TypeVar,
    final,
    get_type_hints,
    overload,
    runtime_checkable,
)

import anyio
import anyio.to_thread
import attrs
from pydantic import BaseModel, ConfigDict, create_model

from agentrig.cancel import CancelSignal, is_abort
from agentrig.catalog import CatalogKey
from agentrig.errors import AgentrigError, Issue
from agentrig.ids import ToolId
from agentrig.ids import tool_id as _validate_tool_id
from agentrig.kernel import Services
from agentrig.tools._check import CheckResult
from agentrig.tools._jsonschema import SchemaContractError, parse_with

if TYPE_CHECKING:
    from agentrig.tools._declared import ToolPermissions
    from agentrig.tools.schema import SchemaAdapter

__all__ = [
    "FunctionTool",
    "PermissionArg",
    "RiskClass",
    "TOOLS",
    "TOOLSETS",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolInputError",
    "ToolOutput",
    "ToolRefusedError",
    "ToolReportedError",
    "ToolTimeoutError",
    "Toolset",
    "check_input",
    "check_tool_contribution",
    "is_idempotent",
    "render_output",
    "tool",
]

RiskClass = Literal["inspect", "modify", "execute"]
ArgKind = Literal["path", "url", "command", "text"]


class ToolDefinitionError(AgentrigError, TypeError):
    """A tool declaration breaks the contract (refused at registration)."""

    code = "tool.definition"
    category = "user"


class ToolInputError(AgentrigError, ValueError):
    """The arguments a model sent do not validate against the tool's schema."""

    code = "tool.input"
    category = "user"
    recoverable = True


class ToolRefusedError(AgentrigError, PermissionError):
    """The call was refused before the tool ran (permission rules, a blocker, a hook)."""

    code = "tool.refused"
    category = "user"


class ToolReportedError(AgentrigError):
    """The tool answered with an error result (``ToolOutput(is_error=True)``); the message is
    the text the model would see."""

    code = "tool.error"
    category = "user"
    recoverable = True


class ToolTimeoutError(AgentrigError, TimeoutError):
    """A call ran past its tool's timeout and was stopped; the model gets this as an error
    result and the run goes on."""

    code = "tool.timeout"
    category = "user"
    recoverable = True


@attrs.frozen(slots=True)
class PermissionArg:
    """Which argument permission patterns are scoped to, and how to read it."""

    key: str
    kind: ArgKind


@attrs.frozen(slots=True)
class ToolContext:
    """What a running tool gets besides its input: the run's cancel signal and identities.

    ``timeout`` is the limit applied to this call in seconds (``None``: none); ``alongside``
    says the call runs concurrently with other calls of its reply.  A synchronous function
    tool runs in a worker thread when either holds, so the limit can abandon it and the calls
    overlap.
    """

    signal: CancelSignal
    tool_id: str
    call_id: str
    invocation_id: str
    agent: Any = None
    services: Services = attrs.field(factory=Services)
    timeout: float | None = None
    alongside: bool = False


@attrs.frozen(slots=True)
class ToolOutput:
    """A tool result with extras: ``concludes_turn`` ends the turn at this step; ``view`` is
    display-only data for a UI (never sent to the model or persisted in history)."""

    content: Any
    concludes_turn: bool = False
    view: Any = attrs.field(default=None, eq=False)
    is_error: bool = False


@runtime_checkable
class Tool(Protocol):
    """The contract every tool satisfies."""

    @property
    def id(self) -> ToolId: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> SchemaAdapter[Any]: ...

    @property
    def risk(self) -> RiskClass | None: ...

    @property
    def permission_arg(self) -> PermissionArg | None: ...

    def authorize(self, input: Any, ctx: ToolContext) -> Awaitable[None] | None: ...

    def execute(self, input: Any, ctx: ToolContext) -> Any: ...

    def parse_output(self, value: Any) -> Any: ...


@final
@attrs.frozen(slots=True)
class Toolset:
    """Several tools contributed under one entry-point name."""

    tools: tuple[Tool, ...]


def render_output(value: Any) -> str:
    """The text a model sees for a tool's return value."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


_F = TypeVar("_F", bound=Callable[..., Any])


@final
class FunctionTool:
    """A tool built from a typed function (see :func:`tool`)."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        id: str | None = None,
        description: str | None = None,
        risk: RiskClass | None = None,
        permission_arg: PermissionArg | None = None,
        deferred: bool | None = None,
        authorize: Callable[[Any, ToolContext], Awaitable[None] | None] | None = None,
        concurrent: bool | None = None,
        timeout: float | None = None,
        idempotent: bool | None = None,
    ) -> None:
        from agentrig.tools.schema import PydanticSchemaAdapter

        self.function = function
        name = id or function.__name__
        try:
            self._id = _validate_tool_id(name)
        except AgentrigError as exc:
            raise ToolDefinitionError(f"tool {name!r}: {exc}") from None
        doc = inspect.getdoc(function) or ""
        self._description = description if description is not None else doc.strip()
        if not self._description:
            raise ToolDefinitionError(
                f"tool {name!r} has no description: add a docstring or pass description="
            )
        self._risk = risk
        self._permission_arg = permission_arg
        self.deferred = deferred
        #: may run alongside the other calls of one reply (None: when ``risk="inspect"``)
        self.concurrent = concurrent
        if idempotent is not None and not isinstance(idempotent, bool):
            raise ToolDefinitionError(
                f"tool {name!r}: idempotent must be True, False or None, got {idempotent!r}"
            )
        #: running it again with the same input changes nothing more (None: when
        #: ``risk="inspect"``); a journal re-runs such a call cut off by a crash
        self.idempotent = idempotent
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise ToolDefinitionError(
                f"tool {name!r}: timeout must be a positive number of seconds, got {timeout!r}"
            )
        #: seconds one call may run before it is stopped (None: no limit of its own)
        self.timeout = float(timeout) if timeout is not None else None
        self._authorize = authorize
        self._is_async = inspect.iscoroutinefunction(function)
        self._ctx_param, self.input_model = _input_model(function, name)
        self._parameters = tuple(self.input_model.model_fields)  # the function's, in order
        self._schema: SchemaAdapter[BaseModel] = PydanticSchemaAdapter(self.input_model)
        if permission_arg is not None and permission_arg.key not in self.input_model.model_fields:
            raise ToolDefinitionError(
                f"tool {name!r}: permission argument {permission_arg.key!r} is not a parameter "
                f"(parameters: {', '.join(self.input_model.model_fields) or 'none'})"
            )
        functools.update_wrapper(self, function)

    @property
    def id(self) -> ToolId:
        return self._id

    @property
    def description(self) -> str:
        return self._description

    @property
    def input_schema(self) -> SchemaAdapter[BaseModel]:
        return self._schema

    @property
    def risk(self) -> RiskClass | None:
        return self._risk

    @property
    def permission_arg(self) -> PermissionArg | None:
        return self._permission_arg

    @functools.cached_property
    def permissions(self) -> ToolPermissions:
        """What the permission evaluator reads about this tool, read once from its declaration.

        The declaration never changes, so the gate takes this instead of reading it again on
        every call; a tool that replaces this one is another object with its own.  Read at the
        first call, not at declaration: an unknown risk class is refused at registration.
        """
        from agentrig.tools._declared import read_permissions

        return read_permissions(self)

    def authorize(self, input: Any, ctx: ToolContext) -> Awaitable[None] | None:
        if self._authorize is None:
            return None
        return self._authorize(input, ctx)

    def _kwargs(self, input: BaseModel, ctx: ToolContext) -> dict[str, Any]:
        kwargs = {}  # a loop: a comprehension is a function call of its own
        for name in self._parameters:
            kwargs[name] = getattr(input, name)
        if self._ctx_param is not None:
            kwargs[self._ctx_param] = ctx
        return kwargs

    async def execute(self, input: BaseModel, ctx: ToolContext) -> Any:
        kwargs = self._kwargs(input, ctx)
        if self._is_async:
            return await self.function(**kwargs)
        if ctx.timeout is not None or ctx.alongside:
            # a worker thread, so a timeout or cancellation can abandon a blocking body (it
            # finishes in the background, its value dropped) and overlapping calls overlap
            call = functools.partial(self.function, **kwargs)
            return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        return self.function(**kwargs)  # alone and unbounded: inline, no thread hop

    def parse_output(self, value: Any) -> Any:
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (handy in tests)."""
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<FunctionTool {self._id!r} risk={self._risk}>"


def _input_model(function: Callable[..., Any], name: str) -> tuple[str | None, type[BaseModel]]:
    signature = inspect.signature(function)
    try:
        hints = get_type_hints(function, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(f"tool {name!r}: cannot resolve annotations: {exc}") from None
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {name!r}: *{param.name} / **{param.name} cannot be described to a model; "
                "declare each parameter explicitly"
            )
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if annotation is ToolContext:
            ctx_param = param.name
            continue
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {param.name!r} needs a type annotation"
            )
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model = create_model(
        f"{name}_input",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
    return ctx_param, model


@overload
def tool(function: _F, /) -> FunctionTool: ...


@overload
def tool(
    *,
    id: str | None = None,
    description: str | None = None,
    risk: RiskClass | None = None,
    permission_arg: PermissionArg | tuple[str, ArgKind] | None = None,
    deferred: bool | None = None,
    concurrent: bool | None = None,
    timeout: float | None = None,
    idempotent: bool | None = None,
) -> Callable[[_F], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    id: str | None = None,
    description: str | None = None,
    risk: RiskClass | None = None,
    permission_arg: PermissionArg | tuple[str, ArgKind] | None = None,
    deferred: bool | None = None,
    concurrent: bool | None = None,
    timeout: float | None = None,
    idempotent: bool | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Declare a tool from a typed function (sync or async).

    The docstring is the description; parameters become the input schema; a parameter
    annotated :class:`ToolContext` receives the call's context (cancel signal, ids)::

        @agentrig.tool(risk="inspect")
        async def read_file(path: str, ctx: ToolContext) -> str:
            \"\"\"Read a UTF-8 text file.\"\"\"

    ``concurrent=True`` lets the calls of one model reply run alongside each other (the
    default for ``risk="inspect"``; ``False`` opts an inspect tool out); ``timeout`` stops a
    call after that many seconds and gives the model an error result.  ``idempotent=True``
    says a second run with the same input has no further effect: a journaled run cut off by
    a crash while the call ran runs it again instead of waiting for the host (the default
    for ``risk="inspect"``; ``False`` opts an inspect tool out).
    """
    arg = PermissionArg(*permission_arg) if isinstance(permission_arg, tuple) else permission_arg

    def build(fn: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            fn,
            id=id,
            description=description,
            risk=risk,
            permission_arg=arg,
            deferred=deferred,
            concurrent=concurrent,
            timeout=timeout,
            idempotent=idempotent,
        )

    if function is not None:
        return build(function)
    return build


_RISKS = {"inspect", "modify", "execute", None}


def _check_one(obj: object) -> Tool:
    from agentrig.kernel import ContractViolation

    if not isinstance(obj, Tool):
        missing = [
            name
            for name in (
                "id",
                "description",
                "input_schema",
                "risk",
                "permission_arg",
                "authorize",
                "execute",
                "parse_output",
            )
            if not hasattr(obj, name)
        ]
        raise ContractViolation(
            f"{type(obj).__name__} is not a tool: missing {', '.join(missing)} "
            "(decorate a function with @agentrig.tool or implement agentrig.tools.Tool)"
        )
    try:
        _validate_tool_id(obj.id)
    except AgentrigError as exc:
        raise ContractViolation(f"tool id: {exc}") from None
    if not isinstance(obj.description, str) or not obj.description.strip():
        raise ContractViolation(f"tool {obj.id!r}: description must be a non-empty string")
    if obj.risk not in _RISKS:
        raise ContractViolation(
            f"tool {obj.id!r}: risk must be inspect, modify, execute or None, got {obj.risk!r}"
        )
    if getattr(obj, "idempotent", None) not in (True, False, None):
        raise ContractViolation(
            f"tool {obj.id!r}: idempotent must be True, False or None, "
            f"got {getattr(obj, 'idempotent', None)!r}"
        )
    parse = getattr(obj.input_schema, "parse", None)
    if inspect.iscoroutinefunction(parse) or inspect.isasyncgenfunction(parse):
        raise ContractViolation(
            f"tool {obj.id!r}: input_schema.parse is async; parse must be synchronous (it "
            "validates and converts) -- do asynchronous work in the tool's execute or authorize"
        )
    schema = obj.input_schema.json_schema
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ContractViolation(
            f"tool {obj.id!r}: the input schema root must be an object schema "
            "(wrap a single value in a model with one field)"
        )
    return obj


def is_idempotent(tool: Tool) -> bool:
    """Whether a call of ``tool`` cut off by a crash may simply run again: its declared
    ``idempotent`` (an optional attribute, like ``concurrent``), else whether its risk is
    ``inspect`` (reading changes nothing)."""
    declared = getattr(tool, "idempotent", None)
    if declared is None:
        return tool.risk == "inspect"
    return declared is True


def check_input(tool: Tool, arguments: Mapping[str, Any]) -> CheckResult[Any]:
    """Check ``arguments`` against ``tool``'s input schema without running anything.

    ``passed`` carries the parsed input as ``value``; ``failed`` carries the issues (where and
    why).  A broken schema adapter (an awaitable from ``parse``) is a program error: raised.
    """
    try:
        value = parse_with(tool.input_schema, dict(arguments))
    except SchemaContractError:
        raise
    except Exception as exc:
        if is_abort(exc):
            raise
        issues = exc.issues if isinstance(exc, AgentrigError) else ()
        if not issues:
            issues = (Issue("value.invalid", f"{type(exc).__name__}: {exc}"),)
        return CheckResult.fail(*issues)
    return CheckResult.ok(value)


def check_tool_contribution(obj: object, name: str | None = None) -> tuple[Tool, ...]:
    """Normalise a ``agentrig.tools`` contribution into a tuple of checked tools.

    An entry point's name is the id it registers: a single tool contributed as entry ``name``
    must have the id ``name``.  A :class:`Toolset` (or a list of tools) declares the ids it
    brings -- its tools' ids, each once -- and its entry name stands for all of them.
    """
    from agentrig.kernel import ContractViolation

    single = False
    if isinstance(obj, Toolset):
        items: Iterable[object] = obj.tools
    elif isinstance(obj, list | tuple):
        items = obj
    elif inspect.isfunction(obj):
        raise ContractViolation(
            f"{obj.__qualname__} is a plain function; decorate it with @agentrig.tool"
        )
    else:
        items, single = (obj,), True
    tools = tuple(_check_one(item) for item in items)
    if not tools:
        raise ContractViolation("an empty toolset contributes nothing")
    if single and name is not None and tools[0].id != name:
        raise ContractViolation(
            f"the entry point is named {name!r} but its tool's id is {tools[0].id!r}; an entry "
            f"point's name is the id it registers -- rename the entry point or the tool "
            f"(@tool(id={name!r})), or contribute a Toolset, which declares the ids it brings"
        )
    seen: set[str] = set()
    for tool in tools:
        if tool.id in seen:
            raise ContractViolation(f"the toolset brings the tool id {tool.id!r} twice")
        seen.add(tool.id)
    return tools


TOOLS: CatalogKey[ToolId, Tool] = CatalogKey("tools")
"""The runtime's tools by id: ``rt.catalog(TOOLS).require(tool_id("add"))``."""
TOOLSETS: CatalogKey[str, tuple[ToolId, ...]] = CatalogKey("toolsets")
"""Names usable in ``[agents.x] tools`` that stand for several tools (an entry point's name,
``mcp__<server>``, a code reference ``pkg.mod:function``) with the tool ids of each."""
