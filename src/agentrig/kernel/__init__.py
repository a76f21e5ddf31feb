"""The kernel: hookspecs and dispatch, plugin discovery, config composition and the Runtime.

The face of the kernel's private modules, for the layers above it and behind the ``agentrig``
and ``agentrig.plugin`` faces.  Every name is imported on first use (PEP 562):
``from agentrig.kernel import open_runtime`` loads the runtime and what it needs, not the
whole kernel.  Each name is stated twice: in the table below (what runs) and in the
``TYPE_CHECKING`` imports (what type checkers read); a test keeps the two equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig._lazy import lazy_exports

# private module -> the names the face takes from it (space-separated)
_NAMES = {
    "_composition": "PHASES Composition Phase compose_step",
    "_config": (
        "ConfigSeq ConfigTable LoadedConfig RuntimeConfig SecretResolver StoreConfig env_resolver "
        "installed_sections issues_from_validation load_config read_config_file unknown_key_message"
    ),
    "_contracts": "ContractViolation check_factory protocol_problems with_options",
    "_discovery": (
        "CORE_GROUPS DISABLE_AUTOLOAD_ENV DISABLE_PLUGINS_ENV EntryPointSource EntrySpec "
        "KIND_GROUPS MemorySource PluginIndex builtin_source env_plugin_settings "
        "register_schemas register_variants"
    ),
    "_dispatch": "HookDispatcher mode_of new_plugin_manager",
    "_duration": "Duration parse_duration",
    "_entry_points": "agentrig_entry_points",
    "_hookspecs": "Mode RuntimeStarted declare_hook hookimpl",
    "_runtime": "AGENTS HTTP MODELS MODEL_SELECTION HttpFactory Runtime open_runtime",
    "_services": "ServiceKey Services",
}
_LAZY = {name: f"{__name__}.{module}" for module, names in _NAMES.items() for name in names.split()}
__all__ = list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)

if TYPE_CHECKING:
    from agentrig.kernel._composition import PHASES as PHASES
    from agentrig.kernel._composition import Composition as Composition
    from agentrig.kernel._composition import Phase as Phase
    from agentrig.kernel._composition import compose_step as compose_step
    from agentrig.kernel._config import ConfigSeq as ConfigSeq
    from agentrig.kernel._config import ConfigTable as ConfigTable
    from agentrig.kernel._config import LoadedConfig as LoadedConfig
    from agentrig.kernel._config import RuntimeConfig as RuntimeConfig
    from agentrig.kernel._config import SecretResolver as SecretResolver
    from agentrig.kernel._config import StoreConfig as StoreConfig
    from agentrig.kernel._config import env_resolver as env_resolver
    from agentrig.kernel._config import installed_sections as installed_sections
    from agentrig.kernel._config import issues_from_validation as issues_from_validation
    from agentrig.kernel._config import load_config as load_config
    from agentrig.kernel._config import read_config_file as read_config_file
    from agentrig.kernel._config import unknown_key_message as unknown_key_message
    from agentrig.kernel._contracts import ContractViolation as ContractViolation
    from agentrig.kernel._contracts import check_factory as check_factory
    from agentrig.kernel._contracts import protocol_problems as protocol_problems
    from agentrig.kernel._contracts import with_options as with_options
    from agentrig.kernel._discovery import CORE_GROUPS as CORE_GROUPS
    from agentrig.kernel._discovery import DISABLE_AUTOLOAD_ENV as DISABLE_AUTOLOAD_ENV
    from agentrig.kernel._discovery import DISABLE_PLUGINS_ENV as DISABLE_PLUGINS_ENV
    from agentrig.kernel._discovery import KIND_GROUPS as KIND_GROUPS
    from agentrig.kernel._discovery import EntryPointSource as EntryPointSource
    from agentrig.kernel._discovery import EntrySpec as EntrySpec
    from agentrig.kernel._discovery import MemorySource as MemorySource
    from agentrig.kernel._discovery import PluginIndex as PluginIndex
    from agentrig.kernel._discovery import builtin_source as builtin_source
    from agentrig.kernel._discovery import env_plugin_settings as env_plugin_settings
    from agentrig.kernel._discovery import register_schemas as register_schemas
    from agentrig.kernel._discovery import register_variants as register_variants
    from agentrig.kernel._dispatch import HookDispatcher as HookDispatcher
    from agentrig.kernel._dispatch import mode_of as mode_of
    from agentrig.kernel._dispatch import new_plugin_manager as new_plugin_manager
    from agentrig.kernel._duration import Duration as Duration
    from agentrig.kernel._duration import parse_duration as parse_duration
    from agentrig.kernel._entry_points import agentrig_entry_points as agentrig_entry_points
    from agentrig.kernel._hookspecs import Mode as Mode
    from agentrig.kernel._hookspecs import RuntimeStarted as RuntimeStarted
    from agentrig.kernel._hookspecs import declare_hook as declare_hook
    from agentrig.kernel._hookspecs import hookimpl as hookimpl
    from agentrig.kernel._runtime import AGENTS as AGENTS
    from agentrig.kernel._runtime import HTTP as HTTP
    from agentrig.kernel._runtime import MODEL_SELECTION as MODEL_SELECTION
    from agentrig.kernel._runtime import MODELS as MODELS
    from agentrig.kernel._runtime import HttpFactory as HttpFactory
    from agentrig.kernel._runtime import Runtime as Runtime
    from agentrig.kernel._runtime import open_runtime as open_runtime
    from agentrig.kernel._services import ServiceKey as ServiceKey
    from agentrig.kernel._services import Services as Services
