"""MCP sampling: a server asks the agent's model (``sampling/createMessage``).

Offered only to a server whose ``sampling`` is ``ask`` or ``allow`` (the capability is not
advertised otherwise).  A request is answered only while a tool call of one agent is in
flight on the server (:mod:`agentrig_mcp._callers`): it goes through that agent's
:meth:`~agentrig.agent.Agent.complete_aside` -- the agent's provider and model through the
``request_config`` waterfall, its output limit, the run's signal, its usage logged and
counted against the run and any budget read from the log.  With ``ask`` the approver (the
``permission_approver`` hook: the CLI prompt, the API's approvals) sees the prompt first;
no answer denies.  What agentrig does not offer is refused with an error naming it: tools in
sampling, audio, context from other servers is ignored (``includeContext``; the capability
for it is not advertised either).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp import types

from agentrig.diagnostics import get_logger
from agentrig.errors import AgentrigError
from agentrig.ids import AgentId, CallId
from agentrig.llm import AssistantMessage, ContentBlock, ImageBlock, TextBlock, UserMessage
from agentrig.permissions import Approval
from agentrig.plugin import PermissionQuestion, SideCall

if TYPE_CHECKING:
    from agentrig.llm import ModelResponse
    from agentrig_mcp._callers import Caller, Callers
    from agentrig_mcp._config import HttpServerSpec, StdioServerSpec

__all__ = ["Refused", "answer_sampling", "sampling_capability"]

_STOP = {"end": "endTurn", "length": "maxTokens", "stop_sequence": "stopSequence"}


class Refused(Exception):
    """A sampling request agentrig will not answer; the server gets the message (and
    ``code``: -1 when the user said no, as MCP's examples do)."""

    def __init__(self, message: str, code: int = types.INVALID_REQUEST) -> None:
        super().__init__(message)
        self.code = code


def sampling_capability(spec: StdioServerSpec | HttpServerSpec) -> bool:
    """Is sampling offered to this server (advertised at initialization)?"""
    return spec.sampling != "off"


def _blocks(message: types.SamplingMessage, index: int) -> tuple[ContentBlock, ...]:
    blocks: list[ContentBlock] = []
    for block in message.content_as_list:
        if isinstance(block, types.TextContent):
            blocks.append(TextBlock(text=block.text))
        elif isinstance(block, types.ImageContent) and message.role == "user":
            blocks.append(ImageBlock(media_type=block.mime_type, data=block.data))
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise Refused(
                f"messages[{index}]: {kind!r} content in a {message.role} message is not "
                "supported by agentrig's sampling (text, and images from the user)"
            )
    return tuple(blocks)


def side_call(server: str, spec: Any, params: types.CreateMessageRequestParams) -> SideCall:
    """The request as a side call of the agent (refused when it asks for what is not
    offered)."""
    if params.tools:
        raise Refused("tools in sampling are not offered (sampling.tools was not advertised)")
    messages: list[UserMessage | AssistantMessage] = []
    for index, message in enumerate(params.messages):
        blocks = _blocks(message, index)
        if message.role == "user":
            messages.append(UserMessage(content=blocks, source=f"mcp:{server}"))
        else:
            messages.append(AssistantMessage(content=blocks))
    if not messages:
        raise Refused("the request has no messages")
    return SideCall(
        messages=tuple(messages),
        source=f"mcp:{server}",
        system=params.system_prompt,
        max_tokens=min(params.max_tokens, spec.sampling_max_tokens),
        temperature=params.temperature,
        stop=tuple(params.stop_sequences or ()),
    )


def _allowed(answer: object, call_id: CallId) -> bool:
    """Only an explicit allow counts (an ``Approval`` for this call, ``"allow"``, or the
    allow-and-remember tuple); anything else -- no answer included -- denies."""
    if isinstance(answer, Approval):
        return answer.verdict == "allow" and answer.call_id == call_id
    if isinstance(answer, tuple):
        return bool(answer) and answer[0] == "allow"
    return answer == "allow"


async def _approved(server: str, callers: Callers, caller: Caller, call: SideCall) -> bool:
    """Ask the approver; an "allow for the session" answer (the CLI's ``a``) is kept for
    the agent, so it is not asked again while the runtime lives."""
    agent_id = AgentId(caller.agent.id)
    if agent_id in callers.sampling_allowed:
        return True
    hooks = caller.agent.runtime.hooks
    if not hooks.has_listeners("permission_approver"):
        return False
    call_id = CallId(caller.call_id)
    question = PermissionQuestion(
        agent_id=agent_id,
        tool=f"mcp__{server}__sampling",
        arguments={
            "system": call.system,
            "messages": [f"{m.role}: {m.text}" for m in call.messages],
            "max_tokens": call.max_tokens,
        },
        reason=f"MCP server {server!r} asks the agent's model to answer this prompt "
        f"(mcp_servers.{server}.sampling = 'ask')",
        call_id=call_id,
    )
    answer = await hooks.first_result("permission_approver", question)
    if isinstance(answer, tuple) and answer[:2] == ("allow", "remember"):
        callers.sampling_allowed.add(agent_id)
    return _allowed(answer, call_id)


def _result(response: ModelResponse) -> types.CreateMessageResult:
    message = response.message
    stop = message.stop_reason
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=message.text),
        model=response.served_model or "",
        stop_reason=_STOP.get(stop, stop) if stop is not None else None,
    )


async def answer_sampling(
    server: str,
    spec: StdioServerSpec | HttpServerSpec,
    callers: Callers,
    params: types.CreateMessageRequestParams,
) -> types.CreateMessageResult:
    """Answer one ``sampling/createMessage`` (see the module docs); :class:`Refused` says
    why not."""
    if spec.sampling == "off":
        raise Refused(f"sampling is off for this server (mcp_servers.{server}.sampling)")
    caller = callers.current()
    if caller is None:
        raise Refused(
            "sampling is answered only during one agent's tool call on this server (whose "
            f"model, limits and budget apply); {callers.why_none()}"
        )
    call = side_call(server, spec, params)
    with caller.answering():  # the server waits for us: its call's timeout is suspended
        if spec.sampling == "ask" and not await _approved(server, callers, caller, call):
            raise Refused("the user did not approve the sampling request", code=-1)
        try:
            response = await caller.agent.complete_aside(call, signal=caller.signal)
        except AgentrigError as exc:
            get_logger(f"mcp.{server}").warning("a sampling request failed: %s", exc)
            raise Refused(f"the model call failed: {exc}") from None
    return _result(response)
