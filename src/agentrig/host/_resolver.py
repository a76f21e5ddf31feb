"""The resolver port of the egress policy.

A host name is resolved exactly once per request, through this port, and the connection is
then made only to the addresses that answer validated (see :mod:`agentrig.host._transport`).
Tests and hosts with their own DNS pass any object with a matching ``resolve`` method.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import anyio

__all__ = ["Resolver", "SystemResolver"]


@runtime_checkable
class Resolver(Protocol):
    """Turns a host name into the IP address strings a connection may use."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        """Return every address ``host`` resolves to (IPv4 and IPv6 text form).

        Raise :class:`OSError` when the name cannot be resolved; the egress transport
        reports that as a connection error.
        """
        ...


class SystemResolver:
    """Resolve through the operating system (``getaddrinfo``, via anyio's worker thread).

    The answers are the complete set the system returns for a TCP connection; all of them
    are validated, so one private answer among public ones refuses the request.
    """

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        seen: dict[str, None] = {}
        for _family, _type, _proto, _canonname, sockaddr in infos:
            seen.setdefault(str(sockaddr[0]), None)
        return tuple(seen)
