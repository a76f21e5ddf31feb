"""HookRunner (config -> strategies -> combined outcome) and the PreToolUse gate end to end."""

from __future__ import annotations

import http.server
import os
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from agentrig.agent import AgentRegistry, GateDecision
from agentrig.builtins import _hook_command as hook_command
from agentrig.builtins import _scripted as scripted
from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.cancel import CancelSignal
from agentrig.errors import AbortError, ConfigError
from agentrig.hooks import (
    Allow,
    ApprovalRequest,
    Decision,
    Deny,
    HookConfig,
    HookErrorOutcome,
    HookEvent,
    HookGateDecision,
    HookOutcome,
    HookRunner,
    make_hook_gate,
)
from agentrig.ids import AgentId, PluginName
from agentrig.kernel import MemorySource, builtin_source, open_runtime
from agentrig.llm import ToolMessage
from agentrig.plugin import TOOLS
from agentrig.tools import tool

REPO = Path(__file__).resolve().parents[2]

# ---- fakes -----------------------------------------------------------------------------------


class Fixed:
    """A strategy answering a fixed outcome (or raising / misbehaving), recording events."""

    instances: ClassVar[list[Fixed]] = []
    arrived: ClassVar[int] = 0
    all_arrived: ClassVar[anyio.Event]

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = spec
        self.options = dict(spec["options"])
        self.events: list[HookEvent] = []
        self.closed = False
        Fixed.instances.append(self)

    async def run(self, event: HookEvent, *, signal: CancelSignal) -> HookOutcome:
        self.events.append(event)
        if self.options.get("meet"):  # wait until `meet` hooks are running at once
            Fixed.arrived += 1
            if Fixed.arrived >= self.options["meet"]:
                Fixed.all_arrived.set()
            with anyio.fail_after(30):  # a guard against a hang, not a measurement
                await Fixed.all_arrived.wait()
        if self.options.get("sleep"):
            await anyio.sleep(self.options["sleep"])
        kind = self.options.get("kind", "allow")
        if kind == "raise":
            raise RuntimeError("strategy bug")
        if kind == "abort":
            raise AbortError("cancelled", reason="stop")
        if kind == "junk":
            return "allow"  # type: ignore[return-value]
        if kind == "deny":
            return Deny(self.options.get("reason", "no"))
        if kind == "error":
            return HookErrorOutcome("exited with status 1")
        if kind == "ask":
            return Allow(
                "", Decision(permission="ask", permission_reason="ask a human"), steering=True
            )
        if kind == "rewrite":
            return Allow("", Decision(updated_input=self.options["input"]), steering=True)
        return Allow(self.options.get("output", ""))

    async def aclose(self) -> None:
        self.closed = True


def bad_factory(spec: Mapping[str, Any]) -> Any:
    if spec["options"].get("boom"):
        raise ValueError("option boom is not allowed")
    return object()


FACTORIES = {"fixed": Fixed, "bad": bad_factory}


def same_dir(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def pre(tool_name: str = "Bash") -> HookEvent:
    return HookEvent.pre_tool_use(tool_name, {"command": "ls"}, session_id="s", cwd="/")


# ---- runner ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_runner_runs_matching_hooks_and_labels_outcomes() -> None:
    runner = HookRunner(
        {
            "PreToolUse": [
                {"strategy": "fixed", "matcher": "Bash", "options": {"output": "a"}},
                HookConfig(
                    strategy=PluginName("fixed"), matcher="Write|Edit", options={"kind": "deny"}
                ),
                {"strategy": "fixed", "options": {"output": "c"}},
            ],
            "Stop": [{"strategy": "fixed", "matcher": "ignored-for-stop"}],
        },
        FACTORIES,
    )
    assert runner.events == ("PreToolUse", "Stop")
    bash = await runner.run(pre("Bash"))
    assert bash.permission is None
    assert bash.outputs == ("a", "c")
    assert [o.source for o in bash.outcomes] == [
        "hook PreToolUse[0] (fixed)",
        "hook PreToolUse[2] (fixed)",
    ]
    write = await runner.run(pre("Write"))
    assert write.denied
    assert write.reason == "hook PreToolUse[1] (fixed): no"
    stop = await runner.run(HookEvent.stop(session_id="s", cwd="/"))
    assert len(stop.outcomes) == 1
    nothing = await runner.run(HookEvent("Notification", {}))
    assert nothing.outcomes == ()
    assert nothing.permission is None


@pytest.mark.anyio
async def test_factory_gets_the_entry_and_services(tmp_path: Path) -> None:
    Fixed.instances.clear()
    http = object()
    HookRunner(
        {"PostToolUse": [{"strategy": "fixed", "matcher": "x", "options": {"k": 1}}]},
        FACTORIES,
        services={"http": http},
        base_dir=tmp_path,
    )
    (made,) = Fixed.instances
    assert made.spec == {
        "http": http,
        "event": "PostToolUse",
        "strategy": "fixed",
        "matcher": "x",
        "options": {"k": 1},
        "base_dir": tmp_path,
    }


def test_every_config_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        HookRunner(
            {
                "PreToolUse": [
                    {"strategy": "nope"},
                    {"strategy": "fixed", "matcher": "Bash("},
                    {"strategy": "bad", "options": {"boom": True}},
                    {"strategy": "bad"},
                    {"strategy": "fixed", "surprise": 1},
                ]
            },
            FACTORIES,
        )
    paths = [issue.path for issue in caught.value.issues]
    assert paths == [
        ("hooks", "PreToolUse", 0, "strategy"),
        ("hooks", "PreToolUse", 1, "matcher"),
        ("hooks", "PreToolUse", 2, "options"),
        ("hooks", "PreToolUse", 3, "strategy"),
        ("hooks", "PreToolUse", 4),
    ]
    text = str(caught.value)
    assert "no hook strategy named 'nope'" in text
    assert "option boom is not allowed" in text
    assert "not a HookStrategy" in text


@pytest.mark.anyio
async def test_a_misbehaving_strategy_is_an_error_outcome_and_fails_closed() -> None:
    runner = HookRunner(
        {
            "PreToolUse": [
                {"strategy": "fixed", "options": {"kind": "raise"}},
                {"strategy": "fixed", "options": {"kind": "junk"}},
            ],
            "PostToolUse": [{"strategy": "fixed", "options": {"kind": "raise"}}],
        },
        FACTORIES,
    )
    combined = await runner.run(pre())
    assert combined.denied
    assert "the strategy raised RuntimeError: strategy bug" in combined.reason
    assert "the strategy returned str, not a hook outcome" in combined.reason
    post = await runner.run(HookEvent.post_tool_use("Bash", {}, "ok", session_id="s", cwd="/"))
    assert not post.denied
    assert post.errors == (
        "hook PostToolUse[0] (fixed): the strategy raised RuntimeError: strategy bug",
    )


@pytest.mark.anyio
async def test_identical_hooks_run_once() -> None:
    Fixed.instances.clear()
    same = {"strategy": "fixed", "options": {"output": "x"}}
    runner = HookRunner(
        {"PreToolUse": [same, {**same, "matcher": "Bash"}, {**same, "options": {"output": "y"}}]},
        FACTORIES,
    )
    combined = await runner.run(pre())
    assert [o.source for o in combined.outcomes] == [
        "hook PreToolUse[0] (fixed)",
        "hook PreToolUse[2] (fixed)",
    ]
    assert [len(f.events) for f in Fixed.instances] == [1, 0, 1]


@pytest.mark.anyio
async def test_hooks_run_concurrently_and_aborts_propagate() -> None:
    # each hook waits until all three are running: run one after another, they never would
    Fixed.arrived, Fixed.all_arrived = 0, anyio.Event()
    runner = HookRunner(
        {
            "PreToolUse": [
                {"strategy": "fixed", "options": {"meet": 3, "output": str(n)}} for n in range(3)
            ]
        },
        FACTORIES,
    )
    combined = await runner.run(pre())
    assert len(combined.outcomes) == 3
    aborting = HookRunner(
        {"PreToolUse": [{"strategy": "fixed", "options": {"kind": "abort"}}] * 2}, FACTORIES
    )
    with pytest.raises(AbortError):
        await aborting.run(pre())
    cancelled = CancelSignal()
    cancelled.cancel("before")
    with pytest.raises(AbortError):
        await runner.run(pre(), signal=cancelled)


@pytest.mark.anyio
async def test_aclose_closes_strategies() -> None:
    Fixed.instances.clear()
    runner = HookRunner({"Stop": [{"strategy": "fixed"}]}, FACTORIES)
    await runner.aclose()
    assert Fixed.instances[0].closed


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_runner_from_a_runtime_config_with_the_command_strategy(tmp_path: Path) -> None:
    memory = MemorySource()
    memory.add("hook_strategies", "command", hook_command.factory)
    config = {
        "hooks": {
            "PreToolUse": [
                {"strategy": "command", "matcher": "Bash", "options": {"command": "exit 2"}},
                {"strategy": "command", "options": {"command": "pwd", "cwd": "."}},
            ]
        }
    }
    async with open_runtime(config, sources=[builtin_source()], memory=memory, environ={}) as rt:
        runner = HookRunner.from_runtime(rt, base_dir=tmp_path)
        read = await runner.run(pre("Read"))
        (printed,) = read.outputs
        assert same_dir(printed.strip(), tmp_path)
        bash = await runner.run(pre("Bash"))
        assert bash.denied
        await runner.aclose()


@pytest.mark.anyio
async def test_an_http_hook_without_the_egress_step_sends_nothing(tmp_path: Path) -> None:
    """The http strategy gets its clients from the runtime's egress-checked factory only: with
    the ``compose-egress`` step disabled the hook fails (naming the step), and the loopback
    server it names, which the policy would refuse, receives no request."""
    received: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    config = {
        "plugins": {"disabled": ["compose-egress"]},
        "hooks": {
            "PreToolUse": [{"strategy": "http", "options": {"url": url, "allow_private_url": True}}]
        },
    }
    try:
        async with open_runtime(config, sources=[builtin_source()], environ={}) as rt:
            runner = HookRunner.from_runtime(rt, base_dir=tmp_path)
            result = await runner.run(pre("Read"))
            await runner.aclose()
    finally:
        server.shutdown()
        server.server_close()
    assert received == []
    assert not result.outputs
    assert any("compose-egress" in str(error) for error in result.errors)


# ---- the gate, directly ----------------------------------------------------------------------


@tool(risk="execute")
def shell(command: str) -> str:
    """Run a shell command (a fake: it only reports what it would run)."""
    return f"ran: {command}"


class FakeAgent:
    id = "a"
    session_id = "sess"


def call(command: str = "ls") -> Any:
    from agentrig.llm import ToolCallBlock

    return ToolCallBlock(id="c1", name="shell", arguments={"command": command})


def fixed_runner(*kinds: dict[str, Any]) -> HookRunner:
    return HookRunner(
        {"PreToolUse": [{"strategy": "fixed", "matcher": "shell", "options": k} for k in kinds]},
        FACTORIES,
    )


@pytest.mark.anyio
async def test_gate_decisions() -> None:
    agent = FakeAgent()
    allowed = await make_hook_gate(fixed_runner({}))(shell, call(), agent)  # type: ignore[arg-type]
    assert isinstance(allowed, HookGateDecision)
    assert isinstance(allowed, GateDecision)
    assert allowed.allowed
    assert allowed.updated_arguments is None

    denied = await make_hook_gate(fixed_runner({"kind": "deny", "reason": "not today"}))(
        shell,
        call(),
        agent,  # type: ignore[arg-type]
    )
    assert not denied.allowed
    assert denied.reason == "hook PreToolUse[0] (fixed): not today"

    failed = await make_hook_gate(fixed_runner({"kind": "error"}))(shell, call(), agent)  # type: ignore[arg-type]
    assert not failed.allowed
    assert "exited with status 1" in failed.reason

    asked = await make_hook_gate(fixed_runner({"kind": "ask"}))(shell, call(), agent)  # type: ignore[arg-type]
    assert not asked.allowed
    assert asked.reason.startswith("needs approval: ")
    assert "ask a human" in asked.reason

    rewritten = await make_hook_gate(
        fixed_runner({"kind": "rewrite", "input": {"command": "ls -a"}})
    )(
        shell,
        call(),
        agent,  # type: ignore[arg-type]
    )
    assert rewritten.allowed
    assert isinstance(rewritten, HookGateDecision)
    assert rewritten.updated_arguments == {"command": "ls -a"}


@pytest.mark.anyio
async def test_gate_ask_goes_to_the_approver_and_only_true_approves() -> None:
    seen: list[ApprovalRequest] = []

    async def yes(request: ApprovalRequest) -> object:
        seen.append(request)
        return True

    async def sloppy(request: ApprovalRequest) -> object:
        return "yes"

    async def broken(request: ApprovalRequest) -> object:
        raise RuntimeError("approver down")

    runner = fixed_runner({"kind": "ask"})
    agent = FakeAgent()
    approved = await make_hook_gate(runner, approver=yes)(shell, call("rm x"), agent)  # type: ignore[arg-type]
    assert approved.allowed
    assert seen[0].arguments == {"command": "rm x"}
    assert seen[0].outcome.needs_approval
    for approver in (sloppy, broken):
        refused = await make_hook_gate(runner, approver=approver)(shell, call(), agent)  # type: ignore[arg-type]
        assert not refused.allowed
        assert refused.reason.startswith("needs approval")


# ---- the gate, end to end with a runtime and real command hooks ----------------------------------


@pytest.fixture
def hook_scripts(tmp_path: Path) -> Path:
    deny_rm = tmp_path / "deny_rm.sh"
    deny_rm.write_text(
        textwrap.dedent(
            """\
            #!/bin/sh
            input=$(cat)
            case "$input" in
              *'rm -rf'*) echo "refusing a recursive delete" >&2; exit 2 ;;
            esac
            exit 0
            """
        )
    )
    deny_rm.chmod(0o755)
    return tmp_path


@pytest.fixture
async def runtime_parts() -> AsyncIterator[tuple[Any, ScriptedProvider]]:
    provider = ScriptedProvider(
        [
            Reply(
                tool_calls=(
                    ScriptedCall("shell", {"command": "ls -la"}, id="call_ok"),
                    ScriptedCall("shell", {"command": "rm -rf /"}, id="call_rm"),
                )
            ),
            "I listed the files; the delete was refused.",
        ]
    )
    memory = MemorySource()
    memory.add("providers", "scripted", scripted.factory)
    memory.add("tools", "shell", shell)
    memory.add("hook_strategies", "command", hook_command.factory)
    config = {"providers": {"main": {"kind": "scripted"}}, "tools": {"shell": {}}}
    async with open_runtime(
        config,
        sources=[builtin_source()],
        memory=memory,
        environ={},
        overrides=[("providers", "main", provider)],
    ) as rt:
        yield rt, provider


def tool_messages(agent: Any) -> dict[str, ToolMessage]:
    return {m.call_id: m for m in agent.session.derive_messages() if isinstance(m, ToolMessage)}


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_deny_hook_turns_a_tool_call_into_a_refused_result(
    hook_scripts: Path, runtime_parts: tuple[Any, ScriptedProvider]
) -> None:
    rt, _provider = runtime_parts
    runner = HookRunner(
        {
            "PreToolUse": [
                {
                    "strategy": "command",
                    "matcher": "shell",
                    "options": {"command": str(hook_scripts / "deny_rm.sh"), "timeout": 10},
                }
            ]
        },
        {"command": hook_command.factory},
    )
    registry = AgentRegistry(rt, gate=make_hook_gate(runner))
    agent = await registry.create(
        AgentId("a"), provider="main", model="m", tools=[rt.catalog(TOOLS).require("shell")]
    )
    try:
        result = await agent.run("tidy up")
        assert result.value == "I listed the files; the delete was refused."
        messages = tool_messages(agent)
        assert messages["call_ok"].status == "ok"
        assert messages["call_ok"].text == "ran: ls -la"
        assert messages["call_rm"].status == "error"
        assert messages["call_rm"].text == (
            "The call was refused: hook PreToolUse[0] (command): refusing a recursive delete"
        )
    finally:
        await registry.aclose()


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_a_crashing_pre_tool_use_hook_fails_closed_end_to_end(
    tmp_path: Path, runtime_parts: tuple[Any, ScriptedProvider]
) -> None:
    rt, _provider = runtime_parts
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.stdin.read()\nraise SystemExit(1)\n")
    runner = HookRunner(
        {
            "PreToolUse": [
                {"strategy": "command", "options": {"command": [sys.executable, str(crash)]}}
            ]
        },
        {"command": hook_command.factory},
    )
    registry = AgentRegistry(rt, gate=make_hook_gate(runner))
    agent = await registry.create(
        AgentId("a"), provider="main", model="m", tools=[rt.catalog(TOOLS).require("shell")]
    )
    try:
        await agent.run("tidy up")
        messages = tool_messages(agent)
        for call_id in ("call_ok", "call_rm"):
            assert messages[call_id].status == "error"
            assert "exited with status 1" in messages[call_id].text
            assert messages[call_id].text.startswith("The call was refused: ")
    finally:
        await registry.aclose()


@pytest.mark.anyio
@pytest.mark.subprocess
async def test_the_guarded_agent_example_runs_offline() -> None:
    repo = REPO
    example = repo / "examples" / "guarded-agent" / "run.py"
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, str(example)], cwd=repo, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "shell -> ok: (pretend) ran 'ls -la'" in out
    # a deny rule of examples/guarded-agent/.claude/settings.json:
    denied = "shell -> error: The call was refused: permission decided: denied by 'shell(curl *)'"
    assert denied in out
    assert "shell -> error: The call was refused: hook PreToolUse[0] (command): recursive" in out
    assert 'PreToolUse shell {"command": "rm -rf build/"}' in out
    assert "runtime closed cleanly: True" in out
