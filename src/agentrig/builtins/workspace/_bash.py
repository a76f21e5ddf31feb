"""Bash: one shell command in the configured sandbox, bounded in time and output.

The command runs through the backend chosen in ``[workspace.sandbox]`` (never unconfined:
there is no "off"), in the workspace root, under the host's reaper.  Its timeout, the
tool's ``[tools.Bash] timeout`` and the run's cancellation all end the whole process tree;
the output (stdout and stderr interleaved) is kept up to ``output_limit`` bytes as it is
read, and the rest only counted.  A non-zero exit comes back to the model as an error result
with the output, so the turn goes on.
"""

from __future__ import annotations

import subprocess
from typing import Any

import anyio
import anyio.abc
from pydantic import BaseModel, ConfigDict, Field

from agentrig.builtins.workspace._base import WorkspaceTool, workspace_of
from agentrig.builtins.workspace._errors import SandboxError, SandboxUnavailableError
from agentrig.builtins.workspace._git import refuse_git_with_filters
from agentrig.builtins.workspace._sandbox import Backend, NativeBackend
from agentrig.builtins.workspace._sandbox_session import CommandResult, end_reaped
from agentrig.builtins.workspace._space import Workspace
from agentrig.errors import Issue
from agentrig.host import open_reaped
from agentrig.tools import PermissionArg, ToolContext, ToolOutput

__all__ = ["BashInput", "BashTool", "CommandResult", "run_confined"]

_CHUNK = 65536


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(description="The shell command to run (sh -c) in the workspace.")
    timeout: int | None = Field(
        default=None, ge=1, description="Milliseconds before the command is stopped."
    )
    description: str | None = Field(
        default=None, description="A few words saying what the command does (for people)."
    )


async def _drain(stream: anyio.abc.ByteReceiveStream, result: CommandResult, limit: int) -> None:
    while True:
        try:
            chunk = await stream.receive(_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        result.keep(chunk, limit)


async def run_confined(
    backend: Backend, command: str, space: Workspace, *, seconds: float, limit: int
) -> CommandResult:
    """Run ``command`` through ``backend`` in the workspace root; the tree ends with it.

    Cancellation (the run's, or a caller's deadline) ends the tree too and propagates.  A
    backend with persistent sandboxes (both, where an interpreter for their command server
    is at hand) runs it in one of them (see ``_sandbox_session``); otherwise it starts
    alone under the host's reaper.
    """
    if backend.pool is not None:
        return await backend.pool.run(command, seconds=seconds, limit=limit)
    confine = backend.confinement if isinstance(backend, NativeBackend) else None
    try:
        process = await open_reaped(
            backend.argv(command, space.root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=str(space.root),
            env=backend.env(),
            confine=confine,
        )
    except OSError as exc:
        raise SandboxError(f"the command could not start in the sandbox: {exc}") from None
    result = CommandResult()
    try:
        assert process.stdout is not None
        with anyio.move_on_after(seconds) as deadline:
            await _drain(process.stdout, result, limit)
            await process.wait()
        result.timed_out = deadline.cancelled_caught
    finally:
        await end_reaped(process)
    result.exit_code = process.returncode
    return result


class BashTool(WorkspaceTool[BashInput]):
    name = "Bash"
    summary = (
        "Run a shell command in the workspace, inside a sandbox. stdout and stderr come back "
        "together (cut when long); timeout is in milliseconds. Git is for inspection only."
    )
    model = BashInput
    risk = "execute"
    permission_arg = PermissionArg("command", "command")

    def check_offered(self, space: Workspace) -> list[Issue]:
        if space.config.sandbox is None:
            return [
                Issue(
                    "config.workspace_sandbox",
                    "the Bash tool is offered but no sandbox is configured: add "
                    "[workspace.sandbox] with backend = 'bubblewrap' or 'native'",
                    ("workspace", "sandbox"),
                )
            ]
        if space.backend is None:
            return [
                Issue(
                    "config.workspace_sandbox",
                    f"the {space.config.sandbox.backend} sandbox cannot run here: "
                    f"{space.backend_problem}",
                    ("workspace", "sandbox", "backend"),
                )
            ]
        return []

    async def execute(self, input: BashInput, ctx: ToolContext) -> Any:
        space = workspace_of(ctx)
        sandbox = space.config.sandbox
        if space.backend is None or sandbox is None:
            raise SandboxUnavailableError(
                f"Bash has no sandbox to run in: {space.backend_problem or 'none configured'}"
            )
        seconds = sandbox.default_timeout if input.timeout is None else input.timeout / 1000
        seconds = min(seconds, sandbox.max_timeout)
        refuse_git_with_filters(input.command, space.root)
        with ctx.signal.scope():
            result = await run_confined(
                space.backend, input.command, space, seconds=seconds, limit=sandbox.output_limit
            )
        ctx.signal.raise_if_cancelled()
        text = result.text()
        if result.timed_out:
            text += f"\n[stopped: the command ran past its {seconds:g}s timeout]"
            return ToolOutput(text.lstrip("\n"), is_error=True)
        code = result.exit_code
        if code:
            how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            return ToolOutput(f"{text}\n[{how}]".lstrip("\n"), is_error=True)
        return text or "[no output]"
