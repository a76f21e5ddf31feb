"""Helpers shared by the MCP tests: the test server's path and waiting for what another
process writes."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import anyio

from agentrig.cancel import CancelSignal

SERVER = str(Path(__file__).with_name("_mcp_server.py"))
"""The FastMCP test server (``python _mcp_server.py --help``)."""

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
"""The image the test server's ``picture`` tool returns (the same bytes as there)."""


def marked(marker: Path, text: str) -> Callable[[], bool]:
    """Has the test server written ``text`` to its marker file?"""
    return lambda: marker.exists() and text in marker.read_text()


async def eventually(check: Callable[[], bool], seconds: float = 30) -> None:
    """Poll a condition another process makes true (a file it writes): there is no event to
    wait on across processes."""
    with anyio.fail_after(seconds):
        while True:
            if check():
                return
            await anyio.sleep(0.02)


async def cancel_once(marker: Path, text: str, signal: CancelSignal, reason: str) -> None:
    """Cancel ``signal`` once the test server wrote ``text`` (``started``) to ``marker``."""
    await eventually(marked(marker, text))
    signal.cancel(reason)
