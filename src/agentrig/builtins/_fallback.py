"""The ``fallback`` provider: one model name served by ordered deployments.

A deployment is another configured provider (``[providers.<id>]``), optionally with its own
model name.  A request goes to the first deployment; a failure that another deployment can
plausibly serve moves it to the next one::

    [providers.smart]
    kind = "fallback"
    options.deployments = ["primary", "backup"]
    options.models = { primary = "gpt-4.1", backup = "claude-sonnet-4-5" }

Rules (the taxonomy decides, never message text):

* a :class:`~agentrig.llm.ProviderError` whose ``can_fallback`` is true (429, overload, 5xx,
  timeouts, connection failures, and auth / model-not-found *at that deployment*) moves on;
* anything else -- ``can_fallback`` false (a 400 invalid request, a capability refusal), an
  error outside the taxonomy, a bug -- is raised at once: switching on an unknown cause can
  repeat a request that was never going to succeed, or hide the bug;
* cancellation is never retried: an abort (or a fired signal) ends the call;
* a stream moves on only before its first chunk was yielded; after that the failure is the
  caller's, since the chunks already delivered cannot be taken back;
* when every deployment failed, the last failure is raised, with a note naming each earlier
  one;
* a deployment whose model is cooling down after a rate limit (``agentrig.llm.COOLDOWNS``)
  is skipped without a request, as if it had answered 429; a 429 with a reset deadline
  starts that deployment's cooldown.

The answer names the model that actually ran: ``ModelResponse.served_model`` (and the
message's ``model`` / the stream's ``FinishChunk.model`` when the deployment did not say)
is the deployment's model, so usage and cost are charged to it.  Each move is logged at
WARNING on ``agentrig.fallback`` and recorded in :attr:`FallbackProvider.moves`.

The other providers are looked up through the ``peers`` lookup of the
:class:`~agentrig.llm.ProviderConfig`, at call time -- so ``[providers.*]`` may be declared in
any order, and a deployment the runtime does not know fails the first call with the list of
known ids.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import attrs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentrig.cancel import CancelSignal, is_abort
from agentrig.errors import ConfigError, Issue, UnknownIdError
from agentrig.kernel import with_options
from agentrig.llm import (
    COOLDOWNS,
    Capabilities,
    FinishChunk,
    ModelDeployment,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderConfig,
    ProviderError,
    StreamChunk,
    request_option_issues,
)

__all__ = [
    "Deployment",
    "FallbackMove",
    "FallbackOptions",
    "FallbackProvider",
    "PeerLookup",
    "factory",
    "peer_lookup",
]

_log = logging.getLogger("agentrig.fallback")

PeerLookup = Callable[[str], Provider]
"""Returns the configured provider with that id (raises when there is none)."""


class FallbackOptions(BaseModel):
    """``[providers.<id>] kind = "fallback"`` options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    deployments: list[str] = Field(min_length=1)
    models: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> FallbackOptions:
        seen: set[str] = set()
        for name in self.deployments:
            if name in seen:
                raise ValueError(f"deployment {name!r} is listed twice")
            seen.add(name)
        unknown = sorted(set(self.models) - seen)
        if unknown:
            raise ValueError(f"models names deployments that are not listed: {unknown}")
        return self


@attrs.frozen(slots=True)
class Deployment:
    """One place a request can go: a provider id and the model to ask it for."""

    provider: str
    model: str | None = None

    def model_for(self, request: ModelRequest) -> str:
        return self.model if self.model is not None else request.model


@attrs.frozen(slots=True)
class FallbackMove:
    """A deployment failed and the request moved on (or ran out of deployments)."""

    deployment: str
    model: str
    error: ProviderError
    next_deployment: str | None


def _merge_bool(values: list[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    if values and all(v is True for v in values):
        return True
    return None


_STRUCTURED_RANK = {"none": 0, "json_mode": 1, "native": 2}


def _common(caps: list[Capabilities]) -> Capabilities:
    """What every deployment declares: a request built for this works wherever it moves."""
    if not caps:
        return Capabilities()
    structured = [c.structured_output for c in caps]
    structured_output = None
    if all(s is not None for s in structured):
        structured_output = min(structured, key=lambda s: _STRUCTURED_RANK[str(s)])
    elif "none" in structured:
        structured_output = "none"
    efforts = [c.reasoning_effort for c in caps]
    reasoning_effort = None
    if all(e is not None for e in efforts):
        first = efforts[0] or ()
        reasoning_effort = tuple(
            level for level in first if all(level in (e or ()) for e in efforts)
        )
    web = [c.native_web_tools for c in caps]
    native_web_tools = None
    if all(w is not None for w in web):
        native_web_tools = frozenset.intersection(*(w or frozenset() for w in web))
    return Capabilities(
        structured_output=structured_output,
        tool_choice=_merge_bool([c.tool_choice for c in caps]),
        parallel_tool_calls=_merge_bool([c.parallel_tool_calls for c in caps]),
        streaming=_merge_bool([c.streaming for c in caps]),
        reasoning_effort=reasoning_effort,
        vision=_merge_bool([c.vision for c in caps]),
        native_web_tools=native_web_tools,
        vendor_endpoint=_merge_bool([c.vendor_endpoint for c in caps]),
    )


def _moves_on(error: BaseException, signal: CancelSignal) -> bool:
    if signal.cancelled or is_abort(error, signal):
        return False
    return isinstance(error, ProviderError) and error.can_fallback


class FallbackProvider:
    """Serves each request from the first deployment that can (see the module docs).

    ``lookup`` finds the other providers by id; it is called per request, never at
    construction.
    """

    kind = "fallback"

    def __init__(
        self,
        deployments: tuple[Deployment, ...] | list[Deployment],
        lookup: PeerLookup,
        *,
        instance_id: str = "fallback",
    ) -> None:
        if not deployments:
            raise ValueError("a fallback provider needs at least one deployment")
        self.id = instance_id
        self.deployments = tuple(deployments)
        self._lookup = lookup
        self.moves: list[FallbackMove] = []
        """Every move so far, oldest first (for diagnostics and tests)."""

    def __repr__(self) -> str:
        route = " -> ".join(d.provider for d in self.deployments)
        return f"<FallbackProvider id={self.id!r} {route}>"

    def _peer(self, deployment: Deployment) -> Provider:
        if deployment.provider == self.id:
            raise ConfigError(
                [
                    Issue(
                        "config.fallback_cycle",
                        f"fallback provider {self.id!r} lists itself as a deployment",
                        ("providers", self.id, "options", "deployments"),
                    )
                ]
            )
        peer = self._lookup(deployment.provider)
        if isinstance(peer, FallbackProvider):
            raise ConfigError(
                [
                    Issue(
                        "config.fallback_nested",
                        f"deployment {deployment.provider!r} of {self.id!r} is itself a "
                        "fallback provider; list its deployments instead",
                        ("providers", self.id, "options", "deployments"),
                    )
                ]
            )
        return peer

    def check_request_options(
        self, options: Mapping[str, Any], *, where: tuple[str | int, ...]
    ) -> list[Issue]:
        """What any deployment would refuse of an agent's options (each key once): a request
        may reach every one of them.  A deployment that cannot be looked up yet fails its
        first call, as documented above."""
        found: dict[tuple[str | int, ...], Issue] = {}
        for deployment in self.deployments:
            try:
                peer = self._peer(deployment)
            except (ConfigError, UnknownIdError):
                continue
            for issue in request_option_issues(peer, options, where=where):
                found.setdefault(issue.path, issue)
        return list(found.values())

    def capabilities(self, model: str) -> Capabilities:
        """What *every* deployment declares for its model (the most a caller may rely on)."""
        caps = []
        for deployment in self.deployments:
            peer = self._peer(deployment)
            caps.append(peer.capabilities(deployment.model or model))
        return _common(caps)

    def _moved(
        self, index: int, model: str, error: ProviderError, failures: list[ProviderError]
    ) -> None:
        failures.append(error)
        following = self.deployments[index + 1] if index + 1 < len(self.deployments) else None
        move = FallbackMove(
            self.deployments[index].provider,
            model,
            error,
            following.provider if following else None,
        )
        self.moves.append(move)
        if following is not None:
            _log.warning(
                "%s: deployment %r (model %r) failed with %s (%s); moving to %r",
                self.id,
                move.deployment,
                model,
                type(error).__name__,
                error.code,
                following.provider,
            )

    @staticmethod
    def _raise_last(error: ProviderError, failures: list[ProviderError]) -> None:
        for earlier in failures[:-1]:
            error.add_note(f"an earlier deployment failed too: {type(earlier).__name__}: {earlier}")

    async def complete(self, request: ModelRequest, *, signal: CancelSignal) -> ModelResponse:
        failures: list[ProviderError] = []
        for index, deployment in enumerate(self.deployments):
            signal.raise_if_cancelled()
            peer = self._peer(deployment)
            model = deployment.model_for(request)
            routed = (
                request if model == request.model else request.model_copy(update={"model": model})
            )
            try:
                COOLDOWNS.check(
                    ModelDeployment.of(peer, deployment.provider, model),
                    provider=deployment.provider,
                )
                response = await peer.complete(routed, signal=signal)
            except ProviderError as exc:
                COOLDOWNS.note(ModelDeployment.of(peer, deployment.provider, model), exc)
                if not _moves_on(exc, signal):
                    raise
                self._moved(index, model, exc, failures)
                if index + 1 == len(self.deployments):
                    self._raise_last(exc, failures)
                    raise
                continue
            message = response.message
            if message.model is None:
                message = message.model_copy(update={"model": model})
            return response.model_copy(
                update={"message": message, "served_model": response.served_model or model}
            )
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def stream(
        self, request: ModelRequest, *, signal: CancelSignal
    ) -> AsyncGenerator[StreamChunk, None]:
        failures: list[ProviderError] = []
        for index, deployment in enumerate(self.deployments):
            signal.raise_if_cancelled()
            peer = self._peer(deployment)
            model = deployment.model_for(request)
            routed = (
                request if model == request.model else request.model_copy(update={"model": model})
            )
            inner = peer.stream(routed, signal=signal)
            started = False
            try:
                COOLDOWNS.check(
                    ModelDeployment.of(peer, deployment.provider, model),
                    provider=deployment.provider,
                )
                async for chunk in inner:
                    if isinstance(chunk, FinishChunk) and chunk.model is None:
                        chunk = chunk.model_copy(update={"model": model})
                    started = True
                    yield chunk
                return
            except ProviderError as exc:
                COOLDOWNS.note(ModelDeployment.of(peer, deployment.provider, model), exc)
                if started or not _moves_on(exc, signal):
                    raise
                self._moved(index, model, exc, failures)
                if index + 1 == len(self.deployments):
                    self._raise_last(exc, failures)
                    raise
            finally:
                closer = getattr(inner, "aclose", None)
                if closer is not None:
                    await closer()

    async def aclose(self) -> None:
        """Nothing to release: the deployments belong to the runtime and close with it."""


@with_options(FallbackOptions)
def factory(config: ProviderConfig) -> FallbackProvider:
    """Entry point ``fallback`` of ``agentrig.providers``."""
    options = FallbackOptions.model_validate(dict(config.options))
    deployments = tuple(Deployment(name, options.models.get(name)) for name in options.deployments)
    return FallbackProvider(deployments, config.peers, instance_id=config.id)


def peer_lookup(catalog: Mapping[str, Provider] | Any) -> PeerLookup:
    """A :data:`PeerLookup` over a catalog with ``require(id)`` or a plain mapping."""
    require = getattr(catalog, "require", None)
    if callable(require):
        found: PeerLookup = require
        return found
    mapping: Mapping[str, Provider] = catalog

    def lookup(provider_id: str) -> Provider:
        try:
            return mapping[provider_id]
        except KeyError:
            known = ", ".join(sorted(mapping)) or "none"
            raise ConfigError(
                [
                    Issue(
                        "config.unknown_id",
                        f"unknown provider {provider_id!r} (configured providers: {known})",
                    )
                ]
            ) from None

    return lookup
