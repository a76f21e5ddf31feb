"""The ``anthropic`` provider: the Anthropic Messages API over httpx, streaming and not."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import httpx

from agentrig.cancel import CancelSignal
from agentrig.errors import Issue
from agentrig.llm import (
    DEFAULT_MAX_OUTPUT_TOKENS,
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
from agentrig_anthropic._models import MODELS, find_model
from agentrig_anthropic._options import AnthropicOptions
from agentrig_anthropic._wire import (
    KIND,
    RESERVED_OPTIONS,
    EventReader,
    build_body,
    message_from_body,
)

__all__ = ["AnthropicProvider", "factory"]

logger = logging.getLogger("agentrig_anthropic")

_REQUEST_ID_HEADERS = ("request-id", "x-request-id")
STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-11-13"
"""The beta flag the ``output_format`` request field needs."""

# Status an in-stream error type would have had as an HTTP error.
_STREAM_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicProvider:
    """An Anthropic Messages provider.

    ``client`` (a ready httpx client) is used as given and never closed here; otherwise the
    client comes from ``http`` (the runtime's factory) or, standalone, a plain
    ``httpx.AsyncClient(trust_env=False)``, built on first use and closed by :meth:`aclose`.
    """

    kind = KIND

    def __init__(
        self,
        *,
        options: AnthropicOptions | None = None,
        api_key: str | None = None,
        http: Callable[..., httpx.AsyncClient] | None = None,
        client: httpx.AsyncClient | None = None,
        models: ModelRegistry | None = None,
        instance_id: str = "anthropic",
    ) -> None:
        self._options = options if options is not None else AnthropicOptions()
        self._api_key = api_key
        self._models = models
        self.id = instance_id
        self._http = HttpSession.from_options(
            self._options, provider=self.kind, http=http, client=client
        )
        self._url = self._options.endpoint("/v1/messages")

    @property
    def base_url(self) -> str:
        """The endpoint it sends to (``agentrig.llm.ServedFrom``): a rate limit cools this
        endpoint's model for every provider id that reaches it."""
        return str(self._options.base_url)

    def __repr__(self) -> str:
        return f"<AnthropicProvider id={self.id!r} base_url={self._options.base_url!r}>"

    @property
    def options(self) -> AnthropicOptions:
        return self._options

    # -- capabilities ------------------------------------------------------------------------

    def _model_info(self, model: str) -> ModelInfo | None:
        found = find_model(model)
        if found is None and self._models is not None:
            found = self._models.lookup(model)
        return found

    def capabilities(self, model: str) -> Capabilities:
        """The model table's declarations over what the Messages API itself guarantees.

        The API has tool_choice (auto/any/tool/none), parallel-call control and streaming
        for every model, and never a bare JSON mode; the rest comes from the model table.
        """
        caps = Capabilities(
            tool_choice=True,
            parallel_tool_calls=True,
            streaming=True,
            vendor_endpoint=self._options.vendor_endpoint,
        )
        info = self._model_info(model)
        if info is not None:
            caps = caps.overlay(info.capabilities)
        if self._options.structured_output is not None:
            caps = caps.overlay(Capabilities(structured_output=self._options.structured_output))
        return caps

    def _check(self, request: ModelRequest) -> Capabilities:
        """Refuse, before any network activity, what the model is declared not to support."""
        caps = self.capabilities(request.model)
        mode = request.structured_output
        if mode == "json_mode":
            raise CapabilityError(
                "the Anthropic Messages API has no JSON mode (structured_output='json_mode'); "
                "use 'native' (where the model supports it) or 'prompt'",
                provider=self.kind,
            )
        if mode == "native":
            if request.response_format is None:
                raise CapabilityError(
                    "structured_output='native' needs request.response_format",
                    provider=self.kind,
                )
            declared = caps.structured_output
            if declared is not None and declared != "native":
                raise CapabilityError(
                    f"model {request.model!r} has no native output schema "
                    f"(declared structured_output={declared!r}); use 'prompt'",
                    provider=self.kind,
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

    def _max_tokens(self, request: ModelRequest) -> int:
        if request.max_tokens is not None:
            return request.max_tokens
        if self._options.default_max_tokens is not None:
            return self._options.default_max_tokens
        info = self._model_info(request.model)
        limit = info.max_output_tokens if info is not None else None
        if limit is None and self._models is not None:
            limit = self._models.max_output_tokens(request.model)
        return min(limit or DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS)

    def _thinking(
        self, request: ModelRequest, caps: Capabilities, max_tokens: int
    ) -> EffortResolution:
        """Extended thinking for ``reasoning_effort``: a level of the model's table becomes a
        ``budget_tokens`` (``thinking_budgets``) cut below ``max_tokens``, ``none`` turns
        thinking off; the native control is the body's ``thinking`` field."""
        effort = request.reasoning_effort
        if "thinking" in request.options:  # the request's own options decide
            return EffortResolution(
                effort,
                "not_applied",
                native={"thinking": request.options["thinking"]},
                reason="the request's options set thinking themselves",
            )
        resolved = resolve_effort_level(effort, caps.reasoning_effort)
        level = resolved.effective
        if level is None:
            return resolved
        if level == "none":
            return resolved.sent({"thinking": {"type": "disabled"}})
        budget = next((v for k, v in self._options.thinking_budgets.items() if k == level), None)
        if budget is None:
            return resolved.dropped(f"thinking_budgets has no budget for {level!r}")
        budget = min(int(budget), max_tokens - 1)
        if budget < 1024:
            return resolved.dropped(
                f"max_tokens {max_tokens} leaves no room for a thinking budget (at least 1024)"
            )
        return resolved.sent({"thinking": {"type": "enabled", "budget_tokens": budget}})

    def _body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        return self._prepare(request, stream=stream)[0]

    def _prepare(
        self, request: ModelRequest, *, stream: bool
    ) -> tuple[dict[str, Any], EffortResolution]:
        """The body to send and how it resolved the request's reasoning effort."""
        caps = self._check(request)
        max_tokens = self._max_tokens(request)
        effort = self._thinking(request, caps, max_tokens)
        thinking = effort.native.get("thinking") if "thinking" not in request.options else None
        body = build_body(
            request,
            stream=stream,
            max_tokens=max_tokens,
            thinking=_plain(thinking) if thinking is not None else None,
        )
        return body, effort

    def check_request_options(
        self, options: Mapping[str, Any], *, where: tuple[str | int, ...]
    ) -> list[Issue]:
        """Refuse, when the agent is built, the options :func:`build_body` sets itself (the
        :class:`~agentrig.llm.RequestOptionsCheck` the runtime calls)."""
        return reserved_option_issues(options, RESERVED_OPTIONS, where=where)

    def request_body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The request body this provider would send (capability checks included)."""
        return self._body(request, stream=stream)

    def _headers(self, body: Mapping[str, Any], *, stream: bool) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream" if stream else "application/json",
            "anthropic-version": self._options.anthropic_version,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        beta = list(self._options.beta)
        if "output_format" in body and STRUCTURED_OUTPUTS_BETA not in beta:
            beta.append(STRUCTURED_OUTPUTS_BETA)
        if beta:
            headers["anthropic-beta"] = ",".join(beta)
        headers.update(self._options.extra_headers)
        return headers

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        body, effort = self._prepare(request, stream=False)
        report_effort(effort)  # the body goes out now
        response = await self._http.post_json(
            self._url, body, headers=self._headers(body, stream=False), signal=signal, stream=False
        )
        request_id = first_header(response.headers, *_REQUEST_ID_HEADERS)
        data = read_json_object(response, provider=self.kind, request_id=request_id)
        if data.get("type") == "error":
            error = data.get("error")
            raise self._stream_error(error if isinstance(error, Mapping) else data, request_id)
        message = message_from_body(data)
        response_id = data.get("id")
        return ModelResponse(
            message=message,
            request_id=request_id,
            served_model=message.model,
            response_id=response_id if isinstance(response_id, str) else None,
        )

    def _stream_error(
        self, error: Mapping[str, Any], request_id: str | None
    ) -> ProviderStreamError:
        text = error.get("message")
        kind = error.get("type")
        failure = ProviderStreamError(
            f"{self.kind}: error event in the response: "
            f"{kind}: {text if isinstance(text, str) else error}",
            error=error,
            request_id=request_id,
            provider=self.kind,
        )
        failure.status = _STREAM_ERROR_STATUS.get(kind) if isinstance(kind, str) else None
        return failure

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        body, effort = self._prepare(request, stream=True)
        report_effort(effort)  # the body goes out now
        response = await self._http.post_json(
            self._url, body, headers=self._headers(body, stream=True), signal=signal, stream=True
        )
        request_id = first_header(response.headers, *_REQUEST_ID_HEADERS)
        reader = EventReader()
        events = read_sse_batches(response, signal=signal, provider=self.kind)
        try:
            # Events come a network read at a time; the signal is checked before each one
            # (the loop runs between them).
            async for batch in events:
                for event in batch:
                    if signal.cancelled:
                        signal.raise_if_cancelled()
                    data = event.data.strip()
                    if not data:
                        continue
                    try:
                        payload = event_json(data)
                    except ValueError as exc:
                        raise ProviderStreamError(
                            f"{self.kind}: malformed stream event: {data[:200]!r}",
                            request_id=request_id,
                            provider=self.kind,
                        ) from exc
                    if not isinstance(payload, Mapping):
                        continue
                    if event.event == "error" or payload.get("type") == "error":
                        error = payload.get("error")
                        raise self._stream_error(
                            error if isinstance(error, Mapping) else payload, request_id
                        )
                    for chunk in reader.feed(payload):
                        yield chunk
                    if reader.finished:
                        break
                if reader.finished:
                    break
        finally:
            await close_stream(events, response)
        if not reader.finished:
            raise ProviderConnectionError(
                f"{self.kind}: the stream ended before message_stop",
                request_id=request_id,
                provider=self.kind,
            )
        yield reader.finish()

    async def check_ready(self) -> None:
        """List the models (``GET {base_url}/v1/models``, once, no retries): reachable and
        the key accepted means ready, at no token cost."""
        await self._http.probe(
            self._options.endpoint("/v1/models"), headers=self._headers({}, stream=False)
        )

    async def endpoint_models(self) -> frozenset[str]:
        """The ids the Models API lists (``GET {base_url}/v1/models``, page by page with
        ``after_id`` while ``has_more``; no retries): the
        :class:`~agentrig.llm.EndpointModelListing` of ``config check --online``."""
        url = self._options.endpoint("/v1/models")
        headers = self._headers({}, stream=False)
        ids: set[str] = set()
        params = {"limit": "1000"}
        while True:
            body = await self._http.get_json(url, headers=headers, params=params)
            page = model_ids(body, url, provider=self.id)
            ids |= page
            last = body.get("last_id")
            if body.get("has_more") is not True or not isinstance(last, str) or not page:
                return frozenset(ids)
            params = {"limit": "1000", "after_id": last}

    async def aclose(self) -> None:
        await self._http.aclose()


factory = HttpProviderFactory(
    AnthropicProvider,
    options_model=AnthropicOptions,
    models=MODELS,
    name="agentrig_anthropic.factory",
)
"""The provider factory registered under ``agentrig.providers`` as ``anthropic``."""


def _plain(value: Any) -> Any:
    """A read-only native control as the plain dicts the JSON body is made of."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value
