"""What each kept process or runtime cache saves: the work it skips on a hit, in µs.

Each line's ``value`` is the cost of the work the cache stands for (a miss) and ``floor`` the
cost of a hit, measured side by side; ``ratio`` is how many hits one miss pays for.  These
are information lines (``target`` is ``null``): they justify keeping a cache, or removing
one whose miss costs less than noise.  The gate's per-tool permission cache was removed
(issue 27); its line shows what reading a tool's declaration on every call costs.

    python benchmarks/bench_caches.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_per_call_ns, emit, gc_paused

import agentrig
from agentrig.agent import AgentConfig
from agentrig.builtins._gate import tool_permissions
from agentrig.kernel import _dispatch as dispatch
from agentrig.kernel._listeners import listener_problems
from agentrig.llm import ToolSpec
from agentrig.permissions._shell import _split_text
from agentrig.tools import tool


@tool(risk="execute", permission_arg=("command", "command"))
def shell(command: str, cwd: str = ".", timeout: float = 30.0) -> str:
    """Run a command in the workspace and return what it printed."""
    return command


class _Listener:
    @agentrig.hookimpl
    def pre_model_call(self, payload: Any) -> None:
        return None

    @agentrig.hookimpl
    def post_model_call(self, payload: Any) -> None:
        return None


def _line(
    name: str, per: str, miss: Callable[[], object], hit: Callable[[], object], n: int
) -> None:
    def batch(fn: Callable[[], object]) -> Callable[[int], None]:
        def run(calls: int) -> None:
            for _ in range(calls):
                fn()

        return run

    with gc_paused():
        missed = best_per_call_ns(batch(miss), n, 5) / 1000
        hit_us = best_per_call_ns(batch(hit), n, 5) / 1000
    emit(
        name,
        missed,
        "µs",
        floor=round(hit_us, 3),
        ratio=round(missed / hit_us, 1) if hit_us else None,
        target=None,
        per=per,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    n = 2_000 if parser.parse_args().quick else 20_000

    schema = shell.input_schema.json_schema
    _line(
        "gate: a tool's permission declaration (cache removed)",
        "tool call",
        lambda: tool_permissions(shell),
        lambda: None,
        n,
    )

    def spec() -> tuple[ToolSpec, int]:
        built = ToolSpec(name=shell.id, description=shell.description, parameters=dict(schema))
        return built, len(built.description) + len(json.dumps(built.parameters))

    shared = {shell.id: (shell, *spec())}
    _line(
        "offer: a tool's definition (_SHARED_SPECS)",
        "tool per new agent",
        spec,
        lambda: (hit := shared.get(shell.id)) is not None and hit[0] is shell,
        n,
    )
    _line(
        "deferral: a schema's JSON size (_SCHEMA_CHARS)",
        "tool per new agent",
        lambda: len(json.dumps(dict(schema), separators=(",", ":"))),
        lambda: (hit := shared.get(shell.id)) is not None and hit[0] is shell,
        n,
    )
    base = AgentConfig.model_validate({"provider": "p", "model": "m"})
    values = {**base.model_dump(), "system_prompt": "be brief"}
    configs = {(id(base), "system_prompt"): (base, base)}
    _line(
        "registry: settings over a configured agent (_configs)",
        "agents.create with settings",
        lambda: AgentConfig.model_validate(values),
        lambda: (hit := configs.get((id(base), "system_prompt"))) is not None and hit[0] is base,
        n // 10,
    )
    listener = _Listener()
    dispatch.listener_refusals(listener)
    _line(
        "dispatch: a listener's refusals (keyed by its marked functions)",
        "listener per runtime opened",
        lambda: listener_problems(dispatch._spec_manager(), listener, dispatch._takes_next),
        lambda: dispatch.listener_refusals(listener),
        n // 10,
    )
    command = "git commit -m 'a message' && make test | tee out.log"
    _line(
        "permissions: a command parsed (_split_text)",
        "rule read per evaluation",
        lambda: _split_text.__wrapped__(command),
        lambda: _split_text(command),
        n,
    )


if __name__ == "__main__":
    main()
