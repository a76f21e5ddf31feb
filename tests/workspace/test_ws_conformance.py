"""The workspace toolset passes agentrig's toolset conformance suite, as installed.

Every tool's schema projects onto each provider profile (Grep's ``-i``/``-A`` property names
included), each sample input runs against real files -- Bash in bubblewrap, WebFetch through
an egress client to a page served on loopback (consented to) -- and a cancelled signal is
honoured.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from agentrig.builtins.workspace import (
    WORKSPACE,
    FetchClient,
    SandboxConfig,
    Workspace,
    WorkspaceConfig,
    backend_for,
)
from agentrig.cancel import CancelSignal
from agentrig.host import EgressPolicy, egress_client
from agentrig.kernel import Services
from agentrig.testing.conformance_toolset import ToolsetConformance
from agentrig.tools import Tool, ToolContext

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
]


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><body><h1>Title</h1></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


_SERVER = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
_SERVER.daemon_threads = True
threading.Thread(target=_SERVER.serve_forever, daemon=True).start()
_ADDRESS = f"127.0.0.1:{_SERVER.server_address[1]}"


def _client(*, allow_private: tuple[str, ...], **kwargs: Any) -> Any:
    return egress_client(policy=EgressPolicy(allow_private=frozenset(allow_private)), **kwargs)


def _installed() -> Any:
    (entry,) = [ep for ep in entry_points(group="agentrig.tools") if ep.name == "workspace"]
    return entry.load()


class TestWorkspaceToolset(ToolsetConformance):
    def contribution(self) -> Any:
        return _installed()

    def sample_inputs(self) -> Mapping[str, Mapping[str, Any]]:
        return {
            "Read": {"file_path": "a.txt", "limit": 5},
            "Write": {"file_path": "b.txt", "content": "written"},
            "Edit": {"file_path": "c.txt", "old_string": "old", "new_string": "new"},
            "Glob": {"pattern": "**/*.txt"},
            "Grep": {"pattern": "hello", "-i": True, "output_mode": "content", "-C": 1},
            "Bash": {"command": "echo sandboxed", "timeout": 10_000},
            "WebFetch": {"url": f"http://{_ADDRESS}/", "prompt": "the title"},
        }

    def _context(self, tool: Tool, signal: CancelSignal) -> ToolContext:
        root = Path(tempfile.mkdtemp(prefix="agentrig-conf-")).resolve()
        (root / "a.txt").write_text("hello\n")
        (root / "c.txt").write_text("old\n")
        settings = SandboxConfig(backend="bubblewrap")
        space = Workspace(
            root=root,
            config=WorkspaceConfig(sandbox=settings),
            backend=backend_for(settings, root),
            http=FetchClient(_client, (_ADDRESS,)),
        )
        services = Services()
        services.provide(WORKSPACE, space)
        return ToolContext(
            signal=signal,
            tool_id=tool.id,
            call_id="call_c",
            invocation_id="inv_c",
            services=services,
        )
