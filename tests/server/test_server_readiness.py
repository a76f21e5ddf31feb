"""``/ready`` asks the first-party providers themselves, against a real upstream on loopback.

The upstream is a plain HTTP server written to the vendors' model-listing endpoints
(OpenAI ``GET /v1/models`` with a bearer key; Anthropic ``GET /v1/models`` with ``x-api-key``
and ``anthropic-version``): a right key is ready, a wrong key or a dead upstream is not.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from server_support import KEY, RunningServer, scripted_config

GOOD = "sk-upstream-good"


class Upstream:
    """Answers the model listings of both vendors; records each request's path and headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                upstream.requests.append(("GET", self.path, headers))
                anthropic = "anthropic-version" in headers
                key = headers.get("x-api-key") if anthropic else headers.get("authorization")
                expected = GOOD if anthropic else f"Bearer {GOOD}"
                if self.path != "/v1/models":
                    self._send(404, {"error": {"type": "not_found", "message": "no route"}})
                elif key != expected:
                    error = {"type": "authentication_error", "message": "invalid x-api-key"}
                    self._send(
                        401, {"type": "error", "error": error} if anthropic else {"error": error}
                    )
                else:
                    self._send(200, {"data": [{"id": "model-1", "object": "model"}]})

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    try:
        yield server
    finally:
        server.close()


def _config(base: str, openai_key: str, anthropic_key: str) -> dict[str, Any]:
    common = {"allow_private_base_url": True, "max_retries": 3}
    return {
        "providers": {
            "oa": {
                "kind": "openai",
                "options": {"base_url": f"{base}/v1", **common},
                "credentials": {"api_key": openai_key},
            },
            "an": {
                "kind": "anthropic",
                "options": {"base_url": base, **common},
                "credentials": {"api_key": anthropic_key},
            },
        },
        "agents": {
            "gpt": {"provider": "oa", "model": "gpt-4o-mini"},
            "claude": {"provider": "an", "model": "claude-sonnet-4-5"},
        },
    }


SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"gpt": {}, "claude": {}}}


def _ready(config: dict[str, Any]) -> httpx.Response:
    with RunningServer(config, SETTINGS, environ={"SERVER_KEY": KEY}) as srv:
        return httpx.get(f"{srv.base_url}/ready", headers={"authorization": f"Bearer {KEY}"})


def test_both_providers_are_checked_and_ready_with_good_keys(upstream: Upstream) -> None:
    ready = _ready(_config(upstream.base, GOOD, GOOD))
    assert ready.status_code == 200, ready.text
    checks = ready.json()["checks"]
    assert checks["provider:oa"] == {"status": "ok"}
    assert checks["provider:an"] == {"status": "ok"}
    paths = sorted((path, "x-api-key" in headers) for _, path, headers in upstream.requests)
    assert paths == [("/v1/models", False), ("/v1/models", True)]


def test_a_wrong_key_is_not_ready_and_names_the_kind_but_not_the_upstream_text(
    upstream: Upstream,
) -> None:
    ready = _ready(_config(upstream.base, "sk-wrong", GOOD))
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["provider:an"] == {"status": "ok"}
    failed = checks["provider:oa"]
    assert failed["status"] == "failed"
    assert failed["detail"].startswith("provider.auth (HTTP 401)")
    assert "invalid x-api-key" not in ready.text
    # a readiness probe is one request: the provider's retry policy does not apply
    assert sum(1 for _, _, h in upstream.requests if "x-api-key" not in h) == 1


def test_an_unreachable_upstream_is_not_ready(upstream: Upstream) -> None:
    base = upstream.base
    upstream.close()
    ready = _ready(_config(base, GOOD, GOOD))
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    for key in ("provider:oa", "provider:an"):
        assert checks[key]["status"] == "failed"
        assert checks[key]["detail"].startswith("provider.connection")


def test_the_scripted_provider_is_checked_and_always_ready() -> None:
    settings = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}
    with RunningServer(scripted_config(), settings, environ={"SERVER_KEY": KEY}) as srv:
        ready = httpx.get(f"{srv.base_url}/ready", headers={"authorization": f"Bearer {KEY}"})
    assert ready.json()["checks"]["provider:local"] == {"status": "ok"}
