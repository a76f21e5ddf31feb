"""A real uvicorn server on 127.0.0.1 (a free port) serving a real runtime, in a thread.

uvicorn runs on asyncio, so the server gets a thread with its own event loop; tests talk to
it over HTTP with the official SDKs and httpx, from sync code or from async tests on either
anyio backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

_T = TypeVar("_T")

KEY = "sk-test-key-0123456789"


@contextlib.contextmanager
def held_run(base_url: str, key: str, model: str, messages: Sequence[Any]) -> Iterator[None]:
    """A streamed chat run on ``model`` with ``key``, held open from its first line until the
    block ends: it keeps whatever slot it took (the key's, the caller's, the model's) busy."""
    import httpx  # here: most users of this module never stream by hand

    body = {"model": model, "messages": list(messages), "stream": True}
    headers = {"authorization": f"Bearer {key}"}
    with (
        httpx.Client(base_url=base_url, timeout=30) as http,
        http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as held,
    ):
        lines = held.iter_lines()  # kept: dropping it would make httpx drain the body
        next(lines)  # the run has started
        yield


def scripted_config(
    script: Sequence[object] | None = None,
    *,
    agents: Mapping[str, Mapping[str, Any]] | None = None,
    repeat: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A composition with one scripted provider and the given agents (default: ``assistant``)."""
    config: dict[str, Any] = {
        "providers": {
            "local": {
                "kind": "scripted",
                "options": {
                    "script": script
                    or [{"text": "Hello there!", "usage": {"prompt": 7, "completion": 3}}],
                    "on_exhausted": "repeat" if repeat else "error",
                },
            }
        },
        "agents": dict(agents or {"assistant": {"provider": "local", "model": "scripted-1"}}),
    }
    config.update(extra or {})
    return config


def tool_entries(risk: Any, *functions: Callable[..., Any]) -> Any:
    """An in-memory plugin source holding ``functions`` as tools of the given risk class."""
    import agentrig
    from agentrig.tools import tool

    source = agentrig.MemorySource()
    for function in functions:
        source.add("tools", function.__name__, tool(risk=risk)(function))
    return source


class RunningServer:
    """``with RunningServer(config, settings) as srv:`` -- ``srv.base_url`` serves until exit."""

    def __init__(
        self,
        config: Mapping[str, Any] | Path,
        settings: Mapping[str, Any] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        plugins: Iterable[tuple[str, object]] = (),
        overrides: Iterable[tuple[str, str, object]] = (),
        memory: Any = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.environ = dict(environ or {})
        self.plugins = list(plugins)
        self.overrides = list(overrides)
        self.memory = memory
        self.rt: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._server: Any = None
        self._temp: Any = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="agentrig-server")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to the test thread
            self._error = exc
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        from agentrig_server import AgentServer

        import agentrig

        resolver = agentrig.env_resolver(self.environ)
        config: Mapping[str, Any] | Path = self.config
        if self.settings is not None:  # the [server] table of a composition given as a mapping
            assert isinstance(self.config, Mapping)
            table = dict(self.settings)
            # key totals go to a directory of the test's own, never the checkout's
            table.setdefault("state_dir", self._state_dir())
            config = {**self.config, "server": table}
        async with agentrig.open_runtime(
            config,
            resolver=resolver,
            plugins=self.plugins,
            overrides=self.overrides,
            memory=self.memory,
            environ={},
        ) as rt:
            self.rt = rt
            self.loop = asyncio.get_running_loop()
            server = AgentServer(rt, host="127.0.0.1", port=0)
            self._server = server

            def started() -> None:
                self.port = int(server.url.rsplit(":", 1)[1])
                self._ready.set()

            await server.run(on_started=started)

    def _state_dir(self) -> str:
        import tempfile

        self._temp = tempfile.TemporaryDirectory(prefix="agentrig-server-state-")
        return self._temp.name

    def call(self, make: Callable[[], Awaitable[_T]]) -> _T:
        """Run a coroutine on the server's loop (to look at the runtime) and return its value."""
        assert self.loop is not None

        async def wrapped() -> _T:
            return await make()

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(timeout=30)

    def __enter__(self) -> RunningServer:
        self._thread.start()
        self._ready.wait(timeout=60)
        if self._error is not None:
            raise self._error
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(self._server.stop)
        self._thread.join(timeout=30)
        if self._temp is not None:
            self._temp.cleanup()
        if self._error is not None and exc is None:
            raise self._error
