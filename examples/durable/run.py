"""Submit a durable run, answer its approval and await it -- all in one process, offline.

The same steps from several terminals are in README.md (a worker, submit, kill, approve).
"""

from __future__ import annotations

from pathlib import Path

import anyio
from agentrig_dbos import DURABLE

import agentrig

HERE = Path(__file__).resolve().parent


async def main() -> None:
    async with agentrig.open_runtime(HERE / "agentrig.toml") as rt:
        durable = rt.services.require(DURABLE)
        await durable.launch(executor_id="example")  # this process is also a worker
        agent = rt.agent("assistant")
        run_id = await agent.submit("Which tool tells the weather?")  # queued for a worker
        print(f"submitted {run_id}")
        question = None
        for _ in range(600):  # the worker in this process reaches the call
            question = await durable.question(run_id)
            if question is not None:
                break
            await anyio.sleep(0.1)
        assert question is not None, "the run never asked"
        print(f"asked: {question['tool']} {question['arguments']} ({question['call_id']})")
        await durable.approve(run_id, question["call_id"], allow=True)
        result = await durable.result(run_id)
        print(f"answer: {result.text}")


if __name__ == "__main__":
    anyio.run(main)
