"""Provider HTTP clients go through the egress policy: user-supplied base URLs included."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator, Sequence
from importlib.metadata import entry_points
from typing import Any, ClassVar

import httpx
import pytest

from agentrig.builtins._egress_http import PolicyCheckedTransport, egress_policy, make_http_factory
from agentrig.cancel import CancelSignal
from agentrig.host import EgressRejectedError
from agentrig.kernel import Runtime, builtin_source, open_runtime
from agentrig.llm import ModelRegistry, ModelRequest, Provider, ProviderConfig, UserMessage

pytestmark = pytest.mark.anyio

ANSWER = {
    "id": "chatcmpl-local",
    "model": "llama3.1",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


class ChatHandler(http.server.BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible server: /v1/chat/completions, JSON or SSE."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        ChatHandler.seen.append({"path": self.path, "host": self.headers.get("Host"), **body})
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        if body.get("stream"):
            chunks = [
                {"model": "llama3.1", "choices": [{"index": 0, "delta": {"content": "h"}}]},
                {"model": "llama3.1", "choices": [{"index": 0, "delta": {"content": "i"}}]},
                {
                    "model": "llama3.1",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                },
            ]
            data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            payload, kind = data.encode(), "text/event-stream"
        else:
            payload, kind = json.dumps(ANSWER).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class StaticResolver:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        return self.table[host]


def openai(rt: Runtime, options: dict[str, Any], resolver: Any = None) -> Provider:
    factory = entry_points(group="agentrig.providers")["openai"].load()
    validated = factory.options_model.model_validate({"max_retries": 0, **options})
    config = ProviderConfig(
        id="local",
        kind="openai",
        options=validated.model_dump(exclude_unset=True),
        credentials={"api_key": "sk-test"},
        http=make_http_factory(rt, resolver=resolver),
        models=ModelRegistry(),
    )
    provider: Provider = factory(config)
    return provider


def hello(model: str = "llama3.1") -> ModelRequest:
    return ModelRequest(model=model, messages=(UserMessage.of("hello"),))


# -- the policy a provider client gets --------------------------------------------------------


def test_an_exemption_for_a_metadata_address_is_dropped() -> None:
    assert egress_policy(["169.254.169.254:80"]).allow_private == frozenset()
    assert egress_policy(["169.254.0.0/16"]).allow_private == frozenset()
    assert egress_policy(["[fd00:ec2::254]:80"]).allow_private == frozenset()
    kept = egress_policy(["127.0.0.1:11434", "ollama:11434"]).allow_private
    assert kept == frozenset({"127.0.0.1:11434", "ollama:11434"})


def test_the_plugins_ask_exactly_for_their_base_url() -> None:
    factory = entry_points(group="agentrig.providers")["openai"].load()
    model = factory.options_model
    assert model.model_validate({}).egress_allow_private == ()
    local = model.model_validate(
        {"base_url": "http://127.0.0.1:11434/v1", "allow_private_base_url": True}
    )
    assert local.egress_allow_private == ("127.0.0.1:11434",)
    named = model.model_validate({"base_url": "http://ollama/v1", "allow_private_base_url": True})
    assert named.egress_allow_private == ("ollama:80",)
    v6 = model.model_validate({"base_url": "http://[::1]:8080/v1", "allow_private_base_url": True})
    assert v6.egress_allow_private == ("[::1]:8080",)
    anthropic = entry_points(group="agentrig.providers")["anthropic"].load().options_model
    gateway = anthropic.model_validate(
        {"base_url": "https://llm-gw.corp.example:8443", "allow_private_base_url": True}
    )
    assert gateway.egress_allow_private == ("llm-gw.corp.example:8443",)


# -- real sockets -----------------------------------------------------------------------------


@pytest.mark.integration
async def test_a_metadata_base_url_is_refused_even_with_consent() -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        provider = openai(
            rt, {"base_url": "http://169.254.169.254/v1", "allow_private_base_url": True}
        )
        with pytest.raises(EgressRejectedError) as caught:
            await provider.complete(hello(), signal=CancelSignal())
        assert caught.value.rejection.reason == "address.blocked"
        assert "metadata" in str(caught.value)
        await provider.aclose()


async def test_a_metadata_base_url_without_consent_is_refused_by_the_options() -> None:
    factory = entry_points(group="agentrig.providers")["openai"].load()
    with pytest.raises(ValueError, match="allow_private_base_url"):
        factory.options_model.model_validate({"base_url": "http://169.254.169.254/v1"})


@pytest.mark.integration
async def test_a_public_name_resolving_to_a_private_address_is_refused(local_port: int) -> None:
    resolver = StaticResolver(
        {"gateway.example.com": ["127.0.0.1"], "rebind.example.com": ["169.254.169.254"]}
    )
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        for host in ("gateway.example.com", "rebind.example.com"):
            provider = openai(rt, {"base_url": f"https://{host}:{local_port}/v1"}, resolver)
            with pytest.raises(EgressRejectedError) as caught:
                await provider.complete(hello(), signal=CancelSignal())
            assert caught.value.rejection.reason == "address.blocked"
            await provider.aclose()


@pytest.mark.integration
async def test_a_consented_loopback_server_is_reached_streaming_and_not(local_port: int) -> None:
    ChatHandler.seen.clear()
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        provider = openai(
            rt,
            {"base_url": f"http://127.0.0.1:{local_port}/v1", "allow_private_base_url": True},
        )
        response = await provider.complete(hello(), signal=CancelSignal())
        assert response.message.text == "hi"
        chunks = [c async for c in provider.stream(hello(), signal=CancelSignal())]
        assert "".join(getattr(c, "text", "") for c in chunks) == "hi"
        await provider.aclose()
    assert [s["path"] for s in ChatHandler.seen] == ["/v1/chat/completions"] * 2
    assert ChatHandler.seen[0]["host"] == f"127.0.0.1:{local_port}"


@pytest.mark.integration
async def test_the_exemption_covers_only_the_configured_port(local_port: int) -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        http = make_http_factory(rt)
        client = http(allow_private=(f"127.0.0.1:{local_port + 1}",))
        with pytest.raises(EgressRejectedError):
            await client.post(f"http://127.0.0.1:{local_port}/v1/chat/completions", json={})
        default = http()
        with pytest.raises(EgressRejectedError):
            await default.post(f"http://127.0.0.1:{local_port}/v1/chat/completions", json={})
    assert client.is_closed  # owned by the runtime
    assert default.is_closed


# -- a runtime with a test transport ----------------------------------------------------------


async def test_a_test_transport_is_used_and_the_policy_still_judges_urls() -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(200, json=ANSWER)

    async with open_runtime(
        {}, sources=[builtin_source()], environ={}, http_transport=httpx.MockTransport(handler)
    ) as rt:
        http = make_http_factory(rt)
        client = http(timeout=5.0)
        assert isinstance(client._transport, PolicyCheckedTransport)
        ok = await client.post("https://api.openai.com/v1/chat/completions", json={})
        assert ok.status_code == 200
        with pytest.raises(EgressRejectedError):
            await client.get("http://169.254.169.254/latest/meta-data/")
        with pytest.raises(EgressRejectedError):
            await client.get("http://127.0.0.1:11434/v1/models")
        local = http(allow_private=("127.0.0.1:11434",))
        assert (await local.get("http://127.0.0.1:11434/v1/models")).status_code == 200
        with pytest.raises(TypeError, match="transport"):
            http(transport=httpx.MockTransport(handler))
    assert sent == [
        "https://api.openai.com/v1/chat/completions",
        "http://127.0.0.1:11434/v1/models",
    ]
    assert client.is_closed


async def test_a_closed_runtime_builds_no_clients() -> None:
    async with open_runtime({}, sources=[builtin_source()], environ={}) as rt:
        http = make_http_factory(rt)
    with pytest.raises(Exception, match="closed"):
        http()
