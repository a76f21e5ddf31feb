"""Usage, pricing, cost and the model registry."""

from __future__ import annotations

import logging
from decimal import Decimal

import pytest

from agentrig.errors import DuplicateIdError
from agentrig.llm import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_OUTPUT_TOKENS,
    Capabilities,
    ModelInfo,
    ModelRegistry,
    Pricing,
    Usage,
    cost,
)


def test_usage_of_defaults_total_but_keeps_a_reported_one() -> None:
    assert Usage.of(10, 5).total == 15
    assert Usage.of(10, 5, total=17).total == 17
    usage = Usage.of(10, 5)
    assert usage.cache_read is None
    assert usage.reasoning is None
    assert not usage.partial


def test_usage_round_trips() -> None:
    usage = Usage.of(100, 20, cache_read=70, cache_write=5, uncached_input=25, reasoning=8)
    assert Usage.model_validate_json(usage.model_dump_json()) == usage
    assert Usage.model_validate(usage.model_dump(mode="json")) == usage


def test_usage_add() -> None:
    a = Usage.of(10, 5, cache_read=4)
    b = Usage.of(20, 7, total=30, reasoning=3, partial=True)
    total = a.add(b)
    assert total == Usage(
        prompt=30, completion=12, total=45, cache_read=4, reasoning=3, partial=True
    )
    assert total.cache_write is None  # absent on both sides stays absent, not 0
    assert a.add(None) is a
    assert a.add(Usage.of(1, 1, cache_read=2)).cache_read == 6


PRICING = Pricing(input="3", output="15", cache_read="0.30", cache_write="3.75")


def test_pricing_converts_to_decimal() -> None:
    pricing = Pricing(input=0.3, output=1, cache_read="0.03")
    assert pricing.input == Decimal("0.3")
    assert pricing.output == Decimal(1)
    assert pricing.cache_read == Decimal("0.03")
    assert pricing.cache_write is None


def test_cost_prices_cache_read_separately() -> None:
    usage = Usage.of(1_000_000, 1_000_000, cache_read=400_000)
    # 600k uncached at $3 + 400k cached at $0.30 + 1M output at $15
    assert cost(usage, PRICING) == Decimal("1.8") + Decimal("0.12") + Decimal("15")
    assert isinstance(cost(usage, PRICING), Decimal)


def test_cost_cache_write_and_missing_rates() -> None:
    usage = Usage.of(1_000_000, 0, cache_read=200_000, cache_write=300_000)
    assert cost(usage, PRICING) == Decimal("1.5") + Decimal("0.06") + Decimal("1.125")
    # without cache rates every prompt token costs the input rate
    plain = Pricing(input=2, output=8)
    assert cost(usage, plain) == Decimal(2)
    assert cost(Usage.of(0, 0), plain) == Decimal(0)


def test_cost_of_no_usage_is_none() -> None:
    assert cost(None, PRICING) is None
    registry = ModelRegistry()
    registry.register(ModelInfo("m", 100_000, 4_096, PRICING))
    assert registry.cost("m", None) is None
    assert registry.cost("m", Usage.of(1_000_000, 0)) == Decimal(3)
    assert registry.cost("unknown", Usage.of(1, 1)) is None
    registry.register(ModelInfo("free", 1000))
    assert registry.cost("free", Usage.of(1, 1)) is None


def test_registry_register_lookup_replace() -> None:
    registry = ModelRegistry()
    info = ModelInfo(
        model="m",
        context_window=128_000,
        max_output_tokens=16_384,
        pricing=PRICING,
        capabilities=Capabilities(vision=True),
        source="https://vendor.test/models (2025-01-01)",
    )
    assert registry.register(info) is info
    assert registry.lookup("m") is info
    assert registry.lookup("n") is None
    assert "m" in registry
    assert len(registry) == 1
    assert list(registry) == [info]
    with pytest.raises(DuplicateIdError):
        registry.register(ModelInfo("m", 1))
    registry.register(ModelInfo("m", 1), replace=True)
    assert registry.context_window("m") == 1


def test_unknown_model_warns_once_and_uses_defaults(caplog: pytest.LogCaptureFixture) -> None:
    registry = ModelRegistry()
    registry.register(ModelInfo("known", 32_000, 2_000))
    with caplog.at_level(logging.WARNING, logger="agentrig.llm"):
        assert registry.context_window("known") == 32_000
        assert registry.max_output_tokens("known") == 2_000
        assert not caplog.records
        assert registry.context_window("mystery") == DEFAULT_CONTEXT_WINDOW == 200_000
        assert len(caplog.records) == 1
        record = caplog.records[0]
        assert record.name == "agentrig.llm"
        assert "mystery" in record.getMessage()
        assert registry.context_window("mystery") == DEFAULT_CONTEXT_WINDOW
        assert registry.max_output_tokens("mystery") == DEFAULT_MAX_OUTPUT_TOKENS == 8_192
        assert len(caplog.records) == 1  # no second warning for the same model
        registry.context_window("other")
        assert len(caplog.records) == 2


def test_known_model_without_output_limit(caplog: pytest.LogCaptureFixture) -> None:
    registry = ModelRegistry()
    registry.register(ModelInfo("m", 50_000))
    with caplog.at_level(logging.WARNING, logger="agentrig.llm"):
        assert registry.max_output_tokens("m") == DEFAULT_MAX_OUTPUT_TOKENS
        assert registry.max_output_tokens("m") == DEFAULT_MAX_OUTPUT_TOKENS
        assert registry.context_window("m") == 50_000
    assert len(caplog.records) == 1
