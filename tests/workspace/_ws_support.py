"""Helpers of the workspace toolset's tests: a tool called directly, as the loop would."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentrig.builtins.workspace import WORKSPACE, Workspace, WorkspaceConfig
from agentrig.cancel import CancelSignal
from agentrig.kernel import Services
from agentrig.tools import Tool, ToolContext, check_input


def context(space: Workspace, tool: Tool, signal: CancelSignal | None = None) -> ToolContext:
    services = Services()
    services.provide(WORKSPACE, space)
    return ToolContext(
        signal=signal or CancelSignal(),
        tool_id=tool.id,
        call_id="call_1",
        invocation_id="inv_1",
        services=services,
    )


async def call(
    tool: Tool,
    arguments: Mapping[str, Any],
    root: Path,
    config: WorkspaceConfig | None = None,
    signal: CancelSignal | None = None,
) -> Any:
    """Validate ``arguments`` like the loop does, then run ``tool`` in a workspace at ``root``."""
    space = Workspace(root=root, config=config or WorkspaceConfig())
    checked = check_input(tool, arguments)
    assert checked.passed, checked.issues
    return await tool.execute(checked.value, context(space, tool, signal))


def sandboxed(root: Path, **sandbox: Any) -> Workspace:
    """A workspace at ``root`` whose Bash runs in the sandbox ``sandbox`` describes."""
    from agentrig.builtins.workspace import SandboxConfig, backend_for

    settings = SandboxConfig.model_validate(sandbox)
    config = WorkspaceConfig(sandbox=settings)
    return Workspace(root=root, config=config, backend=backend_for(settings, root))


async def bash(
    space: Workspace,
    command: str,
    timeout_ms: int | None = None,
    signal: CancelSignal | None = None,
) -> Any:
    """Run ``command`` through the Bash tool in ``space``."""
    from agentrig.builtins.workspace import BASH

    arguments: dict[str, Any] = {"command": command}
    if timeout_ms is not None:
        arguments["timeout"] = timeout_ms
    checked = check_input(BASH, arguments)
    assert checked.passed, checked.issues
    return await BASH.execute(checked.value, context(space, BASH, signal))


def _live_processes() -> list[tuple[int, bytes]]:
    """``(pid, command line)`` of every live (not zombie) process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            found.append((int(entry.name), cmdline))
    return found


def processes_naming(root: Path) -> list[int]:
    """Live processes whose command line names ``root``: its sandboxes or command servers."""
    return [pid for pid, cmdline in _live_processes() if str(root).encode() in cmdline]


def processes_with_argument(argument: str) -> list[int]:
    """Live processes with ``argument`` as one of their command-line arguments."""
    wanted = argument.encode()
    return [pid for pid, cmdline in _live_processes() if wanted in cmdline.split(b"\0")]
