"""Model metadata (context window, output limit, pricing) and cost.

Provider plugins register the metadata of the models they own; :class:`ModelRegistry` is the
only place it is gathered.  Core carries no vendor table.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from decimal import Decimal
from typing import final, overload

import attrs

from agentrig.errors import DuplicateIdError
from agentrig.llm._capabilities import Capabilities
from agentrig.messages import Usage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "ModelInfo",
    "ModelRegistry",
    "Pricing",
    "cost",
]

logger = logging.getLogger("agentrig.llm")

DEFAULT_CONTEXT_WINDOW = 200_000
"""Context window assumed for a model nobody registered (a warning says so, once per model)."""
DEFAULT_MAX_OUTPUT_TOKENS = 8_192
"""Output limit assumed for a model whose limit nobody registered (warned once per model)."""

_MILLION = Decimal(1_000_000)


def _to_decimal(value: Decimal | int | float | str) -> Decimal:
    if isinstance(value, Decimal):
        return value
    # str() first so 0.3 becomes Decimal("0.3"), not its binary approximation.
    return Decimal(str(value))


def _to_optional_decimal(value: Decimal | int | float | str | None) -> Decimal | None:
    return None if value is None else _to_decimal(value)


@attrs.frozen(slots=True)
class Pricing:
    """USD per 1,000,000 tokens.  Floats and strings given are converted to ``Decimal``.

    ``cache_read`` / ``cache_write`` are the rates for prompt tokens read from / written to the
    provider's prompt cache; when missing, those tokens cost the ``input`` rate.
    """

    input: Decimal = attrs.field(converter=_to_decimal)
    output: Decimal = attrs.field(converter=_to_decimal)
    cache_read: Decimal | None = attrs.field(default=None, converter=_to_optional_decimal)
    cache_write: Decimal | None = attrs.field(default=None, converter=_to_optional_decimal)


@attrs.frozen(slots=True)
class ModelInfo:
    """What the owning provider package states about one model.

    ``source`` says where the numbers come from (for example the vendor page and its date).
    """

    model: str
    context_window: int
    max_output_tokens: int | None = None
    pricing: Pricing | None = None
    capabilities: Capabilities | None = None
    source: str | None = None


@overload
def cost(usage: Usage, pricing: Pricing) -> Decimal: ...
@overload
def cost(usage: None, pricing: Pricing) -> None: ...
def cost(usage: Usage | None, pricing: Pricing) -> Decimal | None:
    """USD cost of ``usage`` at ``pricing`` (``None`` when there is no usage).

    ``cache_read`` and ``cache_write`` are parts of ``prompt``: each is priced at its own rate
    when one is given (else at the input rate), and the remaining prompt tokens at the input
    rate.  Completion tokens (reasoning included) are priced at the output rate.
    """
    if usage is None:
        return None
    cache_read = usage.cache_read or 0
    cache_write = usage.cache_write or 0
    uncached = max(usage.prompt - cache_read - cache_write, 0)
    read_rate = pricing.cache_read if pricing.cache_read is not None else pricing.input
    write_rate = pricing.cache_write if pricing.cache_write is not None else pricing.input
    total = (
        uncached * pricing.input
        + cache_read * read_rate
        + cache_write * write_rate
        + usage.completion * pricing.output
    )
    return total / _MILLION


@final
class ModelRegistry:
    """Model metadata contributed by provider packages, looked up by model name.

    The limit helpers never fail: for a model nobody registered they log one warning per
    model name on the ``agentrig.llm`` logger and return :data:`DEFAULT_CONTEXT_WINDOW` /
    :data:`DEFAULT_MAX_OUTPUT_TOKENS`.
    """

    def __init__(self) -> None:
        self._models: dict[str, ModelInfo] = {}
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def register(self, info: ModelInfo, *, replace: bool = False) -> ModelInfo:
        """Add a model's metadata; a second registration needs ``replace=True``."""
        with self._lock:
            if info.model in self._models and not replace:
                raise DuplicateIdError(
                    f"model {info.model!r} is already registered; pass replace=True to replace it"
                )
            self._models[info.model] = info
        return info

    def lookup(self, model: str) -> ModelInfo | None:
        return self._models.get(model)

    def __contains__(self, model: object) -> bool:
        return model in self._models

    def __iter__(self) -> Iterator[ModelInfo]:
        return iter(tuple(self._models.values()))

    def __len__(self) -> int:
        return len(self._models)

    def _warn_once(self, model: str, what: str, message: str, *args: object) -> None:
        key = (model, what)
        if key in self._warned:  # said already (the common case): no lock to read the set
            return
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        logger.warning(message, *args)

    def context_window(self, model: str) -> int:
        """The model's context window in tokens (the documented default when unknown)."""
        info = self._models.get(model)
        if info is None:
            self._warn_once(
                model,
                "model",
                "model %r is not registered by any provider; assuming a %d-token context "
                "window and a %d-token output limit",
                model,
                DEFAULT_CONTEXT_WINDOW,
                DEFAULT_MAX_OUTPUT_TOKENS,
            )
            return DEFAULT_CONTEXT_WINDOW
        return info.context_window

    def max_output_tokens(self, model: str) -> int:
        """The model's output limit in tokens (the documented default when unknown)."""
        info = self._models.get(model)
        if info is None:
            self.context_window(model)  # the same one warning for an unknown model
            return DEFAULT_MAX_OUTPUT_TOKENS
        if info.max_output_tokens is None:
            self._warn_once(
                model,
                "max_output_tokens",
                "model %r has no registered output limit; assuming %d tokens",
                model,
                DEFAULT_MAX_OUTPUT_TOKENS,
            )
            return DEFAULT_MAX_OUTPUT_TOKENS
        return info.max_output_tokens

    def cost(self, model: str, usage: Usage | None) -> Decimal | None:
        """USD cost of ``usage`` on ``model``; ``None`` without usage or known pricing."""
        info = self._models.get(model)
        if usage is None or info is None or info.pricing is None:
            return None
        return cost(usage, info.pricing)
