"""Claude Code's ``settings.json`` and a plugin's ``hooks/hooks.json``, read verbatim.

``[claude_code] settings = [".claude/settings.json", ...]`` in ``agentrig.toml`` (or the CLI's
``--claude-settings``) names Claude Code settings files; ``[claude_code] plugins = [...]``
names Claude Code plugin directories whose ``hooks/hooks.json`` is loaded (and whose
``skills/`` the ``compose-skills`` step reads; a plugin may hold either or both).  They are turned
into agentrig's own config before it is validated:

* ``hooks`` -> ``[[hooks.<Event>]]`` entries (``type: "command"`` -> the ``command``
  strategy run in the project directory, ``type: "http"`` -> the ``http`` strategy);
  a plugin's hooks get ``CLAUDE_PLUGIN_ROOT`` in their environment;
* ``permissions.allow`` / ``deny`` / ``ask`` are appended to ``[permissions]``;
  ``defaultMode`` sets the mode unless ``agentrig.toml`` sets one;
  ``additionalDirectories`` become extra workspace roots; ``disableBypassPermissionsMode``
  refuses bypass mode.  ``Read(/path)``-style rules of Claude Code's file tools are anchored
  at the project directory (``.claude/``'s parent; a file elsewhere: its directory), as
  Claude Code anchors ``/path`` at the settings source;
* ``env`` is added to the environment of every command hook from that file.

Keys that only configure Claude Code's own program (``model``, ``statusLine`` ...) are listed
in :data:`IGNORED_KEYS` and reported as ignored; any other key, hook type or mode agentrig
cannot honour is refused with its path -- never accepted silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentrig.diagnostics import get_logger
from agentrig.errors import ConfigError, Issue
from agentrig.hooks._config import ClaudeCodeConfig
from agentrig.kernel import issues_from_validation, read_config_file
from agentrig.permissions import escape_glob

__all__ = ["IGNORED_KEYS", "PATH_TOOLS", "apply_claude_code", "read_settings_file"]

_log = get_logger("claude_settings")

IGNORED_KEYS: frozenset[str] = frozenset(
    {
        "$schema",
        "apiKeyHelper",
        "awsAuthRefresh",
        "awsCredentialExport",
        "cleanupPeriodDays",
        "companyAnnouncements",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
        "enabledPlugins",
        "extraKnownMarketplaces",
        "forceLoginMethod",
        "includeCoAuthoredBy",
        "model",
        "outputStyle",
        "spinnerTipsEnabled",
        "statusLine",
        "theme",
        "alwaysThinkingEnabled",
    }
)
"""Settings of Claude Code's own program (UI, login, model choice): no agentrig meaning."""

PATH_TOOLS: frozenset[str] = frozenset(
    {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep"}
)
"""Claude Code's file tools: their ``Tool(/path)`` rules are anchored at the project."""

_MODES = {
    "default": "default",
    "acceptEdits": "accept-edits",
    "plan": "plan",
    "bypassPermissions": "bypass",
}
_PERMISSION_KEYS = frozenset(
    {"allow", "deny", "ask", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"}
)
_HOOK_KEYS = {
    "command": frozenset({"type", "command", "timeout", "statusMessage"}),
    "http": frozenset({"type", "url", "headers", "timeout", "statusMessage"}),
}


class _Reader:
    """Turns one settings (or hooks.json) document into agentrig config fragments."""

    def __init__(self, source: str, project: Path, plugin_root: Path | None = None) -> None:
        self.source = source
        self.project = project
        self.plugin_root = plugin_root
        self.issues: list[Issue] = []
        self.hooks: dict[str, list[dict[str, Any]]] = {}
        self.permissions: dict[str, Any] = {}
        self.ignored: list[str] = []

    def fail(self, path: tuple[str | int, ...], message: str) -> None:
        self.issues.append(Issue("config.claude_settings", f"{self.source}: {message}", path))

    # ---- the whole document ------------------------------------------------------------------
    def read(self, data: Mapping[str, Any], *, hooks_only: bool = False) -> None:
        env = data.get("env", {})
        if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
            self.fail(("env",), "env must be an object of strings")
            env = {}
        for key, value in data.items():
            if key == "hooks":
                self.read_hooks(value, dict(env))
            elif key == "permissions" and not hooks_only:
                self.read_permissions(value)
            elif key == "env" and not hooks_only:
                continue
            elif key in IGNORED_KEYS or (hooks_only and key == "description"):
                self.ignored.append(key)
            else:
                self.fail((key,), f"key {key!r} has no agentrig equivalent and is refused")

    # ---- hooks ---------------------------------------------------------------------------------
    def read_hooks(self, value: object, env: dict[str, str]) -> None:
        if not isinstance(value, Mapping):
            self.fail(("hooks",), "hooks must be an object of event -> matcher groups")
            return
        for event, groups in value.items():
            if not isinstance(groups, list):
                self.fail(("hooks", event), "must be a list of matcher groups")
                continue
            for g, group in enumerate(groups):
                where: tuple[str | int, ...] = ("hooks", event, g)
                if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
                    self.fail(where, 'a matcher group must be {"matcher": ..., "hooks": [...]}')
                    continue
                extra = set(group) - {"matcher", "hooks"}
                if extra:
                    self.fail(where, f"unknown key(s) {sorted(extra)} in a matcher group")
                matcher = group.get("matcher")
                for h, hook in enumerate(group["hooks"]):
                    entry = self.hook_entry(hook, (*where, "hooks", h), env)
                    if entry is not None:
                        if matcher not in (None, ""):
                            entry["matcher"] = matcher
                        self.hooks.setdefault(event, []).append(entry)

    def hook_entry(
        self, hook: object, where: tuple[str | int, ...], env: dict[str, str]
    ) -> dict[str, Any] | None:
        if not isinstance(hook, Mapping):
            self.fail(where, "a hook must be an object")
            return None
        kind = hook.get("type")
        if kind not in _HOOK_KEYS:
            self.fail(
                (*where, "type"),
                f"hook type {kind!r} is not supported by agentrig (supported: command, http)",
            )
            return None
        extra = set(hook) - _HOOK_KEYS[kind]
        if extra:
            self.fail(where, f"hook key(s) {sorted(extra)} are not supported by agentrig")
            return None
        options: dict[str, Any] = {}
        if "timeout" in hook:
            options["timeout"] = hook["timeout"]
        if kind == "http":
            options["url"] = hook.get("url")
            if "headers" in hook:
                options["headers"] = hook["headers"]
            return {"strategy": "http", "options": options}
        options["command"] = hook.get("command")
        options["cwd"] = str(self.project)
        hook_env = dict(env)
        if self.plugin_root is not None:
            hook_env["CLAUDE_PLUGIN_ROOT"] = str(self.plugin_root)
        if hook_env:
            options["env"] = hook_env
        return {"strategy": "command", "options": options}

    # ---- permissions ---------------------------------------------------------------------------
    def read_permissions(self, value: object) -> None:
        if not isinstance(value, Mapping):
            self.fail(("permissions",), "permissions must be an object")
            return
        for key, item in value.items():
            where: tuple[str | int, ...] = ("permissions", key)
            if key not in _PERMISSION_KEYS:
                self.fail(where, f"permissions key {key!r} is not supported by agentrig")
            elif key in ("allow", "deny", "ask"):
                if not isinstance(item, list) or not all(isinstance(r, str) for r in item):
                    self.fail(where, "must be a list of rule strings")
                    continue
                self.permissions[key] = [self.anchor(rule) for rule in item]
            elif key == "defaultMode":
                if item not in _MODES:
                    known = ", ".join(_MODES)
                    self.fail(where, f"defaultMode {item!r} is not supported (supported: {known})")
                    continue
                self.permissions["mode"] = _MODES[item]
            elif key == "additionalDirectories":
                if not isinstance(item, list) or not all(isinstance(d, str) for d in item):
                    self.fail(where, "must be a list of directories")
                    continue
                self.permissions["additional_directories"] = [str(self.resolve(d)) for d in item]
            elif item == "disable":
                self.permissions["disable_bypass"] = True
            else:
                self.fail(where, 'disableBypassPermissionsMode must be "disable"')

    def resolve(self, directory: str) -> Path:
        path = Path(directory).expanduser()
        return path if path.is_absolute() else (self.project / path)

    def anchor(self, rule: str) -> str:
        """``Read(/src/**)`` in a settings file means ``<project>/src/**`` (Claude Code anchors
        ``/x`` at the settings source); agentrig would anchor it at the directory of the
        agentrig config, so the project is spelled out as an absolute ``//`` path."""
        name, paren, rest = rule.partition("(")
        if paren and name in PATH_TOOLS and rest.startswith("/") and not rest.startswith("//"):
            # the project's own name is a path, not a pattern: "[", "*", "{"... in it are
            # escaped, or a deny rule under /work/a[1] would name /work/a1 instead
            return f"{name}(/{escape_glob(self.project.as_posix().rstrip('/'))}{rest}"
        return rule


def _project_of(settings: Path) -> Path:
    parent = settings.parent
    return parent.parent if parent.name == ".claude" else parent


def read_settings_file(
    path: Path, *, plugin_root: Path | None = None
) -> tuple[_Reader, Mapping[str, Any]]:
    """Read one settings or hooks.json file (raises :class:`ConfigError` naming it)."""
    source = str(path)
    if not path.is_file():
        raise ConfigError([Issue("config.not_found", f"no Claude Code file at {source!r}")])
    data = read_config_file(path, suffix=".json")  # a syntax error, a key twice: named
    project = plugin_root if plugin_root is not None else _project_of(path.resolve())
    return _Reader(source, project, plugin_root), data


def apply_claude_code(data: Mapping[str, Any], base: Path) -> Mapping[str, Any]:
    """``data`` with its ``[claude_code]`` files folded in: the core's importer of that table
    (its ``agentrig.config_importers`` entry point), so it validates the table too."""
    try:
        table = ClaudeCodeConfig.model_validate(data.get("claude_code"))
    except ValidationError as exc:
        found = issues_from_validation(exc, ClaudeCodeConfig)
        issues = [Issue(i.code, i.message, ("claude_code", *i.path)) for i in found]
        raise ConfigError(issues) from None
    readers: list[_Reader] = []
    for names, hooks_only in ((table.settings, False), (table.plugins, True)):
        for name in names:
            path = Path(name).expanduser()
            path = path if path.is_absolute() else base / path
            if hooks_only:
                hooks_file = path / "hooks" / "hooks.json"
                if not hooks_file.exists() and (path / "skills").is_dir():
                    continue  # a plugin of skills only: the compose-skills step loads them
                reader, doc = read_settings_file(hooks_file, plugin_root=path.resolve())
            else:
                reader, doc = read_settings_file(path)
            reader.read(doc, hooks_only=hooks_only)
            if reader.issues:
                raise ConfigError(reader.issues)
            readers.append(reader)
    merged: dict[str, Any] = dict(data)
    hooks: dict[str, list[Any]] = {k: list(v) for k, v in dict(data.get("hooks") or {}).items()}
    permissions: dict[str, Any] = dict(data.get("permissions") or {})
    mode_from_toml = "mode" in permissions
    for reader in readers:
        for event, entries in reader.hooks.items():
            hooks.setdefault(event, []).extend(entries)
        fragment = dict(reader.permissions)
        for key in ("allow", "deny", "ask", "additional_directories"):
            if key in fragment:
                permissions[key] = [*permissions.get(key, ()), *fragment.pop(key)]
        mode = fragment.pop("mode", None)
        if mode is not None and not mode_from_toml:  # a later settings file overrides
            permissions["mode"] = mode
        if fragment.pop("disable_bypass", False):
            permissions["disable_bypass"] = True
        if reader.ignored:
            _log.warning(
                "%s: ignored Claude Code setting(s) with no agentrig meaning: %s",
                reader.source,
                ", ".join(sorted(reader.ignored)),
            )
    if hooks:
        merged["hooks"] = hooks
    if permissions:
        merged["permissions"] = permissions
    return merged
