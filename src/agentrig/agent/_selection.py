"""The default model selection and the presets a user picks from.

``rt.model_selection`` owns the runtime's default selection -- a provider, a model and an
optional reasoning effort -- apart from any agent, server or chat.  It reads, in order: the
user's settings file (``[model_selection] settings``), read again on every call so a choice
saved by another process is seen at once; then the config's own ``[model_selection]``
provider and model.  ``save()`` writes a complete selection to that settings file; without
one configured it is refused, naming the key.

Presets are TOML files (``<name>.toml``) in the configured roots (``[model_selection]
presets``).  Nothing is remembered between calls: :meth:`Presets.list` and
:meth:`Presets.resolve` read the roots again, so a preset written while the process runs is
there on the next call and a deleted one is gone.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, final

import attrs
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrig.agent._config import model_selection_config
from agentrig.errors import AgentrigError, ConfigError, Issue
from agentrig.ids import ProviderId
from agentrig.kernel import issues_from_validation
from agentrig.llm import PROVIDERS, ModelListing, ReasoningEffort

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = [
    "ModelPreset",
    "ModelSelection",
    "ModelSelectionError",
    "ModelSelectionService",
    "Presets",
]

_PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SETTINGS_TABLE = "model"


class ModelSelectionError(AgentrigError):
    """A selection could not be read, saved or resolved; ``code`` says why:
    ``selection.none`` (nothing selected anywhere), ``selection.no_settings`` (``save()``
    without a settings file), ``selection.invalid`` (an unknown provider, a model its provider
    does not serve), ``preset.unknown``."""

    code = "selection.invalid"
    category = "user"


@final
@attrs.frozen(slots=True)
class ModelSelection:
    """A provider, a model and an optional reasoning effort (a detached value: changing the
    selection later does not change one already read)."""

    provider: ProviderId
    model: str
    reasoning_effort: ReasoningEffort | None = None


@final
@attrs.frozen(slots=True)
class ModelPreset:
    """A named selection from a preset file (``path``), with an optional description."""

    name: str
    selection: ModelSelection
    path: Path
    description: str | None = None


class _SelectionFile(BaseModel):
    """The ``[model]`` table of a settings file, and the whole of a preset file."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    reasoning_effort: ReasoningEffort | None = None


class _PresetFile(_SelectionFile):
    description: str | None = None


def _read_toml(path: Path, what: str) -> dict[str, Any] | None:
    """The TOML table in ``path`` (None: there is no such file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        issue = Issue("selection.unreadable", f"{what}: {exc}")
        raise ConfigError([issue], source=str(path)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        issue = Issue("selection.invalid_toml", f"{what}: {exc}")
        raise ConfigError([issue], source=str(path)) from None


def _validated(model: type[_SelectionFile], data: Any, path: Path, prefix: tuple[str, ...]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        issues = [
            Issue(i.code, i.message, (*prefix, *i.path)) for i in issues_from_validation(exc, model)
        ]
        raise ConfigError(issues, source=str(path)) from None


@final
class Presets:
    """The presets the configured roots supply now (read on every call; the first root that
    has a name wins, as on a search path)."""

    __slots__ = ("_roots",)

    def __init__(self, roots: tuple[Path, ...]) -> None:
        self._roots = roots

    @property
    def roots(self) -> tuple[Path, ...]:
        return self._roots

    def list(self) -> tuple[ModelPreset, ...]:
        """Every preset the roots supply now, by name; a broken preset file is a
        :class:`~agentrig.errors.ConfigError` naming the file and key (never skipped)."""
        found: dict[str, Path] = {}
        for root in self._roots:
            for path in sorted(root.glob("*.toml")) if root.is_dir() else ():
                name = path.stem
                if _PRESET_NAME.match(name) and name not in found:
                    found[name] = path
        presets = []
        for name in sorted(found):
            preset = self._load(name, found[name])
            if preset is not None:  # deleted between the listing and the read
                presets.append(preset)
        return tuple(presets)

    def names(self) -> tuple[str, ...]:
        return tuple(preset.name for preset in self.list())

    def resolve(self, name: str) -> ModelPreset:
        """The preset ``name`` as its file says now (``preset.unknown`` when no root has it)."""
        if isinstance(name, str) and _PRESET_NAME.match(name):
            for root in self._roots:
                preset = self._load(name, root / f"{name}.toml")
                if preset is not None:
                    return preset
        known = ", ".join(self.names()) or "none"
        raise ModelSelectionError(f"no preset {name!r} (presets: {known})", code="preset.unknown")

    def find(self, name: str) -> ModelPreset | None:
        """The preset ``name``, or None when no root has it."""
        try:
            return self.resolve(name)
        except ModelSelectionError:
            return None

    @staticmethod
    def _load(name: str, path: Path) -> ModelPreset | None:
        data = _read_toml(path, f"preset {name!r}")
        if data is None:
            return None
        entry: _PresetFile = _validated(_PresetFile, data, path, ())
        selection = ModelSelection(ProviderId(entry.provider), entry.model, entry.reasoning_effort)
        return ModelPreset(name, selection, path, entry.description)


SelectionSource = Literal["settings", "config"]


@final
class ModelSelectionService:
    """``rt.model_selection``: the runtime's default selection and its presets."""

    __slots__ = ("_default", "_presets", "_rt", "_settings")

    def __init__(
        self,
        rt: Runtime,
        *,
        settings: Path | None,
        presets: tuple[Path, ...],
        default: ModelSelection | None,
    ) -> None:
        self._rt = rt
        self._settings = settings
        self._default = default
        self._presets = Presets(presets)

    @classmethod
    def from_config(cls, rt: Runtime) -> ModelSelectionService:
        """Built from ``[model_selection]`` (paths relative to the config file)."""
        section = model_selection_config(rt.loaded)
        base = rt.loaded.base_dir

        def where(path: str) -> Path:
            return (base / Path(path).expanduser()).resolve()

        default = None
        if section.provider is not None and section.model is not None:
            default = ModelSelection(section.provider, section.model, section.reasoning_effort)
        settings = where(section.settings) if section.settings is not None else None
        return cls(
            rt, settings=settings, presets=tuple(where(p) for p in section.presets), default=default
        )

    @property
    def presets(self) -> Presets:
        return self._presets

    @property
    def settings_path(self) -> Path | None:
        """The user's settings file (None: no settings layer; ``save()`` is refused)."""
        return self._settings

    def current(self) -> ModelSelection:
        """The default selection now: the settings file's, else the config's."""
        found = self.lookup()
        if found is None:
            raise ModelSelectionError(
                "no model is selected: save one (rt.model_selection.save, agentrig models "
                "set) or set [model_selection] provider and model",
                code="selection.none",
            )
        return found[0]

    def lookup(self) -> tuple[ModelSelection, SelectionSource] | None:
        """The default selection and where it came from (None: nothing is selected)."""
        if self._settings is not None:
            data = _read_toml(self._settings, "model settings")
            if data is not None and _SETTINGS_TABLE in data:
                raw = data[_SETTINGS_TABLE]
                entry = _validated(_SelectionFile, raw, self._settings, (_SETTINGS_TABLE,))
                selection = ModelSelection(
                    ProviderId(entry.provider), entry.model, entry.reasoning_effort
                )
                return selection, "settings"
        if self._default is not None:
            return self._default, "config"
        return None

    def check(self, selection: ModelSelection) -> ModelSelection:
        """``selection`` if this runtime can serve it: its provider is configured and, when
        the provider lists its models, serves the model."""
        providers = self._rt.catalog(PROVIDERS)
        provider = providers.get(selection.provider)
        if provider is None:
            known = ", ".join(sorted(providers.ids())) or "none"
            raise ModelSelectionError(
                f"no provider {selection.provider!r} is configured (configured: {known})"
            )
        if not selection.model.strip():
            raise ModelSelectionError("a selection names a model")
        if isinstance(provider, ModelListing) and not provider.lists_model(selection.model):
            raise ModelSelectionError(
                f"provider {selection.provider!r} does not serve the model {selection.model!r}"
            )
        return selection

    def save(self, selection: ModelSelection | ModelPreset) -> ModelSelection:
        """Make ``selection`` (or a preset's) the default: checked, then written whole to the
        settings file (owner-only, replaced atomically)."""
        if isinstance(selection, ModelPreset):
            selection = selection.selection
        if self._settings is None:
            raise ModelSelectionError(
                "this runtime has no settings file to save a selection to: set "
                "[model_selection] settings",
                code="selection.no_settings",
            )
        self.check(selection)
        _write_settings(self._settings, selection)
        return selection


def _toml_string(value: str) -> str:
    # a JSON string's escapes are all valid in a TOML basic string
    import json

    return json.dumps(value, ensure_ascii=False)


def _write_settings(path: Path, selection: ModelSelection) -> None:
    lines = [
        "# written by agentrig (rt.model_selection.save / agentrig models set)",
        f"[{_SETTINGS_TABLE}]",
        f"provider = {_toml_string(selection.provider)}",
        f"model = {_toml_string(selection.model)}",
    ]
    if selection.reasoning_effort is not None:
        lines.append(f"reasoning_effort = {_toml_string(selection.reasoning_effort)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".model-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
