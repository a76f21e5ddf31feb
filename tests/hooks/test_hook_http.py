"""The ``http`` hook strategy through ``httpx.MockTransport``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from agentrig.builtins._hook_http import HttpHook, HttpOptions, factory
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.hooks import Allow, Deny, HookErrorOutcome, HookEvent, HookOutcome, HookStrategy

EVENT = HookEvent.pre_tool_use("Bash", {"command": "ls"}, session_id="s1", cwd="/work")
URL = "https://policy.example/hooks"

Handler = Callable[[httpx.Request], Any]


def strategy(handler: Handler, **options: Any) -> tuple[HttpHook, list[httpx.Client | Any]]:
    made: list[Any] = []

    def http() -> httpx.AsyncClient:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        made.append(client)
        return client

    return factory({"options": {"url": URL, **options}, "http": http}), made


async def run(handler: Handler, **options: Any) -> HookOutcome:
    hook, _ = strategy(handler, **options)
    try:
        return await hook.run(EVENT, signal=CancelSignal())
    finally:
        await hook.aclose()


def reply(body: Any, status: int = 200) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(body, bytes | str):
            return httpx.Response(status, content=body)
        return httpx.Response(status, json=body)

    return handler


def test_options_and_port() -> None:
    hook, _ = strategy(reply({"allow": True}))
    assert isinstance(hook, HookStrategy)
    assert factory.options_model is HttpOptions  # type: ignore[attr-defined]
    for bad in ({"url": "ftp://x/y"}, {"url": "/relative"}, {"url": URL, "timeout": 0}):
        with pytest.raises(ValueError):  # noqa: PT011
            factory({"options": bad, "http": lambda: None})


def test_the_runtime_client_factory_is_required() -> None:
    with pytest.raises(ValueError, match="client factory"):
        factory({"options": {"url": URL}})


@pytest.mark.anyio
async def test_posts_the_event_json_with_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"allow": True})

    outcome = await run(handler, headers={"Authorization": "Bearer t"})
    assert outcome == Allow("", outcome.decision if isinstance(outcome, Allow) else None)
    (request,) = seen
    assert request.method == "POST"
    assert str(request.url) == URL
    assert request.headers["authorization"] == "Bearer t"
    assert request.headers["content-type"] == "application/json"
    body = json.loads(request.content)
    assert body["hook_event_name"] == "PreToolUse"
    assert body["tool_name"] == "Bash"
    assert body["tool_input"] == {"command": "ls"}


@pytest.mark.anyio
async def test_allow_true_and_false() -> None:
    assert isinstance(await run(reply({"allow": True})), Allow)
    denied = await run(reply({"allow": False, "reason": "blocked by policy 7"}))
    assert isinstance(denied, Deny)
    assert denied.reason == "blocked by policy 7"


@pytest.mark.anyio
async def test_claude_code_shape_is_accepted() -> None:
    body = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "nope",
        }
    }
    outcome = await run(reply(body))
    assert isinstance(outcome, Deny)
    assert outcome.reason == "nope"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "status", "reason_part"),
    [
        ({"allow": "true"}, 200, "allow must be true or false"),
        (b"<html>internal error</html>", 200, "not valid JSON"),
        (b"\xff\xfe", 200, "not valid UTF-8"),
        ({"allow": True}, 500, "HTTP 500"),
        ({"allow": True}, 403, "HTTP 403"),
        ({"allow": True}, 302, "HTTP 302"),
    ],
)
async def test_everything_else_is_an_error_with_a_named_reason(
    body: Any, status: int, reason_part: str
) -> None:
    outcome = await run(reply(body, status))
    assert isinstance(outcome, HookErrorOutcome)
    assert reason_part in outcome.reason


@pytest.mark.anyio
async def test_connection_error_is_an_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    outcome = await run(handler)
    assert isinstance(outcome, HookErrorOutcome)
    assert outcome.reason.startswith("request failed: ConnectError")


@pytest.mark.anyio
async def test_transport_timeout_is_an_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    assert await run(handler, timeout=2) == HookErrorOutcome("timed out after 2s")


@pytest.mark.anyio
async def test_a_server_that_never_answers_times_out() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(30)
        return httpx.Response(200, json={"allow": True})

    with anyio.fail_after(10):
        outcome = await run(handler, timeout=0.2)
    assert outcome == HookErrorOutcome("timed out after 0.2s")


@pytest.mark.anyio
async def test_an_oversized_body_is_an_error() -> None:
    outcome = await run(reply({"allow": True, "pad": "x" * 5000}), max_response_bytes=1000)
    assert outcome == HookErrorOutcome("the response exceeded 1000 bytes")


@pytest.mark.anyio
async def test_cancel_signal_aborts_the_request() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(30)
        return httpx.Response(200, json={"allow": True})

    hook, _ = strategy(handler)
    signal = CancelSignal()
    async with anyio.create_task_group() as tg:

        async def cancel_soon() -> None:
            await anyio.sleep(0.1)
            signal.cancel("stop")

        tg.start_soon(cancel_soon)
        with anyio.fail_after(10), pytest.raises(AbortError):
            await hook.run(EVENT, signal=signal)
    await hook.aclose()


@pytest.mark.anyio
async def test_one_client_is_made_lazily_and_closed() -> None:
    hook, made = strategy(reply({"allow": True}))
    assert made == []
    for _ in range(3):
        assert isinstance(await hook.run(EVENT, signal=CancelSignal()), Allow)
    assert len(made) == 1
    await hook.aclose()
    assert made[0].is_closed
