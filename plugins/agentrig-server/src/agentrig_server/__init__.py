"""agentrig-server: agentrig agents served as OpenAI- and Anthropic-compatible models.

``create_app(rt, settings)`` builds the ASGI application for an opened runtime;
``parse_settings`` validates a ``[server]`` table.  See docs/server.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.plugin import lazy_exports

# name -> defining module, imported on first use (PEP 562): the ``agentrig serve`` entry point
# lives in this package, and every command and composition loads it -- not Starlette/uvicorn
_LAZY: dict[str, str] = {
    "AgentServer": "agentrig_server._serve",
    "ApiError": "agentrig_server._errors",
    "ExposedAgent": "agentrig_server._settings",
    "ServerSettings": "agentrig_server._settings",
    "check_bind": "agentrig_server._serve",
    "create_app": "agentrig_server._app",
    "parse_settings": "agentrig_server._settings",
    "resolve_keys": "agentrig_server._app",
    "server_settings": "agentrig_server._settings",
}

__all__ = [
    "AgentServer",
    "check_bind",
    "server_settings",
    "ApiError",
    "ExposedAgent",
    "ServerSettings",
    "create_app",
    "parse_settings",
    "resolve_keys",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


if TYPE_CHECKING:
    from agentrig_server._app import create_app, resolve_keys
    from agentrig_server._errors import ApiError
    from agentrig_server._serve import AgentServer, check_bind
    from agentrig_server._settings import (
        ExposedAgent,
        ServerSettings,
        parse_settings,
        server_settings,
    )
