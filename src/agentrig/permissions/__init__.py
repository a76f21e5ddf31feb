"""Permission evaluation: one pure, deterministic order for every caller, plus action blockers.

Build a :class:`PermissionContext` (workspace root, mode, parsed :class:`PermissionRules`,
an optional ceiling and remembered consent), describe the call with a
:class:`PermissionCall`, and ask :func:`evaluate_permission`; resolve an ``ask`` with
:func:`resolve`.  :func:`withheld_tools` says which tools never to offer the model, and a
:class:`RuleBasedActionBlocker` refuses blocked actions after permission.  The rule grammar,
argument kinds and the order are described in ``docs/permissions.md``.
"""

from agentrig.permissions._approval import (
    Approval,
    Approver,
    ConsentMemory,
    Resolution,
    ResolutionReason,
    resolve,
)
from agentrig.permissions._blockers import (
    DEFAULT_BLOCK_RULES,
    ActionBlocked,
    ActionBlockedError,
    ActionBlocker,
    BlockRule,
    RuleBasedActionBlocker,
    first_block,
)
from agentrig.permissions._config import PermissionsConfig, permissions_config
from agentrig.permissions._edge import canonical_path, match_path, match_rule
from agentrig.permissions._evaluate import evaluate_permission, withheld_tools
from agentrig.permissions._glob import escape_glob
from agentrig.permissions._match import match_command, match_text, match_url
from agentrig.permissions._risk import (
    DEFAULT_TRUST_WIDENING_PATHS,
    READ_ONLY_COMMANDS,
    READ_ONLY_GIT_SUBCOMMANDS,
)
from agentrig.permissions._rules import PermissionRule, PermissionRules, parse_rule, parse_rules
from agentrig.permissions._shell import Candidate, CommandSegment, ParsedCommand, split_command
from agentrig.permissions._types import (
    ArgKind,
    GlobExpander,
    MatchOutcome,
    Mode,
    PathResolver,
    PermissionCall,
    PermissionContext,
    PermissionDecision,
    PermissionRuleError,
    ReasonCode,
    RuleList,
    ToolPermissions,
    Verdict,
)
from agentrig.tools import PermissionArg, RiskClass

__all__ = [
    "DEFAULT_BLOCK_RULES",
    "DEFAULT_TRUST_WIDENING_PATHS",
    "READ_ONLY_COMMANDS",
    "READ_ONLY_GIT_SUBCOMMANDS",
    "ActionBlocked",
    "ActionBlockedError",
    "ActionBlocker",
    "ArgKind",
    "Approval",
    "Approver",
    "BlockRule",
    "Candidate",
    "CommandSegment",
    "ConsentMemory",
    "MatchOutcome",
    "Mode",
    "GlobExpander",
    "PathResolver",
    "ParsedCommand",
    "PermissionArg",
    "PermissionCall",
    "PermissionContext",
    "PermissionDecision",
    "PermissionRule",
    "PermissionRuleError",
    "PermissionsConfig",
    "PermissionRules",
    "ReasonCode",
    "Resolution",
    "ResolutionReason",
    "RiskClass",
    "RuleBasedActionBlocker",
    "RuleList",
    "ToolPermissions",
    "Verdict",
    "canonical_path",
    "escape_glob",
    "evaluate_permission",
    "first_block",
    "match_command",
    "match_path",
    "match_rule",
    "match_text",
    "match_url",
    "parse_rule",
    "parse_rules",
    "permissions_config",
    "resolve",
    "split_command",
    "withheld_tools",
]
