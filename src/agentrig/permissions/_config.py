"""``[permissions]``: the config table of the permission layer (rules, mode, workspace).

The core distribution contributes it as the ``agentrig.config_sections`` entry point
``permissions``; :func:`permissions_config` reads it from a loaded config.
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from agentrig.kernel import ConfigSeq, ConfigTable, LoadedConfig

__all__ = ["PermissionsConfig", "permissions_config"]


class PermissionsConfig(ConfigTable):
    """``[permissions]``: rules and mode."""

    mode: Literal["default", "plan", "accept-edits", "bypass"] = "default"
    allow: ConfigSeq[str] = ()
    deny: ConfigSeq[str] = ()
    ask: ConfigSeq[str] = ()
    workspace: str = "."
    #: more workspace roots (Claude Code's ``additionalDirectories``): a read-only command
    #: naming paths inside one counts as ``inspect``; removing one is catastrophic
    additional_directories: ConfigSeq[str] = ()
    #: refuse ``mode = "bypass"`` (Claude Code's ``disableBypassPermissionsMode``)
    disable_bypass: bool = False
    action_blockers: Literal["default", "off"] | ConfigSeq[str] = "default"

    @model_validator(mode="after")
    def _bypass_allowed(self) -> PermissionsConfig:
        if self.disable_bypass and self.mode == "bypass":
            raise ValueError("mode 'bypass' is refused: disable_bypass is set")
        return self


def permissions_config(loaded: LoadedConfig) -> PermissionsConfig:
    """``loaded``'s ``[permissions]`` table (the defaults when it is absent)."""
    return loaded.section("permissions", PermissionsConfig)
