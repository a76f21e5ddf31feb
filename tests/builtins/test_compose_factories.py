"""A factory that raises while a runtime is composed is a config error at its key path, with
the cause (issue 11, point 6)."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.errors import ConfigError
from agentrig.kernel import MemorySource, open_runtime


class Unreachable(Exception):
    """What a factory raises here."""


def explode(config: Any) -> Any:
    raise Unreachable("the gateway at 10.0.0.1 refused the handshake")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("kind", "config", "path"),
    [
        (
            "providers",
            {"providers": {"local": {"kind": "broken"}}},
            ("providers", "local"),
        ),
        (
            "session_stores",
            {"session_stores": {"disk": {"kind": "broken"}}},
            ("session_stores", "disk"),
        ),
        (
            "credential_stores",
            {"credential_stores": {"vault": {"kind": "broken"}}},
            ("credential_stores", "vault"),
        ),
        ("sealers", {"sealers": {"box": {"kind": "broken"}}}, ("sealers", "box")),
    ],
)
async def test_a_raising_factory_is_a_config_error_with_its_path_and_cause(
    kind: str, config: dict[str, Any], path: tuple[str, ...]
) -> None:
    memory = MemorySource()
    memory.add(kind, "broken", explode, distribution="broken-dist", version="0.3")
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, memory=memory, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.factory_failed"
    assert issue.path == path
    assert f"the {kind} factory 'broken' (broken-dist 0.3: entry point" in issue.message
    assert issue.message.endswith(
        "raised Unreachable: the gateway at 10.0.0.1 refused the handshake"
    )
    assert isinstance(info.value.__cause__, Unreachable)
    assert f"{'.'.join(path)}: the {kind} factory" in str(info.value)
