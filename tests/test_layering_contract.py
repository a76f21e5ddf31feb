"""The layering contract of DESIGN §3 as ``pyproject.toml`` states it for ``lint-imports``.

``lint-imports`` runs in the test command and fails on an import that points upward; these
tests keep the contract itself from being loosened quietly (issue 27 point 4): imports made
only for type checking are checked like any other, and the kernel gains no exception.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

# the Runtime's typed accessors name the agent and llm layers' classes (known debt, issue 27)
KERNEL_DEBT = {
    "agentrig.kernel._runtime -> agentrig.agent",
    "agentrig.kernel._runtime -> agentrig.llm",
}


def _importlinter() -> dict[str, Any]:
    config: dict[str, Any] = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    return config


def _layers_contract() -> dict[str, Any]:
    contracts = [c for c in _importlinter()["contracts"] if c["type"] == "layers"]
    assert len(contracts) == 1
    return contracts[0]


def test_imports_made_for_type_checking_are_checked() -> None:
    assert _importlinter()["exclude_type_checking_imports"] is False


def test_the_kernel_has_no_exception_beyond_the_known_debt() -> None:
    ignored = set(_layers_contract().get("ignore_imports", []))
    assert {i for i in ignored if i.startswith("agentrig.kernel")} <= KERNEL_DEBT


def test_the_lifecycle_hooks_sit_directly_above_the_kernel() -> None:
    layers = [{name.strip() for name in layer.split("|")} for layer in _layers_contract()["layers"]]
    # the tracing contract shares the lifecycle's level: both are contracts of the layers
    # above, neither may import the other
    lifecycle = next(i for i, names in enumerate(layers) if "lifecycle" in names)
    assert layers[lifecycle] == {"lifecycle", "tracing"}
    assert layers[lifecycle + 1] == {"kernel"}
