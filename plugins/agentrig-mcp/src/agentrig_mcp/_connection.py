"""One MCP server's life: started when first needed, restarted with backoff, stopped on close.

A connection runs a supervisor task (on the task group its owner hands it) that holds the
transport and the SDK's ``ClientSession`` over its JSON-RPC dispatcher.  Two small
forwarders sit between them; the inbound one notices the moment the server goes away (its
in-flight requests then fail with an error, and the next request restarts it after a
backoff).  A cancelled or timed-out request is cancelled on the server by the SDK
(``notifications/cancelled``).  ``tools/list`` and ``tools/call`` go through the dispatcher
as raw requests, so their answers are read entry by entry (:mod:`agentrig_mcp._lenient`)
instead of failing whole on one bad entry.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterable, Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession, types
from mcp.client import IncomingMessage
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp.shared.exceptions import MCPError as SdkMcpError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage

from agentrig import __version__ as agentrig_version
from agentrig.cancel import CancelSignal
from agentrig.diagnostics import get_logger
from agentrig_mcp._answers import Answers, SessionCallbacks
from agentrig_mcp._callers import Callers
from agentrig_mcp._config import HttpServerSpec, StdioServerSpec
from agentrig_mcp._errors import McpAuthError, McpError, McpServerUnavailable
from agentrig_mcp._lenient import RawCallResult, RawToolList, call_result, listed_tools
from agentrig_mcp._stdio import ProcessState
from agentrig_mcp._transport import HttpClientFactory, Sender, open_transport

if TYPE_CHECKING:
    from agentrig_mcp._oauth import OAuthFor, OAuthLogin

__all__ = ["ServerConnection", "Spawn"]

_T = TypeVar("_T")
_MAX_BACKOFF = 30.0
_CLOSE_GRACE = 10.0
_CLIENT_INFO = types.Implementation(name="agentrig", version=agentrig_version)
#: a listing longer than this many pages stops there (a server that never ends its pages)
_MAX_PAGES = 100

Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], object]
"""Start ``fn()`` as a task on the owner's task group (``rt.spawn``, ``TaskGroup.start_soon``)."""

Resolve = Callable[[str, StdioServerSpec | HttpServerSpec], Awaitable[dict[str, str]]]
#: the W3C trace context of the caller (``traceparent``, ``tracestate``), sent in ``_meta``
TraceHeaders = Callable[[], dict[str, str]]
"""``resolve(name, spec)``: the server's env (stdio) or headers (HTTP), references resolved."""


@attrs.define(eq=False)
class _Run:
    """One start of the server: ready once initialised (or failed), ended once gone."""

    ready: anyio.Event = attrs.Factory(anyio.Event)
    stop: anyio.Event = attrs.Factory(anyio.Event)
    done: anyio.Event = attrs.Factory(anyio.Event)
    session: ClientSession | None = None
    dispatcher: JSONRPCDispatcher | None = None
    error: BaseException | None = None
    ended: bool = False
    crashed: bool = False
    cause: str = "exited"  # what ended the run, for the error of the calls it interrupted
    inflight: set[anyio.CancelScope] = attrs.Factory(set)
    process: ProcessState = attrs.Factory(ProcessState)

    def start_failure(self) -> str:
        """Why the server did not start: the error, how it ended, its last stderr lines."""
        cause = describe(self.error) if self.error else "it exited during start-up"
        if self.process.returncode is not None or self.process.problem is not None:
            cause += f" ({self.process.describe_exit()})"
        tail = self.process.stderr_tail()
        return f"{cause}; its stderr ends with:\n{tail}" if tail else cause

    def fail(self) -> None:
        """The server went away: end this run and interrupt every request in flight."""
        self.crashed = True
        self.ended = True
        self.stop.set()
        for scope in self.inflight:
            scope.cancel()


def describe(error: BaseException | None) -> str:
    """A one-line cause, looking inside exception groups."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if error is None:
        return "unknown cause"
    text = str(error) or type(error).__name__
    return text if isinstance(error, McpError) else f"{type(error).__name__}: {text}"


class ServerConnection:
    """A lazily started, self-restarting connection to one MCP server."""

    def __init__(
        self,
        name: str,
        spec: StdioServerSpec | HttpServerSpec,
        *,
        spawn: Spawn,
        resolve: Resolve,
        http_client: HttpClientFactory,
        on_notification: Callable[[str, types.ServerNotification], None] | None = None,
        trace: TraceHeaders | None = None,
        answers: Answers | None = None,
        oauth: OAuthFor | None = None,
    ) -> None:
        self.name = name
        self._answers = answers
        #: the tool calls in flight: whose a sampling or elicitation request is
        self.callers = Callers()
        self._oauth = oauth
        #: the server's OAuth sign-in (``oauth`` configured), made at its first start
        self.login: OAuthLogin | None = None
        self._trace = trace
        self.spec = spec
        self._spawn = spawn
        self._resolve = resolve
        self._http_client = http_client
        self._on_notification = on_notification
        self._log = get_logger(f"mcp.{name}")
        self._lock = anyio.Lock()
        self._run: _Run | None = None
        self._failures = 0
        self._ended_at = 0.0
        self._closed = False
        #: how many times the server was started (observable in tests and diagnostics)
        self.starts = 0
        #: resource URIs subscribed to (``resources/subscribe``), again after each restart
        self.subscriptions: set[str] = set(spec.subscribe)

    # ---- lifecycle ------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        run = self._run
        return run is not None and run.session is not None and not run.ended

    async def start(self) -> None:
        """Start the server now (or wait for the running one); raises when it cannot start."""
        await self._ensure()

    async def capabilities(self) -> types.ServerCapabilities:
        """What the server advertised at initialization (starting it when needed)."""
        _, session = await self._ensure()
        return session.server_capabilities or types.ServerCapabilities()

    async def aclose(self) -> None:
        """Stop the server and wait until its process is gone. Idempotent."""
        self._closed = True
        run = self._run
        if run is None:
            return
        run.stop.set()
        with anyio.move_on_after(_CLOSE_GRACE):
            await run.done.wait()

    def _delay(self) -> float:
        if self._failures == 0:
            return 0.0
        backoff: float = min(self.spec.restart_backoff * 2.0 ** (self._failures - 1), _MAX_BACKOFF)
        return max(0.0, self._ended_at + backoff - anyio.current_time())

    async def _ensure(self) -> tuple[_Run, ClientSession]:
        if self._closed:
            raise McpServerUnavailable(f"MCP server {self.name!r}: the runtime was closed")
        async with self._lock:
            run = self._run
            if run is None or run.ended:
                if run is not None:
                    await run.done.wait()
                delay = self._delay()
                if delay > 0:
                    self._log.info("restarting in %.2fs", delay)
                    await anyio.sleep(delay)
                if self._closed:
                    raise McpServerUnavailable(f"MCP server {self.name!r}: the runtime was closed")
                run = self._run = _Run()
                self.starts += 1
                self._spawn(functools.partial(self._supervise, run))
            await run.ready.wait()
        if run.session is None or run.ended:
            raise McpServerUnavailable(
                f"MCP server {self.name!r} is not available: {run.start_failure()}"
            )
        return run, run.session

    async def _login(self) -> OAuthLogin | None:
        """The server's OAuth sign-in when ``oauth`` is configured (made at the first start,
        kept across restarts)."""
        spec = self.spec
        if not isinstance(spec, HttpServerSpec) or spec.oauth is None:
            return None
        if self.login is None:
            if self._oauth is None:
                raise McpAuthError(
                    f"MCP server {self.name!r} has oauth configured, but this client was made "
                    "without oauth= (where its tokens are kept)"
                )
            self.login = await self._oauth(self.name, spec)
        return self.login

    async def _supervise(self, run: _Run) -> None:
        try:
            resolved = await self._resolve(self.name, self.spec)
            login = await self._login()
            async with (
                open_transport(
                    self.spec,
                    resolved,
                    log=self._log,
                    http_client=self._http_client,
                    on_broken=functools.partial(self._broken, run),
                    state=run.process,
                    login=login,
                ) as (read, write),
                anyio.create_task_group() as tg,
            ):
                inbound_send, inbound = anyio.create_memory_object_stream[
                    SessionMessage | Exception
                ](0)
                outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
                tg.start_soon(self._forward_in, run, read, inbound_send)
                tg.start_soon(self._forward_out, run, outbound_receive, write)
                # sampling and elicitation are advertised only when offered (their callbacks)
                answers = self._answers(self) if self._answers else SessionCallbacks()
                run.dispatcher = JSONRPCDispatcher(inbound, outbound)
                async with ClientSession(
                    dispatcher=run.dispatcher,
                    message_handler=self._handle_message,
                    client_info=_CLIENT_INFO,
                    # roots are advertised only when there are some to tell
                    list_roots_callback=self._roots if self.spec.roots else None,
                    sampling_callback=answers.sampling,
                    elicitation_callback=answers.elicitation,
                ) as session:
                    with anyio.move_on_after(self.spec.startup_timeout) as starting:
                        await session.initialize()
                    if starting.cancelled_caught:
                        raise McpError(
                            f"it did not answer initialize within "
                            f"{self.spec.startup_timeout:g}s (startup_timeout)",
                            code="mcp.timeout",
                        )
                    await self._resubscribe(session)
                    run.session = session
                    self._log.info("started")
                    run.ready.set()
                    await run.stop.wait()
                tg.cancel_scope.cancel()
        except Exception as exc:
            run.error = exc
            if run.session is None:
                self._log.warning("could not start: %s", describe(exc))
            else:
                self._log.warning("connection failed: %s", describe(exc))
        finally:
            if not run.ready.is_set() or run.crashed or run.error is not None:
                self._failures += 1
            if run.inflight:
                run.fail()
            run.ended = True
            self._ended_at = anyio.current_time()
            run.ready.set()
            run.done.set()
            self._log.info("stopped")

    async def _resubscribe(self, session: ClientSession) -> None:
        """Subscribe to the configured URIs (and, after a restart, to those asked for since):
        a new server process knows none of them."""
        if not self.subscriptions:
            return
        resources = (session.server_capabilities or types.ServerCapabilities()).resources
        if resources is None or not resources.subscribe:
            self._log.warning(
                "subscribe: the server does not offer resource subscriptions (it did not "
                "advertise resources.subscribe); not subscribed to %s",
                ", ".join(sorted(self.subscriptions)),
            )
            return
        for uri in sorted(self.subscriptions):
            with anyio.fail_after(self.spec.timeout):
                await self.raw_request(session, "resources/subscribe", {"uri": uri})

    def _broken(self, run: _Run, error: BaseException) -> None:
        """A response stream from the server broke: it went away (or the network did)."""
        if run.stop.is_set() or run.ended:
            return
        self._log.warning("the connection to the server broke: %s", describe(error))
        run.cause = f"the connection broke ({describe(error)})"
        run.fail()

    async def _forward_in(
        self,
        run: _Run,
        read: AsyncIterable[SessionMessage | Exception],
        into: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        async with into:
            try:
                async for message in read:
                    await into.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
        if not run.stop.is_set():
            # the server went away on its own: fail what is in flight, restart on next need
            run.cause = run.process.describe_exit()
            self._log.warning("%s", run.cause)
            last = list(run.process.stderr)[-1:]
            if last:
                run.cause += f" (its last stderr line: {last[0]})"
            run.fail()

    async def _forward_out(
        self,
        run: _Run,
        outbound: MemoryObjectReceiveStream[SessionMessage],
        write: Sender,
    ) -> None:
        async with outbound:
            try:
                async for message in outbound:
                    await write.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    async def _roots(self, context: Any) -> types.ListRootsResult:
        """``roots/list``: the directories config lets the server work in (file URIs)."""
        from pathlib import Path

        from pydantic import FileUrl

        return types.ListRootsResult(
            roots=[
                types.Root(uri=FileUrl(Path(root).as_uri()), name=Path(root).name or root)
                for root in self.spec.roots or ()
            ]
        )

    async def _handle_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self._log.warning("transport error: %s", describe(message))
        elif isinstance(message, types.LoggingMessageNotification):
            self._log.info("server log (%s): %s", message.params.level, message.params.data)
        elif self._on_notification is not None:
            self._on_notification(self.name, message)

    # ---- requests -------------------------------------------------------------------------
    async def request(
        self,
        operation: Callable[[ClientSession, dict[str, Any]], Awaitable[_T]],
        *,
        what: str,
        signal: CancelSignal | None = None,
        timer: Callable[[anyio.CancelScope], None] | None = None,
    ) -> _T:
        """Run ``operation(session, meta)`` bounded by the server's timeout and ``signal``.

        A timed-out or cancelled request is cancelled on the server too (by the SDK); a server
        that went away fails the request with :class:`McpServerUnavailable` and is restarted
        on the next request.  ``meta`` must be passed as the request's ``_meta``; it carries
        the caller's trace context (``traceparent``, ``tracestate``) when the runtime traces.
        ``timer`` gets the scope of the timeout, whose deadline the operation may move.
        """
        signal = signal or CancelSignal()
        with signal.scope():
            run, session = await self._ensure()
        signal.raise_if_cancelled()
        meta: dict[str, Any] = {}
        if self._trace is not None:
            meta.update(self._trace())  # read here, in the caller's task: the caller's span
        gone = anyio.CancelScope()
        run.inflight.add(gone)
        done = False
        result: Any = None
        try:
            with anyio.move_on_after(self.spec.timeout) as deadline, signal.scope(), gone:
                if timer is not None:
                    timer(deadline)
                result = await operation(session, meta)
                done = True
        except SdkMcpError as exc:
            done = True
            if exc.error.code != types.CONNECTION_CLOSED:
                raise McpError(
                    f"MCP server {self.name!r} refused {what}: {exc.error.message}"
                ) from None
            run.fail()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            done = True
            run.fail()
        finally:
            run.inflight.discard(gone)
        if run.crashed and (not done or result is None):
            raise McpServerUnavailable(
                f"MCP server {self.name!r}: {run.cause} during {what}; it restarts on the next call"
            )
        if not done:
            signal.raise_if_cancelled()
            if deadline.cancelled_caught:
                raise McpError(
                    f"MCP server {self.name!r} did not answer {what} within "
                    f"{self.spec.timeout:g}s (timeout; progress notifications extend it up to "
                    f"max_call_time, {self.spec.max_call_time:g}s); the request was cancelled",
                    code="mcp.timeout",
                )
        self._failures = 0
        answer: _T = result
        return answer

    async def raw_request(
        self,
        session: ClientSession,
        method: str,
        params: dict[str, Any] | None,
        progress: ProgressFnT | None = None,
    ) -> dict[str, Any]:
        """Send ``method`` as ``session`` would, on its dispatcher, and return the result
        unvalidated (the caller reads it entry by entry).  Also how requests of the
        handshake era are sent whose SDK helpers warn that a later revision removed them
        (``resources/subscribe``): this connection negotiated the handshake era."""
        run = self._run
        if run is None or run.dispatcher is None or run.ended:
            raise McpServerUnavailable(f"MCP server {self.name!r}: the session has ended")
        options: CallOptions = {}
        if session.protocol_version is not None:
            options["headers"] = {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version}
        if progress is not None:
            options["on_progress"] = progress
        return await run.dispatcher.send_raw_request(method, params, options)

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        signal: CancelSignal | None = None,
        progress: ProgressFnT | None = None,
        timer: Callable[[anyio.CancelScope], None] | None = None,
    ) -> types.CallToolResult:
        """Call ``tool``; ``progress(progress, total, message)`` gets progress notifications.

        Each progress notification moves the timeout ``timeout`` seconds past it, up to
        ``max_call_time`` after the call started; ``timer`` gets the timeout's scope too (a
        caller that answers the server meanwhile suspends it).  The result keeps every
        valid content block (see :mod:`agentrig_mcp._lenient`).
        """
        scopes: list[anyio.CancelScope] = []
        limit = anyio.current_time() + self.spec.max_call_time

        report = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            for scope in scopes:
                scope.deadline = min(anyio.current_time() + self.spec.timeout, limit)
            if report is not None:
                await report(progress, total, message)

        async def call(session: ClientSession, meta: dict[str, Any]) -> types.CallToolResult:
            params = {"name": tool, "arguments": arguments, "_meta": meta}
            raw = await self.raw_request(session, "tools/call", params, on_progress)
            return call_result(RawCallResult.model_validate(raw))

        def timed(scope: anyio.CancelScope) -> None:
            scopes.append(scope)
            if timer is not None:
                timer(scope)

        what = f"the call to {tool!r}"
        return await self.request(call, what=what, signal=signal, timer=timed)

    async def list_tools(self) -> tuple[list[types.Tool], list[str]]:
        """Every valid tool the server offers (all pages, up to 100), and why others are not."""
        tools: list[types.Tool] = []
        bad: list[str] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):

            async def page(
                session: ClientSession, meta: dict[str, Any], cursor: str | None = cursor
            ) -> RawToolList:
                params = {"cursor": cursor} if cursor else None
                raw = await self.raw_request(session, "tools/list", params)
                return RawToolList.model_validate(raw)

            result = await self.request(page, what="tools/list")
            valid, invalid = listed_tools(result)
            tools += valid
            bad += invalid
            cursor = result.next_cursor
            if not cursor or cursor in seen:
                return tools, bad
            seen.add(cursor)
        bad.append(f"the listing went on past {_MAX_PAGES} pages: the rest was not read")
        return tools, bad
