"""``python3 dev.py demo`` installs what the demo needs; ``test`` installs everything
(issue 37 point 7).

dev.py is loaded as a module and its installing steps are recorded instead of run: no pip,
no apt-get.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[ModuleType, list[list[str]]]:
    spec = importlib.util.spec_from_file_location("agentrig_dev_script", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look the module up
    spec.loader.exec_module(module)
    ran: list[list[str]] = []
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)

    def run(*cmd: object, env: dict[str, str] | None = None) -> None:
        ran.append([str(c) for c in cmd])

    monkeypatch.setattr(module, "_run", run)
    monkeypatch.setattr(module, "_python", lambda: python)
    # a machine missing a system package, as root with apt-get: what CI sees
    monkeypatch.setattr(module, "SYSTEM_NEEDS", (("a compiler", lambda: False, ("gcc",)),))
    monkeypatch.setattr(module.os, "geteuid", lambda: 0)
    monkeypatch.setattr(module.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(module.sys, "platform", "linux")
    return module, ran


def installs(ran: list[list[str]]) -> list[str]:
    """The ``-e`` arguments of the pip install commands ``ran``."""
    return [c[i + 1] for c in ran if "install" in c for i, a in enumerate(c) if a == "-e"]


def test_the_demo_installs_the_core_alone_and_no_system_package(
    dev: tuple[ModuleType, list[list[str]]],
) -> None:
    module, ran = dev
    chosen = module.plan("demo")
    assert chosen.requirements == (".",)
    assert chosen.system_needs == ()
    module.setup("demo")
    assert installs(ran) == ["."]
    assert not any(c[0] == "apt-get" for c in ran)


def test_the_tests_install_every_plugin_the_dev_extras_and_the_system_packages(
    dev: tuple[ModuleType, list[list[str]]],
) -> None:
    module, ran = dev
    plugins = sorted(f"plugins/{p.parent.name}" for p in ROOT.glob("plugins/*/pyproject.toml"))
    assert plugins  # the checkout has first-party plugins
    assert module.plan("test").requirements == (".[dev]", *plugins)
    module.setup("test")
    assert installs(ran) == [".[dev]", *plugins]
    assert ["apt-get", "install", "-y", "gcc"] in ran


def test_a_demo_environment_is_completed_for_the_tests_and_a_full_one_serves_the_demo(
    dev: tuple[ModuleType, list[list[str]]],
) -> None:
    module, ran = dev
    module.setup("demo")
    module.setup("demo")  # nothing changed: installed once
    assert installs(ran) == ["."]
    ran.clear()
    module.setup("test")  # the demo's environment lacks the plugins
    assert ".[dev]" in installs(ran)
    ran.clear()
    module.setup("demo")
    module.setup("test")
    assert installs(ran) == []


def test_an_unknown_command_prints_the_usage(
    dev: tuple[ModuleType, list[list[str]]], capsys: pytest.CaptureFixture[str]
) -> None:
    module, ran = dev
    with pytest.raises(SystemExit) as exited:
        module.main(["deploy"])
    assert exited.value.code == 2
    assert "dev.py demo" in capsys.readouterr().out
    assert ran == []


def test_the_tests_run_in_parallel_workers_and_extra_arguments_come_last(
    dev: tuple[ModuleType, list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, ran = dev
    monkeypatch.setattr(module.os, "cpu_count", lambda: 2)
    module.test(module._python(), ["-n", "0", "tests/kernel"])
    (pytest_run,) = [c for c in ran if c[1:3] == ["-m", "pytest"]]
    workers = ["-n", "4", "--dist", "worksteal"]  # two per core
    assert pytest_run[3:] == [*workers, "-n", "0", "tests/kernel"]  # the caller's -n wins
    # every example type-checks strictly, each in its own mypy run
    examples = [c for c in ran if c[1:4] == ["-m", "mypy", "--strict"] and "examples/" in c[4]]
    assert ["examples/quickstart/quickstart_tools.py", "examples/quickstart/run.py"] in [
        c[4:] for c in examples
    ]
    monkeypatch.setattr(module.os, "cpu_count", lambda: 64)
    assert module.worker_count() == 8
    monkeypatch.setattr(module.os, "cpu_count", lambda: None)
    assert module.worker_count() == 2
