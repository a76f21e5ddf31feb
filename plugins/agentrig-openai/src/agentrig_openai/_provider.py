"""The ``openai`` provider: OpenAI Chat Completions over httpx, streaming and not."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from agentrig.cancel import CancelSignal
from agentrig.llm import (
    EffortResolution,
    ModelRequest,
    ModelResponse,
    ProviderConnectionError,
    ProviderStreamError,
    StreamChunk,
    TextDelta,
    report_effort,
    resolve_effort_level,
)
from agentrig.llm.http import (
    HttpProviderFactory,
    close_stream,
    event_json,
    read_sse_batches,
)
from agentrig_openai._endpoint import OpenAIEndpoint
from agentrig_openai._models import MODELS
from agentrig_openai._options import OpenAIOptions
from agentrig_openai._wire import (
    RESERVED_OPTIONS,
    ChunkReader,
    build_body,
    message_from_body,
)

__all__ = ["OpenAIProvider", "factory"]

logger = logging.getLogger("agentrig_openai")

# Looked up once: an attribute of a pydantic model class is read through its metaclass's
# __getattr__ hook (about 80 ns), and this runs once per token.
_text_delta = TextDelta.of


class OpenAIProvider(OpenAIEndpoint[OpenAIOptions]):
    """An OpenAI Chat Completions provider (also for OpenAI-compatible servers).

    ``client`` (a ready httpx client) is used as given and never closed here; otherwise the
    client comes from ``http`` (the runtime's factory) or, standalone, a plain
    ``httpx.AsyncClient(trust_env=False)``, built on first use and closed by :meth:`aclose`.
    """

    kind = "openai"
    path = "/chat/completions"
    reserved_options = RESERVED_OPTIONS

    @classmethod
    def _default_options(cls) -> OpenAIOptions:
        return OpenAIOptions()

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

    def request_body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The request body this provider would send (capability checks included)."""
        return self._body(request, stream=stream)

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        body, effort = self._prepare(request, stream=False)
        report_effort(effort)  # the body goes out now
        data, request_id = await self._answer(body, signal=signal)
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

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        body, effort = self._prepare(request, stream=True)
        report_effort(effort)  # the body goes out now
        response, request_id = await self._send(body, stream=True, signal=signal)
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


factory = HttpProviderFactory(
    OpenAIProvider, options_model=OpenAIOptions, models=MODELS, name="agentrig_openai.factory"
)
"""The provider factory registered under ``agentrig.providers`` as ``openai``."""
