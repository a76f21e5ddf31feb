"""Agents: the registry, the Agent handle, runs, streams, the inbox and the loop."""

from agentrig.agent._agent import Agent, RunOptions
from agentrig.agent._child_runs import CHILD_RUNS, ChildRun, ChildRuns
from agentrig.agent._config import (
    AgentConfig,
    AgentsConfig,
    CompactionConfig,
    DelegationConfig,
    ModelSelectionConfig,
    agent_configs,
    delegation_config,
    model_selection_config,
)
from agentrig.agent._context import ContextSource, ContextUsage, measure_context
from agentrig.agent._delegation import DELEGATION_TOOL_PREFIX, Delegations, Lineage, Origin
from agentrig.agent._dispatch import CallOutcome, Gate, GateDecision
from agentrig.agent._handoff import HANDOFF_TOOL_PREFIX
from agentrig.agent._inbox import Inbox, InboxError, InboxTarget
from agentrig.agent._instructions import (
    PROJECT_INSTRUCTIONS,
    ProjectInstructions,
    with_instructions,
)
from agentrig.agent._model_choice import ModelChoiceError
from agentrig.agent._registry import AgentRegistry, AgentSetup
from agentrig.agent._results import (
    ContextWindowError,
    DeadlineExceededError,
    DelegationError,
    IdenticalToolInputError,
    ModelResponseFailure,
    ReasoningAudit,
    RefusalCode,
    RefusedCall,
    ResponseFailureKind,
    RunOutcome,
    RunRecord,
    RunResult,
    StructuredOutputError,
    ToolCallRecord,
    ToolChoiceViolationError,
    ToolResult,
)
from agentrig.agent._resume import Continuation
from agentrig.agent._run_queue import RUN_QUEUE, RunQueue
from agentrig.agent._runs import RunStream
from agentrig.agent._selection import (
    ModelPreset,
    ModelSelection,
    ModelSelectionError,
    ModelSelectionService,
    Presets,
)
from agentrig.agent._side_call import SideCall
from agentrig.agent._sync import run_sync
from agentrig.agent._turn import FORCED_SUMMARY_FALLBACK, FORCED_SUMMARY_INSTRUCTION

__all__ = [
    "CHILD_RUNS",
    "DELEGATION_TOOL_PREFIX",
    "FORCED_SUMMARY_FALLBACK",
    "FORCED_SUMMARY_INSTRUCTION",
    "HANDOFF_TOOL_PREFIX",
    "PROJECT_INSTRUCTIONS",
    "RUN_QUEUE",
    "SideCall",
    "Agent",
    "AgentConfig",
    "AgentsConfig",
    "CompactionConfig",
    "DelegationConfig",
    "ModelSelectionConfig",
    "AgentRegistry",
    "AgentSetup",
    "CallOutcome",
    "ChildRun",
    "ChildRuns",
    "ContextSource",
    "ContextUsage",
    "ContextWindowError",
    "Continuation",
    "DeadlineExceededError",
    "DelegationError",
    "ModelChoiceError",
    "Delegations",
    "Gate",
    "GateDecision",
    "IdenticalToolInputError",
    "Inbox",
    "InboxError",
    "InboxTarget",
    "Lineage",
    "Origin",
    "ProjectInstructions",
    "RefusalCode",
    "ModelPreset",
    "ModelResponseFailure",
    "ModelSelection",
    "ModelSelectionError",
    "ModelSelectionService",
    "Presets",
    "ReasoningAudit",
    "RefusedCall",
    "ResponseFailureKind",
    "RunOptions",
    "RunOutcome",
    "RunQueue",
    "RunRecord",
    "RunResult",
    "RunStream",
    "StructuredOutputError",
    "ToolCallRecord",
    "ToolChoiceViolationError",
    "ToolResult",
    "agent_configs",
    "delegation_config",
    "measure_context",
    "model_selection_config",
    "run_sync",
    "with_instructions",
]
