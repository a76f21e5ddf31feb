"""The ``openai`` provider: OpenAI Chat Completions over httpx, streaming and not."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import httpx

from agentrig.cancel import CancelSignal
from agentrig.errors import Issue
from agentrig.llm import (
    Capabilities,
    CapabilityError,
    EffortResolution,
    ImageBlock,
    ModelInfo,
    ModelRegistry,
    ModelRequest,
    ModelResponse,
    ProviderConnectionError,
    ProviderStreamError,
    StreamChunk,
    TextDelta,
    UserMessage,
    report_effort,
    reserved_option_issues,
    resolve_effort_level,
)
from agentrig.llm.http import (
    HttpProviderFactory,
    HttpSession,
    close_stream,
    event_json,
    first_header,
    model_ids,
    read_json_object,
    read_sse_batches,
)
from agentrig_openai._http import retryable
from agentrig_openai._models import MODELS, find_capabilities, find_model
from agentrig_openai._options import OpenAIOptions
from agentrig_openai._wire import (
    RESERVED_OPTIONS,
    ChunkReader,
    build_body,
    message_from_body,
)

__all__ = ["OpenAIProvider", "factory"]

logger = logging.getLogger("agentrig_openai")

_REQUEST_ID_HEADERS = ("x-request-id", "request-id")
# Looked up once: an attribute of a pydantic model class is read through its metaclass's
# __getattr__ hook (about 80 ns), and this runs once per token.
_text_delta = TextDelta.of


class OpenAIProvider:
    """An OpenAI Chat Completions provider (also for OpenAI-compatible servers).

    ``client`` (a ready httpx client) is used as given and never closed here; otherwise the
    client comes from ``http`` (the runtime's factory) or, standalone, a plain
    ``httpx.AsyncClient(trust_env=False)``, built on first use and closed by :meth:`aclose`.
    """

    kind = "openai"

    def __init__(
        self,
        *,
        options: OpenAIOptions | None = None,
        api_key: str | None = None,
        http: Callable[..., httpx.AsyncClient] | None = None,
        client: httpx.AsyncClient | None = None,
        models: ModelRegistry | None = None,
        instance_id: str = "openai",
    ) -> None:
        self._options = options if options is not None else OpenAIOptions()
        self._api_key = api_key
        self._models = models
        self.id = instance_id
        self._http = HttpSession.from_options(
            self._options, provider=self.kind, http=http, client=client, retry_if=retryable
        )
        self._url = self._options.endpoint("/chat/completions")

    def __repr__(self) -> str:
        return f"<OpenAIProvider id={self.id!r} base_url={self._options.base_url!r}>"

    @property
    def options(self) -> OpenAIOptions:
        return self._options

    # -- capabilities ------------------------------------------------------------------------

    def _model_info(self, model: str) -> ModelInfo | None:
        found = find_model(model)
        if found is None and self._models is not None:
            found = self._models.lookup(model)
        return found

    def capabilities(self, model: str) -> Capabilities:
        """The model table's declarations over the endpoint's own facts.

        Unknown models declare only what the endpoint guarantees (streaming, provenance);
        the ``structured_output`` option overrides the table for every model.
        """
        caps = Capabilities(streaming=True, vendor_endpoint=self._options.vendor_endpoint)
        declared = find_capabilities(model)
        if declared is None:
            info = self._model_info(model)
            declared = info.capabilities if info is not None else None
        caps = caps.overlay(declared)
        if self._options.structured_output is not None:
            caps = caps.overlay(Capabilities(structured_output=self._options.structured_output))
        return caps

    def _check(self, request: ModelRequest) -> Capabilities:
        """Refuse, before any network activity, what the model is declared not to support."""
        caps = self.capabilities(request.model)
        mode = request.structured_output
        if mode == "native" and request.response_format is None:
            raise CapabilityError(
                "structured_output='native' needs request.response_format", provider=self.kind
            )
        declared = caps.structured_output
        if mode == "native" and declared is not None and declared != "native":
            raise CapabilityError(
                f"model {request.model!r} has no native response schema "
                f"(declared structured_output={declared!r})",
                provider=self.kind,
            )
        if mode == "json_mode" and declared == "none":
            raise CapabilityError(
                f"model {request.model!r} has no JSON mode (declared structured_output='none')",
                provider=self.kind,
            )
        forced = request.tool_choice not in (None, "auto", "none")
        if forced and caps.tool_choice is False:
            raise CapabilityError(
                f"model {request.model!r} does not support forcing a tool "
                f"(tool_choice={request.tool_choice!r})",
                provider=self.kind,
            )
        if request.parallel_tool_calls is not None and caps.parallel_tool_calls is False:
            raise CapabilityError(
                f"model {request.model!r} does not take parallel_tool_calls", provider=self.kind
            )
        if caps.vision is False and any(
            isinstance(block, ImageBlock)
            for message in request.messages
            if isinstance(message, UserMessage)
            for block in message.content
        ):
            raise CapabilityError(
                f"model {request.model!r} does not accept images (declared vision=False)",
                provider=self.kind,
            )
        return caps

    # -- requests ----------------------------------------------------------------------------

    def _body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        return self._prepare(request, stream=stream)[0]

    def _prepare(
        self, request: ModelRequest, *, stream: bool
    ) -> tuple[dict[str, Any], EffortResolution]:
        """The body to send and how it resolved the request's reasoning effort: the model's
        level table clamps it; the body's ``reasoning_effort`` field is the native control."""
        caps = self._check(request)
        effort = resolve_effort_level(request.reasoning_effort, caps.reasoning_effort)
        level = effort.effective
        if level is not None:
            effort = effort.sent({"reasoning_effort": level})
        opts = self._options
        body = build_body(
            request,
            stream=stream,
            effort=level,
            strict=opts.strict_tools,
            vendor=opts.vendor_endpoint,
            max_tokens_field=opts.max_tokens_field,
            system_role=opts.system_role,
            stream_usage=opts.stream_usage,
        )
        return body, effort

    def _headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream" if stream else "application/json",
        }
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if self._options.organization:
            headers["openai-organization"] = self._options.organization
        if self._options.project:
            headers["openai-project"] = self._options.project
        headers.update(self._options.extra_headers)
        return headers

    def check_request_options(
        self, options: Mapping[str, Any], *, where: tuple[str | int, ...]
    ) -> list[Issue]:
        """Refuse, when the agent is built, the options :func:`build_body` sets itself (the
        :class:`~agentrig.llm.RequestOptionsCheck` the runtime calls)."""
        return reserved_option_issues(options, RESERVED_OPTIONS, where=where)

    def request_body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The request body this provider would send (capability checks included)."""
        return self._body(request, stream=stream)

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        body, effort = self._prepare(request, stream=False)
        report_effort(effort)  # the body goes out now
        response = await self._http.post_json(
            self._url, body, headers=self._headers(stream=False), signal=signal, stream=False
        )
        request_id = first_header(response.headers, *_REQUEST_ID_HEADERS)
        data = read_json_object(response, provider=self.kind, request_id=request_id)
        error = data.get("error")
        if isinstance(error, Mapping) and not data.get("choices"):
            raise self._stream_error(error, request_id)
        message = message_from_body(data)
        answer_id = data.get("id")  # chatcmpl-...
        if not isinstance(answer_id, str):
            answer_id = None
        return ModelResponse(
            message=message,
            request_id=request_id,
            served_model=message.model,
            response_id=answer_id,
        )

    def _stream_error(
        self, error: Mapping[str, Any], request_id: str | None
    ) -> ProviderStreamError:
        text = error.get("message")
        code = error.get("code")
        return ProviderStreamError(
            f"{self.kind}: error event in the response: {text if isinstance(text, str) else error}",
            error=error,
            vendor_code=code if isinstance(code, str) else None,
            request_id=request_id,
            provider=self.kind,
        )

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        body, effort = self._prepare(request, stream=True)
        report_effort(effort)  # the body goes out now
        response = await self._http.post_json(
            self._url, body, headers=self._headers(stream=True), signal=signal, stream=True
        )
        request_id = first_header(response.headers, *_REQUEST_ID_HEADERS)
        reader = ChunkReader()
        events = read_sse_batches(response, signal=signal, provider=self.kind)
        done = False
        try:
            # Events come a network read at a time; the signal is checked before each one
            # (the loop runs between them).  event_json gives plain dicts, so they are
            # tested as dict (the Mapping ABC costs more, once per token).
            async for batch in events:
                for event in batch:
                    if signal.cancelled:
                        signal.raise_if_cancelled()
                    data = event.data
                    if data[:1] != "{":  # not a JSON object: blank, the end marker, or junk
                        marker = data.strip()
                        if not marker:
                            continue
                        if marker == "[DONE]":
                            done = True
                            break
                    try:
                        payload = event_json(data)
                    except ValueError as exc:
                        raise ProviderStreamError(
                            f"{self.kind}: malformed stream chunk: {data.strip()[:200]!r}",
                            request_id=request_id,
                            provider=self.kind,
                        ) from exc
                    if not isinstance(payload, dict):
                        continue
                    error = payload.get("error")
                    if event.event == "error" or isinstance(error, dict):
                        raise self._stream_error(
                            error if isinstance(error, dict) else payload, request_id
                        )
                    text = reader.text_of(payload)
                    if text is not None:  # the common chunk: no list, no loop per token
                        yield _text_delta(text)
                    else:
                        for chunk in reader.feed_other(payload):
                            yield chunk
                if done:
                    break
        finally:
            await close_stream(events, response)
        if not done and reader.finish_reason is None:
            raise ProviderConnectionError(
                f"{self.kind}: the stream ended before the response was complete",
                request_id=request_id,
                provider=self.kind,
            )
        yield reader.finish()

    async def check_ready(self) -> None:
        """List the endpoint's models (``GET {base_url}/models``, once, no retries).

        Reachable and the key accepted: ready.  OpenAI and the compatible servers (vLLM,
        Ollama, llama.cpp) all answer it, and it costs no tokens.
        """
        await self._http.probe(
            self._options.endpoint("/models"), headers=self._headers(stream=False)
        )

    async def endpoint_models(self) -> frozenset[str]:
        """The ids the endpoint lists (``GET {base_url}/models``, once, no retries): the
        :class:`~agentrig.llm.EndpointModelListing` of ``config check --online``."""
        url = self._options.endpoint("/models")
        body = await self._http.get_json(url, headers=self._headers(stream=False))
        return model_ids(body, url, provider=self.id)

    async def aclose(self) -> None:
        await self._http.aclose()


factory = HttpProviderFactory(
    OpenAIProvider, options_model=OpenAIOptions, models=MODELS, name="agentrig_openai.factory"
)
"""The provider factory registered under ``agentrig.providers`` as ``openai``."""
