"""Request fields a provider sets itself are refused as ``[agents.<id>] options``, not dropped.

``options = { model = "x" }`` used to run with the agent's own model and say nothing.  Now
the installed ``openai`` and ``anthropic`` providers declare their reserved fields through
:class:`agentrig.llm.RequestOptionsCheck`, and the runtime refuses the agent when it is built
-- at open, in ``config check``, in ``agents.create`` -- with an issue at
``agents.<id>.options.<key>`` saying what to use instead.  A third-party provider uses the
same seam; a ``request_config`` listener that brings a reserved field gets an
``InvalidRequestError`` instead of a silently different request.
"""

from __future__ import annotations

import textwrap
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentrig import open_runtime
from agentrig.builtins._scripted import ScriptedProvider
from agentrig.cli import main
from agentrig.errors import ConfigError, Issue
from agentrig.ids import AgentId, provider_id
from agentrig.llm import (
    PROVIDERS,
    InvalidRequestError,
    ModelRequest,
    RequestOptionsCheck,
    UserMessage,
    reserved_option_issues,
)

ENVIRON = {"KEY": "sk-test"}

PROVIDERS_TOML = """
[providers.oa]
kind = "openai"
credentials.api_key = "$ENV:KEY"

[providers.an]
kind = "anthropic"
credentials.api_key = "$ENV:KEY"

[providers.both]
kind = "fallback"
options.deployments = ["oa", "an"]
"""


def _config(provider: str, options: str) -> str:
    return PROVIDERS_TOML + textwrap.dedent(
        f"""
        [agents.helper]
        provider = "{provider}"
        model = "some-model"
        options = {options}
        """
    )


def _resolver(name: str) -> str | None:
    return ENVIRON.get(name)


async def _refusal(text: str) -> list[Issue]:
    with pytest.raises(ConfigError) as info:
        async with open_runtime(_toml(text), resolver=_resolver, environ={}):
            pytest.fail("the runtime must not open")
    return list(info.value.issues)


def _toml(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider", "key", "instead"),
    [
        ("oa", "model", "set agents.helper.model"),
        ("oa", "messages", "the session's history"),
        ("oa", "stream", "run() answers whole, stream() streams"),
        ("oa", "stream_options", "stream_usage"),
        ("an", "model", "set agents.helper.model"),
        ("an", "messages", "the session's history"),
        ("an", "stream", "run() answers whole, stream() streams"),
        ("both", "model", "set agents.helper.model"),
        ("both", "stream_options", "stream_usage"),  # one deployment (openai) refuses it
    ],
)
async def test_a_reserved_request_field_in_agent_options_refuses_the_runtime(
    provider: str, key: str, instead: str
) -> None:
    issues = await _refusal(_config(provider, f'{{ {key} = "x", user = "u-1" }}'))
    assert [(i.code, i.location()) for i in issues] == [
        ("config.reserved_option", f"agents.helper.options.{key}")
    ]
    assert f"{key!r} is set by the provider itself" in issues[0].message
    assert instead in issues[0].message


@pytest.mark.anyio
async def test_every_reserved_key_is_named_once_and_ordinary_options_pass() -> None:
    issues = await _refusal(_config("both", '{ model = "x", stream = true, metadata = {} }'))
    assert [i.location() for i in issues] == [
        "agents.helper.options.model",
        "agents.helper.options.stream",
    ]
    async with open_runtime(
        _toml(_config("oa", '{ user = "u-1", seed = 7 }')),
        resolver=_resolver,
        environ={},
    ) as rt:
        assert rt.agent(AgentId("helper")).config.options == {"user": "u-1", "seed": 7}


@pytest.mark.anyio
async def test_agents_create_refuses_a_reserved_option_before_publishing() -> None:
    async with open_runtime(_toml(PROVIDERS_TOML), resolver=_resolver, environ={}) as rt:
        with pytest.raises(ConfigError) as info:
            await rt.agents.create(
                AgentId("late"), provider="an", model="m", options={"stream": False}
            )
        assert [i.location() for i in info.value.issues] == ["agents.late.options.stream"]
        assert rt.agents.get(AgentId("late")) is None


class _PickyProvider(ScriptedProvider):
    """A third party's provider: it sets ``seed`` itself, through the public seam."""

    def check_request_options(
        self, options: Mapping[str, Any], *, where: tuple[str | int, ...]
    ) -> Sequence[Issue]:
        return reserved_option_issues(
            options, {"seed": "the provider draws it; set {owner}.temperature"}, where=where
        )


@pytest.mark.anyio
async def test_a_third_party_provider_declares_its_reserved_fields_through_the_seam() -> None:
    picky = _PickyProvider(["hi"])
    assert isinstance(picky, RequestOptionsCheck)
    config = {
        "providers": {"p": {"kind": "scripted"}},
        "agents": {"a": {"provider": "p", "model": "m", "options": {"seed": 1}}},
    }
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, overrides=[("providers", "p", picky)], environ={}):
            pytest.fail("the runtime must not open")
    (issue,) = info.value.issues
    assert issue.location() == "agents.a.options.seed"
    assert issue.message.endswith("the provider draws it; set agents.a.temperature")


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["oa", "an"])
async def test_a_reserved_field_from_a_listener_is_an_invalid_request_not_a_drop(
    provider: str,
) -> None:
    """The per-request path costs nothing extra: the membership test that used to drop the
    key now raises, before anything is sent."""
    async with open_runtime(_toml(PROVIDERS_TOML), resolver=_resolver, environ={}) as rt:
        instance: Any = rt.catalog(PROVIDERS).require(provider_id(provider))
        request = ModelRequest(
            model="m", messages=(UserMessage.of("hi"),), options={"model": "other"}
        )
        with pytest.raises(InvalidRequestError, match="'model' is set by the provider itself"):
            instance.request_body(request)
        assert "metadata" in instance.request_body(
            request.model_copy(update={"options": {"metadata": {"k": "v"}}})
        )


def test_config_check_and_run_show_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEY", "sk-test")
    path = tmp_path / "agentrig.toml"
    path.write_text(_config("oa", '{ model = "gpt-x" }'), encoding="utf-8")
    expected = (
        f"error [config.reserved_option]: {path}: agents.helper.options.model: 'model' is set "
        "by the provider itself and cannot be a request option; set agents.helper.model"
    )
    assert main(["config", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "error [" in line] == [
        f"agentrig config: {expected} (or pass model= to agents.create)"
    ]
    assert main(["run", "-c", str(path), "hi"]) == 2
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert expected in lines[0]
    assert "Traceback" not in captured.err
