"""WebFetch against a real server on loopback: consent for private addresses, bounds, text."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _ws_support import context

import agentrig
from agentrig.builtins.workspace import WEB_FETCH, WORKSPACE, FetchError
from agentrig.builtins.workspace._fetch import html_to_text
from agentrig.tools import check_input

pytestmark = pytest.mark.anyio

PAGE = b"""<html><head><title>t</title><style>p{}</style></head><body>
<script>alert(1)</script><h1>Release notes</h1><p>Version <b>2.0</b> adds
<a href="/x">sandboxes</a>.</p><ul><li>one</li><li>two</li></ul></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(3)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()
            return
        body, kind = PAGE, "text/html; charset=utf-8"
        if self.path == "/big":
            body, kind = b"y" * 50_000, "text/plain"
        if self.path == "/image":
            body, kind = b"\x89PNG", "image/png"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)  # the client may stop reading at its byte bound

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _config(tmp_path: Path, **fetch: Any) -> dict[str, Any]:
    return {
        "providers": {"local": {"kind": "scripted"}},
        "agents": {"a": {"provider": "local", "model": "m", "tools": ["WebFetch"]}},
        "permissions": {"workspace": str(tmp_path)},
        "workspace": {"fetch": fetch},
    }


async def _fetch(config: dict[str, Any], url: str, prompt: str | None = None) -> Any:
    async with agentrig.open_runtime(config) as rt:
        space = rt.services.require(WORKSPACE)
        arguments = {"url": url} | ({"prompt": prompt} if prompt else {})
        checked = check_input(WEB_FETCH, arguments)
        assert checked.passed
        return await WEB_FETCH.execute(checked.value, context(space, WEB_FETCH))


async def test_a_private_address_needs_consent(server: str, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="refused by the egress policy"):
        await _fetch(_config(tmp_path), f"{server}/page")
    out = await _fetch(_config(tmp_path, allow_private=["127.0.0.1"]), f"{server}/page", "notes")
    assert out.startswith(f"Fetched {server}/page (looking for: notes)")
    assert "# Release notes" in out
    assert "Version **2.0** adds\n[sandboxes](/x)." in out
    assert "alert(1)" not in out


async def test_a_redirect_to_a_metadata_address_is_refused(server: str, tmp_path: Path) -> None:
    consent = _config(tmp_path, allow_private=["127.0.0.1"])
    with pytest.raises(FetchError, match="refused by the egress policy"):
        await _fetch(consent, f"{server}/redirect")


@pytest.mark.slow
async def test_size_time_and_type_bounds(server: str, tmp_path: Path) -> None:
    bounded = _config(tmp_path, allow_private=["127.0.0.1"], max_bytes=1000, timeout=1)
    out = await _fetch(bounded, f"{server}/big")
    assert out.endswith("[the page was cut at 1000 bytes]")
    assert "y" * 1000 in out
    start = time.monotonic()
    with pytest.raises(FetchError, match="did not answer within 1s"):
        await _fetch(bounded, f"{server}/slow")
    assert time.monotonic() - start < 2.5
    with pytest.raises(FetchError, match="image/png, not a text page"):
        await _fetch(bounded, f"{server}/image")


def test_html_to_text_keeps_structure_and_drops_code() -> None:
    text = html_to_text(PAGE.decode())
    assert text.splitlines()[0] == "# Release notes"
    assert "* one" in text
    assert "p{}" not in text
