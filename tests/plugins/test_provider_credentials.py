"""A credential the provider does not read is refused, not ignored.

``credentials.apikey = "$ENV:OPENAI_API_KEY"`` used to compose fine and send every request
without a key.  A provider factory declares the credential names it reads
(``credential_keys``; ``HttpProviderFactory``: ``("api_key",)``), and any other key is a
``config.unknown_credential`` issue at ``providers.<id>.credentials.<key>`` with a "did you
mean".  A factory that declares nothing is passed every credential, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.builtins._scripted import factory as scripted_factory
from agentrig.cli import main
from agentrig.errors import ConfigError, PluginLoadError
from agentrig.kernel import MemorySource, open_runtime
from agentrig.llm import Provider, ProviderConfig


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_misspelt_api_key_is_refused_with_a_suggestion(kind: str) -> None:
    config = {"providers": {"p": {"kind": kind, "credentials": {"apikey": "$ENV:K"}}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, resolver={"K": "sk"}.get, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.code == "config.unknown_credential"
    assert issue.location() == "providers.p.credentials.apikey"
    assert issue.message == "unknown key 'apikey'; did you mean 'api_key'?"


@pytest.mark.anyio
async def test_the_declared_key_composes() -> None:
    config = {"providers": {"p": {"kind": "openai", "credentials": {"api_key": "$ENV:K"}}}}
    async with open_runtime(config, resolver={"K": "sk"}.get, environ={}) as rt:
        factory = rt.index.load("providers", "openai")
        assert getattr(factory, "credential_keys", None) == ("api_key",)


def _declaring(config: ProviderConfig) -> Provider:
    return scripted_factory(config)


def _wrong(config: ProviderConfig) -> Provider:
    return scripted_factory(config)


vars(_declaring)["credential_keys"] = ("token", "region")
vars(_wrong)["credential_keys"] = "token"  # a string, not a tuple of names


@pytest.mark.anyio
async def test_a_third_party_factory_declares_what_it_reads() -> None:
    memory = MemorySource()
    memory.add("providers", "mine", _declaring)
    credentials = {"token": "t", "tokn": "t", "secret": "s"}
    config = {"providers": {"p": {"kind": "mine", "credentials": credentials}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, memory=memory, environ={}):
            pytest.fail("must not compose")
    assert [(i.location(), i.message) for i in info.value.issues] == [
        ("providers.p.credentials.tokn", "unknown key 'tokn'; did you mean 'token'?"),
        ("providers.p.credentials.secret", "unknown key 'secret' (known keys: region, token)"),
    ]


@pytest.mark.anyio
async def test_a_factory_that_declares_nothing_gets_every_credential() -> None:
    config: dict[str, Any] = {"providers": {"p": {"kind": "scripted", "credentials": {"x": "1"}}}}
    async with open_runtime(config, environ={}):
        pass


def test_a_malformed_declaration_breaks_the_factory_contract() -> None:
    memory = MemorySource()
    memory.add("providers", "wrong", _wrong)
    from agentrig.kernel import PluginIndex

    with pytest.raises(PluginLoadError, match="credential_keys must be a tuple"):
        PluginIndex([memory]).load("providers", "wrong")


def test_config_check_shows_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agentrig.toml"
    path.write_text(
        '[providers.main]\nkind = "openai"\ncredentials.apikey = "$ENV:OPENAI_API_KEY"\n',
        encoding="utf-8",
    )
    assert main(["config", "check", str(path)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "error [" in line]
    assert lines == [
        f"agentrig config: error [config.unknown_credential]: {path}: "
        "providers.main.credentials.apikey: unknown key 'apikey'; did you mean 'api_key'?"
    ]
