"""``agentrig submit|worker|result|approve``: durable runs from a shell.

* ``agentrig submit -c agentrig.toml AGENT PROMPT [--queue Q] [--id RUN] [--wait]`` queues a
  durable run and prints its id (with ``--wait``, its answer once a worker finished it);
* ``agentrig worker -c agentrig.toml [--executor-id ID]`` executes queued runs until
  interrupted (SIGINT/SIGTERM); a worker restarted with the same executor id first resumes
  the runs it left unfinished;
* ``agentrig result -c agentrig.toml RUN [--follow]`` waits for a run and prints its answer
  (with ``--follow``, first its session events as they are written, one JSON line each);
* ``agentrig approve -c agentrig.toml RUN`` prints the permission question the run waits on
  (JSON), ``agentrig approve -c agentrig.toml RUN CALL --allow|--deny`` answers it;
* ``agentrig waiting -c agentrig.toml RUN`` prints the effects the run waits for the host to
  settle (one ``m<n>/<call>`` a line), ``agentrig reconcile -c agentrig.toml RUN CALL TEXT
  [--error]`` settles one with what it did (or, ``--error``, that it did not happen);
* ``agentrig retry -c agentrig.toml RUN`` takes a failed run up again from its journal.

A failure is one ``agentrig <command>: error [code]: ...`` line (exit 1).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from agentrig.plugin import Commands

__all__ = ["register"]


def register(payload: Commands) -> None:
    """Add the commands (the handlers import DBOS only when they run)."""
    submit = payload.add("submit", help="queue a durable run and print its id", handler=_submit)
    _config_arg(submit)
    submit.add_argument("agent", help="an agent declared in [agents]")
    submit.add_argument("prompt", help="the run's prompt")
    submit.add_argument("--queue", help="the queue (default: [dbos] default_queue)")
    submit.add_argument("--id", dest="run_id", help="the run id (default: a new one)")
    submit.add_argument("--wait", action="store_true", help="wait and print the answer")

    worker = payload.add("worker", help="execute queued durable runs", handler=_worker)
    _config_arg(worker)
    worker.add_argument(
        "--executor-id",
        help="this worker's executor id (default: [dbos] executor_id); a worker restarted "
        "with the same id resumes the runs it left unfinished",
    )

    approve = payload.add(
        "approve",
        help="show or answer a durable run's permission question",
        handler=_approve,
    )
    _config_arg(approve)
    approve.add_argument("run_id", metavar="RUN", help="the waiting run")
    approve.add_argument("call_id", metavar="CALL", nargs="?", help="the call asked about")
    answer = approve.add_mutually_exclusive_group()
    answer.add_argument("--allow", action="store_true", help="let the call run")
    answer.add_argument("--deny", action="store_true", help="refuse the call")

    waiting = payload.add(
        "waiting",
        help="print the effects a durable run waits for the host to settle",
        handler=_waiting,
    )
    _config_arg(waiting)
    waiting.add_argument("run_id", metavar="RUN", help="the run")

    reconcile = payload.add(
        "reconcile",
        help="tell a durable run what an effect a crash cut off did",
        handler=_reconcile,
    )
    _config_arg(reconcile)
    reconcile.add_argument("run_id", metavar="RUN", help="the waiting run")
    reconcile.add_argument("call", metavar="CALL", help="the effect, as `waiting` prints it")
    reconcile.add_argument("text", metavar="TEXT", help="what the effect did (its tool result)")
    reconcile.add_argument(
        "--error", action="store_true", help="the effect did not happen (an error result)"
    )

    retry = payload.add(
        "retry", help="take a failed durable run up again from its journal", handler=_retry
    )
    _config_arg(retry)
    retry.add_argument("run_id", metavar="RUN", help="the failed run")

    result = payload.add(
        "result", help="wait for a durable run and print its answer", handler=_result
    )
    _config_arg(result)
    result.add_argument("run_id", metavar="RUN", help="the run id submit printed")
    result.add_argument(
        "--follow",
        action="store_true",
        help="print the run's session events (one JSON object a line) as they are written, "
        "then its answer",
    )


def _config_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--config", default="agentrig.toml", help="the composition file")


def _with_durable(args: argparse.Namespace, body: Callable[[Any], Awaitable[int]]) -> int:
    import anyio

    import agentrig
    from agentrig_dbos._keys import DURABLE

    async def main() -> int:
        async with agentrig.open_runtime(args.config, resolver=agentrig.env_resolver()) as rt:
            durable = rt.services.get(DURABLE)
            if durable is None:
                from agentrig_dbos._errors import DurableSetupError

                raise DurableSetupError(
                    f"{args.config} has no [dbos] table: add one to make its runs durable"
                )
            return await body(durable)

    return anyio.run(main)


def _submit(args: argparse.Namespace) -> int:
    async def body(durable: Any) -> int:
        from agentrig.ids import AgentId

        agent = durable.rt.agent(AgentId(args.agent))  # the kernel's submit: the RUN_QUEUE
        run_id = await agent.submit(args.prompt, queue=args.queue, run_id=args.run_id)
        print(run_id, flush=True)
        if args.wait:
            print((await durable.result(run_id)).text, flush=True)
        return 0

    return _with_durable(args, body)


def _approve(args: argparse.Namespace) -> int:
    import json

    async def body(durable: Any) -> int:
        if args.call_id is None:
            if args.allow or args.deny:
                print("agentrig approve: error: --allow/--deny need a CALL", file=sys.stderr)
                return 2
            question = await durable.question(args.run_id)
            print(json.dumps(question) if question else "nothing to approve", flush=True)
            return 0
        if not (args.allow or args.deny):
            print("agentrig approve: error: answer with --allow or --deny", file=sys.stderr)
            return 2
        await durable.approve(args.run_id, args.call_id, allow=bool(args.allow))
        return 0

    return _with_durable(args, body)


def _waiting(args: argparse.Namespace) -> int:
    async def body(durable: Any) -> int:
        effects = await durable.waiting_for(args.run_id)
        print("\n".join(effects) if effects else "nothing to settle", flush=True)
        return 0

    return _with_durable(args, body)


def _reconcile(args: argparse.Namespace) -> int:
    async def body(durable: Any) -> int:
        status = "error" if args.error else "ok"
        await durable.reconcile(args.run_id, args.call, args.text, status=status)
        return 0

    return _with_durable(args, body)


def _retry(args: argparse.Namespace) -> int:
    async def body(durable: Any) -> int:
        link = await durable.retry(args.run_id)
        print(f"retrying {args.run_id} ({link})", flush=True)
        return 0

    return _with_durable(args, body)


def _result(args: argparse.Namespace) -> int:
    async def body(durable: Any) -> int:
        if args.follow:
            from agentrig.session import dump_event

            async for event in durable.events(args.run_id):
                print(dump_event(event), flush=True)
        print((await durable.result(args.run_id)).text, flush=True)
        return 0

    return _with_durable(args, body)


def _worker(args: argparse.Namespace) -> int:
    import anyio

    async def body(durable: Any) -> int:
        await durable.launch(executor_id=args.executor_id)
        print(f"agentrig worker: executing durable runs ({durable.executor})", file=sys.stderr)
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                break
        return 0

    return _with_durable(args, body)
