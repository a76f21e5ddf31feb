"""Child process of the agentrig-dbos tests.

``python durable_child.py <tmp> run <run id> <kill point>`` runs one durable run in this
process (and kills itself at the point, see :mod:`_durable_support`);
``python durable_child.py <tmp> resume <run id>`` launches (recovering what this executor
left pending) and prints the run's answer; ``python durable_child.py <tmp> worker <executor
id>`` executes queued runs until killed.  ``<tmp>/settings.json`` (``dbos`` and ``extra``
tables) is what the processes of one test share, e.g. a PostgreSQL database.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from _durable_support import durable_runtime
from agentrig_dbos import DURABLE


async def main(tmp: Path, mode: str, run_id: str, point: str) -> None:
    async with durable_runtime(tmp, point=point) as rt:
        durable = rt.services.require(DURABLE)
        if mode == "worker":  # run_id is the executor id here
            await durable.launch(executor_id=run_id)
            print("ready", flush=True)
            await anyio.sleep_forever()
        if mode == "run":
            result = await durable.run("assistant", "do the thing", run_id=run_id)
        else:
            await durable.launch()
            result = await durable.result(run_id)
        print(f"finished: {result.text}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    anyio.run(main, Path(args[0]), args[1], args[2], args[3] if len(args) > 3 else "none")
