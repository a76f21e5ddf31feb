"""The hook layer's config tables: ``[[hooks.<Event>]]`` and ``[claude_code]``.

The core distribution contributes ``[hooks]`` as an ``agentrig.config_sections`` entry point
and ``[claude_code]`` as the table of its ``claude_code`` config importer: the files it names
are folded into ``hooks`` and ``permissions`` while the config is loaded
(:mod:`agentrig.hooks._claude_settings`, which validates the table with
:class:`ClaudeCodeConfig`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field, RootModel

from agentrig.ids import PluginName
from agentrig.kernel import ConfigSeq, ConfigTable, LoadedConfig

__all__ = ["ClaudeCodeConfig", "HookConfig", "HooksConfig", "claude_code_config", "hooks_config"]


class HookConfig(ConfigTable):
    """One ``[[hooks.<Event>]]`` entry: a strategy (entry name) with its options."""

    strategy: PluginName
    matcher: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    #: what a hook that gave no verdict (crash, timeout, missing program) does: ``block``
    #: fails closed on ``PreToolUse``; ``proceed`` is Claude Code's non-blocking error
    on_error: Literal["block", "proceed"] = "block"


class HooksConfig(RootModel[dict[str, ConfigSeq[HookConfig]]]):
    """``[hooks]``: the hook entries of each event, in order."""

    model_config = ConfigDict(strict=True, frozen=True)
    root: dict[str, ConfigSeq[HookConfig]] = Field(default_factory=dict)


class ClaudeCodeConfig(ConfigTable):
    """``[claude_code]``: Claude Code settings files and plugins whose hooks/rules apply."""

    settings: ConfigSeq[str] = ()  # .claude/settings.json, .claude/settings.local.json, ...
    plugins: ConfigSeq[str] = ()  # plugin directories: their hooks/hooks.json


def hooks_config(loaded: LoadedConfig) -> Mapping[str, Sequence[HookConfig]]:
    """``loaded``'s hook entries by event name (``[[hooks.<Event>]]``)."""
    return loaded.section("hooks", HooksConfig).root


def claude_code_config(loaded: LoadedConfig) -> ClaudeCodeConfig:
    """``loaded``'s ``[claude_code]`` table (the defaults when it is absent)."""
    return loaded.section("claude_code", ClaudeCodeConfig)
