"""Opening a server's transport: a stdio subprocess (stderr to the log) or streamable HTTP.

Both yield the SDK's stream pair.  A subprocess's stderr is read through a pipe and logged
line by line under ``agentrig.mcp.<server>``; the SDK stops the process (stdin closed, then
SIGTERM, then SIGKILL to its process group) when the transport closes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentrig_mcp._config import HttpServerSpec, StdioServerSpec

if TYPE_CHECKING:
    import logging

    import httpx
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

__all__ = ["Streams", "open_transport"]

Streams = tuple[
    "MemoryObjectReceiveStream[SessionMessage | Exception]",
    "MemoryObjectSendStream[SessionMessage]",
]

HttpClientFactory = Callable[[HttpServerSpec, dict[str, str]], "httpx.AsyncClient"]


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


@contextlib.asynccontextmanager
async def _http(
    spec: HttpServerSpec, headers: dict[str, str], client: HttpClientFactory
) -> AsyncIterator[Streams]:
    async with (
        client(spec, headers) as http,
        streamable_http_client(spec.url, http_client=http) as (read, write, _session_id),
    ):
        yield read, write


def open_transport(
    spec: StdioServerSpec | HttpServerSpec,
    resolved: dict[str, str],
    *,
    log: logging.Logger,
    http_client: HttpClientFactory,
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The stream pair of ``spec``; ``resolved`` is its env (stdio) or headers (HTTP)."""
    if isinstance(spec, StdioServerSpec):
        return _stdio(spec, resolved, log)
    return _http(spec, resolved, http_client)
