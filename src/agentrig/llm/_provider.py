"""The Provider port and what a provider factory receives."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

import attrs

from agentrig.cancel import CancelSignal
from agentrig.catalog import CatalogKey
from agentrig.ids import ProviderId
from agentrig.llm._capabilities import Capabilities
from agentrig.llm._models import ModelRegistry
from agentrig.llm._request import ModelRequest, ModelResponse
from agentrig.messages import StreamChunk

if TYPE_CHECKING:
    import httpx

    HttpClientFactory: TypeAlias = Callable[..., httpx.AsyncClient]
else:
    HttpClientFactory: TypeAlias = Callable[..., Any]
"""Returns an ``httpx.AsyncClient`` built by the runtime (keyword arguments are passed to it).

It is where the runtime's egress policy applies and where tests inject an
``httpx.MockTransport``.
"""

__all__ = [
    "PROVIDERS",
    "HttpClientFactory",
    "Provider",
    "ProviderConfig",
    "ProviderFactory",
    "EndpointModelListing",
    "ModelListing",
    "ReadinessCheck",
    "check_provider_contribution",
]


@runtime_checkable
class Provider(Protocol):
    """A model provider, as the loop sees it.

    ``stream`` is an async generator: closing it early closes the underlying connection, and
    when ``signal`` fires it stops promptly and raises ``signal.abort_error()``.  ``complete``
    and ``stream`` must give equal assistant messages for the same response (see
    :class:`~agentrig.llm.StreamAssembler`).
    """

    kind: str

    def capabilities(self, model: str) -> Capabilities: ...

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse: ...

    def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncIterator[StreamChunk]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ReadinessCheck(Protocol):
    """A provider that can say whether it could serve a request now, without making one.

    Optional: a server's readiness endpoint calls ``check_ready()`` (bounded by its own
    timeout) and reports a provider without it as unchecked.  It returns normally when the
    upstream answers and accepts the credentials; otherwise it raises the
    :class:`~agentrig.llm.ProviderError` that says why.
    """

    async def check_ready(self) -> None: ...


@runtime_checkable
class ModelListing(Protocol):
    """A provider that knows which models it serves, without asking its endpoint.

    Optional: switching an agent's model (``agent.set_model``) refuses a model such a
    provider does not list.  A provider without it (an OpenAI-compatible endpoint serves
    whatever its server loaded) is taken at its word when the request is sent.
    """

    def lists_model(self, model: str) -> bool: ...


@runtime_checkable
class EndpointModelListing(Protocol):
    """A provider that can ask its endpoint which models it serves now.

    Optional: ``agentrig config check --online`` asks it, once per provider, and reports each
    configured model the endpoint does not list.  It raises the
    :class:`~agentrig.llm.ProviderError` that says why the list could not be read.
    """

    async def endpoint_models(self) -> frozenset[str]: ...


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _frozen_credentials(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


def _no_peers(provider_id: str) -> Provider:
    raise RuntimeError("this ProviderConfig was built without a peer lookup (pass peers=...)")


def _no_http_client(**kwargs: Any) -> Any:
    raise RuntimeError(
        "this ProviderConfig was built without an HTTP client factory (pass http=...)"
    )


@attrs.frozen(slots=True)
class ProviderConfig:
    """What a provider factory is given.

    ``id`` is the configured instance name, ``kind`` the entry-point name; ``credentials`` are
    already-resolved secrets; ``http`` builds the runtime's HTTP clients; ``models`` is the
    shared model registry the provider contributes its models' metadata to.
    """

    id: str
    kind: str
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    credentials: Mapping[str, str] = attrs.field(
        factory=dict, converter=_frozen_credentials, repr=False
    )
    http: HttpClientFactory = attrs.field(default=_no_http_client, repr=False)
    models: ModelRegistry = attrs.field(factory=ModelRegistry, repr=False)
    #: looks up another configured provider by id -- when called, not at construction
    peers: Callable[[str], Provider] = attrs.field(default=_no_peers, repr=False)


@runtime_checkable
class ProviderFactory(Protocol):
    """What the ``agentrig.providers`` entry point names: ``factory(config) -> Provider``.

    A factory may also carry ``options_model`` (a pydantic model class); the runtime then
    validates ``[providers.<id>.options]`` with it before calling the factory.  It may carry
    ``credential_keys`` (a tuple of names, ``("api_key",)``): a ``[providers.<id>]
    credentials`` key not in it is then refused (``config.unknown_credential``, with "did you
    mean") instead of being ignored.  Without it, every credential is passed on unchecked.
    """

    def __call__(self, config: ProviderConfig) -> Provider: ...


def check_provider_contribution(obj: object, name: str | None = None) -> None:
    """The contract of an ``agentrig.providers`` entry (the kernel runs it when one loads): a
    factory taking one config argument, whose ``credential_keys``, if declared, are names."""
    from agentrig.kernel import ContractViolation, check_factory

    check_factory(obj)
    keys = getattr(obj, "credential_keys", None)
    if keys is not None and not (
        isinstance(keys, tuple | list | frozenset | set) and all(isinstance(k, str) for k in keys)
    ):
        raise ContractViolation(
            f"credential_keys must be a tuple of credential names (strings), got {keys!r}"
        )


PROVIDERS: CatalogKey[ProviderId, Provider] = CatalogKey("providers")
"""The runtime's provider instances by ``[providers.<id>]``."""
