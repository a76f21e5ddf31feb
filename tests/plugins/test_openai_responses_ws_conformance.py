"""The ``openai-responses`` provider passes the provider conformance suite over the Responses
WebSocket mode: a loopback server (:mod:`_responses_server`, uvicorn + Starlette) answers each
scenario's ``response.create`` with the scenario's events, one message each; errors are
``error`` events carrying the HTTP status (and, for 429, the ``retry-after`` header)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest
from _provider_fixtures import served_provider
from _responses_server import KEY, Held, ResponsesServer
from starlette.websockets import WebSocket
from test_openai_responses_conformance import ERRORS, ResponsesConformance, wire_reply

from agentrig.llm import Provider
from agentrig.testing.conformance_provider import RETRY_AFTER, Scenario

pytestmark = pytest.mark.integration


class ScenarioSocketServer(ResponsesServer):
    """Answers every ``response.create`` with one scenario (a ``SLOW_STREAM`` is held)."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__()
        self.scenario = scenario
        self.bodies: list[dict[str, Any]] = []

    async def _turn(self, ws: WebSocket, body: dict[str, Any], held: Held, number: int) -> Held:
        assert body.pop("type") == "response.create"
        self.bodies.append(body)
        if self.scenario in ERRORS:
            status, kind, code = ERRORS[self.scenario]
            error = {"type": kind, "code": code, "message": f"conformance {status}"}
            event: dict[str, Any] = {"type": "error", "status": status, "error": error}
            if status == 429:
                event["headers"] = {"retry-after": str(int(RETRY_AFTER))}
            await ws.send_text(json.dumps(event))
            return held
        reply = wire_reply(self.scenario, {**body, "stream": True})
        for item in reply.events or ():
            await ws.send_text(json.dumps(item))
        if self.scenario is Scenario.SLOW_STREAM:
            await ws.receive_text()  # held until the client goes away
        return held


class TestOpenAIResponsesWebSocketConformance(ResponsesConformance):
    capability_models: ClassVar[tuple[str, ...]] = ("gpt-5-mini", "gpt-4o")

    def make_provider(self, scenario: Scenario) -> Provider:
        server = ScenarioSocketServer(scenario).__enter__()
        self.__dict__.setdefault("servers", []).append(server)
        return served_provider(
            "openai-responses",
            "openai-responses-ws",
            server.base_url,
            api_key=KEY,
            transport="websocket",
        )

    @pytest.fixture(autouse=True)
    def _stop_servers(self) -> Any:
        yield
        for server in self.__dict__.get("servers", []):
            server.__exit__(None, None, None)

    def wire_requests(self) -> Sequence[Mapping[str, Any]] | None:
        servers: list[ScenarioSocketServer] = self.__dict__.get("servers", [])
        return [body for server in servers for body in server.bodies]
