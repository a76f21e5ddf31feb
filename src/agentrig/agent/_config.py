"""The agent layer's config tables: ``[agents.<id>]``, ``[delegation]``, ``[model_selection]``.

The core distribution contributes them as ``agentrig.config_sections`` entry points, as any
plugin contributes its table; the kernel only keeps them (and validates the core's tables
when the file is loaded, so a wrong key is reported with its path before anything starts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, PlainSerializer, RootModel, model_validator

from agentrig.catalog import freeze_data
from agentrig.ids import AgentId, EntryId, ModelId, ProviderId
from agentrig.kernel import ConfigSeq, ConfigTable, Duration, LoadedConfig
from agentrig.messages import ReasoningEffort

__all__ = [
    "AgentConfig",
    "AgentsConfig",
    "CompactionConfig",
    "DelegationConfig",
    "ModelSelectionConfig",
    "agent_configs",
    "delegation_config",
    "model_selection_config",
    "thaw",
]


def thaw(value: Any) -> Any:
    """Frozen data (read-only mappings, tuples) as plain dicts and lists again, for JSON."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


# A frozen config can be shared (agents with equal settings share one), so its free-form
# table is a deep read-only copy; it serialises back to plain dicts and lists.
FrozenTable = Annotated[
    Mapping[str, Any],
    AfterValidator(freeze_data),
    PlainSerializer(thaw),
    Field(default_factory=dict, validate_default=True),
]


def _guard_text(value: str | None) -> str | None:
    if value is None:
        return value
    try:
        value.format(tokens=0, percent=0, window=0, model="")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"guard_text: {exc!r} is not a placeholder it knows "
            "(placeholders: {tokens}, {percent}, {window}, {model})"
        ) from None
    return value


class CompactionConfig(ConfigTable):
    """``[agents.<id>] compaction``: when and how the history is shortened."""

    #: compact automatically once the context passes ``at`` of the window (``false``: only
    #: when asked -- ``agent.compact()``, ``/compact``, ``agentrig sessions compact``)
    auto: bool = True
    #: the share of the context window past which the history is compacted before a request
    at: float = Field(default=0.8, gt=0.0, le=1.0)
    #: the newest messages kept as they are (extended back so a tool result keeps its call)
    keep_last: int = Field(default=6, ge=0)
    #: clear older tool results first; summarise only when that is not enough
    clear_tool_results: bool = True
    #: the summary's model (default: the agent's) and provider (default: the agent's)
    model: ModelId | None = None
    provider: ProviderId | None = None
    #: the summary call's output limit in tokens (default: the provider's)
    max_tokens: int | None = Field(default=None, gt=0)
    #: standing instructions for every summary of this agent
    instructions: str | None = None
    #: the pre-send guard's diagnostic, replacing the neutral default; placeholders
    #: ``{tokens}``, ``{percent}``, ``{window}``, ``{model}``
    guard_text: Annotated[str | None, AfterValidator(_guard_text)] = None


class AgentConfig(ConfigTable):
    """``[agents.<id>]``: an agent declared in config."""

    provider: ProviderId
    model: ModelId
    #: what the agent reports as (``agent_name`` of its observations); default: its id.  A
    #: server's per-request agent carries the name of the configured agent it runs
    name: str | None = Field(default=None, min_length=1)
    #: what the agent is for, in a sentence: a parent offers it as its delegation tool's
    #: description (see ``subagents``)
    description: str | None = Field(default=None, min_length=1)
    system_prompt: str | None = None
    tools: ConfigSeq[str] = ()  # tool ids, toolset names, code references
    #: configured agents this one may delegate to: each is offered as a ``delegate_<id>`` tool
    subagents: ConfigSeq[AgentId] = ()
    #: configured agents this one may hand the conversation to: each is offered as a
    #: ``transfer_to_<id>`` tool; the one called answers the rest of the run
    handoffs: ConfigSeq[AgentId] = ()
    max_rounds: int = Field(default=25, ge=0)
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = None
    #: the reasoning effort every request asks for (``none`` ... ``max``, or ``auto``: the
    #: model's own); the provider resolves it per model and ``RunRecord.reasoning`` says how
    reasoning_effort: ReasoningEffort | None = None
    tool_only_completion: bool = False
    identical_input_limit: int = Field(default=3, ge=0)
    structured_output_retries: int = Field(default=2, ge=0)
    session_store: EntryId | None = None
    deferral: Literal["auto", "on", "off"] = "auto"
    deferral_max_resident: int = Field(default=20, ge=0)
    #: run the calls of one reply that may run alongside each other concurrently
    parallel_tool_calls: bool = True
    #: start on the runtime's default model selection (``rt.model_selection``, read when the
    #: agent is created) instead of ``provider`` / ``model``, when one is selected
    use_selection: bool = False
    #: a run still going after this long ends ``timeout`` (``"30s"``, ``"2m"`` or seconds)
    deadline: Duration | None = None
    #: a reply the model refused, or one a content filter or error stopped, ends the run
    #: ``model_response_failure`` with ``RunResult.response_failure`` (off: an ordinary answer)
    classify_model_responses: bool = False
    #: a tool result longer than this (UTF-8 bytes) is cut for the model; 0 keeps every result
    tool_result_max_bytes: int = Field(default=65536, ge=0)
    #: where full results of cut tool calls are kept (owner-only; relative to the config file)
    state_dir: str = ".agentrig/state"
    #: when and how the history is shortened (see docs/compaction.md)
    compaction: CompactionConfig = CompactionConfig()
    #: read-only (nested tables too): the config may be shared by several agents
    options: FrozenTable


class AgentsConfig(RootModel[dict[AgentId, AgentConfig]]):
    """``[agents]``: every agent the config declares, by id."""

    model_config = ConfigDict(strict=True, frozen=True)
    root: dict[AgentId, AgentConfig] = Field(default_factory=dict)


class DelegationConfig(ConfigTable):
    """``[delegation]``: the limits every delegation of the runtime stays within."""

    #: how deep a chain of delegations may go (a root agent's children are at depth 1)
    max_depth: int = Field(default=3, ge=1, le=32)
    #: how many children one agent may have running at once
    max_children: int = Field(default=8, ge=1, le=256)


class ModelSelectionConfig(ConfigTable):
    """``[model_selection]``: the runtime's default model selection and its presets
    (``rt.model_selection``, ``agentrig models``, ``/model`` in chat)."""

    #: the default selection when the settings file holds none (both or neither)
    provider: ProviderId | None = None
    model: ModelId | None = None
    reasoning_effort: ReasoningEffort | None = None
    #: the user's settings file (TOML, relative to the config file): a saved selection lives
    #: there, and it is read again on every call
    settings: str | None = Field(default=None, min_length=1)
    #: directories of preset files (``<name>.toml``), read again on every list and resolve;
    #: the first directory that has a name wins
    presets: ConfigSeq[str] = ()

    @model_validator(mode="after")
    def _both_or_neither(self) -> ModelSelectionConfig:
        if (self.provider is None) != (self.model is None):
            missing = "model" if self.model is None else "provider"
            raise ValueError(
                f"a default selection names a provider and a model ({missing} is missing)"
            )
        if self.reasoning_effort is not None and self.model is None:
            raise ValueError(
                "reasoning_effort belongs to a default selection: set provider and model"
            )
        return self


def agent_configs(loaded: LoadedConfig) -> Mapping[AgentId, AgentConfig]:
    """The agents ``loaded`` declares (``[agents.<id>]``), by id."""
    return loaded.section("agents", AgentsConfig).root


def delegation_config(loaded: LoadedConfig) -> DelegationConfig:
    """``loaded``'s ``[delegation]`` limits (the defaults when the table is absent)."""
    return loaded.section("delegation", DelegationConfig)


def model_selection_config(loaded: LoadedConfig) -> ModelSelectionConfig:
    """``loaded``'s ``[model_selection]`` table (the defaults when it is absent)."""
    return loaded.section("model_selection", ModelSelectionConfig)
