"""The ``[server]`` settings: which agents are exposed, who may call, and every limit.

Every default is the closed one: no agent is exposed unless listed, API keys are secret
references (never literals in a file), limits are on, approvals are refused, API docs pages
are off.  The model is strict: an unknown key is an error naming ``server.<key>``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentrig.errors import ConfigError, Issue, closest_match

if TYPE_CHECKING:
    from agentrig.kernel import Runtime

__all__ = [
    "ExposedAgent",
    "KeyLimits",
    "NamedKey",
    "ServerSettings",
    "check_key_id",
    "parse_settings",
    "period_seconds",
    "server_settings",
]

_SECRET_PREFIXES = ("$ENV:", "$STORE:")


_DAY = 86_400.0


class _Strict(BaseModel):
    # every number is finite: ``inf`` or ``nan`` would turn a bound into no bound at all
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ExposedAgent(_Strict):
    """``[server.agents.<id>]``: an agent served as model ``<id>``, with its run limits."""

    #: Runs of this model at once; more get 429 (each model has its own, so a slow one
    #: cannot hold up the others).
    max_concurrent: int = Field(default=8, ge=1, le=100_000)
    #: Wall-clock budget of one run in seconds; past it the run is interrupted (a truncation).
    max_run_seconds: float = Field(default=120.0, gt=0, le=_DAY)
    #: Token budget of one run (prompt + completion over all its model calls).
    max_run_tokens: int = Field(default=200_000, ge=1, le=10**9)
    #: The cap on a request's ``max_tokens`` / ``max_output_tokens`` (a larger ask is lowered).
    max_output_tokens: int = Field(default=8192, ge=1, le=10**7)
    #: The cap on model rounds per run (the lower of this and the agent's own ``max_rounds``).
    max_rounds: int = Field(default=25, ge=1, le=10_000)
    #: ``"refuse"``: a call that needs a person's approval fails the request with a 403;
    #: ``"api"``: the run waits for an answer through ``POST /v1/approvals/{id}``.
    approvals: Literal["refuse", "api"] = "refuse"
    #: How long a run waits for an approval before the call is denied (``approvals = "api"``).
    approval_timeout: float = Field(default=300.0, gt=0, le=_DAY)

    @model_validator(mode="after")
    def _timeout_needs_api(self) -> ExposedAgent:
        if "approval_timeout" in self.model_fields_set and self.approvals != "api":
            raise ValueError(
                "approval_timeout has no effect with approvals = 'refuse' (nothing waits for "
                "an answer): set approvals = 'api' or remove it"
            )
        return self


_KEY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PERIOD = re.compile(r"([1-9][0-9]{0,5})(s|m|h|d)")
_PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def check_key_id(key_id: str) -> str:
    """A key's id: letters, digits, ``_ . -`` (64 at most), as it appears in logs."""
    if not _KEY_ID.fullmatch(key_id):
        raise ValueError(
            f"{key_id!r} is not a key id (letters, digits, '_', '.', '-'; at most 64, "
            "starting with a letter or digit)"
        )
    return key_id


@functools.lru_cache(maxsize=64)
def period_seconds(period: str) -> int:
    """Seconds of a budget period (``30s``, ``15m``, ``24h``, ``30d``)."""
    match = _PERIOD.fullmatch(period)
    if match is None:
        raise ValueError(
            f"{period!r} is not a budget period: write a whole number and a unit, s, m, h "
            "or d (30s, 15m, 24h, 30d)"
        )
    return int(match.group(1)) * _PERIOD_SECONDS[match.group(2)]


class KeyLimits(_Strict):
    """What one API key may do: its models, rate and token limits, and budget (each unset
    one is not limited beyond the server's own limits)."""

    #: the exposed agents (models) the key may call; unset: every exposed one
    models: tuple[str, ...] | None = None
    #: requests per minute (replaces ``rate_limit_per_minute`` for this key); past it 429
    rpm_limit: int | None = Field(default=None, ge=1, le=10**7)
    #: tokens (prompt + completion) per minute; a request once the last minute's runs used
    #: it is refused with 429 until enough of them are a minute old
    tpm_limit: int | None = Field(default=None, ge=1, le=10**12)
    #: requests in progress at once (replaces ``max_concurrent_per_key`` for this key)
    max_parallel_requests: int | None = Field(default=None, ge=1, le=100_000)
    #: USD the key may spend (per ``budget_duration`` when set, else in all); priced by the
    #: models' metadata -- a model without a price cannot be counted, so it is refused
    max_budget: float | None = Field(default=None, ge=0, le=10**9)
    #: tokens the key may use (per ``budget_duration`` when set, else in all)
    max_budget_tokens: int | None = Field(default=None, ge=0, le=10**15)
    #: how often spend and tokens counted against the budgets start again (30s, 15m, 24h, 30d)
    budget_duration: str | None = None

    @field_validator("budget_duration")
    @classmethod
    def _period(cls, period: str | None) -> str | None:
        if period is not None:
            period_seconds(period)
        return period

    @field_validator("models")
    @classmethod
    def _some_models(cls, models: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if models is not None and not models:
            raise ValueError("an empty model list allows nothing: name models or leave it out")
        return models

    @model_validator(mode="after")
    def _period_needs_budget(self) -> KeyLimits:
        if self.budget_duration is not None and (
            self.max_budget is None and self.max_budget_tokens is None
        ):
            raise ValueError(
                "budget_duration has no effect without max_budget or max_budget_tokens"
            )
        return self


class NamedKey(KeyLimits):
    """``[server.keys.<id>]``: a key from a secret reference, with its own limits."""

    #: the key, as a secret reference (``$ENV:NAME`` or ``$STORE:...``), never a literal
    key: str

    @field_validator("key")
    @classmethod
    def _reference(cls, key: str) -> str:
        if not key.startswith(_SECRET_PREFIXES):
            # never echo the value: a key typed in by mistake must not reach a log
            raise ValueError(
                "must be a secret reference ($ENV:NAME or $STORE:<store>:<service>/<account>), "
                "never a literal in the config file"
            )
        return key


class ServerSettings(_Strict):
    """``[server]``: the inbound API's settings (see docs/server.md)."""

    host: str = "127.0.0.1"
    port: int = Field(default=8400, ge=0, le=65535)
    #: API keys as secret references (``$ENV:NAME`` or ``$STORE:<store>:<service>/<account>``).
    #: Without any, the server binds loopback only.
    api_keys: tuple[str, ...] = ()
    agents: dict[str, ExposedAgent] = Field(default_factory=dict)
    #: named keys with their own models, limits and budgets (``[server.keys.<id>]``); more
    #: are added with ``agentrig serve keys add`` into ``state_dir``
    keys: dict[str, NamedKey] = Field(default_factory=dict)
    #: where keys made by ``agentrig serve keys`` and every key's spend and usage totals are
    #: kept (owner-only; relative to the config file's directory)
    state_dir: str = ".agentrig/server"
    #: Largest request body in bytes (larger: 413).
    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1, le=1024**3)
    #: Requests per minute per verified key (or per client address without auth); 429 past it.
    rate_limit_per_minute: int = Field(default=120, ge=1, le=10**7)
    #: Requests admitted at once per key (or client address); 429 past it.
    max_concurrent_per_key: int = Field(default=16, ge=1, le=100_000)
    #: Conversations kept for ``previous_response_id`` and the chat page (oldest dropped).
    max_sessions: int = Field(default=1000, ge=1, le=10**7)
    #: One line per request on the ``agentrig.server.access`` logger (id, client, method,
    #: path, status, duration; never content); ``agentrig serve`` prints them on stderr.
    access_log: bool = False
    #: One line per failed request on the ``agentrig.server.errors`` logger (time, key id,
    #: route, status, error code; never the key, a header or a body).
    error_log: bool = True
    #: Finished Responses kept for ``GET``/``DELETE /v1/responses/{id}`` (oldest dropped).
    max_stored_responses: int = Field(default=1000, ge=1, le=10**7)
    #: Seconds ``GET /ready`` gives each dependency check.
    ready_timeout: float = Field(default=5.0, gt=0, le=600)
    #: Seconds a client has to send a request's head (request line and headers); a slower
    #: connection is closed.
    header_timeout: float = Field(default=10.0, gt=0, le=3600)
    #: Seconds a client has to send a request's whole body; past it 408.
    body_timeout: float = Field(default=30.0, gt=0, le=3600)
    #: Host names (besides the address the server listens on) a request's ``Host`` may name;
    #: any other is refused (421), so a DNS-rebinding page cannot reach the server.
    allowed_hosts: tuple[str, ...] = ()
    #: Origins (``scheme://host[:port]``) besides the server's own whose browser requests are
    #: accepted; a request with any other ``Origin`` is refused (403).
    allowed_origins: tuple[str, ...] = ()
    #: Addresses or networks of reverse proxies whose ``X-Forwarded-For`` / ``-Proto``
    #: headers name the client; without any, those headers are ignored.
    trusted_proxies: tuple[str, ...] = ()
    #: Serve the OpenAPI document at ``/openapi.json`` (off unless enabled).
    docs: bool = False
    #: Before listening, ask each provider's endpoint for its models and refuse to start
    #: when a configured model is not listed (``agentrig serve --validate-models``).
    validate_models: bool = False
    #: Serve the chat page at ``/`` (``agentrig serve --ui`` turns it on).
    ui: bool = False

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not name or any(c in name for c in "/:@ *") or name != name.strip():
                raise ValueError(
                    f"{name!r} is not a host name (write the name alone: no scheme, port, "
                    "path or wildcard)"
                )
        return tuple(name.lower().rstrip(".") for name in names)

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, origins: tuple[str, ...]) -> tuple[str, ...]:
        from urllib.parse import urlsplit

        for origin in origins:
            parts = urlsplit(origin)
            if (
                parts.scheme not in ("http", "https")
                or not parts.hostname
                or parts.path
                or parts.query
                or parts.fragment
                or parts.username
            ):
                raise ValueError(
                    f"{origin!r} is not an origin (write scheme://host[:port], as a browser "
                    "sends it)"
                )
        return tuple(origin.lower() for origin in origins)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, proxies: tuple[str, ...]) -> tuple[str, ...]:
        normal = []
        for proxy in proxies:
            try:
                if "/" in proxy:
                    normal.append(str(ipaddress.ip_network(proxy, strict=False)))
                else:
                    normal.append(str(ipaddress.ip_address(proxy)))
            except ValueError:
                raise ValueError(
                    f"{proxy!r} is not an IP address or network (such as 10.0.0.5 or 10.0.0.0/24)"
                ) from None
        return tuple(normal)

    @field_validator("keys")
    @classmethod
    def _key_ids(cls, keys: dict[str, NamedKey]) -> dict[str, NamedKey]:
        for key_id in keys:
            check_key_id(key_id)
        return keys

    @model_validator(mode="after")
    def _references_only(self) -> ServerSettings:
        # checked on the whole table, so an error never echoes the value: a key typed in
        # by mistake must not end up in a terminal or a log
        for index, key in enumerate(self.api_keys):
            if not key.startswith(_SECRET_PREFIXES):
                raise ValueError(
                    f"api_keys[{index}] must be a secret reference ($ENV:NAME or "
                    "$STORE:<store>:<service>/<account>), never a literal in the config file"
                )
        return self


def _did_you_mean(loc: tuple[str | int, ...]) -> str:
    model: type[BaseModel] = ServerSettings
    if len(loc) == 4:
        model = NamedKey if loc[1] == "keys" else ExposedAgent
    close = closest_match(str(loc[-1]), model.model_fields)
    return f" (did you mean {close!r}?)" if close else ""


def parse_settings(data: Mapping[str, Any] | None, *, source: str | None = None) -> ServerSettings:
    """Validate a ``[server]`` table; errors name ``server.<key>`` and the file."""
    try:
        return ServerSettings.model_validate(dict(data or {}))
    except ValidationError as exc:
        issues = []
        for item in exc.errors(include_url=False):
            loc = ("server", *(p for p in item["loc"] if isinstance(p, str | int)))
            if item["type"] == "extra_forbidden":
                message = f"unknown key {loc[-1]!r}{_did_you_mean(loc)}"
            else:
                message = str(item["msg"]).removeprefix("Value error, ")  # never the input
            issues.append(Issue(f"server.{item['type']}", message, loc))
        raise ConfigError(issues, source=source) from None


def server_settings(rt: Runtime) -> ServerSettings:
    """The ``[server]`` table of ``rt``'s config (the closed defaults when there is none)."""
    return rt.config_section("server", ServerSettings) or ServerSettings()
