"""A loopback OpenAI Responses server, written to OpenAI's API reference, for provider tests.

``POST /v1/responses`` answers a JSON response object, or (``stream: true``) server-sent
events cut into writes of :attr:`ResponsesServer.split` bytes; ``/v1/responses`` also takes
a WebSocket (the Responses WebSocket mode): each ``response.create`` message is answered
with the same events, one text message each.  It keeps responses as OpenAI does: with
``store: true`` in a store any request may continue (``previous_response_id``); a WebSocket
also keeps the last response of the connection in memory, so ``store: false`` chains work on
that connection only (elsewhere: ``previous_response_not_found``).

What the model "does" comes from the conversation (restart-proof): with a ``get_weather``
tool offered and no result yet, it reasons (an encrypted reasoning item) and calls the tool;
with a tool result it answers ``"It is <result>."``; asked to "refuse" it refuses; with
``max_output_tokens = 1`` it stops incomplete; otherwise it answers ``"hello"``.  It
refuses, like OpenAI, a replayed reasoning item it neither issued (encrypted) nor stored, and a
function-call output without its call.  Every request is kept in :attr:`ResponsesServer.seen`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeAlias

import attrs
import uvicorn
from _responses_reference import (
    function_call,
    message,
    reasoning,
    refusal,
    response_object,
    stream_events,
    usage,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

__all__ = ["KEY", "Held", "ResponsesServer", "Seen"]

KEY = "sk-loopback"
MODEL = "gpt-5-mini-2025-08-07"
Held: TypeAlias = tuple[str, list[dict[str, Any]]] | None
"""What a WebSocket connection keeps: its last response's id and the conversation after it."""


@attrs.frozen
class Seen:
    """One request: how it came, its body, and the response id it got (None: refused)."""

    transport: str
    body: Mapping[str, Any]
    response_id: str | None
    connection: int | None = None


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error: dict[str, str | None] = {
            "type": "invalid_request_error",
            "code": code,
            "message": message,
            "param": param,
        }


class ResponsesServer:
    """``with ResponsesServer() as server:`` -- ``server.base_url`` is ``http://127.0.0.1:P/v1``."""

    def __init__(self, *, websocket: bool = True, split: int = 7) -> None:
        self.websocket = websocket
        self.split = split
        self.seen: list[Seen] = []
        self.stored: dict[str, list[dict[str, Any]]] = {}  # id -> the whole conversation
        self.issued: set[str] = set()  # encrypted reasoning handed out
        self.kept: set[str] = set()  # ids of the reasoning items of stored responses
        self.connections = 0
        self.drop_next_on: int | None = None  # close this connection on its next message
        self.limit_next_on: int | None = None  # answer websocket_connection_limit_reached
        self.fail_next: tuple[int, str] | None = None  # (status, code) for the next request
        self.port = 0
        self._ready = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="responses-srv")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- the model ---------------------------------------------------------------------------

    def _conversation(self, body: Mapping[str, Any], held: Held) -> list[dict[str, Any]]:
        previous = body.get("previous_response_id")
        history: list[dict[str, Any]] = []
        if previous is not None:
            if held is not None and held[0] == previous:
                history = list(held[1])
            elif previous in self.stored:
                history = list(self.stored[previous])
            else:
                raise _Refused(
                    400,
                    "previous_response_not_found",
                    f"Previous response with id '{previous}' not found.",
                    "previous_response_id",
                )
        raw = body.get("input", [])
        items = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw)
        for item in items:
            if item.get("type") != "reasoning":
                continue
            known = item.get("encrypted_content") in self.issued or item.get("id") in self.kept
            if not known:  # neither its encrypted content nor a stored item
                raise _Refused(400, "invalid_encrypted_content", "unknown reasoning item")
        conversation = history + items
        calls = {i["call_id"] for i in conversation if i.get("type") == "function_call"}
        for item in conversation:
            if item.get("type") == "function_call_output" and item["call_id"] not in calls:
                raise _Refused(
                    400,
                    "invalid_request_error",
                    f"No tool call found for function call output with call_id {item['call_id']}.",
                    "input",
                )
        return conversation

    def _answer(
        self, body: Mapping[str, Any], conversation: list[dict[str, Any]]
    ) -> dict[str, Any]:
        tools = [t.get("name") for t in body.get("tools", [])]
        last = conversation[-1] if conversation else {}
        output: list[dict[str, Any]]
        status, incomplete = "completed", None
        said = json.dumps(last.get("content", ""))
        if body.get("max_output_tokens") == 1:
            output, status, incomplete = [message("hel")], "incomplete", "max_output_tokens"
        elif "refuse" in said:
            output = [refusal("I can't help with that.")]
        elif last.get("type") == "function_call_output":
            output = [message(f"It is {last['output']}.")]
        elif "get_weather" in tools:
            encrypted = None
            if "reasoning.encrypted_content" in body.get("include", []):
                encrypted = f"enc-{secrets.token_hex(8)}"
                self.issued.add(encrypted)
            output = [
                reasoning(["Checking the weather."], encrypted),
                function_call(f"call_{secrets.token_hex(6)}", "get_weather", '{"city":"Paris"}'),
            ]
        else:
            output = [message("hello")]
        response_id = f"resp_{secrets.token_hex(10)}"
        return response_object(
            response_id,
            MODEL,
            output,
            status=status,
            incomplete=incomplete,
            usage=usage(20 + len(conversation), 5, cached=4, reasoning=2),
            previous=body.get("previous_response_id"),
            store=bool(body.get("store", True)),
        )

    def respond(
        self,
        body: Mapping[str, Any],
        transport: str,
        held: Held = None,
        connection: int | None = None,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to ``body`` and the whole conversation after it."""
        if self.fail_next is not None:
            (status, code), self.fail_next = self.fail_next, None
            self.seen.append(Seen(transport, body, None, connection))
            raise _Refused(status, code, f"refused with {code} for the test")
        try:
            conversation = self._conversation(body, held)
        except _Refused:
            self.seen.append(Seen(transport, body, None, connection))
            raise
        final = self._answer(body, conversation)
        self.seen.append(Seen(transport, body, final["id"], connection))
        after = conversation + [
            {k: v for k, v in item.items() if k != "status"} for item in final["output"]
        ]
        if body.get("store", True):
            self.stored[final["id"]] = after
            self.kept.update(i["id"] for i in final["output"] if i["type"] == "reasoning")
        return final, after

    # ---- HTTP --------------------------------------------------------------------------------

    async def _post(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {KEY}":
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            return JSONResponse({"error": {**error, "code": "invalid_api_key"}}, status_code=401)
        body = await request.json()
        try:
            final, _after = self.respond(body, "http")
        except _Refused as refused:
            return JSONResponse({"error": refused.error}, status_code=refused.status)
        if not body.get("stream"):
            return JSONResponse(final)
        return StreamingResponse(self._sse(final), media_type="text/event-stream; charset=utf-8")

    async def _sse(self, final: Mapping[str, Any]) -> AsyncIterator[bytes]:
        for event in stream_events(final):
            data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            for at in range(0, len(data), self.split):
                yield data[at : at + self.split]
                await asyncio.sleep(0)

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    # ---- WebSocket ---------------------------------------------------------------------------

    async def _socket(self, ws: WebSocket) -> None:
        if ws.headers.get("authorization") != f"Bearer {KEY}":
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            denial = JSONResponse({"error": {**error, "code": "invalid_api_key"}}, status_code=401)
            await ws.send_denial_response(denial)
            return
        await ws.accept()
        self.connections += 1
        number = self.connections
        held: Held = None
        try:
            while True:
                body = json.loads(await ws.receive_text())
                if self.drop_next_on == number:
                    self.drop_next_on = None
                    await ws.close(code=1011)
                    return
                held = await self._turn(ws, body, held, number)
        except WebSocketDisconnect:
            return

    async def _turn(self, ws: WebSocket, body: dict[str, Any], held: Held, number: int) -> Held:
        assert body.pop("type") == "response.create"
        assert "stream" not in body, "stream is implicit over a WebSocket"
        if self.limit_next_on == number:
            self.limit_next_on = None
            error = {"type": "invalid_request_error", "code": "websocket_connection_limit_reached"}
            error["message"] = "Responses websocket connection limit reached (60 minutes)."
            await ws.send_text(json.dumps({"type": "error", "status": 400, "error": error}))
            return held
        try:
            final, after = self.respond(body, "websocket", held, number)
        except _Refused as refused:
            event = {"type": "error", "status": refused.status, "error": refused.error}
            await ws.send_text(json.dumps(event))
            return held
        for event in stream_events(final):
            await ws.send_text(json.dumps(event))
        return final["id"], after

    # ---- lifecycle ---------------------------------------------------------------------------

    def _app(self) -> Starlette:
        routes: list[Any] = [
            Route("/v1/responses", self._post, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
        if self.websocket:
            routes.append(WebSocketRoute("/v1/responses", self._socket))
        return Starlette(routes=routes)

    def _main(self) -> None:
        config = uvicorn.Config(
            self._app(),
            host="127.0.0.1",
            port=0,
            log_level="error",
            ws="websockets-sansio",
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        asyncio.run(self._serve(self._server))

    async def _serve(self, server: uvicorn.Server) -> None:
        task = asyncio.create_task(server.serve())
        # uvicorn says it started only through this flag
        while not server.started and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if server.started:
            self.port = server.servers[0].sockets[0].getsockname()[1]
        self._ready.set()
        await task

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        self._ready.wait(timeout=30)
        assert self.port, "the Responses loopback server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        self._thread.join(timeout=10)
