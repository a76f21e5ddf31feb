"""A base class for provider plugins that speak JSON over HTTP, streamed or not.

A plugin writes the three translations that are its vendor's own -- the request body, a
whole JSON answer, one streamed JSON event -- and inherits what every HTTP provider does the
same way: the client from the runtime (its egress policy), timeouts, retries with backoff,
error mapping, capability checks before any network activity, reading the stream under the
run's cancel signal, and closing the response however the stream ends.

Streams are server-sent events; an API that streams one JSON object per line (NDJSON, as
Ollama does) opts in with ``stream_format = "ndjson"``.
"""

from __future__ import annotations

import abc
import json
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any, ClassVar, Literal

import anyio
import httpx

from agentrig.cancel import CancelSignal
from agentrig.llm._capabilities import Capabilities
from agentrig.llm._errors import CapabilityError, ProviderError, ProviderStreamError
from agentrig.llm._http_retry import error_from_transport
from agentrig.llm._models import ModelInfo, ModelRegistry
from agentrig.llm._request import ModelRequest, ModelResponse
from agentrig.llm._sse import read_sse
from agentrig.messages import StreamChunk

__all__ = ["HttpProvider", "read_ndjson"]

# the media types a streamed answer may carry, by stream format
_STREAM_TYPES = {
    "sse": ("text/event-stream",),
    "ndjson": ("application/x-ndjson", "application/jsonl", "application/json-seq"),
}


class HttpProvider(abc.ABC):
    """Subclass it, set the class attributes, write :meth:`build_body`,
    :meth:`parse_response` and :meth:`parse_event`; :meth:`factory` is the entry point.

    Class attributes: ``kind`` (the entry-point name), ``path`` (joined to ``base_url``),
    ``options_model`` (an :class:`~agentrig.llm.http.HttpProviderOptions` subclass),
    ``stream_format`` (``"sse"`` or ``"ndjson"``), ``declared`` (the capabilities every model
    has; a model's own :class:`~agentrig.llm.ModelInfo` entry overlays them) and ``models``
    (the model table contributed to the runtime's registry).
    """

    kind: ClassVar[str]
    path: ClassVar[str]
    options_model: ClassVar[type[Any]]
    stream_format: ClassVar[Literal["sse", "ndjson"]] = "sse"
    declared: ClassVar[Capabilities] = Capabilities(streaming=True)
    models: ClassVar[tuple[ModelInfo, ...]] = ()
    request_id_headers: ClassVar[tuple[str, ...]] = ("x-request-id", "request-id")

    def __init__(
        self,
        *,
        options: Any = None,
        api_key: str | None = None,
        http: Callable[..., httpx.AsyncClient] | None = None,
        client: httpx.AsyncClient | None = None,
        models: ModelRegistry | None = None,
        instance_id: str | None = None,
    ) -> None:
        from agentrig.llm.http import HttpSession

        self.options = options if options is not None else self.options_model()
        self.api_key = api_key
        self.id = instance_id or self.kind
        self._registry = models
        self._session = HttpSession.from_options(
            self.options,
            provider=self.kind,
            http=http,
            client=client,
            retry_if=self.retryable,
            stream_types=_STREAM_TYPES[self.stream_format],
        )
        self._url: str = self.options.endpoint(self.path)

    @classmethod
    def factory(cls) -> Any:
        """The ``agentrig.providers`` entry point's object: validates the options table,
        registers :attr:`models`, reads the ``api_key`` credential."""
        from agentrig.llm.http import HttpProviderFactory

        return HttpProviderFactory(
            cls, options_model=cls.options_model, models=cls.models, name=f"{cls.kind} provider"
        )

    # ---- what a subclass writes -----------------------------------------------------------

    @abc.abstractmethod
    def build_body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        """The vendor's JSON request body for ``request``."""

    @abc.abstractmethod
    def parse_response(self, data: dict[str, Any], *, request_id: str | None) -> ModelResponse:
        """A whole (non-streamed) JSON answer as a :class:`~agentrig.llm.ModelResponse`."""

    @abc.abstractmethod
    def parse_event(self, data: dict[str, Any]) -> Iterable[StreamChunk]:
        """The chunks one streamed JSON event carries (none is fine); a
        :class:`~agentrig.llm.FinishChunk` ends the response."""

    # ---- what a subclass may change --------------------------------------------------------

    def headers(self, *, stream: bool) -> dict[str, str]:
        """JSON in, JSON (or the stream) out, a bearer token when there is a key."""
        accept = "application/json"
        if stream:
            accept = (
                "application/x-ndjson" if self.stream_format == "ndjson" else "text/event-stream"
            )
        headers = {"content-type": "application/json", "accept": accept}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        headers.update(self.options.extra_headers)
        return headers

    def retryable(self, error: ProviderError) -> bool:
        """Whether a failed request is sent again (the taxonomy's answer by default)."""
        return error.retryable

    def capabilities(self, model: str) -> Capabilities:
        """:attr:`declared`, overlaid by the model's own registry entry when it has one."""
        info = self._registry.lookup(model) if self._registry is not None else None
        return self.declared.overlay(info.capabilities if info is not None else None)

    def check(self, request: ModelRequest, *, stream: bool) -> None:
        """Refuse, before any network activity, what the model is declared not to do."""
        caps = self.capabilities(request.model)
        refused = None
        if stream and caps.streaming is False:
            refused = "does not stream (declared streaming=False)"
        elif request.structured_output == "native" and caps.structured_output in (
            "json_mode",
            "none",
        ):
            refused = (
                f"has no native response schema (structured_output={caps.structured_output!r})"
            )
        elif request.tool_choice not in (None, "auto", "none") and caps.tool_choice is False:
            refused = "does not support forcing a tool (declared tool_choice=False)"
        if refused is not None:
            raise CapabilityError(f"model {request.model!r} {refused}", provider=self.kind)

    # ---- the Provider port ----------------------------------------------------------------

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        from agentrig.llm.http import first_header, read_json_object

        response = await self._send(request, signal, stream=False)
        request_id = first_header(response.headers, *self.request_id_headers)
        data = read_json_object(response, provider=self.kind, request_id=request_id)
        return self.parse_response(data, request_id=request_id)

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        response = await self._send(request, signal, stream=True)
        events = self._events(response, signal)
        try:
            async for event in events:
                for chunk in self.parse_event(event):
                    yield chunk
        finally:
            with anyio.CancelScope(shield=True):  # closed even while being cancelled
                try:
                    await events.aclose()
                finally:
                    await response.aclose()

    async def _send(
        self, request: ModelRequest, signal: CancelSignal, *, stream: bool
    ) -> httpx.Response:
        self.check(request, stream=stream)
        body = self.build_body(request, stream=stream)
        return await self._session.post_json(
            self._url, body, headers=self.headers(stream=stream), signal=signal, stream=stream
        )

    async def _events(
        self, response: httpx.Response, signal: CancelSignal
    ) -> AsyncGenerator[dict[str, Any], None]:
        if self.stream_format == "ndjson":
            async for data in read_ndjson(response, signal=signal, provider=self.kind):
                yield data
            return
        async for event in read_sse(response, signal=signal, provider=self.kind):
            text = event.data.strip()
            if not text or text == "[DONE]":
                continue
            yield _json_object(text, self.kind)

    @property
    def base_url(self) -> str:
        """The endpoint it sends to (:class:`~agentrig.llm.ServedFrom`: cooldowns are keyed
        by it)."""
        return str(self.options.base_url)

    async def aclose(self) -> None:
        await self._session.aclose()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id!r} base_url={self.options.base_url!r}>"


async def read_ndjson(
    response: httpx.Response, *, signal: CancelSignal, provider: str
) -> AsyncGenerator[dict[str, Any], None]:
    """The JSON objects of a newline-delimited JSON body, one per non-blank line.

    Each network read runs inside the cancel signal's scope, and the signal is checked
    before each object; a failed read is a :class:`~agentrig.llm.ProviderConnectionError`
    (or timeout), a line that is not a JSON object a
    :class:`~agentrig.llm.ProviderStreamError`.  The response is closed however it ends.
    """
    # httpx's aiter_lines is an async generator under an AsyncIterator annotation.
    lines: Any = response.aiter_lines()
    try:
        while True:
            try:
                with signal.scope():
                    line = await anext(lines, None)
            except httpx.HTTPError as exc:
                raise error_from_transport(exc, provider=provider) from exc
            signal.raise_if_cancelled()
            if line is None:
                return
            if line.strip():
                yield _json_object(line, provider)
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await lines.aclose()
            finally:
                await response.aclose()


def _json_object(text: str, provider: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ProviderStreamError(
            f"{provider}: a streamed event is not a JSON object: {text[:200]!r}",
            error={"message": text[:200]},
            provider=provider,
        )
    return data
