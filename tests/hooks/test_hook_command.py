"""The ``command`` hook strategy against real subprocess hooks (shell and Python scripts)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentrig.builtins._hook_command import CommandHook, CommandOptions, factory
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError
from agentrig.hooks import Allow, Deny, HookErrorOutcome, HookEvent, HookStrategy

pytestmark = [pytest.mark.subprocess]

EVENT = HookEvent.pre_tool_use(
    "Bash", {"command": "rm -rf /tmp/x"}, session_id="sess-1", cwd="/work", tool_use_id="c1"
)


def hook(command: str | list[str], **options: Any) -> CommandHook:
    return factory({"options": {"command": command, **options}})


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    path.chmod(0o755)
    return path


def python_hook(tmp_path: Path, name: str, body: str, **options: Any) -> CommandHook:
    path = script(tmp_path, name, body)
    return hook([sys.executable, str(path)], **options)


async def run(strategy: CommandHook, event: HookEvent = EVENT) -> Any:
    return await strategy.run(event, signal=CancelSignal())


def gone(pid: int) -> bool:
    """The process no longer runs: reaped, or a killed zombie awaiting its reaper.

    (Some container inits never reap orphans, so a killed grandchild can stay a zombie.)
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def wait_gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        await anyio.sleep(0.05)
    return gone(pid)


def has_text(path: Path) -> bool:
    return path.exists() and bool(path.read_text().strip())


def same_dir(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


async def wait_for_file(path: Path, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if has_text(path):
            return
        await anyio.sleep(0.02)


def test_the_strategy_implements_the_port() -> None:
    assert isinstance(hook("true"), HookStrategy)
    assert factory.options_model is CommandOptions  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "options",
    [
        {"command": ""},
        {"command": []},
        {"command": "true", "timeout": 0},
        {"command": "true", "timeout": float("inf")},
        {"command": "true", "max_output_bytes": 0},
        {"command": "true", "shell": True},
    ],
)
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - pydantic's ValidationError is a ValueError
        factory({"options": options})


# ---- exit codes ------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_exit_0_allows_and_carries_stdout_and_gets_the_json_input(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    strategy = python_hook(
        tmp_path,
        "allow.py",
        f"""
        import json, sys
        data = json.load(sys.stdin)
        open({str(seen)!r}, "w").write(json.dumps(data))
        print("looked at", data["tool_input"]["command"])
        """,
    )
    outcome = await run(strategy)
    assert outcome == Allow("looked at rm -rf /tmp/x\n", None, steering=True)
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "PreToolUse"
    assert data["session_id"] == "sess-1"
    assert data["cwd"] == "/work"
    assert data["tool_name"] == "Bash"
    assert data["tool_input"] == {"command": "rm -rf /tmp/x"}
    assert data["tool_use_id"] == "c1"
    assert "transcript_path" in data


@pytest.mark.anyio
async def test_exit_2_denies_with_stderr_as_the_reason(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        "deny.sh",
        """
        #!/bin/sh
        echo '{"ignored": "stdout on exit 2"}'
        echo "rm -rf is not allowed here" >&2
        exit 2
        """,
    )
    assert await run(hook(str(path))) == Deny("rm -rf is not allowed here")


@pytest.mark.anyio
async def test_exit_2_without_stderr_still_names_a_reason() -> None:
    outcome = await run(hook("exit 2"))
    assert isinstance(outcome, Deny)
    assert "status 2" in outcome.reason


@pytest.mark.anyio
@pytest.mark.parametrize("code", [1, 3, 127, 255])
async def test_any_other_exit_code_is_an_error_never_a_verdict(code: int) -> None:
    outcome = await run(hook(f"echo oops >&2; exit {code}"))
    assert isinstance(outcome, HookErrorOutcome)
    assert outcome.reason.startswith(f"exited with status {code}")
    assert "oops" in outcome.reason


@pytest.mark.anyio
async def test_a_hook_killed_by_a_signal_is_an_error_naming_it(tmp_path: Path) -> None:
    strategy = python_hook(
        tmp_path, "suicide.py", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    )
    assert await run(strategy) == HookErrorOutcome("killed by signal SIGKILL")
    assert await run(hook("kill -TERM $$")) == HookErrorOutcome("killed by signal SIGTERM")


@pytest.mark.anyio
async def test_silent_hook_allows() -> None:
    assert await run(hook("true")) == Allow("", None, steering=True)


@pytest.mark.anyio
async def test_a_hook_that_never_reads_stdin_is_decided_by_its_exit_code(tmp_path: Path) -> None:
    big = HookEvent.pre_tool_use("Write", {"content": "x" * 4_000_000}, session_id="s")
    assert await run(hook("echo fine"), big) == Allow("fine\n", None, steering=True)
    denied = await run(hook("echo no >&2; exit 2"), big)
    assert denied == Deny("no")


@pytest.mark.anyio
async def test_failure_to_start_is_an_error(tmp_path: Path) -> None:
    missing = await run(hook([str(tmp_path / "nope")]))
    assert isinstance(missing, HookErrorOutcome)
    assert missing.reason.startswith("failed to start:")
    not_executable = tmp_path / "plain.sh"
    not_executable.write_text("#!/bin/sh\nexit 0\n")
    not_executable.chmod(0o644)
    denied = await run(hook([str(not_executable)]))
    assert isinstance(denied, HookErrorOutcome)
    assert denied.reason.startswith("failed to start:")
    bad_cwd = await run(hook("true", cwd=str(tmp_path / "no-such-dir")))
    assert isinstance(bad_cwd, HookErrorOutcome)
    assert bad_cwd.reason.startswith("failed to start:")


@pytest.mark.anyio
async def test_a_shell_command_that_is_not_found_names_it() -> None:
    outcome = await run(hook("definitely-not-a-command-xyz"))
    assert isinstance(outcome, HookErrorOutcome)
    assert outcome.reason.startswith("exited with status 127 (command not found)")


# ---- timeouts, groups, cancellation ----------------------------------------------------------
@pytest.mark.anyio
async def test_a_hung_hook_times_out_and_its_whole_group_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    finished = tmp_path / "finished"
    path = script(
        tmp_path,
        "hang.sh",
        f"""
        #!/bin/sh
        sleep 100 &
        echo $! > {pidfile}
        sleep 100
        touch {finished}
        """,
    )
    outcome = await run(hook(str(path), timeout=0.5))
    assert outcome == HookErrorOutcome("timed out after 0.5s")
    assert not finished.exists()  # the verdict did not wait for the script to end
    grandchild = int(pidfile.read_text())
    assert await wait_gone(grandchild), f"grandchild {grandchild} survived the timeout"


@pytest.mark.anyio
async def test_the_run_signal_kills_the_group_and_raises_the_abort(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    finished = tmp_path / "finished"
    strategy = hook(f"sleep 100 & echo $! > {pidfile}; sleep 100; touch {finished}", timeout=30)
    signal = CancelSignal()

    async def cancel_soon() -> None:
        await wait_for_file(pidfile)
        signal.cancel("user pressed stop")

    async with anyio.create_task_group() as tg:
        tg.start_soon(cancel_soon)
        with pytest.raises(AbortError) as caught:
            await strategy.run(EVENT, signal=signal)
    assert caught.value.reason == "user pressed stop"
    assert not finished.exists()  # the abort did not wait for the script to end
    assert await wait_gone(int(pidfile.read_text()))


@pytest.mark.anyio
async def test_an_already_cancelled_signal_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    signal = CancelSignal()
    signal.cancel("early")
    with pytest.raises(AbortError):
        await hook(f"touch {marker}").run(EVENT, signal=signal)
    assert not marker.exists()


@pytest.mark.anyio
async def test_outer_cancellation_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "leader.pid"
    strategy = hook(f"echo $$ > {pidfile}; sleep 100", timeout=30)
    with anyio.move_on_after(0.5):
        await strategy.run(EVENT, signal=CancelSignal())
    assert await wait_gone(int(pidfile.read_text()))


@pytest.mark.anyio
async def test_a_descendant_holding_the_pipes_does_not_hold_the_verdict(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    finished = tmp_path / "bg-finished"
    command = f"(sleep 100; touch {finished}) & echo $! > {pidfile}; echo done"
    outcome = await run(hook(command, timeout=30))
    assert outcome == Allow("done\n", None, steering=True)
    assert not finished.exists()  # the verdict did not wait for the descendant
    assert await wait_gone(int(pidfile.read_text()))


# ---- bounded output --------------------------------------------------------------------------
@pytest.mark.anyio
async def test_output_beyond_the_bound_is_an_error(tmp_path: Path) -> None:
    outcome = await run(hook("head -c 5000 /dev/zero", max_output_bytes=1000))
    assert outcome == HookErrorOutcome("output exceeded 1000 bytes")
    stderr_flood = await run(hook("head -c 5000 /dev/zero >&2", max_output_bytes=1000))
    assert stderr_flood == HookErrorOutcome("output exceeded 1000 bytes")


@pytest.mark.anyio
async def test_a_50_mb_hook_is_cut_off_while_reading(tmp_path: Path) -> None:
    finished = tmp_path / "finished"
    strategy = python_hook(
        tmp_path,
        "flood.py",
        f"""
        import sys
        block = b"x" * (1024 * 1024)
        for _ in range(50):
            sys.stdout.buffer.write(block)
        sys.stdout.flush()
        open({str(finished)!r}, "w").write("wrote everything")
        """,
    )
    outcome = await run(strategy)
    assert outcome == HookErrorOutcome("output exceeded 1048576 bytes")
    await anyio.sleep(0.2)
    # the hook was killed mid-write: it never got to write 50 MB into an unread pipe
    assert not finished.exists()


@pytest.mark.anyio
async def test_binary_garbage_on_stdout_is_an_error() -> None:
    outcome = await run(hook("printf '\\377\\376garbage'"))
    assert isinstance(outcome, HookErrorOutcome)
    assert "not valid UTF-8" in outcome.reason


@pytest.mark.anyio
async def test_json_looking_garbage_is_an_error_plain_text_is_not() -> None:
    broken = await run(hook("echo '{\"hookSpecificOutput\": {'"))
    assert isinstance(broken, HookErrorOutcome)
    assert broken.reason.startswith("undecodable answer")
    plain = await run(hook("echo 'all good, carry on'"))
    assert plain == Allow("all good, carry on\n", None, steering=True)


@pytest.mark.anyio
async def test_a_block_after_a_byte_order_mark_is_still_a_block() -> None:
    # a script saved by an editor that writes a BOM (EF BB BF), then a newline and the answer
    bom = "\\357\\273\\277"
    outcome = await run(hook(f"""printf '{bom}\\n  {{"decision": "block", "reason": "no"}}\\n'"""))
    assert isinstance(outcome, Deny)
    assert outcome.reason == "no"
    broken = await run(hook(f"""printf '{bom}{{"decision": "block"'"""))
    assert isinstance(broken, HookErrorOutcome)
    assert broken.reason.startswith("undecodable answer: stdout is not valid JSON")


# ---- Claude Code JSON answers ----------------------------------------------------------------
def answer(body: dict[str, Any]) -> str:
    return f"echo '{json.dumps(body)}'"


@pytest.mark.anyio
@pytest.mark.parametrize("permission", ["allow", "ask", "defer"])
async def test_permission_decisions_are_decoded(permission: str) -> None:
    body = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": permission,
            "permissionDecisionReason": f"because {permission}",
        }
    }
    outcome = await run(hook(answer(body)))
    assert isinstance(outcome, Allow)
    assert outcome.steering
    assert outcome.decision is not None
    assert outcome.decision.permission == permission
    assert outcome.decision.permission_reason == f"because {permission}"


@pytest.mark.anyio
async def test_permission_deny_in_json_is_a_deny() -> None:
    body = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "policy says no",
        }
    }
    outcome = await run(hook(answer(body)))
    assert isinstance(outcome, Deny)
    assert outcome.reason == "policy says no"


@pytest.mark.anyio
async def test_updated_input_is_decoded(tmp_path: Path) -> None:
    strategy = python_hook(
        tmp_path,
        "rewrite.py",
        """
        import json, sys
        data = json.load(sys.stdin)
        command = data["tool_input"]["command"].replace("rm -rf", "rm -ri")
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": command},
        }}))
        """,
    )
    outcome = await run(strategy)
    assert isinstance(outcome, Allow)
    assert outcome.decision is not None
    assert outcome.decision.updated_input == {"command": "rm -ri /tmp/x"}


@pytest.mark.anyio
async def test_decision_block_is_a_deny_even_beside_an_undecodable_field() -> None:
    plain = await run(hook(answer({"decision": "block", "reason": "not on my watch"})))
    assert isinstance(plain, Deny)
    assert plain.reason == "not on my watch"
    assert plain.decision is not None
    assert plain.decision.block
    body = {
        "decision": "block",
        "reason": "stated outright",
        "continue": "yes please",
        "hookSpecificOutput": {"permissionDecision": "maybe"},
    }
    outcome = await run(hook(answer(body)))
    assert isinstance(outcome, Deny)
    assert outcome.reason == "stated outright"


@pytest.mark.anyio
async def test_an_undecodable_verdict_without_a_block_is_an_error() -> None:
    body = {"hookSpecificOutput": {"permissionDecision": "yes"}}
    outcome = await run(hook(answer(body)))
    assert isinstance(outcome, HookErrorOutcome)
    assert "permissionDecision" in outcome.reason


# ---- environment and working directory --------------------------------------------------------
@pytest.mark.anyio
async def test_env_cwd_and_traceparent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACESTATE", "ambient=1")
    (tmp_path / "sub").mkdir()
    event = HookEvent(
        "PostToolUse",
        {"session_id": "s", "cwd": "/proj", "tool_name": "Bash", "tool_response": "ok"},
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    )
    seen = tmp_path / "seen.txt"
    command = (
        f'cat > {seen}.stdin; printf "%s|%s|%s|%s|%s" "$PWD" "$MINE" "$TRACEPARENT" '
        f'"${{TRACESTATE-unset}}" "$CLAUDE_PROJECT_DIR" > {seen}'
    )
    strategy = factory(
        {"options": {"command": command, "cwd": "sub", "env": {"MINE": "1"}}, "base_dir": tmp_path}
    )
    assert isinstance(await run(strategy, event), Allow)
    pwd, mine, traceparent, tracestate, project = seen.read_text().split("|")
    assert same_dir(pwd, tmp_path / "sub")
    assert mine == "1"
    assert traceparent == event.traceparent
    assert tracestate == "unset"
    assert project == "/proj"
    assert "traceparent" not in (tmp_path / "seen.txt.stdin").read_text().lower()
    # the hook's own configuration wins over the run's traceparent
    own = factory({"options": {"command": 'printf %s "$TRACEPARENT"', "env": {"TRACEPARENT": "x"}}})
    assert await run(own, event) == Allow("x", None, steering=True)
