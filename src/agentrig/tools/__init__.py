"""Tools: the contract, the ``@tool`` decorator, schemas and their validation."""

from agentrig.tools._check import CheckResult, CheckStatus
from agentrig.tools._declared import ToolPermissions, read_permissions
from agentrig.tools._gate import GateDecision
from agentrig.tools._tool import (
    TOOLS,
    TOOLSETS,
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
    is_idempotent,
    render_output,
    tool,
)

__all__ = [
    "CheckResult",
    "CheckStatus",
    "FunctionTool",
    "GateDecision",
    "PermissionArg",
    "RiskClass",
    "TOOLS",
    "TOOLSETS",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolInputError",
    "ToolOutput",
    "ToolPermissions",
    "ToolRefusedError",
    "ToolReportedError",
    "ToolTimeoutError",
    "Toolset",
    "check_input",
    "check_tool_contribution",
    "is_idempotent",
    "read_permissions",
    "render_output",
    "tool",
]
