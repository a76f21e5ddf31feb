"""A synchronous convenience for scripts: compose a runtime, run one prompt, close it.

Everything else in agentrig is async; this is the one blocking entry point, for a script or
a REPL that has no event loop of its own.  It runs the event loop itself (asyncio by default)
and must not be called from inside a running loop.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import anyio

from agentrig.agent._results import RunResult
from agentrig.errors import AgentrigError
from agentrig.ids import AgentId
from agentrig.kernel import SecretResolver

__all__ = ["run_sync"]


def run_sync(
    config: str | os.PathLike[str] | Mapping[str, Any],
    prompt: str,
    *,
    agent: AgentId | None = None,
    resolver: SecretResolver | None = None,
    backend: str = "asyncio",
    **run_options: Any,
) -> RunResult[Any]:
    """Open a runtime from ``config``, run ``prompt`` on ``agent`` and return the result.

    ``agent`` may be omitted when the config declares exactly one.  ``$ENV:`` secrets resolve
    through ``resolver`` only -- pass ``resolver=agentrig.env_resolver()`` to read the process
    environment, as the CLI does; nothing is read from it otherwise.  Extra keyword
    arguments go to :meth:`Agent.run` (``output_type=``, ``max_rounds=`` ...).
    """
    from agentrig.kernel import open_runtime

    async def main() -> RunResult[Any]:
        async with open_runtime(config, resolver=resolver) as rt:
            name: AgentId | None = agent
            if name is None:
                declared = rt.agents.ids()
                if len(declared) != 1:
                    raise AgentrigError(
                        f"run_sync needs agent=... : the config declares {len(declared)} agents "
                        f"({', '.join(declared) or 'none'})",
                        code="agent.ambiguous",
                        category="user",
                    )
                name = declared[0]
            result: RunResult[Any] = await rt.agent(name).run(prompt, **run_options)
            return result

    return anyio.run(functools.partial(main), backend=backend)
