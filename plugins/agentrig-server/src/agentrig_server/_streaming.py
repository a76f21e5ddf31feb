"""Running an admitted run behind a response: streamed as SSE, or answered once as JSON.

Both watch the connection: a client that disconnects cancels its run (the run ends
``interrupted`` in its session).  Errors after a stream started go out as one error event in
the API's own shape; an unexpected exception is logged under an error id and only the id
reaches the client.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agentrig.errors import AbortError
from agentrig_server._errors import ApiError, internal_error
from agentrig_server._events import Finished, RunEvent
from agentrig_server._runs import ActiveRun

__all__ = ["EventStreamResponse", "Renderer", "run_to_end"]


class Renderer(Protocol):
    """Turns run events into SSE frames of one API."""

    def start(self) -> list[bytes]: ...

    def event(self, event: RunEvent) -> list[bytes]: ...

    def error(self, error: ApiError) -> list[bytes]: ...


class _Watch:
    """Whether the run finished (the watcher then does nothing) or the client went away."""

    __slots__ = ("done", "gone")

    def __init__(self) -> None:
        self.done = False
        self.gone = False


async def _watch(receive: Receive, run: ActiveRun, watch: _Watch) -> None:
    """Stop the run (through its signal) when the client disconnects or its time is up.

    It runs on the runtime's task group and ends by itself: the ASGI server answers
    ``receive()`` with ``http.disconnect`` once the response is complete, so no request pays
    for cancelling it.
    """
    with anyio.move_on_after(run.exposed.max_run_seconds):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                if not watch.done:
                    watch.gone = True
                    run.signal.cancel(AbortError("the client disconnected"))
                return
    if not watch.done:
        run.time_out()


async def run_to_end(
    run: ActiveRun,
    receive: Receive,
    emit: Callable[[RunEvent], Awaitable[None]],
    *,
    stream: bool,
) -> Finished | None:
    """Drive ``run`` while watching the connection; None when the client went away."""
    watch = _Watch()
    run.service.rt.spawn(functools.partial(_watch, receive, run, watch))
    try:
        finished = await run.drive(emit, stream=stream)
    finally:
        watch.done = True
        await run.close()
    return None if watch.gone else finished


class EventStreamResponse(Response):
    """An ASGI response streaming a run as server-sent events."""

    def __init__(self, run: ActiveRun, renderer: Renderer) -> None:
        super().__init__(status_code=200, media_type="text/event-stream")
        self.run = run
        self.renderer = renderer
        #: called once the stream ended (however it ended)
        self.on_done: Callable[[], None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def write(frames: list[bytes]) -> None:
            for frame in frames:
                await send({"type": "http.response.body", "body": frame, "more_body": True})

        state = scope.setdefault("state", {})

        async def emit(event: RunEvent) -> None:
            if isinstance(event, Finished) and event.finish == "error":
                state["error_code"] = "upstream_error"  # for the error log: failed after 200
            await write(self.renderer.event(event))

        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-cache"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            await write(self.renderer.start())
            try:
                await run_to_end(self.run, receive, emit, stream=True)
            except ApiError as exc:
                state["error_code"] = exc.api_code
                await write(self.renderer.error(exc))
            except Exception as exc:
                error = internal_error(exc)
                state["error_code"] = error.api_code
                await write(self.renderer.error(error))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            try:
                await self.run.close()
            finally:
                if self.on_done is not None:
                    self.on_done()
