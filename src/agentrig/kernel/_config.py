"""The composition config (``agentrig.toml``): a strict pydantic model of the kernel's tables.

The layers' tables (``[agents]``, ``[hooks]``, ...) are contributed like a plugin's, as
``agentrig.config_sections`` entry points.  Every error names the file and the key path.
Secret references (``"$ENV:NAME"``) are resolved only through a resolver the caller passes.
"""

from __future__ import annotations

import os
import tomllib
from collections import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType, UnionType
from typing import Annotated, Any, TypeVar, Union, final, get_args, get_origin

import attrs
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from agentrig.errors import ConfigError, Issue, did_you_mean
from agentrig.ids import EntryId, PluginName, ProviderId, ToolId
from agentrig.kernel._duration import Duration
from agentrig.kernel._entry_points import FORMATS_GROUP, IMPORTERS_GROUP, core_entry_points

__all__ = [
    "ConfigSeq",
    "ConfigTable",
    "LoadedConfig",
    "PluginsConfig",
    "ProviderConfigEntry",
    "RuntimeConfig",
    "SecretResolver",
    "StoreConfig",
    "ToolConfig",
    "env_resolver",
    "installed_sections",
    "issues_from_validation",
    "known_keys",
    "load_config",
    "read_config_file",
    "unknown_key_message",
]

SecretResolver = Callable[[str], str | None]
"""Given the NAME of a ``$ENV:NAME`` reference, return its value (None = not set)."""


_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)

# TOML, YAML and Python mappings all give arrays as lists; strict mode would refuse a list
# for a tuple field, so the sequence itself is lax while its items stay strict.
ConfigSeq = Annotated[tuple[_T, ...], Field(strict=False)]


class ConfigTable(BaseModel):
    """The base of a config table: an unknown key, a wrong type or a change is an error."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class PluginsConfig(ConfigTable):
    """``[plugins]``: which listener plugins load, and which distribution wins a conflict."""

    autoload: bool = True
    disabled: ConfigSeq[str] = ()
    enabled: ConfigSeq[str] = ()
    #: ``"<kind>:<name>" = "<distribution>"``: the entry that wins when several distributions
    #: register the same kind and name (otherwise using that ID is an error)
    prefer: dict[str, str] = Field(default_factory=dict)
    #: an autoloaded listener plugin that fails to load fails the composition
    strict: bool = False


class ProviderConfigEntry(ConfigTable):
    """``[providers.<id>]``: a provider instance built by the factory named ``kind``."""

    kind: PluginName
    options: dict[str, Any] = Field(default_factory=dict)
    credentials: dict[str, str] = Field(default_factory=dict)


class ToolConfig(ConfigTable):
    """``[tools.<id>]``: how the runtime offers and runs one tool entry.

    There is no ``options`` table: a tool is an object its entry point gives, not built by a
    factory, so nothing could read one -- ``options`` is refused as an unknown key.
    """

    deferred: bool | None = None
    #: seconds (or ``"30s"``) one call of this tool may run; overrides the tool's own timeout
    timeout: Duration | None = None


class StoreConfig(ConfigTable):
    """``[session_stores.<id>]``, ``[credential_stores.<id>]``, ``[sealers.<id>]``: an object
    built by the factory named ``kind`` with its ``options``."""

    kind: PluginName
    options: dict[str, Any] = Field(default_factory=dict)


class RuntimeConfig(ConfigTable):
    """The whole composition."""

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    providers: dict[ProviderId, ProviderConfigEntry] = Field(default_factory=dict)
    tools: dict[ToolId, ToolConfig] = Field(default_factory=dict)
    session_stores: dict[EntryId, StoreConfig] = Field(default_factory=dict)
    #: ``[credential_stores.<id>]``: where ``$STORE:<id>:<service>/<account>`` secrets live
    credential_stores: dict[EntryId, StoreConfig] = Field(default_factory=dict)
    #: ``[sealers.<id>]``: artifact sealers (a session store names one with ``sealer = "<id>"``)
    sealers: dict[EntryId, StoreConfig] = Field(default_factory=dict)


def _read_only(tables: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(tables))


@final
@attrs.frozen(slots=True)
class LoadedConfig:
    """A validated config plus where it came from (for error messages and relative paths)."""

    config: RuntimeConfig
    source: str | None
    base_dir: Path
    #: the top-level tables the layers and plugins own (``agentrig.config_sections``) and
    #: those an importer read, as read: the owner's model validates one when it is read
    #: (:meth:`section`)
    sections: Mapping[str, Any] = attrs.field(factory=dict, converter=_read_only)
    #: which of :attr:`sections` an importer read and validated as the file was loaded
    imported: frozenset[str] = frozenset()
    _validated: dict[str, BaseModel] = attrs.field(factory=dict, init=False, repr=False, eq=False)

    def section(self, name: str, model: type[_M]) -> _M:
        """The table ``[name]`` validated by its owner's ``model`` (its defaults when absent).

        An invalid table is a :class:`~agentrig.errors.ConfigError` at its key path.
        """
        cached = self._validated.get(name)
        if isinstance(cached, model):
            return cached
        try:
            value = model.model_validate(self.sections.get(name, {}))
        except ValidationError as exc:
            found = issues_from_validation(exc, model)
            issues = [Issue(i.code, i.message, (name, *i.path)) for i in found]
            raise ConfigError(issues, source=self.source) from None
        self._validated[name] = value
        return value


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

    ``path`` is a validation error's location: model fields, mapping keys, list/tuple indexes
    (``[[hooks.PreToolUse]]``) and a ``RootModel``'s value.
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
    hint = did_you_mean(str(key), known)
    listed = f" (known keys: {', '.join(known)})" if known and not hint else ""
    return f"unknown key {key!r}{hint}{listed}"


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
            known = known_keys(model, loc[:-1]) if model is not None and loc else []
            owned = sorted(sections) if len(loc) == 1 else []
            message = unknown_key_message(loc[-1], [*known, *owned]) if loc else "unknown key"
        elif kind == "missing":
            message = "required key is missing"
        else:
            value = item.get("input")
            shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
            message = f"{item['msg']} (got {shown})"
        issues.append(Issue(code=f"config.{kind}", message=message, path=loc))
    return issues


def _file_error(path: Path, code: str, message: str) -> ConfigError:
    return ConfigError([Issue(code, message)], source=str(path))


FormatReader = Callable[[bytes], tuple[Any, list[Issue]]]
"""Reads a config file of one format: its data and one issue per key defined twice; raises
``ValueError`` on a syntax error, :class:`~agentrig.errors.ConfigError` when it cannot read the
format at all (a missing library)."""


def read_config_file(path: Path, *, suffix: str | None = None) -> Mapping[str, Any]:
    """The top-level table of the config file at ``path``: TOML (``.toml``, no suffix), or read
    by the core's ``agentrig.config_formats`` entry point named after its suffix (or ``suffix``);
    a suffix without one is refused.  Every problem is a ConfigError naming the file."""
    kind = (suffix or path.suffix).lower().lstrip(".")
    entry = core_entry_points(FORMATS_GROUP).get(kind)
    if entry is None and kind not in ("", "toml"):
        raise _file_error(path, "config.format", f"no {FORMATS_GROUP} reader {kind!r} installed")
    text = path.read_bytes()
    duplicates: list[Issue] = []
    try:
        if entry is None:
            data = tomllib.loads(text.decode("utf-8"))
        else:
            reader: FormatReader = entry.load()
            data, duplicates = reader(text)
    except ConfigError as exc:  # (a ValueError too)
        raise ConfigError(exc.issues, source=str(path)) from None
    except ValueError as exc:  # TOML's, JSON's and every reader's syntax errors; decoding's
        raise _file_error(path, "config.syntax", str(exc)) from None
    if duplicates:  # a name defined twice: the first definition would be lost silently
        raise ConfigError(duplicates, source=str(path))
    if not isinstance(data, Mapping):
        raise _file_error(path, "config.syntax", "the top level must be a table")
    return data


def installed_sections() -> frozenset[str]:
    """The names of the config tables installed plugins own (``agentrig.config_sections``)."""
    from agentrig.kernel._discovery import EntryPointSource

    return frozenset(e.name for e in EntryPointSource(["config_sections"]).entries())


Importer = Callable[[Mapping[str, Any], Path], Mapping[str, Any]]
"""Reads the table it is named after and returns the config with it folded in (``base``: the
directory relative paths start from)."""


def _import_tables(data: Mapping[str, Any], base: Path) -> Mapping[str, Any]:
    """``data`` with every table an importer is installed for folded in by that importer.

    Importers are the core distribution's ``agentrig.config_importers`` entry points, each
    named after the top-level table it reads; a table without one is left for validation,
    which refuses it as unknown (a broken install never ignores it silently).
    """
    importers = core_entry_points(IMPORTERS_GROUP)
    for table in sorted(importers.keys() & data.keys()):
        importer: Importer = importers[table].load()
        data = importer(data, base)
    return data


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | RuntimeConfig | LoadedConfig | None,
    *,
    sections: Iterable[str] | None = None,
    extend: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
) -> LoadedConfig:
    """Parse and validate a config from a file path, a mapping or a model.

    A top-level table named in ``sections`` (default: :func:`installed_sections`) belongs to
    a plugin: it is kept in :attr:`LoadedConfig.sections` for its owner to validate.  Any
    other unknown key is an error.  ``extend`` appends items to arrays of top-level tables
    before the importers run (the CLI's ``--claude-settings`` adds files to ``[claude_code]
    settings`` this way).
    """
    if isinstance(source, LoadedConfig):
        return source
    if source is None or isinstance(source, RuntimeConfig):
        return LoadedConfig(RuntimeConfig() if source is None else source, None, Path.cwd())
    if isinstance(source, Mapping):
        data, name, base = source, None, Path.cwd()
    else:
        path = Path(source)
        if not path.is_file():
            raise _file_error(path, "config.not_found", f"no config file at {str(path)!r}")
        data, name, base = read_config_file(path), str(path), path.resolve().parent
    for table, arrays in (extend or {}).items():
        for key, items in arrays.items():
            if items:  # nothing to append adds no table
                section = dict(data.get(table) or {})
                section[key] = [*section.get(key, ()), *items]
                data = {**data, table: section}
    return _validate(_import_tables(data, base), name, base, sections)


def _validate(
    data: Mapping[str, Any], name: str | None, base: Path, sections: Iterable[str] | None
) -> LoadedConfig:
    """The kernel's tables validated, the core's own sections too (a mistake in them is reported
    before anything starts), the plugins' and the imported ones kept as read."""
    core = core_entry_points("agentrig.config_sections")
    importers = core_entry_points(IMPORTERS_GROUP).keys()
    owned = (installed_sections() if sections is None else frozenset(sections)) | core.keys()
    owned = (owned | importers) - set(RuntimeConfig.model_fields)
    issues: list[Issue] = []
    try:
        config = RuntimeConfig.model_validate({k: v for k, v in data.items() if k not in owned})
    except ValidationError as exc:
        config = RuntimeConfig()
        issues += issues_from_validation(exc, RuntimeConfig, owned)
    tables = {k: v for k, v in data.items() if k in owned}
    loaded = LoadedConfig(config, name, base, tables, frozenset(importers & tables.keys()))
    for table in sorted(core.keys() & loaded.sections.keys()):
        try:
            loaded.section(table, core[table].load())
        except ConfigError as exc:
            issues += exc.issues
    if issues:
        raise ConfigError(issues, source=name)
    return loaded


def env_resolver(environ: Mapping[str, str] | None = None) -> SecretResolver:
    """A resolver over the process environment (what the CLI passes)."""
    return (os.environ if environ is None else environ).get
