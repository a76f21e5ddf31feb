"""Bounded means bounded (issue 28, point 11): every number in ``[server]`` is finite and in
range at config time, and a request body nested too deeply is a 400 -- never a 500."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_support import RunningServer, scripted_config

from agentrig.errors import ConfigError

FLOATS = ["max_run_seconds", "approval_timeout"]
SERVER_FLOATS = ["ready_timeout", "header_timeout", "body_timeout"]
SERVER_INTS = ["max_body_bytes", "rate_limit_per_minute", "max_concurrent_per_key", "max_sessions"]
AGENT_INTS = ["max_concurrent", "max_run_tokens", "max_output_tokens", "max_rounds"]
UNBOUNDED: list[Any] = [math.inf, -math.inf, math.nan, 1e308, 10**400, -1, 0, -0.0, "inf", "nan"]


def parse(table: dict[str, Any]) -> Any:
    from agentrig_server import parse_settings

    return parse_settings(table)


def agent_table(key: str, value: Any) -> dict[str, Any]:
    extra = {"approvals": "api"} if key == "approval_timeout" else {}
    return {"agents": {"assistant": {**extra, key: value}}}


@pytest.mark.parametrize("value", UNBOUNDED, ids=repr)
@pytest.mark.parametrize("key", FLOATS + AGENT_INTS)
def test_an_unbounded_agent_limit_is_refused(key: str, value: Any) -> None:
    with pytest.raises(ConfigError) as info:
        parse(agent_table(key, value))
    assert f"server.agents.assistant.{key}" in str(info.value)


@pytest.mark.parametrize("value", UNBOUNDED, ids=repr)
@pytest.mark.parametrize("key", SERVER_FLOATS + SERVER_INTS)
def test_an_unbounded_server_limit_is_refused(key: str, value: Any) -> None:
    with pytest.raises(ConfigError) as info:
        parse({key: value})
    assert f"server.{key}" in str(info.value)


def test_the_inf_of_the_report_is_refused_from_a_toml_file(tmp_path: Any) -> None:
    import agentrig

    path = tmp_path / "agentrig.toml"
    path.write_text(
        '[providers.local]\nkind = "scripted"\n[agents.assistant]\nprovider = "local"\n'
        'model = "m"\n[server.agents.assistant]\nmax_run_seconds = inf\n'
    )

    async def open_it() -> None:
        async with agentrig.open_runtime(path) as rt:
            from agentrig_server import server_settings

            server_settings(rt)

    import anyio

    with pytest.raises(ConfigError) as info:
        anyio.run(open_it)
    assert "server.agents.assistant.max_run_seconds" in str(info.value)


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(FLOATS),
    value=st.floats(allow_nan=True, allow_infinity=True),
)
def test_any_float_limit_is_accepted_only_when_finite_positive_and_at_most_a_day(
    key: str, value: float
) -> None:
    ok = math.isfinite(value) and 0 < value <= 86_400
    try:
        parse(agent_table(key, value))
    except ConfigError:
        assert not ok, value
    else:
        assert ok, value


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with RunningServer(scripted_config(), {"agents": {"assistant": {}}}) as srv:
        yield srv


def nested(kind: str, depth: int) -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    pairs = (depth + 1) // 2  # two levels each
    return '[{"a":' * pairs + "1" + "}]" * pairs


def in_messages(depth: int) -> str:
    inner = nested("object", depth)
    return json.dumps(
        {"model": "assistant", "messages": [{"role": "user", "content": "x"}], "metadata": None}
    ).replace("null", inner)


POSTS = ["/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/approvals/apr_x"]


@pytest.mark.parametrize("depth", [65, 100, 1_000, 5_000, 100_000])
@pytest.mark.parametrize("kind", ["array", "object", "mixed", "in_messages"])
@pytest.mark.parametrize("path", POSTS)
def test_a_deeply_nested_body_is_400(
    server: RunningServer, path: str, kind: str, depth: int
) -> None:
    body = in_messages(depth) if kind == "in_messages" else nested(kind, depth)
    answer = httpx.post(
        server.base_url + path, content=body, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 400, (path, kind, depth, answer.text[:200])
    assert "internal" not in answer.text


@pytest.mark.parametrize("body", ["NaN", "[Infinity]", '{"temperature": -Infinity}', "1e999x"])
def test_non_json_numbers_are_400(server: RunningServer, body: str) -> None:
    answer = httpx.post(
        server.base_url + "/v1/chat/completions",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 400


def test_nesting_up_to_the_limit_is_read(server: RunningServer) -> None:
    from agentrig_server._app import MAX_JSON_DEPTH

    # metadata is echoed by Responses: a body exactly at the limit goes through
    body = json.dumps({"model": "assistant", "input": "Hi", "metadata": None}).replace(
        "null", '{"a":' * (MAX_JSON_DEPTH - 1) + "1" + "}" * (MAX_JSON_DEPTH - 1)
    )
    answer = httpx.post(
        server.base_url + "/v1/responses",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["metadata"] == json.loads(body)["metadata"]
