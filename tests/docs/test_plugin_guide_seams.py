"""The plugin guide's §9 samples run as written: a composition step, a service, a command."""

from __future__ import annotations

import datetime
import re
import sys
from pathlib import Path
from typing import Any

import pytest

GUIDE = Path(__file__).parents[2] / "docs" / "plugin-guide.md"
SECTION = "## 9. Adding to the runtime"
TRACING = "## 10. Tracing"
RUN_QUEUE = "## 11. Queued runs"


PERSISTED = "## 12. Persisted data"


def _samples(start: str = SECTION, end: str | None = TRACING) -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index(start) : text.index(end) if end else None]
    return re.findall(r"```python[^\n]*\n(.*?)```", section, flags=re.DOTALL)


def test_the_section_has_the_plugin_its_use_and_a_config_table() -> None:
    assert len(_samples()) == 3


def test_the_plugin_composes_a_toolset_and_a_service(capsys: pytest.CaptureFixture[str]) -> None:
    plugin_source, use, _table = _samples()
    namespace: dict[str, object] = {"__name__": "guide_sample"}
    exec(compile(plugin_source + use, str(GUIDE), "exec"), namespace)
    assert capsys.readouterr().out == "True hi\n"


def test_the_plugin_adds_a_command_when_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin_source, _use, _table = _samples()
    info = tmp_path / "agentrig_clock-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentrig-clock\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[agentrig.plugins]\nclock = agentrig_clock:plugin\n", encoding="utf-8"
    )
    (tmp_path / "agentrig_clock.py").write_text(plugin_source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("AGENTRIG_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("AGENTRIG_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    from agentrig.cli import main

    try:
        assert main(["--help"]) == 0
        assert re.search(r"now\s+print the current time", capsys.readouterr().out)
        assert main(["now", "--date"]) == 0
        printed = capsys.readouterr().out.strip()
        today = datetime.datetime.now(datetime.UTC).date()
        assert printed in {today.isoformat(), (today - datetime.timedelta(days=1)).isoformat()}
    finally:
        sys.modules.pop("agentrig_clock", None)


@pytest.mark.anyio
async def test_the_config_table_sample_reads_its_table() -> None:
    from agentrig.kernel import (
        Composition,
        MemorySource,
        builtin_source,
        compose_step,
        open_runtime,
    )

    plugin_source, _use, table = _samples()
    namespace: dict[str, Any] = {"__name__": "guide_table_sample"}
    exec(compile(plugin_source + table, str(GUIDE), "exec"), namespace)
    zones: list[str] = []

    class Reader:
        @compose_step()
        def compose(self, payload: Composition) -> None:
            zones.append(namespace["zone_of"](payload))

    entries = MemorySource()
    entries.add("config_sections", "clock", namespace["ClockSettings"])
    entries.add("plugins", "reader", Reader())
    sources = [builtin_source()]
    async with open_runtime({"clock": {"zone": "Europe/Paris"}}, sources=sources, memory=entries):
        pass
    async with open_runtime({}, sources=sources, memory=entries):
        pass
    assert zones == ["Europe/Paris", "UTC"]


def test_the_tracing_sample_sees_the_loops_scopes_and_event_ids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (sample,) = _samples(TRACING, RUN_QUEUE)
    namespace: dict[str, object] = {"__name__": "guide_tracing_sample"}
    exec(compile(sample, str(GUIDE), "exec"), namespace)
    printed = capsys.readouterr().out.strip()
    assert printed == (
        "['turn assistant', 'model_call m', '/model_call', '/turn'] turn/end b7ad6b7169203331"
    )
    assert printed in GUIDE.read_text(encoding="utf-8")


def test_the_run_queue_sample_hands_the_run_to_the_plugin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sample, _children, _aside = _samples(RUN_QUEUE, PERSISTED)
    exec(compile(sample, str(GUIDE), "exec"), {"__name__": "guide_queue"})
    assert capsys.readouterr().out == "run-1 [('assistant', 'summarise the report')]\n"


def test_the_child_runs_sample_sees_each_delegation_with_its_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _queue, sample, _aside = _samples(RUN_QUEUE, PERSISTED)
    exec(compile(sample, str(GUIDE), "exec"), {"__name__": "guide_children"})
    printed = capsys.readouterr().out
    assert printed == "Reviewed. [('reviewer', 'c1')]\n"
    assert printed.strip() in GUIDE.read_text(encoding="utf-8")


def test_the_side_call_sample_counts_the_call_in_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _queue, _children, sample = _samples(RUN_QUEUE, PERSISTED)
    exec(compile(sample, str(GUIDE), "exec"), {"__name__": "guide_aside"})
    printed = capsys.readouterr().out
    assert printed == "20 16 48\n"
    assert f"prints `{printed.strip()}`" in GUIDE.read_text(encoding="utf-8")


def test_the_schema_sample_migrates_and_refuses_newer_data(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (sample,) = _samples(PERSISTED, None)
    exec(compile(sample, str(GUIDE), "exec"), {"__name__": "guide_schemas"})
    printed = capsys.readouterr().out
    assert printed == (
        "{'url': 'https://example.org', 'tags': []}\npersisted.too_new acme.bookmark 3 2\n"
    )
