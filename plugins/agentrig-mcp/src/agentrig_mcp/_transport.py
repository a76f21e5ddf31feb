"""Opening a server's transport: a stdio subprocess (stderr to the log) or streamable HTTP.

Both yield the SDK's stream pair.  A subprocess's stderr is read through a pipe and logged
line by line under ``agentrig.mcp.<server>``; the SDK stops the process (stdin closed, then
SIGTERM, then SIGKILL to its process group) when the transport closes.

Over HTTP, the SDK swallows a response stream that breaks (it only logs it), so a call whose
server died would wait for its timeout.  Every response body is therefore watched: a
transport error while reading it (the peer closed the connection mid-body, a reset) calls
``on_broken`` at once, which fails the calls in flight.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import anyio
import httpx
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentrig_mcp._config import HttpServerSpec, StdioServerSpec

if TYPE_CHECKING:
    import logging

    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

__all__ = ["OnBroken", "Streams", "open_transport"]

Streams = tuple[
    "MemoryObjectReceiveStream[SessionMessage | Exception]",
    "MemoryObjectSendStream[SessionMessage]",
]

HttpClientFactory = Callable[[HttpServerSpec, dict[str, str]], "httpx.AsyncClient"]

OnBroken = Callable[[BaseException], None]
"""Called with the error when an HTTP response stream from the server breaks."""


async def _pump_stderr(fd: int, log: logging.Logger) -> None:
    """Log the child's stderr until it closes (EOF when every holder of the pipe exited)."""
    os.set_blocking(fd, False)
    pending = b""
    try:
        while True:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                log.info("stderr: %s", line.decode("utf-8", "replace").rstrip())
        if pending:
            log.info("stderr: %s", pending.decode("utf-8", "replace").rstrip())
    finally:
        os.close(fd)


@contextlib.asynccontextmanager
async def _stdio(
    spec: StdioServerSpec, env: dict[str, str], log: logging.Logger
) -> AsyncIterator[Streams]:
    params = StdioServerParameters(
        command=spec.command, args=list(spec.args), env=env or None, cwd=spec.cwd
    )
    read_fd, write_fd = os.pipe()
    errlog = os.fdopen(write_fd, "w")
    async with anyio.create_task_group() as tg:
        tg.start_soon(_pump_stderr, read_fd, log)
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                errlog.close()  # the child holds its own copy; EOF comes when it exits
                yield read, write
        finally:
            errlog.close()


class _WatchedBody(httpx.AsyncByteStream):
    """A response body that reports a transport error while it is read, then re-raises it."""

    def __init__(self, body: httpx.AsyncByteStream, on_broken: OnBroken) -> None:
        self._body = body
        self._on_broken = on_broken

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._body:
                yield chunk
        except httpx.TransportError as exc:
            self._on_broken(exc)
            raise

    async def aclose(self) -> None:
        await self._body.aclose()


@contextlib.asynccontextmanager
async def _http(
    spec: HttpServerSpec,
    headers: dict[str, str],
    client: HttpClientFactory,
    on_broken: OnBroken | None,
) -> AsyncIterator[Streams]:
    async def watch(response: httpx.Response) -> None:
        if on_broken is not None and isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _WatchedBody(response.stream, on_broken)

    async with client(spec, headers) as http:
        http.event_hooks = {**http.event_hooks, "response": [*http.event_hooks["response"], watch]}
        async with streamable_http_client(spec.url, http_client=http) as (read, write, _id):
            yield read, write


def open_transport(
    spec: StdioServerSpec | HttpServerSpec,
    resolved: dict[str, str],
    *,
    log: logging.Logger,
    http_client: HttpClientFactory,
    on_broken: OnBroken | None = None,
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The stream pair of ``spec``; ``resolved`` is its env (stdio) or headers (HTTP)."""
    if isinstance(spec, StdioServerSpec):
        return _stdio(spec, resolved, log)
    return _http(spec, resolved, http_client, on_broken)
