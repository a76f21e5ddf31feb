"""What a connection answers when its server asks the client: sampling and elicitation.

:func:`session_callbacks` gives a connection the SDK callbacks for what its config offers;
only those are passed to the SDK's ``ClientSession``, which advertises a capability exactly
when its callback is given -- so a server is told of sampling only when ``sampling`` is not
``off``, and of elicitation only when ``elicitation`` is on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
from mcp import types
from mcp.client.session import ElicitationFnT, SamplingFnT

if TYPE_CHECKING:
    from agentrig.kernel import HookDispatcher
    from agentrig_mcp._connection import ServerConnection

__all__ = ["Answers", "SessionCallbacks", "session_callbacks"]


@attrs.frozen
class SessionCallbacks:
    """The callbacks one connection's ``ClientSession`` gets (None: not offered)."""

    sampling: SamplingFnT | None = None
    elicitation: ElicitationFnT | None = None


Answers = Callable[["ServerConnection"], SessionCallbacks]
"""``answers(connection)``: the callbacks for that connection's server."""


def session_callbacks(hooks: HookDispatcher) -> Answers:
    """The runtime's answers: sampling through the calling agent, elicitation through the
    ``elicitation`` hook of ``hooks``."""

    def callbacks(connection: ServerConnection) -> SessionCallbacks:
        from agentrig_mcp._elicitation import BadSchema, answer_elicitation
        from agentrig_mcp._sampling import Refused, answer_sampling, sampling_capability

        name, spec = connection.name, connection.spec

        async def sampling(
            context: Any, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult | types.ErrorData:
            try:
                return await answer_sampling(name, spec, connection.callers, params)
            except Refused as exc:
                return types.ErrorData(code=exc.code, message=str(exc))

        async def elicitation(
            context: Any, params: types.ElicitRequestParams
        ) -> types.ElicitResult | types.ErrorData:
            try:
                return await answer_elicitation(name, hooks, connection.callers.current(), params)
            except BadSchema as exc:
                return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))

        return SessionCallbacks(
            sampling=sampling if sampling_capability(spec) else None,
            elicitation=elicitation if spec.elicitation else None,
        )

    return callbacks
