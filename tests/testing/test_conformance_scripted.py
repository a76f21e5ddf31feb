"""The built-in ``scripted`` provider passes the provider conformance suite.

Each abstract scenario is mapped onto a :class:`~agentrig.builtins._scripted.Reply` that the
provider repeats for every request; the "wire" is the list of requests the provider kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentrig.builtins._scripted import Reply, ScriptedCall, ScriptedProvider
from agentrig.llm import Provider, error_from_status
from agentrig.testing.conformance_provider import (
    RETRY_AFTER,
    SLOW_FIRST_DELTA,
    TEXT,
    TEXT_DELTAS,
    TEXT_USAGE,
    TOOL_CALLS,
    TOOL_USAGE,
    ProviderConformance,
    Scenario,
)

_STATUS = {
    Scenario.ERROR_429: (429, "rate_limit_error", {"retry-after": str(int(RETRY_AFTER))}),
    Scenario.ERROR_500: (500, "server_error", {}),
    Scenario.ERROR_400: (400, "invalid_request_error", {}),
    Scenario.ERROR_401: (401, "authentication_error", {}),
}


def reply_for(scenario: Scenario) -> Reply:
    """The scripted answer of one conformance scenario."""
    size = len(TEXT_DELTAS[0])
    if scenario is Scenario.TEXT:
        return Reply(text=TEXT, usage=TEXT_USAGE, chunk_size=size)
    if scenario is Scenario.TEXT_NO_USAGE:
        return Reply(text=TEXT, chunk_size=size)
    if scenario is Scenario.TOOL_CALLS:
        calls = tuple(
            ScriptedCall(name=c.name, id=c.id, raw_arguments="".join(c.pieces)) for c in TOOL_CALLS
        )
        return Reply(tool_calls=calls, usage=TOOL_USAGE)
    if scenario is Scenario.SLOW_STREAM:
        # The script's delay precedes every chunk: one second is far longer than the
        # suite's abort deadline, so a prompt abort is still told apart from a late one.
        return Reply(
            text=SLOW_FIRST_DELTA + " and more", chunk_size=len(SLOW_FIRST_DELTA), delay=1.0
        )
    status, vendor_type, headers = _STATUS[scenario]
    body = {"error": {"type": vendor_type, "message": f"scripted {status}"}}
    return Reply(error=error_from_status(status, body, headers, provider="scripted"))


class TestScriptedConformance(ProviderConformance):
    model = "scripted-model"

    def make_provider(self, scenario: Scenario) -> Provider:
        provider = ScriptedProvider([reply_for(scenario)], on_exhausted="repeat")
        self.__dict__.setdefault("built", []).append(provider)
        return provider

    def wire_requests(self) -> Sequence[Mapping[str, Any]] | None:
        built: list[ScriptedProvider] = self.__dict__.get("built", [])
        return [request.model_dump() for p in built for request in p.requests]


class TestScriptedReplyCheckpointConformance(TestScriptedConformance):
    """The same contract when the stream yields to the event loop once per reply."""

    def make_provider(self, scenario: Scenario) -> Provider:
        provider = ScriptedProvider(
            [reply_for(scenario)], on_exhausted="repeat", checkpoint="reply"
        )
        self.__dict__.setdefault("built", []).append(provider)
        return provider
