"""The scripted provider reports configured usage as ``Usage.of`` builds it: compactly (no
``__dict__`` of its own, as an agent keeps one per assistant message), and equal in every
public way to the validated usage it built before."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from agentrig.builtins.scripted import factory
from agentrig.cancel import CancelSignal
from agentrig.llm import ModelRequest, ProviderConfig, Usage, UsageChunk, UserMessage

pytestmark = pytest.mark.anyio


def _has_own_dict(usage: Usage) -> bool:
    return any(type(ref) is dict for ref in gc.get_referents(usage))


async def _streamed_usages(*script: dict[str, Any]) -> list[Usage]:
    provider = factory(ProviderConfig(id="s", kind="scripted", options={"script": list(script)}))
    request = ModelRequest(model="m", messages=(UserMessage.of("hi"),))
    usages = []
    for _ in script:
        async for chunk in provider.stream(request, signal=CancelSignal()):
            if isinstance(chunk, UsageChunk):
                usages.append(chunk.usage)
    return usages


async def test_scripted_usage_is_compact_and_keeps_its_counts() -> None:
    full = {"prompt": 10, "completion": 4, "cache_read": 3, "cache_write": 1, "reasoning": 2}
    given_total = {"prompt": 5, "completion": 5, "total": 12}
    usages = await _streamed_usages(
        {"text": "a", "usage": full}, {"text": "b", "usage": given_total}, {"text": "c"}
    )
    validated = [
        Usage(prompt=10, completion=4, total=14, cache_read=3, cache_write=1, reasoning=2),
        Usage(prompt=5, completion=5, total=12),  # the provider's own total is kept
    ]
    assert len(usages) == 2  # no usage configured: none reported, no zeros made up
    for usage, expected in zip(usages, validated, strict=True):
        assert not _has_own_dict(usage)  # Usage.of's compact form
        assert usage.model_dump_json() == expected.model_dump_json()
        assert usage == expected
