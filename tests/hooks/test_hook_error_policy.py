"""on_error = "proceed", HTTP success without a decision, private URLs by consent (point 7).

The HTTP hook server is a real ``http.server`` on 127.0.0.1, started and stopped here.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lifecycle_support import RAN, run_agent

from agentrig.builtins._hook_http import factory as http_factory
from agentrig.builtins._scripted import Reply, ScriptedCall
from agentrig.errors import ConfigError
from agentrig.hooks import Allow, decode_http_answer

CALL: list[Reply | str] = [
    Reply(tool_calls=(ScriptedCall("Bash", {"command": "make build"}, id="c1"),)),
    "done",
]


# ---- on_error ---------------------------------------------------------------------------------


def _command_hook(command: list[str], **entry: Any) -> dict[str, Any]:
    return {"strategy": "command", "options": {"command": command, "timeout": 5}, **entry}


FAILURES = {
    "exit 1": [sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(1)"],
    "missing program": ["/nonexistent/agentrig-hook"],
    "undecodable JSON": [sys.executable, "-c", "import sys; sys.stdin.read(); print('{oops')"],
}


@pytest.mark.anyio
@pytest.mark.subprocess
@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("on_error", ["block", "proceed"])
async def test_on_error_decides_whether_a_failing_pre_tool_use_hook_blocks(
    tmp_path: Path, failure: str, on_error: str
) -> None:
    hook = _command_hook(FAILURES[failure], on_error=on_error)
    out = await run_agent(tmp_path, {"PreToolUse": [hook]}, CALL)
    if on_error == "proceed":
        assert RAN == ["make build"]
        assert any(n.kind == "error" for n in out.notices())  # reported, not silent
    else:
        assert RAN == []
        assert out.tool_texts()[0].startswith("The call was refused: hook gave no verdict")


@pytest.mark.anyio
async def test_an_unknown_on_error_value_is_refused(tmp_path: Path) -> None:
    hook = _command_hook(["true"], on_error="ignore")
    with pytest.raises(ConfigError) as caught:
        await run_agent(tmp_path, {"PreToolUse": [hook]}, CALL)
    assert "on_error" in str(caught.value)


# ---- HTTP: success without a decision -----------------------------------------------------------


@pytest.mark.parametrize("body", ["", "   ", "{}", '{"systemMessage": "logged"}'])
def test_an_empty_or_verdictless_2xx_body_is_success_without_a_decision(body: str) -> None:
    outcome = decode_http_answer(body, event="PreToolUse")
    assert isinstance(outcome, Allow)
    assert outcome.decision is None or outcome.decision.permission is None
    assert outcome.steering is False


# ---- HTTP: a real hook server on 127.0.0.1 ---------------------------------------------------


class _Server:
    def __init__(self) -> None:
        self.answer: bytes = b"{}"
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                outer.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("content-length", str(len(outer.answer)))
                self.end_headers()
                self.wfile.write(outer.answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
        srv.thread.join()


def test_a_loopback_url_needs_the_consent_key() -> None:
    for url in ("http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://10.1.2.3/hook"):
        with pytest.raises(ValueError, match="allow_private_url = true"):
            http_factory({"options": {"url": url}, "http": lambda: None})
        http_factory({"options": {"url": url, "allow_private_url": True}, "http": lambda: None})


@pytest.mark.anyio
async def test_without_consent_the_runtime_refuses_a_loopback_hook(
    tmp_path: Path, server: _Server
) -> None:
    hook = {"strategy": "http", "options": {"url": server.url}}
    with pytest.raises(ConfigError) as caught:
        await run_agent(tmp_path, {"PreToolUse": [hook]}, CALL)
    assert "allow_private_url" in str(caught.value)
    assert server.bodies == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "ran"),
    [
        (b"", True),
        (b"{}", True),
        (json.dumps({"decision": "block", "reason": "no"}).encode(), False),
    ],
)
async def test_with_consent_a_loopback_hook_server_is_asked(
    tmp_path: Path, server: _Server, answer: bytes, ran: bool
) -> None:
    server.answer = answer
    hook = {"strategy": "http", "options": {"url": server.url, "allow_private_url": True}}
    out = await run_agent(tmp_path, {"PreToolUse": [hook]}, CALL)
    assert [b["hook_event_name"] for b in server.bodies] == ["PreToolUse"]
    assert server.bodies[0]["tool_input"] == {"command": "make build"}
    assert (RAN == ["make build"]) is ran
    if not ran:
        assert out.tool_texts()[0] == "The call was refused: hook PreToolUse[0] (http): no"


@pytest.mark.anyio
async def test_consent_for_one_server_opens_no_other_private_address(tmp_path: Path) -> None:
    # the metadata address stays refused by the egress policy even with consent
    url = "http://169.254.169.254/latest"
    hook = {"strategy": "http", "options": {"url": url, "allow_private_url": True, "timeout": 2}}
    out = await run_agent(tmp_path, {"PreToolUse": [hook]}, CALL)
    assert RAN == []
    assert "metadata" in out.tool_texts()[0] or "egress" in out.tool_texts()[0]
