"""The third-party path end to end: pip-install examples/third-party-plugin and use it.

This is exactly what an outside author does: a separate distribution declaring entry points,
installed with pip, then discovered, listed, used and disabled -- nothing imported directly
from its source tree.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _pip_target import installed_into

from agentrig.cli import plugin_report
from agentrig.errors import ConfigError
from agentrig.ids import ToolId
from agentrig.kernel import DISABLE_PLUGINS_ENV, PluginIndex, open_runtime, register_variants
from agentrig.plugin import TOOLS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third-party-plugin"
DIST = "agentrig-example-greeter"
AGENTRIG = Path(sys.executable).parent / ("agentrig.exe" if os.name == "nt" else "agentrig")


#: The environment of the CLI subprocesses while the example is installed (its PYTHONPATH).
ENVIRON: dict[str, str] = {}


@pytest.fixture(scope="module")
def greeter_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """pip-install the example (into a directory of this run only, see ``_pip_target``)."""
    target = tmp_path_factory.mktemp("site")
    with installed_into(target, EXAMPLE, modules=("agentrig_example_greeter",)) as environ:
        ENVIRON.update(environ)
        try:
            yield
        finally:
            ENVIRON.clear()


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTRIG), *args],
        capture_output=True,
        text=True,
        env={**ENVIRON, **(env or {})},
        timeout=120,
    )


def greeter_rows(output: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(output)
    return {row["id"]: row for row in rows if row["distribution"] == DIST}


def test_discovered_and_listed_by_the_cli(greeter_installed: None) -> None:
    result = cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = greeter_rows(result.stdout)
    assert {(r["kind"], r["id"]) for r in rows.values()} == {
        ("plugins", "greeter"),
        ("tools", "greet"),
        ("variants", "greeting"),
    }
    for row in rows.values():
        assert row["version"] == "0.1.0"
        assert row["status"] == "loaded", row
        assert row["error"] is None
    table = cli("plugins")
    assert table.returncode == 0
    assert "greeter" in table.stdout
    assert DIST in table.stdout


def test_listed_without_importing(greeter_installed: None) -> None:
    index = PluginIndex()
    assert {e.name for e in index.entries() if e.distribution == DIST} == {
        "greeter",
        "greet",
        "greeting",
    }
    assert "agentrig_example_greeter" not in sys.modules


@pytest.mark.anyio
async def test_used_by_a_composition(greeter_installed: None) -> None:
    from agentrig.cancel import CancelSignal
    from agentrig.tools import ToolContext

    async with open_runtime({"tools": {"greet": {}}}, environ={}) as rt:
        listener = importlib.import_module("agentrig_example_greeter.listener")
        assert listener.SEEN["runtime_started"] >= 1  # autoloaded and notified
        before = listener.SEEN["runtime_started"]
        greet = rt.catalog(TOOLS).require(ToolId("greet"))
        arguments = greet.input_schema.parse({"name": "Ada", "excited": True})
        ctx = ToolContext(signal=CancelSignal(), tool_id="greet", call_id="", invocation_id="i")
        assert await greet.execute(arguments, ctx) == "Hello, Ada!"
        statuses = {(r.kind, r.id): r.status for r in plugin_report(rt.index)}
        assert statuses[("plugins", "greeter")] == "loaded"
        assert statuses[("tools", "greet")] == "loaded"
    async with open_runtime({}, environ={}):
        assert listener.SEEN["runtime_started"] == before + 1


def test_variant_joins_its_family(greeter_installed: None) -> None:
    from agentrig.llm import STREAM_CHUNKS, StreamChunk
    from agentrig.variants import VariantRegistry

    record = {"type": "greeting", "text": "hi"}
    # a host that merges the agentrig.variants entry points parses the plugin's chunk ...
    family: VariantRegistry[StreamChunk] = VariantRegistry(StreamChunk, loader=register_variants)
    family.register_all([STREAM_CHUNKS.member(t) for t in STREAM_CHUNKS.tags()])  # type: ignore[misc]
    chunk = family.parse(record)
    assert type(chunk).__name__ == "GreetingChunk"
    assert type(chunk).__module__ == "agentrig_example_greeter.chunks"
    assert family.dump(chunk) == record
    # ... and a host without it keeps the record opaque and writes it back unchanged
    bare: VariantRegistry[StreamChunk] = VariantRegistry(StreamChunk)
    opaque = bare.parse(record)
    assert opaque.is_unknown
    assert bare.dump(opaque) == record


@pytest.mark.anyio
async def test_disabled_by_config(greeter_installed: None, tmp_path: Path) -> None:
    listener = importlib.import_module("agentrig_example_greeter.listener")
    before = listener.SEEN["runtime_started"]
    async with open_runtime({"plugins": {"disabled": ["greeter"]}}, environ={}) as rt:
        statuses = {(r.kind, r.id): r.status for r in plugin_report(rt.index)}
        assert statuses[("plugins", "greeter")] == "disabled"
    assert listener.SEEN["runtime_started"] == before
    with pytest.raises(ConfigError) as info:
        async with open_runtime(
            {"plugins": {"disabled": ["tools:greet"]}, "tools": {"greet": {}}}, environ={}
        ):
            pytest.fail("must not compose")
    assert info.value.issues[0].path == ("tools", "greet")
    assert info.value.issues[0].code == "config.plugin_disabled"
    # the CLI sees the same switch in a config file
    config = tmp_path / "agentrig.toml"
    config.write_text('[plugins]\ndisabled = ["greeter"]\n[tools.greet]\n', encoding="utf-8")
    rows = greeter_rows(cli("plugins", "--json", "--config", str(config)).stdout)
    assert rows["greeter"]["status"] == "disabled"
    assert rows["greet"]["status"] == "loaded"
    assert cli("config", "check", str(config)).returncode == 0
    config.write_text('[plugins]\ndisabled = ["greet"]\n[tools.greet]\n', encoding="utf-8")
    checked = cli("config", "check", str(config))
    assert checked.returncode == 1
    assert f"{config}: tools.greet: " in checked.stdout


@pytest.mark.anyio
async def test_disabled_by_environment(greeter_installed: None) -> None:
    result = cli("plugins", "--json", env={DISABLE_PLUGINS_ENV: "greeter,variants:greeting"})
    rows = greeter_rows(result.stdout)
    assert rows["greeter"]["status"] == "disabled"
    assert rows["greeting"]["status"] == "disabled"
    assert rows["greet"]["status"] == "loaded"
    listener = importlib.import_module("agentrig_example_greeter.listener")
    before = listener.SEEN["runtime_started"]
    async with open_runtime({}, environ={DISABLE_PLUGINS_ENV: "greeter"}):
        pass
    assert listener.SEEN["runtime_started"] == before
