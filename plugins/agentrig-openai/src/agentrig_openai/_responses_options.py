"""The ``[providers.<id>.options]`` table of an ``openai-responses`` provider."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from agentrig_openai._options import OpenAIEndpointOptions

__all__ = ["ResponsesOptions"]


class ResponsesOptions(OpenAIEndpointOptions):
    """Options of the OpenAI Responses provider.

    ``store`` chooses where the conversation lives between requests.  ``false`` (the
    default): nothing is kept by OpenAI, every request sends the whole conversation, and
    reasoning comes back encrypted (``include: ["reasoning.encrypted_content"]``) to be sent
    again.  ``true``: OpenAI keeps each response, and a request continues the last one with
    ``previous_response_id``, sending only the new items.

    ``transport``: ``websocket`` keeps one connection to ``{base_url}/responses`` per
    conversation in flight and continues each tool round on it incrementally; ``http`` posts
    each request (server-sent events when streamed); ``auto`` (the default) takes the
    WebSocket on OpenAI's own API and HTTP elsewhere -- most compatible servers have no
    WebSocket mode.  ``websocket_pool`` is how many idle connections are kept open.
    """

    store: bool = False
    transport: Literal["auto", "websocket", "http"] = "auto"
    websocket_pool: int = Field(default=4, ge=1, le=64)
    reasoning_summary: Literal["auto", "concise", "detailed"] | None = None

    @property
    def uses_websocket(self) -> bool:
        """Whether requests go over the WebSocket transport."""
        if self.transport == "auto":
            return self.vendor_endpoint
        return self.transport == "websocket"

    @property
    def websocket_url(self) -> str:
        """``{base_url}/responses`` with ``ws``/``wss`` for ``http``/``https``."""
        parts = urlsplit(self.endpoint("/responses"))
        scheme = "wss" if parts.scheme == "https" else "ws"
        return urlunsplit((scheme, parts.netloc, parts.path, "", ""))
