"""Testing support: the pytest plugin's fixtures, fakes and conformance suites.

``ScriptedProvider`` (with its ``Reply`` and ``ScriptedCall``) is the offline provider of
``kind = "scripted"``: a script of replies, each with ``delay``, ``chunk_size``, usage and
tool calls, and the provider's ``checkpoint`` ("chunk" or "reply"); its ``rounds`` or
``rules`` (each a ``Rule``) choose a reply from the request, the same in every process.
``MockProviderServer`` is a real loopback HTTP server that plays a model API for a provider
plugin's tests.

Names are imported lazily so that loading the pytest plugin does not import agentrig
before typeguard's import hook is installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY: dict[str, str] = {
    "MockProviderServer": "agentrig.testing.mock_provider_server",
    "MockReply": "agentrig.testing.mock_provider_server",
    "MockRequest": "agentrig.testing.mock_provider_server",
    "Overrides": "agentrig.testing.fixtures",
    "Reply": "agentrig.builtins",
    "Rule": "agentrig.builtins",
    "RuntimeFactory": "agentrig.testing.fixtures",
    "ScriptedCall": "agentrig.builtins",
    "ScriptedProvider": "agentrig.builtins",
}

__all__ = [
    "MockProviderServer",
    "MockReply",
    "MockRequest",
    "Overrides",
    "Reply",
    "Rule",
    "RuntimeFactory",
    "ScriptedCall",
    "ScriptedProvider",
]


# Submodules reachable as attributes even when this package was (re-)imported after them
# (the pytest plugin may outlive a first import of this package; see pytest_plugin).
_SUBMODULES = frozenset({"fixtures", "pytest_plugin"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentrig.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from agentrig.builtins import Reply, Rule, ScriptedCall, ScriptedProvider
    from agentrig.testing.fixtures import Overrides, RuntimeFactory
    from agentrig.testing.mock_provider_server import MockProviderServer, MockReply, MockRequest
