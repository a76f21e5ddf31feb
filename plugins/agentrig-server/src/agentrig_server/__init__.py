"""agentrig-server: agentrig agents served as OpenAI- and Anthropic-compatible models.

``create_app(rt, settings)`` builds the ASGI application for an opened runtime;
``parse_settings`` validates a ``[server]`` table.  See docs/server.md.
"""

from __future__ import annotations

from agentrig_server._app import create_app, resolve_keys
from agentrig_server._errors import ApiError
from agentrig_server._serve import AgentServer, check_bind
from agentrig_server._settings import (
    ExposedAgent,
    ServerSettings,
    parse_settings,
    server_settings,
)

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
