"""Every config key agentrig accepts is documented and read (issue: accepted-but-ignored).

The core tables are checked against docs/config-reference.md by ``test_config_reference``;
this walks the rest of what a config file can hold -- each installed plugin's config table
(``agentrig.config_sections``: ``[server]``, ``[otel]``, ``[dbos]``, ``[mcp]``,
``[mcp_servers]``) and the ``options`` model of every installed factory (providers, session
stores such as ``postgres``, hook strategies, credential stores, sealers) -- and checks that
each field is documented on a page that names its table, and that the code reads it.  The
reading check is a name search (an attribute ``.field`` or a key ``"field"`` in ``src/`` or a
plugin's ``src/``): it cannot prove an effect, but a field no code names is certainly ignored.
Keys found accepted-and-ignored by this audit are refused now; their tests are below.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from test_config_reference import config_keys

from agentrig.errors import ConfigError
from agentrig.kernel import open_runtime

ROOT = Path(__file__).resolve().parents[2]
DOCS = {path.name: path.read_text(encoding="utf-8") for path in (ROOT / "docs").glob("*.md")}
FACTORY_GROUPS = ("providers", "session_stores", "hook_strategies", "credential_stores", "sealers")


def _tables() -> list[tuple[str, str, type[BaseModel]]]:
    """``(table, how a page names it, model)`` for every installed table and options model."""
    tables = [
        (ep.name, f"[{ep.name}", ep.load()) for ep in entry_points(group="agentrig.config_sections")
    ]
    for group in FACTORY_GROUPS:
        for ep in entry_points(group=f"agentrig.{group}"):
            model = getattr(ep.load(), "options_model", None)
            if model is not None:
                tables.append((f"{group}:{ep.name}.options", f'"{ep.name}"', model))
    return tables


def _documented(key: str, text: str) -> bool:
    # a key in code (`key`, `server.key`, `queues.<name>.key`, `options.key`) or set in TOML
    in_code = re.search(rf"`(?:[\w<>\[\].-]*\.)?{re.escape(key)}(?:\.[\w<>.-]*)?`", text)
    return bool(in_code or re.search(rf"^\s*(?:[\w.]+\.)?{re.escape(key)}\s*=", text, re.M))


def test_the_audit_reaches_every_plugin_table() -> None:
    names = {table for table, _, _ in _tables()}
    assert {"server", "otel", "dbos", "mcp", "mcp_servers"} <= names
    assert {
        "providers:openai.options",
        "providers:anthropic.options",
        "session_stores:postgres.options",
        "hook_strategies:command.options",
    } <= names


def test_every_plugin_table_key_is_documented_on_a_page_naming_its_table() -> None:
    missing = []
    for table, marker, model in _tables():
        pages = [text for text in DOCS.values() if marker in text]
        assert pages, f"no page in docs/ names {table} ({marker})"
        missing += [
            path
            for path, key in config_keys(model, table)
            if not any(_documented(key, text) for text in pages)
        ]
    assert not missing, f"keys missing from docs/: {missing}"


def _source_text() -> str:
    files = [*(ROOT / "src").rglob("*.py"), *(ROOT / "plugins").glob("*/src/**/*.py")]
    return "\n".join(path.read_text(encoding="utf-8") for path in files)


def test_every_accepted_key_is_read_by_some_code() -> None:
    from agentrig.kernel import RuntimeConfig

    source = _source_text()
    tables: list[tuple[str, str, type[BaseModel]]] = [("", "", RuntimeConfig), *_tables()]
    unread = [
        path
        for table, _, model in tables
        for path, key in config_keys(model, table)
        if not re.search(rf"\.{key}\b|[\"']{key}[\"']", source)
    ]
    assert not unread, f"accepted config keys no code reads: {unread}"


# ---- what the audit found ------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_tool_entry_takes_no_options() -> None:
    """``[tools.<id>] options`` was accepted and never read (a tool is not built by a
    factory): it is an unknown key now."""
    config = {"tools": {"tool_search": {"options": {"max_results": 3}}}}
    with pytest.raises(ConfigError) as info:
        async with open_runtime(config, environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.location() == "tools.tool_search.options"
    assert issue.message == "unknown key 'options' (known keys: deferred, timeout)"


REPLY = {"text": "from the file"}


def _scripted(tmp_path: Path, content: object) -> dict[str, Any]:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(content), encoding="utf-8")
    return {
        "providers": {"p": {"kind": "scripted", "options": {"script_file": str(script)}}},
        "agents": {"a": {"provider": "p", "model": "m"}},
    }


@pytest.mark.anyio
@pytest.mark.parametrize("content", [[REPLY], {"script": [REPLY]}])
async def test_a_script_file_is_read(tmp_path: Path, content: object) -> None:
    async with open_runtime(_scripted(tmp_path, content), environ={}) as rt:
        result = await rt.agents.require(rt.agents.ids()[0]).run("hi")
    assert result.value == "from the file"


@pytest.mark.anyio
async def test_a_script_file_with_another_key_is_refused_not_read_as_empty(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as info:
        async with open_runtime(_scripted(tmp_path, {"scirpt": ["lost"]}), environ={}):
            pytest.fail("must not compose")
    (issue,) = info.value.issues
    assert issue.location() == "providers.p"
    assert "must hold a list of replies or {\"script\": [...]}, not dict with keys ['scirpt']" in (
        issue.message
    )
