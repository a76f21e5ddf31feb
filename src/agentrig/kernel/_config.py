"""The composition config (``agentrig.toml``): a strict pydantic model.

An unknown key, a wrong type or an unknown ID is a :class:`~agentrig.errors.ConfigError`
whose issues name the file and the key path (``agents.assistant.max_rounds``).  Secret
references (``"$ENV:NAME"``) are resolved only through a resolver the caller passes; the
library never reads the environment for them on its own.
"""

from __future__ import annotations

import difflib
import functools
import os
import tomllib
from collections import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType, UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, final, get_args, get_origin

import attrs
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    RootModel,
    ValidationError,
    model_validator,
)

from agentrig.catalog import freeze_data
from agentrig.errors import ConfigError, Issue
from agentrig.ids import AgentId, EntryId, ModelId, PluginName, ProviderId, ToolId
from agentrig.kernel._duration import Duration, parse_duration
from agentrig.kernel._formats import read_json, read_yaml
from agentrig.messages import ReasoningEffort

__all__ = [
    "AgentConfig",
    "CompactionConfig",
    "DelegationConfig",
    "Duration",
    "HookConfig",
    "LoadedConfig",
    "ModelSelectionConfig",
    "PlaceholderResolver",
    "PermissionsConfig",
    "PluginsConfig",
    "ProviderConfigEntry",
    "RuntimeConfig",
    "SecretResolver",
    "StoreConfig",
    "ToolConfig",
    "env_resolver",
    "installed_sections",
    "IMPORTERS_GROUP",
    "issues_from_validation",
    "known_keys",
    "load_config",
    "parse_duration",
    "read_json",
    "resolve_secret",
    "unknown_key_message",
]

ENV_PREFIX = "$ENV:"

SecretResolver = Callable[[str], str | None]
"""Given the NAME of a ``$ENV:NAME`` reference, return its value (None = not set)."""


_T = TypeVar("_T")

# TOML, YAML and Python mappings all give arrays as lists; strict mode would refuse a list
# for a tuple field, so the sequence itself is lax while its items stay strict.
Seq = Annotated[tuple[_T, ...], Field(strict=False)]


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


# A frozen config can be shared (agents with equal settings share one), so its free-form
# table is a deep read-only copy; it serialises back to plain dicts and lists.
FrozenTable = Annotated[
    Mapping[str, Any],
    AfterValidator(freeze_data),
    PlainSerializer(_thaw),
    Field(default_factory=dict, validate_default=True),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class PluginsConfig(_Strict):
    """``[plugins]``: which listener plugins load, and which distribution wins a conflict."""

    autoload: bool = True
    disabled: Seq[str] = ()
    enabled: Seq[str] = ()
    #: ``"<kind>:<name>" = "<distribution>"``: the entry that wins when several distributions
    #: register the same kind and name (otherwise using that ID is an error)
    prefer: dict[str, str] = Field(default_factory=dict)
    #: an autoloaded listener plugin that fails to load fails the composition
    strict: bool = False


class ProviderConfigEntry(_Strict):
    """``[providers.<id>]``: a provider instance built by the factory named ``kind``."""

    kind: PluginName
    options: dict[str, Any] = Field(default_factory=dict)
    credentials: dict[str, str] = Field(default_factory=dict)


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


class CompactionConfig(_Strict):
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


class AgentConfig(_Strict):
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
    tools: Seq[str] = ()  # tool ids, toolset names, code references
    #: configured agents this one may delegate to: each is offered as a ``delegate_<id>`` tool
    subagents: Seq[AgentId] = ()
    #: configured agents this one may hand the conversation to: each is offered as a
    #: ``transfer_to_<id>`` tool; the one called answers the rest of the run
    handoffs: Seq[AgentId] = ()
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


class ToolConfig(_Strict):
    """``[tools.<id>]``: how the runtime offers and runs one tool entry.

    There is no ``options`` table: a tool is an object its entry point gives, not built by a
    factory, so nothing could read one -- ``options`` is refused as an unknown key.
    """

    deferred: bool | None = None
    #: seconds (or ``"30s"``) one call of this tool may run; overrides the tool's own timeout
    timeout: Duration | None = None


class StoreConfig(_Strict):
    """``[session_stores.<id>]``, ``[credential_stores.<id>]``, ``[sealers.<id>]``: an object
    built by the factory named ``kind`` with its ``options``."""

    kind: PluginName
    options: dict[str, Any] = Field(default_factory=dict)


class PermissionsConfig(_Strict):
    """``[permissions]``: rules and mode."""

    mode: Literal["default", "plan", "accept-edits", "bypass"] = "default"
    allow: Seq[str] = ()
    deny: Seq[str] = ()
    ask: Seq[str] = ()
    workspace: str = "."
    #: more workspace roots (Claude Code's ``additionalDirectories``): a read-only command
    #: naming paths inside one counts as ``inspect``; removing one is catastrophic
    additional_directories: Seq[str] = ()
    #: refuse ``mode = "bypass"`` (Claude Code's ``disableBypassPermissionsMode``)
    disable_bypass: bool = False
    action_blockers: Literal["default", "off"] | Seq[str] = "default"

    @model_validator(mode="after")
    def _bypass_allowed(self) -> PermissionsConfig:
        if self.disable_bypass and self.mode == "bypass":
            raise ValueError("mode 'bypass' is refused: disable_bypass is set")
        return self


class HookConfig(_Strict):
    """One ``[[hooks.<Event>]]`` entry: a strategy (entry name) with its options."""

    strategy: PluginName
    matcher: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    #: what a hook that gave no verdict (crash, timeout, missing program) does: ``block``
    #: fails closed on ``PreToolUse``; ``proceed`` is Claude Code's non-blocking error
    on_error: Literal["block", "proceed"] = "block"


class DelegationConfig(_Strict):
    """``[delegation]``: the limits every delegation of the runtime stays within."""

    #: how deep a chain of delegations may go (a root agent's children are at depth 1)
    max_depth: int = Field(default=3, ge=1, le=32)
    #: how many children one agent may have running at once
    max_children: int = Field(default=8, ge=1, le=256)


class ModelSelectionConfig(_Strict):
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
    presets: Seq[str] = ()

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


class ClaudeCodeConfig(_Strict):
    """``[claude_code]``: Claude Code settings files and plugins whose hooks/rules apply."""

    settings: Seq[str] = ()  # .claude/settings.json, .claude/settings.local.json, ...
    plugins: Seq[str] = ()  # plugin directories: their hooks/hooks.json


class RuntimeConfig(_Strict):
    """The whole composition."""

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    providers: dict[ProviderId, ProviderConfigEntry] = Field(default_factory=dict)
    agents: dict[AgentId, AgentConfig] = Field(default_factory=dict)
    tools: dict[ToolId, ToolConfig] = Field(default_factory=dict)
    session_stores: dict[EntryId, StoreConfig] = Field(default_factory=dict)
    #: ``[credential_stores.<id>]``: where ``$STORE:<id>:<service>/<account>`` secrets live
    credential_stores: dict[EntryId, StoreConfig] = Field(default_factory=dict)
    #: ``[sealers.<id>]``: artifact sealers (a session store names one with ``sealer = "<id>"``)
    sealers: dict[EntryId, StoreConfig] = Field(default_factory=dict)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    delegation: DelegationConfig = Field(default_factory=DelegationConfig)
    model_selection: ModelSelectionConfig = Field(default_factory=ModelSelectionConfig)
    hooks: dict[str, Seq[HookConfig]] = Field(default_factory=dict)
    #: Claude Code files read verbatim into ``hooks`` and ``permissions`` (see
    #: :mod:`agentrig.hooks._claude_settings`, handed over as an importer)
    claude_code: ClaudeCodeConfig = Field(default_factory=lambda: ClaudeCodeConfig())


def _read_only(tables: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(tables))


@final
@attrs.frozen(slots=True)
class LoadedConfig:
    """A validated config plus where it came from (for error messages and relative paths)."""

    config: RuntimeConfig
    source: str | None
    base_dir: Path
    #: the top-level tables plugins own (``agentrig.config_sections``), not yet validated:
    #: the owner's model validates one when it is read (``Runtime.config_section``)
    sections: Mapping[str, Any] = attrs.field(factory=dict, converter=_read_only)


def _unwrap(annotation: Any) -> Any:
    """``Annotated[X, ...]`` -> X; ``X | None`` -> X (when one model is left)."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        models = [a for a in get_args(annotation) if _is_model(_unwrap(a))]
        if len(models) == 1:
            return _unwrap(models[0])
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


# Containers a validation error's location steps into: a key of a mapping, an index of a
# sequence (TOML/YAML arrays of tables arrive as lists, tuples or ``Seq``).
_MAPPINGS = frozenset({dict, abc.Mapping, abc.MutableMapping})
_SEQUENCES = frozenset({list, tuple, set, frozenset, abc.Sequence, abc.Set, abc.MutableSequence})


def _step(current: Any, part: str | int) -> Any:
    """The annotation one location ``part`` below ``current`` (None: not a fixed table)."""
    if _is_model(current) and issubclass(current, RootModel):
        # a root model's location does not name ``root``: it is the wrapped value itself
        current = _unwrap(current.model_fields["root"].annotation)
    if _is_model(current):
        field = current.model_fields.get(part) if isinstance(part, str) else None
        return None if field is None else field.annotation
    origin, args = get_origin(current), get_args(current)
    if origin in _MAPPINGS and len(args) == 2:
        return args[1]
    if origin in _SEQUENCES and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            # a fixed-length tuple: the location's index picks the item's annotation
            return args[part] if isinstance(part, int) and 0 <= part < len(args) else None
        return args[0]
    return None


def known_keys(model: type[BaseModel], path: tuple[str | int, ...]) -> list[str]:
    """The keys the table at ``path`` of ``model`` accepts (empty when not a fixed table).

    ``path`` is a validation error's location: it steps through model fields, mapping keys
    and list/tuple indexes (arrays of tables, ``[[hooks.PreToolUse]]``), and into a
    ``RootModel``'s value.
    """
    current: Any = model
    for part in path:
        current = _step(_unwrap(current), part)
        if current is None:
            return []
    current = _unwrap(current)
    if _is_model(current) and issubclass(current, RootModel):
        return []  # a root model's keys are free (names), not fields
    return list(current.model_fields) if _is_model(current) else []


def unknown_key_message(key: str | int, known: Sequence[str]) -> str:
    """``unknown key 'x'`` with the closest of ``known`` ("did you mean"), else the list."""
    close = difflib.get_close_matches(str(key), known, n=1) if known else []
    if close:
        return f"unknown key {key!r}; did you mean {close[0]!r}?"
    if known:
        return f"unknown key {key!r} (known keys: {', '.join(known)})"
    return f"unknown key {key!r}"


def _unknown_key(
    model: type[BaseModel] | None, loc: tuple[str | int, ...], extra: Iterable[str] = ()
) -> str:
    if not loc:
        return "unknown key"
    known = known_keys(model, loc[:-1]) if model is not None else []
    return unknown_key_message(loc[-1], [*known, *sorted(extra)])


def issues_from_validation(
    error: ValidationError, model: type[BaseModel] | None = None, sections: Iterable[str] = ()
) -> list[Issue]:
    """One issue per validation error; an unknown key of ``model`` gets a "did you mean"
    (at the top level, ``sections`` -- the tables plugins own -- are known keys too)."""
    issues = []
    for item in error.errors(include_url=False):
        loc = tuple(p for p in item["loc"] if isinstance(p, str | int))
        kind = item["type"]
        if kind == "extra_forbidden":
            message = _unknown_key(model, loc, sections if len(loc) == 1 else ())
        elif kind == "missing":
            message = "required key is missing"
        else:
            value = item.get("input")
            shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
            message = f"{item['msg']} (got {shown})"
        issues.append(Issue(code=f"config.{kind}", message=message, path=loc))
    return issues


def _read_file(path: Path) -> Mapping[str, Any]:
    text = path.read_bytes()
    suffix = path.suffix.lower()
    duplicates: list[Issue] = []
    if suffix in {".yaml", ".yml"}:
        try:
            import yaml
        except ImportError:
            raise ConfigError(
                [
                    Issue(
                        "config.yaml_unavailable", "YAML needs PyYAML: pip install 'agentrig[yaml]'"
                    )
                ],
                source=str(path),
            ) from None
        try:
            data, duplicates = read_yaml(text)
        except yaml.YAMLError as exc:
            raise ConfigError([Issue("config.syntax", str(exc))], source=str(path)) from None
        data = {} if data is None else data
    elif suffix == ".json":
        try:
            data, duplicates = read_json(text.decode("utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError([Issue("config.syntax", str(exc))], source=str(path)) from None
    else:
        try:
            data = tomllib.loads(text.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError([Issue("config.syntax", str(exc))], source=str(path)) from None
    if duplicates:  # a name defined twice: the first definition would be lost silently
        raise ConfigError(duplicates, source=str(path))
    if not isinstance(data, Mapping):
        raise ConfigError(
            [Issue("config.syntax", "the top level must be a table")], source=str(path)
        )
    return data


def installed_sections() -> frozenset[str]:
    """The names of the config tables installed plugins own (``agentrig.config_sections``)."""
    from agentrig.kernel._discovery import EntryPointSource

    return frozenset(e.name for e in EntryPointSource(["config_sections"]).entries())


#: Where the core distribution hands the kernel the readers of another program's config files
#: (``claude_code``: Claude Code settings, in the hooks layer, which the kernel cannot import).
IMPORTERS_GROUP = "agentrig.config_importers"


def _import_foreign(data: Mapping[str, Any], base: Path) -> Mapping[str, Any]:
    """``data`` with the files of its ``[claude_code]`` table folded in."""
    if not isinstance(data.get("claude_code"), Mapping):
        return data
    return _core_importer("claude_code")(data, base)


@functools.cache
def _core_importer(name: str) -> Callable[[Mapping[str, Any], Path], Mapping[str, Any]]:
    from agentrig.kernel._discovery import CORE_DISTRIBUTION
    from agentrig.kernel._entry_points import agentrig_entry_points

    for found in agentrig_entry_points().get(IMPORTERS_GROUP, ()):
        if found.entry.name == name and found.distribution == CORE_DISTRIBUTION:
            importer: Callable[[Mapping[str, Any], Path], Mapping[str, Any]] = found.entry.load()
            return importer
    raise ConfigError(
        [
            Issue(
                "config.importer_missing",
                f"the core distribution declares no {IMPORTERS_GROUP} entry point {name!r}, so "
                f"[{name}] cannot be read; reinstall agentrig (python3 dev.py setup)",
                (name,),
            )
        ]
    )


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | RuntimeConfig | LoadedConfig | None,
    *,
    sections: Iterable[str] | None = None,
    claude_settings: Sequence[str] = (),
) -> LoadedConfig:
    """Parse and validate a config from a file path, a mapping or a model.

    A top-level table named in ``sections`` (default: :func:`installed_sections`) belongs to
    a plugin: it is kept in :attr:`LoadedConfig.sections` for its owner to validate.  Any
    other unknown key is an error.  ``claude_settings`` adds Claude Code settings files to
    ``[claude_code] settings`` (the CLI's ``--claude-settings``).
    """
    if isinstance(source, LoadedConfig):
        return source
    if source is None:
        return LoadedConfig(RuntimeConfig(), None, Path.cwd())
    if isinstance(source, RuntimeConfig):
        return LoadedConfig(source, None, Path.cwd())
    if isinstance(source, Mapping):
        data, name, base = source, None, Path.cwd()
    else:
        path = Path(source)
        if not path.is_file():
            raise ConfigError(
                [Issue("config.not_found", f"no config file at {str(path)!r}")], source=str(path)
            )
        data, name, base = _read_file(path), str(path), path.resolve().parent
    if claude_settings:
        section = dict(data.get("claude_code") or {})
        section["settings"] = [*section.get("settings", ()), *claude_settings]
        data = {**data, "claude_code": section}
    data = _import_foreign(data, base)
    owned = (installed_sections() if sections is None else frozenset(sections)) - set(
        RuntimeConfig.model_fields
    )
    core = {k: v for k, v in data.items() if k not in owned}
    try:
        config = RuntimeConfig.model_validate(core)
    except ValidationError as exc:
        issues = issues_from_validation(exc, RuntimeConfig, owned)
        raise ConfigError(issues, source=name) from None
    return LoadedConfig(config, name, base, {k: v for k, v in data.items() if k in owned})


def env_resolver(environ: Mapping[str, str] | None = None) -> SecretResolver:
    """A resolver over the process environment (what the CLI passes)."""
    env = os.environ if environ is None else environ
    return env.get


@attrs.frozen(slots=True)
class PlaceholderResolver:
    """Resolves every secret reference to a placeholder and reads no secret at all.

    ``agentrig config check`` composes with it: every factory is constructed (so one that
    raises is found) while no environment variable and no credential store is read --
    ``$STORE:`` references get the placeholder too.
    """

    value: str = "<placeholder: secrets are not read here>"

    def __call__(self, name: str) -> str:
        return self.value


def resolve_secret(
    value: str, resolver: SecretResolver | None, *, path: tuple[str | int, ...]
) -> tuple[str | None, Issue | None]:
    """Resolve a ``$ENV:NAME`` reference; plain strings pass through unchanged."""
    if not value.startswith(ENV_PREFIX):
        return value, None
    name = value[len(ENV_PREFIX) :]
    if not name:
        return None, Issue("config.secret", "empty $ENV: reference", path)
    if resolver is None:
        return None, Issue(
            "config.secret_unresolved",
            f"secret reference {value!r} needs a resolver; pass resolver=agentrig.env_resolver() "
            "(the CLI does) -- agentrig never reads the environment on its own",
            path,
        )
    resolved = resolver(name)
    if resolved is None:
        return None, Issue("config.secret_missing", f"environment variable {name} is not set", path)
    return resolved, None
