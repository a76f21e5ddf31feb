"""``[otel]`` keys the chosen exporter would ignore are refused, not accepted silently."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.errors import ConfigError
from agentrig.kernel import open_runtime


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("otel", "named"),
    [
        ({"exporter": "console", "endpoint": "http://127.0.0.1:4318"}, "endpoint would"),
        ({"exporter": "none", "headers": {"x-api-key": "k"}}, "headers would"),
        (
            {"exporter": "global", "endpoint": "http://127.0.0.1:4318", "service_name": "s"},
            "endpoint, service_name would",
        ),
    ],
)
async def test_a_key_the_exporter_ignores_is_refused(otel: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as info:
        async with open_runtime({"otel": otel}, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.location() == "otel"
    assert named in issue.message
    assert f"no effect with exporter {otel['exporter']!r}" in issue.message


@pytest.mark.anyio
@pytest.mark.parametrize(
    "otel",
    [
        {"exporter": "otlp-http", "endpoint": "http://127.0.0.1:4318", "headers": {"k": "v"}},
        {"exporter": "console", "service_name": "agents"},
        {"exporter": "global", "capture_content": True, "metrics": False},
    ],
)
async def test_keys_the_exporter_uses_are_accepted(otel: dict[str, Any]) -> None:
    async with open_runtime({"otel": {**otel, "enabled": False}}, environ={}):
        pass
