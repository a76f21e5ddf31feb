"""agentrig-otel uses OpenTelemetry's public API and SDK only, within a pinned range tested at
both ends.

* no OpenTelemetry private name: no import of a private module or name, no private member
  reached by name, and every ``._name`` the plugin reads or writes is one of its own objects'
  (``self._x``);
* the plugin's metadata pins opentelemetry-api / -sdk / the exporters with a lower and an
  upper bound; the suite runs on the highest release the range allows (what the development
  environment resolves), and one slow test runs the otel tests again on the lowest.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "agentrig-otel"
SOURCES = sorted((PLUGIN / "src" / "agentrig_otel").glob("*.py"))
#: the otel test files run again on the lowest supported SDK
OTEL_TESTS = ["tests/plugins/test_otel.py", "tests/plugins/test_otel_context.py",
              "tests/plugins/test_otel_config.py", "tests/plugins/test_otel_drops.py",
              "tests/plugins/test_otel_conventions.py",
              "tests/plugins/test_otel_sampler.py"]  # fmt: skip


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_the_plugin_reads_no_private_opentelemetry_name() -> None:
    trees = [ast.parse(path.read_text(), str(path)) for path in SOURCES]
    found: list[str] = []
    for path, tree in zip(SOURCES, trees, strict=True):
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("opentelemetry"):
                    if any(_private(part) for part in node.module.split(".")):
                        found.append(f"{where} imports from {node.module}")
                    found += [f"{where} imports {a.name}" for a in node.names if _private(a.name)]
            elif isinstance(node, ast.Import):
                found += [
                    f"{where} imports {a.name}"
                    for a in node.names
                    if a.name.startswith("opentelemetry")
                    and any(_private(p) for p in a.name.split("."))
                ]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                # the plugin's own objects only: a private member of anything else is not its
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    found.append(f"{where} reaches .{node.attr} of {ast.unparse(owner)}")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                "getattr",
                "setattr",
                "hasattr",
            ):
                named = node.args[1] if len(node.args) > 1 else None
                value = named.value if isinstance(named, ast.Constant) else None
                if isinstance(value, str) and _private(value):
                    found.append(f"{where} reaches {value!r} by name")
    assert found == []


def test_the_grep_of_the_issue_finds_only_the_plugins_own_names() -> None:
    """``grep -nE "\\._[a-z]"`` over the plugin: every hit is ``self.``/``cls.`` or an
    ``agentrig_otel._module`` import -- never an OpenTelemetry object's member."""
    pattern = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\._[a-z]")
    for path in SOURCES:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in pattern.finditer(line):
                owner = match.group(1)
                assert owner in ("self", "cls", "agentrig_otel"), f"{path.name}:{number}: {line}"


def _bounds(requirement: str) -> tuple[str, str]:
    """``(lowest, upper)`` of a requirement like ``name>=1.30,<1.46``."""
    low = re.search(r">=\s*([0-9.]+)", requirement)
    high = re.search(r"<\s*([0-9.]+)", requirement)
    assert low, f"{requirement!r} needs a lower bound"
    assert high, f"{requirement!r} needs an upper bound"
    return low.group(1), high.group(1)


def _pins() -> dict[str, str]:
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["grpc"]]
    return {
        re.split(r"[<>=\[ ]", r, maxsplit=1)[0]: r
        for r in requirements
        if r.startswith("opentelemetry-")
    }


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(".")[:3])


def test_the_supported_sdk_range_is_pinned_and_the_suite_runs_its_top() -> None:
    pins = _pins()
    assert set(pins) >= {"opentelemetry-api", "opentelemetry-sdk"}
    ranges = {name: _bounds(requirement) for name, requirement in pins.items()}
    assert len(set(ranges.values())) == 1, f"one range for every OpenTelemetry package: {pins}"
    low, high = ranges["opentelemetry-sdk"]
    installed = _version(metadata.version("opentelemetry-sdk"))
    assert _version(low) <= installed < _version(high)
    # the top of the range is the release this environment resolves: the minor just below
    # the upper bound (a new minor release is supported once the bound moves with a test run)
    top = _version(high)
    assert installed[:2] == (top[0], top[1] - 1), (
        f"the suite runs {metadata.version('opentelemetry-sdk')}; the range's top is below {high}"
    )


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.subprocess
def test_the_otel_tests_pass_on_the_lowest_supported_sdk() -> None:
    low, _ = _bounds(_pins()["opentelemetry-sdk"])
    target = Path(sys.prefix) / f"agentrig-otel-lowest-sdk-{low}"
    done = target / ".installed"
    if not done.exists():
        subprocess.run(
            [
                sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--target", str(target),
                f"opentelemetry-api=={low}", f"opentelemetry-sdk=={low}",
                f"opentelemetry-exporter-otlp-proto-http=={low}",
            ],
            check=True,
        )  # fmt: skip
        done.write_text(low)
    env = {**os.environ, "PYTHONPATH": str(target)}
    show = "from opentelemetry.sdk.version import __version__; print(__version__)"
    shown = subprocess.run(
        [sys.executable, "-c", show], env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == low
    tests = [t for t in OTEL_TESTS if (ROOT / t).exists()]
    # without typeguard's instrumentation of agentrig: OpenTelemetry's API 1.30 imports the
    # importlib_metadata backport, whose finder then hands agentrig the backport's
    # distributions and entry points -- the same interface, another class than the
    # annotations name (agentrig's own checks are the rest of the suite's business)
    plain = ["-p", "no:typeguard", "-o", "addopts=-ra --strict-markers", "-p", "no:cacheprovider"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plain, "-m", "not slow", *tests],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
