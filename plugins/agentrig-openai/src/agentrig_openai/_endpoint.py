"""What both OpenAI providers share: options, credentials, client, capabilities, checks."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

import httpx

from agentrig.cancel import CancelSignal
from agentrig.errors import Issue
from agentrig.llm import (
    Capabilities,
    CapabilityError,
    ImageBlock,
    ModelInfo,
    ModelRegistry,
    ModelRequest,
    ProviderStreamError,
    UserMessage,
    reserved_option_issues,
)
from agentrig.llm.http import HttpSession, first_header, model_ids, read_json_object
from agentrig_openai._http import retryable
from agentrig_openai._models import find_capabilities, find_model
from agentrig_openai._options import OpenAIEndpointOptions

__all__ = ["REQUEST_ID_HEADERS", "OpenAIEndpoint"]

REQUEST_ID_HEADERS = ("x-request-id", "request-id")

OptionsT = TypeVar("OptionsT", bound=OpenAIEndpointOptions)


class OpenAIEndpoint(abc.ABC, Generic[OptionsT]):
    """The base of the ``openai`` and ``openai-responses`` providers (not a provider itself).

    ``client`` (a ready httpx client) is used as given and never closed here; otherwise the
    client comes from ``http`` (the runtime's factory) or, standalone, a plain
    ``httpx.AsyncClient(trust_env=False)``, built on first use and closed by :meth:`aclose`.
    """

    kind: str
    #: where requests go, below ``base_url``
    path: ClassVar[str]
    reserved_options: ClassVar[Mapping[str, str]]

    def __init__(
        self,
        *,
        options: OptionsT | None = None,
        api_key: str | None = None,
        http: Callable[..., httpx.AsyncClient] | None = None,
        client: httpx.AsyncClient | None = None,
        models: ModelRegistry | None = None,
        instance_id: str | None = None,
    ) -> None:
        self._options = options if options is not None else self._default_options()
        self._api_key = api_key
        self._models = models
        self.id = instance_id if instance_id is not None else self.kind
        self._http = HttpSession.from_options(
            self._options, provider=self.kind, http=http, client=client, retry_if=retryable
        )
        self._url = self._options.endpoint(self.path)

    @classmethod
    @abc.abstractmethod
    def _default_options(cls) -> OptionsT:
        """The options a provider built without any has (each provider's defaults)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id!r} base_url={self._options.base_url!r}>"

    @property
    def options(self) -> OptionsT:
        return self._options

    @property
    def base_url(self) -> str:
        """The endpoint it sends to (``agentrig.llm.ServedFrom``): a rate limit cools this
        endpoint's model for every provider id that reaches it."""
        return str(self._options.base_url)

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

    async def _send(
        self, body: Mapping[str, Any], *, stream: bool, signal: CancelSignal
    ) -> tuple[httpx.Response, str | None]:
        """POST ``body`` to the endpoint: the response (its body still unread when
        ``stream``) and the request id it carries."""
        response = await self._http.post_json(
            self._url, body, headers=self._headers(stream=stream), signal=signal, stream=stream
        )
        return response, first_header(response.headers, *REQUEST_ID_HEADERS)

    async def _answer(
        self, body: Mapping[str, Any], *, signal: CancelSignal
    ) -> tuple[dict[str, Any], str | None]:
        """POST a non-streaming ``body``: the JSON object answered and its request id."""
        response, request_id = await self._send(body, stream=False, signal=signal)
        return read_json_object(response, provider=self.kind, request_id=request_id), request_id

    def check_request_options(
        self, options: Mapping[str, Any], *, where: tuple[str | int, ...]
    ) -> list[Issue]:
        """Refuse, when the agent is built, the options :func:`build_body` sets itself (the
        :class:`~agentrig.llm.RequestOptionsCheck` the runtime calls)."""
        return reserved_option_issues(options, self.reserved_options, where=where)

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
