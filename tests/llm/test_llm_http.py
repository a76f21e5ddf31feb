"""``agentrig.llm.http``: retry schedule, cancellation, SSE framing and reading, the client
session, the shared provider options and the HTTP provider factory."""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.llm import (
    InvalidRequestError,
    ModelInfo,
    ModelRegistry,
    NotFoundError,
    OverloadedError,
    ProviderConfig,
    ProviderConnectionError,
    ProviderError,
    ProviderProtocolError,
    ProviderTimeoutError,
    RateLimitError,
    ServerError,
)
from agentrig.llm.http import (
    HttpProviderFactory,
    HttpProviderOptions,
    HttpSession,
    RetryPolicy,
    SSEDecoder,
    SSEEvent,
    close_stream,
    error_from_response,
    error_from_transport,
    event_json,
    first_header,
    read_json_object,
    read_sse,
    read_sse_batches,
    send_with_retries,
)

FAST = RetryPolicy(max_retries=2, base_delay=0.001, max_delay=0.01)


class Server:
    """Answers requests from a list of responses (the last one repeats), recording them."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler), **kwargs)


def builder(client: httpx.AsyncClient) -> Callable[[], httpx.Request]:
    return lambda: client.build_request("POST", "https://api.example.com/v1/x", content=b"{}")


async def send(
    server: Server, *, policy: RetryPolicy = FAST, signal: CancelSignal | None = None, **kw: Any
) -> httpx.Response:
    async with server.client() as client:
        return await send_with_retries(
            client,
            builder(client),
            policy=policy,
            signal=signal or CancelSignal(),
            provider="test",
            **kw,
        )


class Body(httpx.AsyncByteStream):
    """A response body that records whether it was closed; it can hang after some chunks."""

    def __init__(self, chunks: list[bytes], *, hang_after: int | None = None) -> None:
        self.chunks = chunks
        self.hang_after = hang_after
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if self.hang_after is not None and index >= self.hang_after:
                await anyio.sleep_forever()
            yield chunk
        if self.hang_after is not None:
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        self.closed = True


async def cancel_after(signal: CancelSignal, seconds: float, reason: str) -> None:
    await anyio.sleep(seconds)
    signal.cancel(reason)


# -- the retry schedule ----------------------------------------------------------------------


def test_retry_after_replaces_the_backoff_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=5.0, max_delay=50.0, max_retry_after=10.0)
    assert policy.delay(0, 2.5) == 2.5
    assert policy.delay(3, 0.0) == 0.0
    assert policy.delay(0, 3600.0) == 10.0
    assert policy.delay(0, -4.0) == 0.0


@given(
    attempt=st.integers(min_value=0, max_value=40),
    base=st.floats(min_value=0.0, max_value=10.0),
    cap=st.floats(min_value=0.0, max_value=60.0),
)
def test_backoff_is_jittered_within_half_and_whole_of_the_capped_exponential(
    attempt: int, base: float, cap: float
) -> None:
    policy = RetryPolicy(base_delay=base, max_delay=cap)
    ceiling = min(cap, base * 2.0**attempt)
    wait = policy.delay(attempt, None)
    assert 0.5 * ceiling - 1e-12 <= wait <= ceiling + 1e-12


def test_backoff_is_actually_jittered() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    waits = {policy.delay(2, None) for _ in range(50)}
    assert len(waits) > 1
    assert all(2.0 <= wait <= 4.0 for wait in waits)


@pytest.mark.anyio
async def test_a_retry_waits_for_the_servers_retry_after() -> None:
    server = Server(
        httpx.Response(429, headers={"retry-after": "0.2"}, json={"error": {"type": "rate"}}),
        httpx.Response(200, json={"ok": True}),
    )
    started = anyio.current_time()
    response = await send(server)
    assert response.json() == {"ok": True}
    assert anyio.current_time() - started >= 0.19  # the server's wait, not the 1 ms backoff
    assert len(server.requests) == 2


@pytest.mark.anyio
async def test_a_retry_after_longer_than_the_cap_ends_the_retries_at_once() -> None:
    server = Server(
        httpx.Response(429, headers={"retry-after": "3600"}, json={}),
        httpx.Response(200, json={}),
    )
    with pytest.raises(RateLimitError) as caught:
        await send(server, policy=RetryPolicy(max_retries=3, max_retry_after=60))
    assert len(server.requests) == 1  # never an early retry
    assert caught.value.retry_after == 3600
    assert not caught.value.recoverable or caught.value.retryable  # still a rate limit
    assert "Retry-After 3600 s is longer than max_retry_after 60 s" in str(caught.value)


@pytest.mark.anyio
async def test_a_retry_after_within_the_cap_is_waited_for() -> None:
    server = Server(
        httpx.Response(429, headers={"retry-after": "0"}, json={}),
        httpx.Response(200, json={"ok": True}),
    )
    response = await send(server, policy=RetryPolicy(max_retries=1, max_retry_after=0))
    assert response.json() == {"ok": True}
    assert len(server.requests) == 2


# -- what a failure names ------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b'{"id": "chatcmpl-1", "choices": []}'),
        ("text/html; charset=utf-8", b"<html>" + b"x" * 5000 + b"</html>"),
    ],
    ids=["json", "html"],
)
async def test_a_2xx_that_is_not_an_event_stream_is_a_protocol_error(
    content_type: str, body: bytes
) -> None:
    stream = Body([body])
    server = Server(httpx.Response(200, headers={"content-type": content_type}, stream=stream))
    with pytest.raises(ProviderProtocolError) as caught:
        await send(server, stream=True)
    error = caught.value
    message = str(error)
    assert len(server.requests) == 1  # not retried
    assert not error.retryable
    assert (error.code, error.status) == ("provider.protocol", 200)
    assert content_type in message
    assert "text/event-stream" in message
    assert body[:20].decode() in message  # an excerpt of what came instead
    assert len(message) < 1000  # bounded, however large the body
    assert stream.closed


@pytest.mark.anyio
async def test_an_event_stream_with_parameters_is_accepted() -> None:
    server = Server(
        httpx.Response(
            200,
            headers={"content-type": "text/event-stream; charset=utf-8"},
            content=b"data: x\n\n",
        )
    )
    response = await send(server, stream=True)
    await response.aclose()
    assert response.status_code == 200


@pytest.mark.anyio
async def test_a_connection_failure_names_the_host_and_port() -> None:
    # a real refused connection: a port on 127.0.0.1 nobody listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with httpx.AsyncClient() as client:
        with pytest.raises(ProviderConnectionError) as caught:
            await send_with_retries(
                client,
                lambda: client.build_request("POST", f"http://127.0.0.1:{port}/v1/chat"),
                policy=RetryPolicy(max_retries=0),
                signal=CancelSignal(),
                provider="local",
            )
    assert f"127.0.0.1:{port}" in str(caught.value)


def test_a_transport_error_names_the_default_port_of_its_scheme() -> None:
    request = httpx.Request("POST", "https://api.example.com/v1/messages")
    error = error_from_transport(httpx.ConnectError("nope", request=request), provider="p")
    assert "api.example.com:443" in str(error)
    timeout = error_from_transport(httpx.ReadTimeout("slow", request=request), provider="p")
    assert isinstance(timeout, ProviderTimeoutError)
    assert "api.example.com:443" in str(timeout)


@pytest.mark.anyio
async def test_a_404_names_the_url() -> None:
    server = Server(httpx.Response(404, json={"error": {"message": "no such route"}}))
    async with server.client() as client:
        with pytest.raises(NotFoundError) as caught:
            await send_with_retries(
                client,
                lambda: client.build_request(
                    "POST", "https://api.example.com/v2/chat?api-key=secret", content=b"{}"
                ),
                policy=FAST,
                signal=CancelSignal(),
                provider="test",
            )
    message = str(caught.value)
    assert "POST https://api.example.com/v2/chat" in message
    assert "secret" not in message  # the query (a key, sometimes) is left out


@pytest.mark.anyio
async def test_retries_stop_after_max_retries_with_the_last_error() -> None:
    server = Server(httpx.Response(500, json={"error": {"message": "boom"}}))
    with pytest.raises(ServerError) as caught:
        await send(server)
    assert len(server.requests) == 3
    assert caught.value.status == 500


@pytest.mark.anyio
async def test_a_non_retryable_status_is_raised_at_once() -> None:
    server = Server(httpx.Response(400, json={"error": {"message": "bad"}}))
    with pytest.raises(InvalidRequestError):
        await send(server)
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_x_should_retry_false_is_honoured() -> None:
    server = Server(httpx.Response(503, headers={"x-should-retry": "false"}, json={}))
    with pytest.raises(OverloadedError):
        await send(server)
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_retry_if_and_classify_let_the_plugin_decide() -> None:
    server = Server(httpx.Response(429, json={}))
    with pytest.raises(RateLimitError):
        await send(server, retry_if=lambda error: False)
    assert len(server.requests) == 1

    def classify(response: httpx.Response) -> ProviderError:
        return ProviderError(f"vendor said {response.status_code}", status=response.status_code)

    server = Server(httpx.Response(418, text="teapot"))
    with pytest.raises(ProviderError, match="vendor said 418"):
        await send(server, classify=classify)


@pytest.mark.anyio
async def test_transport_failures_are_retried_then_mapped() -> None:
    server = Server(httpx.ConnectError("refused"), httpx.Response(200, json={}))
    assert (await send(server)).status_code == 200
    assert len(server.requests) == 2

    with pytest.raises(ProviderConnectionError):
        await send(Server(httpx.ConnectError("refused")))
    with pytest.raises(ProviderTimeoutError):
        await send(Server(httpx.ReadTimeout("slow")))


@pytest.mark.anyio
async def test_a_streamed_success_is_returned_unread_and_a_plain_one_read() -> None:
    body = Body([b"data: 1\n\n"])
    server = Server(httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body))
    async with server.client() as client:
        streamed = await send_with_retries(
            client, builder(client), policy=FAST, signal=CancelSignal(), provider="t", stream=True
        )
        assert not streamed.is_stream_consumed
        await streamed.aclose()
    assert (await send(Server(httpx.Response(200, json={"a": 1})))).json() == {"a": 1}


# -- cancellation ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_cancel_during_a_retry_wait_raises_abort_error_promptly() -> None:
    server = Server(httpx.Response(429, headers={"retry-after": "30"}, json={}))
    signal = CancelSignal()
    started = anyio.current_time()
    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_after, signal, 0.05, "user pressed stop")
        with pytest.raises(AbortError) as caught:
            await send(server, policy=RetryPolicy(max_retries=3), signal=signal)
    assert caught.value.reason == "user pressed stop"
    assert anyio.current_time() - started < 2.0
    assert len(server.requests) == 1


@pytest.mark.anyio
async def test_an_already_cancelled_signal_sends_nothing() -> None:
    server = Server(httpx.Response(200, json={}))
    signal = CancelSignal()
    signal.cancel("before start")
    with pytest.raises(AbortError):
        await send(server, signal=signal)
    assert server.requests == []


# -- SSE framing -----------------------------------------------------------------------------

BODY = (
    ": keep-alive comment\r\n"
    "event: message\r\n"
    'data: {"a": "é€😀"}\r\n'
    "\r\n"
    "data: first line\n"
    "data: second line\n"
    "\n"
    "id: 7\r"
    "data:no-space\r"
    "\r"
    "event: ping\n\n"
    "data: trailing without blank line"
)
EXPECTED = [
    SSEEvent("message", '{"a": "é€😀"}'),
    SSEEvent(None, "first line\nsecond line"),
    SSEEvent(None, "no-space"),
    SSEEvent("ping", ""),
    SSEEvent(None, "trailing without blank line"),
]


def test_the_decoder_frames_every_cut_of_the_text_the_same() -> None:
    for cut in range(len(BODY) + 1):
        for step in (1, 2, 5, len(BODY)):
            decoder = SSEDecoder()
            pieces = [BODY[:cut]] + [BODY[i : i + step] for i in range(cut, len(BODY), step)]
            events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.flush()
            assert events == EXPECTED, (cut, step)


@given(cuts=st.lists(st.integers(min_value=0, max_value=len(BODY.encode())), max_size=12))
def test_arbitrary_byte_cuts_give_the_same_events(cuts: list[int]) -> None:
    data = BODY.encode("utf-8")
    bounds = [0, *sorted(set(cuts)), len(data)]
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]

    async def main() -> list[SSEEvent]:
        response = httpx.Response(200, stream=Body(chunks))
        return [e async for e in read_sse(response, signal=CancelSignal(), provider="t")]

    assert anyio.run(main) == EXPECTED


def test_the_fast_framing_path_builds_named_events() -> None:
    events = SSEDecoder().feed('data: {"a": 1}\n\ndata:b\n\n')
    assert [type(e) for e in events] == [SSEEvent, SSEEvent]
    assert repr(events[1]) == "SSEEvent(event=None, data='b')"


# Event data as servers send it and as they should not: event_json answers what json.loads
# answers (value or error) -- pydantic-core parses, json decides wherever the two differ.
JSON_TEXTS = [
    '{"choices": [{"index": 0, "delta": {"content": "w é€😀"}, "finish_reason": null}]}',
    '{"a": 1e400, "b": NaN, "c": -Infinity, "d": 123456789012345678901234567890}',
    '{"a": 1, "a": 2}',
    '{"a": 0.1, "b": -0.0, "c": 5e-324, "d": 1.7976931348623157e308, "e": 9007199254740993}',
    '{"a": "\\ud83d\\ude00", "b": "\\u0000", "c": "\\/"}',
    '{"a": "\\ud800"}',  # a lone surrogate: json keeps it, pydantic-core refuses it
    '{"a": 1}  \n',
    "[1, 2]",
    '"text"',
]
BAD_JSON_TEXTS = ['{"a": 1} x', '{"a": [1, 2,]}', '{"a": 01}', '{"a": "x\ty"}', "{", ""]


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_event_json_gives_what_json_loads_gives(text: str) -> None:
    value = event_json(text)
    assert repr(value) == repr(json.loads(text))  # repr: NaN != NaN, and types show


@pytest.mark.parametrize("text", BAD_JSON_TEXTS)
def test_event_json_refuses_what_json_loads_refuses_with_its_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as raised:
        event_json(text)
    assert str(raised.value) == str(expected.value)


_CHAT_CHUNK = json.dumps(
    {
        "id": "c",
        "choices": [
            {"index": 0, "delta": {"content": "w é😀", "n": -1.5e3}, "finish_reason": None}
        ],
        "usage": [1, 2.0, True, None],
    }
)
_PIECES = st.sampled_from([*'{}[]":,.-+eE019 \t\n\\/ubfnrtalsNIy\x00\x7fé', "\\ud83d"])


@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(_CHAT_CHUNK)), st.booleans(), _PIECES), min_size=1, max_size=3
    )
)
def test_event_json_agrees_with_json_loads_on_mutated_chunks(
    edits: list[tuple[int, bool, str]],
) -> None:
    text = _CHAT_CHUNK
    for at, insert, piece in edits:
        text = text[:at] + piece + text[at + (0 if insert else 1) :]
    try:
        expected: object = repr(json.loads(text))
    except ValueError as exc:
        expected = (type(exc), str(exc))
    try:
        got: object = repr(event_json(text))
    except ValueError as exc:
        got = (type(exc), str(exc))
    assert got == expected


def test_event_json_takes_a_str_holding_a_lone_surrogate_as_json_does() -> None:
    text = '{"a": "\ud800"}'
    assert event_json(text) == json.loads(text) == {"a": "\ud800"}


@pytest.mark.anyio
async def test_read_sse_closes_the_response_when_the_body_ends() -> None:
    body = Body([b"data: a\n\n", b"data: b\n\n"])
    response = httpx.Response(200, stream=body)
    events = [e.data async for e in read_sse(response, signal=CancelSignal(), provider="t")]
    assert events == ["a", "b"]
    assert body.closed


@pytest.mark.anyio
async def test_batches_hold_the_events_of_each_read_and_close_the_response() -> None:
    body = Body([b"data: a\n\ndata: b\n\nda", b"ta: c\n\n", b": only a comment\n\n", b"data: d"])
    response = httpx.Response(200, stream=body)
    batches = [
        [e.data for e in batch]
        async for batch in read_sse_batches(response, signal=CancelSignal(), provider="t")
    ]
    # one list per read that completed events (none for the comment); the unterminated
    # last event comes at the end of the body
    assert batches == [["a", "b"], ["c"], ["d"]]
    assert body.closed


@pytest.mark.anyio
async def test_closing_a_batch_reader_early_closes_the_response() -> None:
    from agentrig.llm.http import close_stream

    body = Body([b"data: a\n\n", b"data: b\n\n"])
    response = httpx.Response(200, stream=body)
    batches = read_sse_batches(response, signal=CancelSignal(), provider="t")
    first = await anext(batches)
    await close_stream(batches, response)
    assert [e.data for e in first] == ["a"]
    assert body.closed


@pytest.mark.anyio
async def test_a_cancel_while_the_server_stalls_aborts_and_closes_the_response() -> None:
    body = Body([b"data: a\n\n"], hang_after=1)
    response = httpx.Response(200, stream=body)
    signal = CancelSignal()
    seen: list[str] = []
    started = anyio.current_time()

    async def consume() -> None:
        async for event in read_sse(response, signal=signal, provider="t"):
            seen.append(event.data)

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_after, signal, 0.05, "stop")
        with pytest.raises(AbortError):
            await consume()
    assert seen == ["a"]
    assert body.closed
    assert anyio.current_time() - started < 2.0


@pytest.mark.anyio
async def test_a_cancel_between_events_of_one_read_stops_at_once() -> None:
    body = Body([b"data: a\n\ndata: b\n\ndata: c\n\n"])
    response = httpx.Response(200, stream=body)
    signal = CancelSignal()
    seen: list[str] = []

    async def consume() -> None:
        async for event in read_sse(response, signal=signal, provider="t"):
            seen.append(event.data)
            signal.cancel("enough")

    with pytest.raises(AbortError):
        await consume()
    assert seen == ["a"]
    assert body.closed


@pytest.mark.anyio
async def test_closing_the_reader_early_closes_the_response() -> None:
    body = Body([b"data: a\n\n"], hang_after=1)
    response = httpx.Response(200, stream=body)
    events = read_sse(response, signal=CancelSignal(), provider="t")
    try:
        first = await anext(events)
        assert first.data == "a"
    finally:
        await close_stream(events, response)
    assert body.closed
    assert response.is_closed


@pytest.mark.anyio
async def test_a_failed_read_is_a_provider_connection_error() -> None:
    class Broken(Body):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b"data: a\n\n"
            raise httpx.ReadError("reset by peer")

    body = Broken([])
    response = httpx.Response(200, stream=body)

    async def consume() -> None:
        async for _ in read_sse(response, signal=CancelSignal(), provider="t"):
            pass

    with pytest.raises(ProviderConnectionError, match="reset by peer"):
        await consume()
    assert body.closed


# -- the session -----------------------------------------------------------------------------


class ExampleOptions(HttpProviderOptions):
    vendor_base_url: ClassVar[str | None] = "https://api.example.com/v1"

    base_url: str = "https://api.example.com/v1"


@pytest.mark.anyio
async def test_the_session_builds_its_client_from_the_runtime_factory_and_closes_it() -> None:
    server = Server(httpx.Response(200, json={"ok": 1}))
    made: list[dict[str, Any]] = []
    clients: list[httpx.AsyncClient] = []

    def http(**kwargs: Any) -> httpx.AsyncClient:
        made.append(kwargs)
        clients.append(server.client(timeout=kwargs["timeout"]))
        return clients[-1]

    options = ExampleOptions(
        base_url="http://127.0.0.1:8080/v1", allow_private_base_url=True, timeout=7
    )
    session = HttpSession.from_options(options, provider="example", http=http)
    response = await session.post_json(
        options.endpoint("chat"),
        {"q": "é"},
        headers={"x-key": "k"},
        signal=CancelSignal(),
        stream=False,
    )
    assert response.json() == {"ok": 1}
    sent = server.requests[0]
    assert str(sent.url) == "http://127.0.0.1:8080/v1/chat"
    assert json.loads(sent.content) == {"q": "é"}
    assert sent.headers["x-key"] == "k"
    assert sent.extensions["timeout"]["read"] == 7
    timeout = httpx.Timeout(7, connect=10.0)
    assert made == [
        {
            "timeout": timeout,
            "allow_private": ("127.0.0.1:8080",),
            "trace_to": ("http://127.0.0.1:8080/v1",),
        }
    ]
    assert session.policy == options.retry_policy
    await session.aclose()
    assert clients[0].is_closed
    with pytest.raises(RuntimeError, match="closed"):
        session.client()


@pytest.mark.anyio
async def test_a_client_handed_in_is_used_and_not_closed() -> None:
    async with Server(httpx.Response(200)).client() as client:
        session = HttpSession(provider="example", client=client)
        assert session.client() is client
        await session.aclose()
        assert not client.is_closed


def test_public_base_urls_need_no_egress_exemption() -> None:
    options = ExampleOptions()
    assert options.egress_allow_private == ()
    assert options.vendor_endpoint
    assert not ExampleOptions(base_url="https://gw.example.org/v1/").vendor_endpoint
    assert ExampleOptions(base_url="https://api.example.com/v1/").vendor_endpoint
    assert options.endpoint("/chat/completions") == "https://api.example.com/v1/chat/completions"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "ftp://api.example.com"}, "http"),
        ({"base_url": "https://api.example.com/v1?x=1"}, "query"),
        ({"base_url": "http://localhost:11434"}, "allow_private_base_url"),
        ({"base_url": "http://api.example.com"}, "https"),
        ({"max_retries": 11}, "max_retries"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_the_shared_options_refuse_bad_values(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ExampleOptions.model_validate(options)


def test_retry_options_become_a_retry_policy() -> None:
    options = ExampleOptions(
        max_retries=4, retry_base_delay=0.1, retry_max_delay=2, max_retry_after=9
    )
    assert options.retry_policy == RetryPolicy(4, 0.1, 2.0, 9.0)


# -- bodies and headers ----------------------------------------------------------------------


def test_error_from_response_takes_a_request_id_from_the_body() -> None:
    response = httpx.Response(
        529,
        json={"type": "error", "error": {"type": "overloaded_error"}, "request_id": "req_1"},
    )
    error = error_from_response(response, provider="example")
    assert isinstance(error, OverloadedError)
    assert error.request_id == "req_1"
    headed = httpx.Response(500, headers={"request-id": "hdr"}, json={"request_id": "body"})
    assert error_from_response(headed, provider="example").request_id == "hdr"


def test_read_json_object_refuses_what_is_not_a_json_object() -> None:
    assert read_json_object(httpx.Response(200, json={"a": 1}), provider="p") == {"a": 1}
    with pytest.raises(ProviderError, match="not JSON") as caught:
        read_json_object(httpx.Response(200, text="<html>"), provider="p", request_id="r")
    assert caught.value.request_id == "r"
    assert caught.value.status == 200
    with pytest.raises(ProviderError, match="not a JSON object"):
        read_json_object(httpx.Response(200, json=[1]), provider="p")


def test_first_header_takes_the_first_name_present() -> None:
    headers = httpx.Headers({"X-Request-Id": "x", "Request-Id": "r"})
    assert first_header(headers, "request-id", "x-request-id") == "r"
    assert first_header(headers, "nope", "x-request-id") == "x"
    assert first_header(headers, "nope") is None


# -- the factory -----------------------------------------------------------------------------


class Recorder:
    kind = "example"

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def capabilities(self, model: str) -> Any:
        raise NotImplementedError

    async def complete(self, request: Any, *, signal: CancelSignal) -> Any:
        raise NotImplementedError

    def stream(self, request: Any, *, signal: CancelSignal) -> Any:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def test_the_factory_validates_options_and_contributes_models_without_replacing() -> None:
    mine = ModelInfo(model="ex-1", context_window=1000)
    theirs = ModelInfo(model="ex-2", context_window=5)
    registry = ModelRegistry()
    registry.register(theirs)
    factory = HttpProviderFactory(
        Recorder,
        options_model=ExampleOptions,
        models=(mine, ModelInfo(model="ex-2", context_window=9)),
        name="example.factory",
    )
    http = Server(httpx.Response(200)).client
    config = ProviderConfig(
        id="ex",
        kind="example",
        options={"max_retries": 0},
        credentials={"api_key": "sk"},
        http=http,
        models=registry,
    )
    provider = factory(config)
    assert repr(factory) == "<example.factory>"
    assert factory.options_model is ExampleOptions
    assert provider.kwargs["options"] == ExampleOptions(max_retries=0)
    assert provider.kwargs["api_key"] == "sk"
    assert provider.kwargs["instance_id"] == "ex"
    assert provider.kwargs["models"] is registry
    assert registry.lookup("ex-1") == mine
    assert registry.lookup("ex-2") == theirs
    with pytest.raises(ValueError, match="bogus"):
        factory(ProviderConfig(id="ex", kind="example", options={"bogus": 1}))
