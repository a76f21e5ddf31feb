"""Composing ``[credential_stores.*]`` and ``[sealers.*]``, and ``$STORE:`` provider credentials.

The credential store and the sealer are the installed ``file`` and ``sodium`` entry points,
configured in the same ``agentrig.toml`` as the provider that uses them; only the provider
is an in-memory entry, so the test can see the credentials its factory received.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

import agentrig
from agentrig.builtins import _scripted as scripted
from agentrig.builtins._credential_file import FileCredentialStore
from agentrig.cli._config import check_file
from agentrig.errors import ConfigError
from agentrig.ids import EntryId, ProviderId
from agentrig.kernel import MemorySource, PluginIndex, env_resolver
from agentrig.llm import ProviderConfig
from agentrig.plugin import CREDENTIAL_STORES, PROVIDERS, SEALERS, SESSION_STORES
from agentrig.sealing import Sealer

pytestmark = pytest.mark.anyio

SECRET = "sk-test-0123456789abcdef"  # a fake key: it must never show up in an error


class _Recording:
    """A provider entry that records the credentials its factory receives."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def factory(self, config: ProviderConfig) -> Any:
        self.seen.append(dict(config.credentials))
        return scripted.factory(config)


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


_CONFIG = """\
    [plugins]
    autoload = false

    [credential_stores.vault]
    kind = "file"
    options = { path = "state/credentials.json" }

    [providers.main]
    kind = "recording"
    credentials = { api_key = "{ref}", org = "$ENV:ORG" }
"""


def _config(tmp_path: Path, ref: str = "$STORE:vault:openai/default") -> Path:
    return _write(tmp_path, _CONFIG.replace("{ref}", ref))


async def _store_secret(tmp_path: Path, service: str, account: str, secret: str) -> None:
    await FileCredentialStore(tmp_path / "state" / "credentials.json").set(service, account, secret)


def _memory(recording: _Recording) -> MemorySource:
    memory = MemorySource()
    memory.add("providers", "recording", recording.factory)
    return memory


async def test_a_store_reference_resolves_through_a_file_store_of_the_same_config(
    tmp_path: Path,
) -> None:
    await _store_secret(tmp_path, "openai", "default", SECRET)
    recording = _Recording()
    async with agentrig.open_runtime(
        _config(tmp_path),
        memory=_memory(recording),
        environ={},
        resolver=env_resolver({"ORG": "acme"}),
    ) as rt:
        store = rt.catalog(CREDENTIAL_STORES).require(EntryId("vault"))
        assert isinstance(store, FileCredentialStore)
        assert store.path == tmp_path / "state" / "credentials.json"
        assert rt.catalog(PROVIDERS).has(ProviderId("main"))
    # $STORE: through the store, $ENV: through the caller's resolver -- side by side
    assert recording.seen == [{"api_key": SECRET, "org": "acme"}]


async def test_a_missing_secret_is_a_config_error_naming_the_key_path(tmp_path: Path) -> None:
    await _store_secret(tmp_path, "openai", "other-account", SECRET)
    recording = _Recording()
    with pytest.raises(ConfigError) as caught:
        async with agentrig.open_runtime(
            _config(tmp_path),
            memory=_memory(recording),
            environ={},
            resolver=env_resolver({"ORG": "acme"}),
        ):
            pytest.fail("the runtime must not open")
    issue = next(i for i in caught.value.issues if i.code == "config.credential_reference")
    assert issue.path == ("providers", "main", "credentials", "api_key")
    assert "providers.main.credentials.api_key" in str(caught.value)
    assert "'openai'" in issue.message
    assert "'default'" in issue.message
    assert str(tmp_path / "agentrig.toml") in str(caught.value)
    assert SECRET not in str(caught.value)
    assert recording.seen == []  # the provider was never built without its key


async def test_an_unreadable_store_is_a_config_error_naming_the_key_path(tmp_path: Path) -> None:
    # a store that cannot be read is never taken for "absent"
    await _store_secret(tmp_path, "openai", "default", SECRET)
    path = tmp_path / "state" / "credentials.json"
    path.write_bytes(path.read_bytes()[:-3])  # no longer valid JSON (still owner-only)
    with pytest.raises(ConfigError) as caught:
        async with agentrig.open_runtime(
            _config(tmp_path),
            memory=_memory(_Recording()),
            environ={},
            resolver=env_resolver({"ORG": "acme"}),
        ):
            pytest.fail("the runtime must not open")
    (issue,) = caught.value.issues
    assert issue.code == "config.credential_store"
    assert issue.path == ("providers", "main", "credentials", "api_key")
    assert "not valid JSON" in issue.message
    assert SECRET not in str(caught.value)


async def test_an_unknown_store_id_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    recording = _Recording()
    with pytest.raises(ConfigError) as caught:
        async with agentrig.open_runtime(
            _config(tmp_path, "$STORE:nosuch:openai/default"),
            memory=_memory(recording),
            environ={},
            resolver=env_resolver({"ORG": "acme"}),
        ):
            pytest.fail("the runtime must not open")
    (issue,) = caught.value.issues
    assert issue.code == "config.unknown_id"
    assert issue.path == ("providers", "main", "credentials", "api_key")
    assert "'nosuch'" in issue.message
    assert "vault" in issue.message  # what is configured
    assert recording.seen == []
    assert not (tmp_path / "state").exists()  # no store was even built


async def test_a_credential_store_override_replaces_the_configured_one(tmp_path: Path) -> None:
    override = FileCredentialStore(tmp_path / "elsewhere" / "creds.json")
    await override.set("openai", "default", "from-override")
    recording = _Recording()
    async with agentrig.open_runtime(
        _config(tmp_path),
        memory=_memory(recording),
        environ={},
        resolver=env_resolver({"ORG": "acme"}),
        overrides=[("credential_stores", "vault", override)],
    ) as rt:
        assert rt.catalog(CREDENTIAL_STORES).require(EntryId("vault")) is override
    assert recording.seen == [{"api_key": "from-override", "org": "acme"}]


async def test_sealers_are_composed_before_the_session_stores_that_name_them(
    tmp_path: Path,
) -> None:
    config = _write(
        tmp_path,
        """\
        [plugins]
        autoload = false

        [sealers.main]
        kind = "sodium"
        options = { directory = "state/keys" }

        [session_stores.local]
        kind = "jsonl"
        options = { directory = "state/sessions", sealer = "main" }
        """,
    )
    async with agentrig.open_runtime(config, environ={}) as rt:
        sealer = rt.catalog(SEALERS).require(EntryId("main"))
        assert isinstance(sealer, Sealer)
        assert sealer.unlocked
        store = rt.catalog(SESSION_STORES).require(EntryId("local"))
        assert getattr(store, "sealer", None) is sealer  # the JSONL store keeps its sealer


async def test_a_factory_returning_something_else_is_refused_at_its_entry(tmp_path: Path) -> None:
    memory = MemorySource()
    memory.add("credential_stores", "bogus", lambda spec: object())
    config = {"plugins": {"autoload": False}, "credential_stores": {"v": {"kind": "bogus"}}}
    with pytest.raises(ConfigError, match="returned an object, not a CredentialStore") as info:
        async with agentrig.open_runtime(config, memory=memory, environ={}):
            pytest.fail("the runtime must not open")
    (issue,) = info.value.issues
    assert (issue.code, issue.path) == ("config.factory_product", ("credential_stores", "v"))


# ---- agentrig config check ----------------------------------------------------------------


def test_config_check_reports_store_and_sealer_problems_without_reading_anything(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path,
        """\
        [plugins]
        autoload = false

        [credential_stores.vault]
        kind = "file"
        options = { path = "state/credentials.json", colour = "blue" }

        [credential_stores.bad]
        kind = "no-such-store"

        [sealers.main]
        kind = "no-such-sealer"

        [providers.main]
        kind = "scripted"
        [providers.main.credentials]
        api_key = "$STORE:nosuch:openai/default"
        token = "$STORE:vault:oops"
        plain = "literal-secret"
        ok = "$STORE:vault:openai/default"

        [session_stores.local]
        kind = "jsonl"
        options = { sealer = "missing" }
        """,
    )
    lines = check_file(path)
    text = "\n".join(lines)
    assert all(line.startswith(f"{path}: ") for line in lines)
    expected = {
        "credential_stores.vault.options.colour: unknown key",
        "credential_stores.bad.kind: no credential_stores plugin named 'no-such-store'",
        "sealers.main.kind: no sealers plugin named 'no-such-sealer'",
        "providers.main.credentials.api_key: unknown credential store 'nosuch'",
        "providers.main.credentials.token: '$STORE:vault:oops': expected <service>/<account>",
        "session_stores.local.options.sealer: unknown sealer 'missing'",
    }
    for fragment in expected:
        assert fragment in text, f"{fragment!r} not reported:\n{text}"
    assert len(lines) == len(expected), text
    assert "literal-secret" not in text
    assert not (tmp_path / "state").exists()  # nothing was built, nothing read


_VALID_SECURITY = """\
    [credential_stores.vault]
    kind = "file"

    [sealers.main]
    kind = "sodium"
    options = { directory = "state/keys", locked = true }

    [providers.main]
    kind = "scripted"
    credentials = { api_key = "$STORE:vault:openai/team/bot" }

    [session_stores.local]
    kind = "sqlite"
    options = { sealer = "main" }
    """


def test_config_check_accepts_a_valid_security_composition(tmp_path: Path) -> None:
    path = _write(tmp_path, _VALID_SECURITY)
    # a locked sealer needs its keys: generate them once, unlocked, as an operator would
    factory: Any = PluginIndex().load("sealers", "sodium")
    factory({"options": {"directory": "state/keys"}, "base_dir": str(tmp_path)})
    keys = sorted(p.name for p in (tmp_path / "state" / "keys").iterdir())
    assert check_file(path) == []
    # constructing read no secret and made no credential file; the keys are untouched
    assert not (tmp_path / ".agentrig" / "credentials.json").exists()
    assert sorted(p.name for p in (tmp_path / "state" / "keys").iterdir()) == keys


def test_config_check_constructs_the_sealer_and_reports_that_it_cannot_start(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, _VALID_SECURITY)
    (line,) = check_file(path)  # locked, and no keys were ever generated
    assert line.startswith(f"{path}: sealers.main: the sealers factory 'sodium' (")
    assert "no public key yet" in line
