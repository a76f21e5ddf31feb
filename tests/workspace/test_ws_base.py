"""A workspace tool class without its body fails when constructed, naming the method."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentrig.builtins.workspace._base import BlockingTool, WorkspaceTool
from agentrig.builtins.workspace._space import Workspace


class _In(BaseModel):
    path: str


class _NoRun(BlockingTool[_In]):
    name = "NoRun"
    summary = "forgot run"
    model = _In


class _NoExecute(WorkspaceTool[_In]):
    name = "NoExecute"
    summary = "forgot execute"
    model = _In


class _Complete(BlockingTool[_In]):
    name = "Complete"
    summary = "has run"
    model = _In

    def run(self, input: _In, space: Workspace) -> Any:
        return input.path


def test_blocking_tool_without_run_fails_at_construction() -> None:
    with pytest.raises(TypeError, match=r"_NoRun.*abstract method.*\brun\b"):
        _NoRun()  # type: ignore[abstract]  # mypy refuses it too; this is the runtime check


def test_workspace_tool_without_execute_fails_at_construction() -> None:
    with pytest.raises(TypeError, match=r"_NoExecute.*abstract method.*\bexecute\b"):
        _NoExecute()  # type: ignore[abstract]


def test_a_complete_tool_constructs() -> None:
    tool = _Complete()
    assert str(tool.id) == "Complete"
    assert tool.run(_In(path="p"), Workspace(root=Path("/"))) == "p"
