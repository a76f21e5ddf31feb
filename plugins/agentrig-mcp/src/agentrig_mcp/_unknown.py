"""Requests for methods the server does not know, answered before the SDK sees them.

The SDK's server session answers a request it cannot parse as one of its own with "invalid
params" and logs the whole validation failure (some 90 lines per request, on stderr).  The
newer SDK's clients open every connection with such a request (``server/discover``, from a
later protocol revision), so each connection printed that dump.  The protocol's answer for a
method a server does not implement is "method not found" (-32601): a client then falls back
to ``initialize``.  This forwarder gives it, quietly, and passes everything else on.
"""

from __future__ import annotations

import contextlib
import typing

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from agentrig.diagnostics import get_logger

__all__ = ["KNOWN_METHODS", "answer_unknown_methods"]


def _methods() -> frozenset[str]:
    union = types.ClientRequest.model_fields["root"].annotation
    found: set[str] = set()
    for request in typing.get_args(union):
        found.update(typing.get_args(request.model_fields["method"].annotation))
    return frozenset(found)


#: the request methods the SDK's server session parses (the rest are unknown to it)
KNOWN_METHODS = _methods()


def _unknown(message: SessionMessage | Exception) -> types.JSONRPCRequest | None:
    if isinstance(message, Exception):
        return None
    root = message.message.root
    if isinstance(root, types.JSONRPCRequest) and root.method not in KNOWN_METHODS:
        return root
    return None


async def answer_unknown_methods(
    read: MemoryObjectReceiveStream[SessionMessage | Exception],
    into: MemoryObjectSendStream[SessionMessage | Exception],
    write: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Forward ``read`` to ``into``, answering a request of an unknown method on ``write``
    with "method not found" instead."""
    log = get_logger("mcp.serve")
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async with into:
            async for message in read:
                request = _unknown(message)
                if request is None:
                    await into.send(message)
                    continue
                log.debug("answered the unknown method %r: method not found", request.method)
                error = types.JSONRPCError(
                    jsonrpc="2.0",
                    id=request.id,
                    error=types.ErrorData(
                        code=types.METHOD_NOT_FOUND, message=f"Method not found: {request.method}"
                    ),
                )
                await write.send(SessionMessage(types.JSONRPCMessage(error)))
