"""The ASGI application: a function of an opened runtime and the ``[server]`` settings.

Every request passes the same gate before anything runs: the browser rules (Host 421, Origin
and page token 403, see ``_browser``), API key (401), rate limit (429 with ``Retry-After``),
the whole body read within ``body_timeout`` (415 unless JSON, 408, 413, 400 when malformed or
nested too deeply), the caller's concurrency slots (429), validation of the body (400), then
the model's own slots (429).  Only then does a run -- and a stream -- start.  The body is read
before a slot is taken, so a client that stalls its body holds no slot.  ``/health`` answers
anyone with liveness and nothing else.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentrig.agent import agent_configs
from agentrig.credentials import CREDENTIAL_STORES, CredentialStore, resolve_store_reference
from agentrig.errors import ConfigError, Issue, did_you_mean
from agentrig.ids import AgentId
from agentrig.llm import PROVIDERS, ProviderError, ReadinessCheck
from agentrig_server._admission import Caller, KeyChecker, RateLimiter, Slots
from agentrig_server._anthropic import (
    MessagesStream,
    message_body,
    parse_count_request,
    parse_messages_request,
)
from agentrig_server._approvals import ApprovalAnswer, Approvals
from agentrig_server._browser import BrowserGuard
from agentrig_server._errors import ApiError, Dialect, error_response, internal_error
from agentrig_server._events import Finished, RunEvent
from agentrig_server._hooks import ServerHooks
from agentrig_server._key_info import key_info_body
from agentrig_server._keys import KeyFile, KeyPolicy, state_root
from agentrig_server._openai_chat import ChatStream, chat_completion, parse_chat_request
from agentrig_server._request_id import RequestIdMiddleware
from agentrig_server._responses import ResponseBuilder, parse_responses_request
from agentrig_server._runs import ActiveRun, Prompt, RunService
from agentrig_server._settings import KeyLimits, ServerSettings, server_settings
from agentrig_server._stored import StoredResponses
from agentrig_server._streaming import EventStreamResponse, Renderer, run_to_end
from agentrig_server._tokens import estimate_input_tokens
from agentrig_server._usage import Ledger

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = ["ServerState", "create_app", "resolve_keys"]

Handler = Callable[[Request, Caller, Any], Awaitable[Response]]
"""A guarded route: the request, its verified caller and its parsed JSON body (or None)."""

#: The deepest nesting of arrays and objects a request body may have (no API here needs more;
#: deeper ones are refused before anything walks them).
MAX_JSON_DEPTH = 64


async def _resolve(
    rt: Runtime, reference: str, where: tuple[str | int, ...], issues: list[Issue]
) -> str | None:
    stores: dict[str, CredentialStore] = dict(rt.catalog(CREDENTIAL_STORES).entries())
    try:
        if reference.startswith("$ENV:"):
            name = reference[len("$ENV:") :]
            value = rt.resolver(name) if rt.resolver is not None else None
            if not value:
                issues.append(
                    Issue("server.secret_missing", f"{reference}: not set (or no resolver)", where)
                )
                return None
            return value
        return await resolve_store_reference(reference, stores)
    except Exception as exc:
        issues.append(Issue("server.secret", str(exc), where))
        return None


async def resolve_keys(rt: Runtime, settings: ServerSettings) -> list[str]:
    """The API keys behind the settings' secret references (a config error names a bad one)."""
    keys: list[str] = []
    issues: list[Issue] = []
    for i, reference in enumerate(settings.api_keys):
        value = await _resolve(rt, reference, ("server", "api_keys", i), issues)
        if value is not None:
            keys.append(value)
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    return keys


async def _named_keys(rt: Runtime, settings: ServerSettings) -> list[tuple[str, KeyPolicy]]:
    """``[server.keys.<id>]``: each key's secret and its limits."""
    named: list[tuple[str, KeyPolicy]] = []
    issues: list[Issue] = []
    for key_id, entry in settings.keys.items():
        where = ("server", "keys", key_id, "key")
        value = await _resolve(rt, entry.key, where, issues)
        if value is not None:
            limits = KeyLimits.model_validate(entry.model_dump(exclude={"key"}))
            named.append((value, KeyPolicy(key_id, "config", limits)))
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    return named


def _check_agents(rt: Runtime, settings: ServerSettings) -> None:
    known = sorted(agent_configs(rt.loaded))
    issues = []
    for name in settings.agents:
        if name not in known:
            hint = did_you_mean(name, known)
            issues.append(
                Issue(
                    "server.unknown_agent",
                    f"no [agents.{name}] to expose{hint} (agents: {', '.join(known) or 'none'})",
                    ("server", "agents", name),
                )
            )
    for key_id, entry in settings.keys.items():
        for model in entry.models or ():
            if model not in settings.agents:
                hint = did_you_mean(model, settings.agents)
                issues.append(
                    Issue(
                        "server.unknown_model",
                        f"key {key_id!r} names model {model!r}, which is not exposed{hint}",
                        ("server", "keys", key_id, "models"),
                    )
                )
    if not settings.agents:
        issues.append(
            Issue(
                "server.no_agents",
                "no agent is exposed: add a [server.agents.<id>] table for each agent to serve",
                ("server", "agents"),
            )
        )
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class ServerState:
    """What the routes share: the runtime, the limits and the run service."""

    def __init__(
        self,
        rt: Runtime,
        settings: ServerSettings,
        keys: list[str],
        named: Sequence[tuple[str, KeyPolicy]] = (),
    ) -> None:
        self.rt = rt
        self.settings = settings
        root = state_root(settings, rt.loaded.base_dir)
        self.keys = KeyChecker(keys, named, KeyFile(root))
        self.ledger = Ledger(root)
        self.rate = RateLimiter(settings.rate_limit_per_minute)
        self.callers = Slots(settings.max_concurrent_per_key, "caller")
        self.runs = RunService(rt, settings, self.ledger)
        self.approvals = Approvals()
        self.responses = StoredResponses(settings.max_stored_responses)

    def caller(self, request: Request) -> Caller:
        client = request.client.host if request.client is not None else "unknown"
        self.keys.refresh()  # a key added or revoked by 'agentrig serve keys' counts now
        if not self.keys.enabled and not _is_loopback(client):
            # no keys: loopback callers only, whatever address the server was bound to
            raise ApiError(403, "this server has no API keys configured and serves loopback only")
        auth = request.headers.get("authorization", "")
        presented = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        presented = presented or request.headers.get("x-api-key")
        caller = self.keys.verify(presented, client)
        key = caller.key
        if key is None:
            self.rate.take(caller.identity)
            return caller
        request.scope["state"]["key_id"] = key.key_id  # for the error log (never the key)
        self.rate.take(caller.identity, key.limits.rpm_limit)
        # what runs a model (or counts for one) is held to the key's tokens and budget; its
        # own info and the lists stay readable once they are spent
        self.ledger.admit(key, check=request.method == "POST")
        return caller

    async def body(self, request: Request) -> Any:
        """The request's JSON body, read whole within ``body_timeout`` and checked: JSON by
        its content type, no larger than ``max_body_bytes``, no deeper than MAX_JSON_DEPTH."""
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise ApiError(
                415,
                "send the request body as JSON with 'Content-Type: application/json'",
                code="unsupported_media_type",
            )
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ApiError(413, f"request body larger than {limit} bytes", code="request_too_large")
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.settings.body_timeout) as deadline:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise ApiError(
                        413, f"request body larger than {limit} bytes", code="request_too_large"
                    )
                chunks.append(chunk)
        if deadline.cancelled_caught:
            raise ApiError(
                408,
                f"the request body did not arrive within {self.settings.body_timeout:g} seconds",
                code="request_timeout",
            )
        return parse_json(b"".join(chunks))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes) -> Any:
    """Strict JSON (no NaN / Infinity) nested at most MAX_JSON_DEPTH deep, or a 400."""
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise ApiError(400, "the request body is not valid JSON", param="body") from None
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:  # iterative: a deep body must not exhaust the stack that checks it
        item, depth = pending.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if depth >= MAX_JSON_DEPTH:
                    raise ApiError(
                        400,
                        f"the request body is nested more than {MAX_JSON_DEPTH} levels deep",
                        param="body",
                    )
                pending.append((child, depth + 1))
    return value


def _guarded(
    state: ServerState, dialect: Dialect, handler: Handler, *, with_body: bool
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            caller = state.caller(request)
            # the whole body first: a client stalling it must not hold one of its slots
            body = await state.body(request) if with_body else None
            parallel = caller.key.limits.max_parallel_requests if caller.key else None
            state.callers.acquire(caller.identity, parallel)
        except ApiError as exc:
            return failed(request, exc, dialect)

        def release() -> None:
            state.callers.release(caller.identity)

        try:
            response = await handler(request, caller, body)
        except ApiError as exc:
            release()
            return failed(request, exc, dialect)
        except BaseException as exc:
            release()
            if isinstance(exc, Exception):
                return failed(request, internal_error(exc), dialect)
            raise
        if isinstance(response, EventStreamResponse):
            response.on_done = release  # a stream holds the caller's slot until it ends
        else:
            release()
        return response

    return endpoint


def failed(request: Request, error: ApiError, dialect: Dialect) -> Response:
    """The error answer; its code is noted for the error log."""
    request.scope["state"]["error_code"] = error.api_code
    return error_response(error, dialect)


R = TypeVar("R", bound=Renderer)
_TRACE_HEADERS = ("traceparent", "tracestate")


async def _answer(
    state: ServerState,
    request: Request,
    caller: Caller,
    prompt: Prompt,
    stream: bool,
    renderer: Callable[[ActiveRun], R],
    body: Callable[[R, Finished], dict[str, Any]],
    *,
    events: bool = False,
) -> Response:
    """Admit and run ``prompt``: streamed through ``renderer``'s frames, or answered once with
    ``body`` -- built from the same renderer after the run when the answer needs the run's
    ``events`` (the Responses output items)."""
    run = await state.runs.open(prompt, caller)
    run.inbound_trace = {k: v for k in _TRACE_HEADERS if (v := request.headers.get(k))}
    try:
        render = renderer(run)
    except BaseException:
        await run.close()
        raise
    if stream:
        return EventStreamResponse(run, render)

    async def collect(event: RunEvent) -> None:
        if events:
            render.event(event)

    finished = await run_to_end(run, request.receive, collect, stream=False)
    if finished is None:  # the client went away; nobody reads this
        return Response(status_code=499)
    return JSONResponse(body(render, finished))


def _answered(
    state: ServerState,
    caller: Caller,
    model: str,
    answers: Sequence[ApprovalAnswer],
    stream: bool,
    echo: dict[str, Any],
) -> Response:
    """A Responses request whose input ends with ``mcp_approval_response`` items: each answers
    its waiting call as ``POST /v1/approvals/{id}`` does.  The run that waited goes on in the
    response that showed the request, so this one completes with no output of its own."""
    state.runs.allowed(model, caller)
    state.approvals.decide_all(caller.identity, model, echo["previous_response_id"], answers)

    def keep(body: dict[str, Any]) -> None:
        state.responses.keep(caller.identity, body)

    response_id = f"resp_{secrets.token_hex(12)}"
    builder = ResponseBuilder(response_id, model, echo, keep=keep if echo["store"] else None)
    done = Finished(text="", finish="stop", usage=None, model=model)
    if not stream:
        return JSONResponse(builder.final(done))
    frames = [*builder.start(), *builder.event(done)]
    return Response(b"".join(frames), media_type="text/event-stream")


_PAGE_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/ui/chat.js": ("chat.js", "text/javascript; charset=utf-8"),
    "/ui/chat.css": ("chat.css", "text/css; charset=utf-8"),
}


def _model(name: str) -> dict[str, Any]:
    """An exposed agent as a model object, in the shape both SDKs read."""
    return {
        "id": name,
        "object": "model",
        "created": 0,
        "owned_by": "agentrig",
        "type": "model",
        "display_name": name,
        "created_at": "1970-01-01T00:00:00Z",
    }


def _page_routes(page_token: str) -> list[Route]:
    """The chat page: three files shipped in the distribution (no build step, no CDN); the
    page carries this launch's token, which its API calls send back."""
    files = resources.files("agentrig_server") / "static"
    routes = []
    for path, (name, media_type) in _STATIC.items():
        content = (files / name).read_bytes()
        if name == "index.html":
            content = content.replace(b"{{page_token}}", page_token.encode())

        async def page(
            request: Request, content: bytes = content, media: str = media_type
        ) -> Response:
            return Response(content, media_type=media, headers=_PAGE_HEADERS)

        routes.append(Route(path, page, methods=["GET"]))
    return routes


def _openapi(routes: list[Route]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for route in routes:
        for method in sorted((route.methods or set()) - {"HEAD"}):
            paths.setdefault(route.path, {})[method.lower()] = {
                "summary": _SUMMARIES.get(route.path, route.path)
            }
    return {
        "openapi": "3.1.0",
        "info": {"title": "agentrig server", "version": "1"},
        "paths": paths,
    }


_SUMMARIES = {
    "/health": "Liveness",
    "/ready": "Readiness, with each dependency's check",
    "/v1/models": "The exposed agents",
    "/v1/models/{model_id}": "One exposed agent",
    "/v1/chat/completions": "OpenAI chat completions (plain and streamed)",
    "/v1/responses": "OpenAI Responses (plain and streamed; previous_response_id)",
    "/v1/responses/{response_id}": "A stored response: read (GET) or delete (DELETE)",
    "/v1/messages": "Anthropic messages (plain and streamed)",
    "/v1/messages/count_tokens": "Anthropic token count (an estimate; nothing runs)",
    "/v1/approvals": "Tool calls of your runs waiting for a person",
    "/v1/approvals/{approval_id}": "Answer a waiting call: allow or deny",
    "/v1/sessions": "Your kept conversations",
    "/v1/sessions/{session_id}": "One kept conversation",
    "/key/info": "The calling key: its models, limits, spend and usage",
    "/v1/key/info": "The calling key: its models, limits, spend and usage",
}


async def create_app(rt: Runtime, settings: ServerSettings | None = None) -> Starlette:
    """The ASGI app serving ``rt``'s exposed agents (keys resolved, agents checked here);
    ``settings`` default to the config's ``[server]`` table."""
    if settings is None:
        settings = server_settings(rt)
    _check_agents(rt, settings)
    keys = await resolve_keys(rt, settings)
    state = ServerState(rt, settings, keys, await _named_keys(rt, settings))
    rt.add_plugin("agentrig-server", ServerHooks(state.runs, state.approvals))
    rt.spawn(state.ledger.keep_flushed)  # totals written while serving, and at the end

    async def chat(request: Request, caller: Caller, body: Any) -> Response:
        prompt, stream, include_usage = parse_chat_request(body)
        return await _answer(
            state,
            request,
            caller,
            prompt,
            stream,
            lambda run: ChatStream(prompt.model, include_usage),
            lambda _render, finished: chat_completion(finished),
        )

    async def messages(request: Request, caller: Caller, body: Any) -> Response:
        prompt, stream = parse_messages_request(body)
        return await _answer(
            state,
            request,
            caller,
            prompt,
            stream,
            lambda run: MessagesStream(prompt.model, estimate_input_tokens(state.rt, prompt)),
            lambda _render, finished: message_body(finished),
        )

    async def count_tokens(request: Request, caller: Caller, body: Any) -> Response:
        prompt = parse_count_request(body)
        state.runs.allowed(prompt.model, caller)  # a 404 naming the known ones, or a 403
        return JSONResponse({"input_tokens": estimate_input_tokens(state.rt, prompt)})

    async def responses(request: Request, caller: Caller, body: Any) -> Response:
        prompt, stream, echo = parse_responses_request(body)
        if not isinstance(prompt, Prompt):  # it answers waiting calls (mcp_approval_response)
            return _answered(state, caller, body["model"], prompt, stream, echo)

        def builder(run: ActiveRun) -> ResponseBuilder:
            session = run.session_id if run.served is not None else None
            # the limit the run really has (clamped to the agent's max_output_tokens)
            shown = {**echo, "max_output_tokens": run.agent.config.max_tokens}
            keep = None
            if echo["store"]:

                def keep(body: dict[str, Any]) -> None:
                    state.responses.keep(caller.identity, body)

            return ResponseBuilder(run.response_id, prompt.model, shown, session, keep)

        return await _answer(
            state, request, caller, prompt, stream, builder, ResponseBuilder.final, events=True
        )

    async def models(request: Request, caller: Caller, body: None) -> Response:
        key = caller.key
        data = [_model(name) for name in settings.agents if key is None or key.allows(name)]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    async def model(request: Request, caller: Caller, body: None) -> Response:
        name = request.path_params["model_id"]
        state.runs.allowed(name, caller)  # a 404 naming the known ones, or a 403
        return JSONResponse(_model(name))

    async def stored(request: Request, caller: Caller, body: None) -> Response:
        response_id = request.path_params["response_id"]
        if request.method == "DELETE":
            state.responses.delete(response_id, caller.identity)
            return JSONResponse({"id": response_id, "object": "response", "deleted": True})
        return JSONResponse(state.responses.get(response_id, caller.identity))

    async def approvals(request: Request, caller: Caller, body: None) -> Response:
        pending = state.approvals.owned_by(caller.identity)
        return JSONResponse({"object": "list", "data": [p.public() for p in pending]})

    async def answer(request: Request, caller: Caller, body: Any) -> Response:
        approval_id = request.path_params["approval_id"]
        pending = state.approvals.answer(approval_id, caller.identity, body)
        return JSONResponse({**pending.public(), "decision": pending.answer})

    async def sessions(request: Request, caller: Caller, body: None) -> Response:
        kept = state.runs.sessions.owned_by(caller.identity)
        return JSONResponse({"object": "list", "data": [s.summary() for s in kept]})

    async def session(request: Request, caller: Caller, body: None) -> Response:
        kept = state.runs.sessions.get(request.path_params["session_id"], caller.identity)
        return JSONResponse({**kept.summary(), "messages": kept.transcript()})

    async def key_info(request: Request, caller: Caller, body: None) -> Response:
        if caller.key is None:
            raise ApiError(404, "this server has no API keys: there is no key to describe")
        return JSONResponse(key_info_body(caller.key, state.ledger))

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(request: Request, caller: Caller, body: None) -> Response:
        checks = await _ready_checks(state)
        ok = all(c["status"] != "failed" for c in checks.values())
        return JSONResponse(
            {"status": "ready" if ok else "not_ready", "checks": checks},
            status_code=200 if ok else 503,
        )

    def get(path: str, handler: Handler) -> Route:
        return Route(path, _guarded(state, "openai", handler, with_body=False), methods=["GET"])

    def post(path: str, handler: Handler, dialect: Dialect = "openai") -> Route:
        return Route(path, _guarded(state, dialect, handler, with_body=True), methods=["POST"])

    routes = [
        Route("/health", health, methods=["GET"]),
        get("/ready", ready),
        get("/v1/models", models),
        get("/v1/models/{model_id}", model),
        post("/v1/chat/completions", chat),
        post("/v1/responses", responses),
        Route(
            "/v1/responses/{response_id}",
            _guarded(state, "openai", stored, with_body=False),
            methods=["GET", "DELETE"],
        ),
        post("/v1/messages", messages, "anthropic"),
        post("/v1/messages/count_tokens", count_tokens, "anthropic"),
        get("/v1/approvals", approvals),
        post("/v1/approvals/{approval_id}", answer),
        get("/v1/sessions", sessions),
        get("/v1/sessions/{session_id}", session),
        # the calling key's limits, spend and usage (LiteLLM's path, and under /v1)
        get("/key/info", key_info),
        get("/v1/key/info", key_info),
    ]
    if settings.docs:
        document = _openapi(routes)

        async def openapi(request: Request) -> Response:
            return JSONResponse(document)

        routes.append(Route("/openapi.json", openapi, methods=["GET"]))
    page_token = secrets.token_urlsafe(32) if settings.ui else None
    if page_token is not None:
        routes.extend(_page_routes(page_token))
    app = Starlette(
        routes=routes,
        middleware=[
            # outermost: refusals carry the id too, and the access log sees every request
            Middleware(
                RequestIdMiddleware,
                access_log=settings.access_log,
                error_log=settings.error_log,
            ),
            Middleware(BrowserGuard, settings=settings, page_token=page_token),
            *_cors(settings),
        ],
    )
    app.state.server = state
    return app


def _cors(settings: ServerSettings) -> list[Middleware]:
    """CORS answers for ``allowed_origins`` only (a browser on another origin needs them to
    send JSON and read the answer); every other origin was refused before this."""
    if not settings.allowed_origins:
        return []
    from starlette.middleware.cors import CORSMiddleware

    return [
        Middleware(
            CORSMiddleware,
            allow_origins=list(settings.allowed_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["*"],
            max_age=600,
        )
    ]


async def _ready_checks(state: ServerState) -> dict[str, dict[str, str]]:
    """Each dependency's check, bounded by ``ready_timeout``: the runtime, then each exposed
    agent's provider (through its optional ``check_ready()``)."""
    rt = state.rt
    checks: dict[str, dict[str, str]] = {"runtime": {"status": "failed" if rt.closed else "ok"}}
    for name in state.settings.agents:
        provider_id = agent_configs(rt.loaded)[AgentId(name)].provider  # exposed: a declared agent
        key = f"provider:{provider_id}"
        if key in checks:
            continue
        provider: object = rt.catalog(PROVIDERS).get(provider_id)  # may offer a readiness check
        if not isinstance(provider, ReadinessCheck):
            checks[key] = {"status": "unchecked", "detail": "the provider offers no check_ready()"}
            continue
        try:
            with anyio.fail_after(state.settings.ready_timeout):
                await provider.check_ready()
        except TimeoutError:
            checks[key] = {"status": "failed", "detail": "timed out"}
        except ProviderError as exc:
            # the kind of failure (auth, connection, ...) and its status help an operator;
            # the upstream's own message can name hosts or keys, so it goes to the log only
            error = internal_error(exc)
            status = f" (HTTP {exc.status})" if exc.status is not None else ""
            checks[key] = {"status": "failed", "detail": f"{exc.code}{status}; {error.message}"}
        except Exception as exc:
            error = internal_error(exc)
            checks[key] = {"status": "failed", "detail": error.message}
        else:
            checks[key] = {"status": "ok"}
    return checks
