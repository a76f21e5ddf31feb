"""Request options a provider would not send: refused when the agent is built, not dropped.

``[agents.<id>] options`` become extra fields of every request body.  A field the provider
sets itself (the model, the messages, whether it streams) cannot be one of them; instead of
dropping it at every request, a provider says so once, through :class:`RequestOptionsCheck`,
and the runtime refuses the agent with a :class:`~agentrig.errors.ConfigError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from agentrig.errors import Issue
from agentrig.llm._errors import InvalidRequestError

__all__ = [
    "BODY_FIELDS",
    "RequestOptionsCheck",
    "request_option_issues",
    "reserved_option_error",
    "reserved_option_issues",
]

PathParts = tuple[str | int, ...]

BODY_FIELDS: Mapping[str, str] = {
    "model": "set {owner}.model (or pass model= to agents.create)",
    "messages": "the messages are the session's history and the prompt of run()/stream()",
    "stream": "streaming is chosen per call: run() answers whole, stream() streams",
}
"""The request fields every chat provider sets itself, each with what to use instead: the
start of a provider's ``reserved`` table for :func:`reserved_option_issues`."""


@runtime_checkable
class RequestOptionsCheck(Protocol):
    """A provider that checks the request options an agent would send through it.

    Optional.  When an agent is built (the runtime opening, ``rt.agents.create``, a resume),
    its non-empty ``options`` table is passed here with ``where``, the table's location
    (``("agents", "<id>", "options")``); every issue returned refuses the agent.  An issue's
    path is absolute (``(*where, key)``).  It runs once per agent, never per request.
    """

    def check_request_options(
        self, options: Mapping[str, Any], *, where: PathParts
    ) -> Sequence[Issue]: ...


def reserved_option_issues(
    options: Mapping[str, Any], reserved: Mapping[str, str], *, where: PathParts
) -> list[Issue]:
    """One ``config.reserved_option`` issue per key of ``options`` that ``reserved`` names.

    ``reserved`` maps a request field the provider sets itself to what to use instead;
    ``{owner}`` in that text becomes the location of the table holding ``options``
    (``agents.<id>``).  Most providers implement :class:`RequestOptionsCheck` with this.
    """
    refused = [key for key in options if key in reserved]
    if not refused:
        return []
    owner = ".".join(str(part) for part in where[:-1]) or "the agent"
    return [
        Issue(
            "config.reserved_option",
            f"{key!r} is set by the provider itself and cannot be a request option; "
            + reserved[key].format(owner=owner),
            (*where, key),
        )
        for key in refused
    ]


def request_option_issues(
    provider: object, options: Mapping[str, Any], *, where: PathParts
) -> list[Issue]:
    """What ``provider`` refuses of ``options`` (nothing when it declares no check)."""
    if not options:
        return []
    # a plain attribute lookup: a runtime-checkable isinstance costs microseconds, and a
    # server builds an agent per request
    check = getattr(provider, "check_request_options", None)
    return [] if check is None else list(check(options, where=where))


def reserved_option_error(
    key: str, reserved: Mapping[str, str], *, provider: str
) -> InvalidRequestError:
    """The error for a request that still carries reserved field ``key`` (a ``request_config``
    listener's options are not checked at build time): raise it before sending, never drop."""
    return InvalidRequestError(
        f"request option {key!r} is set by the provider itself and was not sent; "
        + reserved[key].format(owner="the agent's config"),
        provider=provider,
    )
