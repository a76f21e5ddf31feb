"""The scripted provider reports configured usage as ``Usage.of`` builds it: with the
fields-set it shares with every usage built from the same counts (an agent keeps one per
assistant message), and equal in every public way to the validated usage it built before."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.builtins._scripted import factory
from agentrig.cancel import CancelSignal
from agentrig.errors import ConfigError
from agentrig.kernel import open_runtime
from agentrig.llm import ModelRequest, ProviderConfig, Usage, UsageChunk, UserMessage

pytestmark = pytest.mark.anyio


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
        assert usage.model_fields_set is Usage.of(1, 2).model_fields_set  # shared, not its own
        assert usage.model_dump_json() == expected.model_dump_json()
        assert usage == expected


async def test_every_usage_count_is_kept_and_an_unknown_key_is_refused() -> None:
    (usage,) = await _streamed_usages(
        {"usage": {"prompt": 9, "completion": 1, "cache_read": 4, "uncached_input": 5}}
    )
    assert usage == Usage(prompt=9, completion=1, total=10, cache_read=4, uncached_input=5)
    script = [{"text": "x", "usage": {"promt": 3, "completion": 1}}]
    config = {"providers": {"local": {"kind": "scripted", "options": {"script": script}}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.path == ("providers", "local", "options", "script", 0, "usage", "promt")
    assert "unknown key 'promt'" in issue.message
