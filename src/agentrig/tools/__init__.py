"""Tools: the contract, the ``@tool`` decorator, schemas and their validation."""

from agentrig.tools._gate import GateDecision
from agentrig.tools._tool import (
    FunctionTool,
    PermissionArg,
    RiskClass,
    Tool,
    ToolContext,
    ToolDefinitionError,
    ToolInputError,
    ToolOutput,
    ToolRefusedError,
    ToolReportedError,
    Toolset,
    ToolTimeoutError,
    check_input,
    check_tool_contribution,
    render_output,
    tool,
)

__all__ = [
    "FunctionTool",
    "GateDecision",
    "PermissionArg",
    "RiskClass",
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
    "render_output",
    "tool",
]
