"""How many input tokens a request would take: ``POST /v1/messages/count_tokens``.

An estimate, as Anthropic's own endpoint says of its count: about four characters a token
(agentrig's context estimate) over what the agent would send -- its system prompt and the
request's, the definitions of its tools, and every message -- plus a fixed share per image
or document.  No provider is called and nothing runs.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from agentrig.agent import agent_configs
from agentrig.ids import AgentId, ToolId
from agentrig.llm import FileBlock, ImageBlock
from agentrig.plugin import TOOLS

if TYPE_CHECKING:
    from agentrig.kernel import Runtime
    from agentrig_server._runs import Prompt

__all__ = ["estimate_input_tokens"]

_CHARS_PER_TOKEN = 4
#: what an image or a document adds (a typical image's count at Anthropic's rates)
_ATTACHMENT_TOKENS = 1_600


def estimate_input_tokens(rt: Runtime, prompt: Prompt) -> int:
    """The estimate for ``prompt`` sent to its (exposed, declared) agent."""
    agent = agent_configs(rt.loaded)[AgentId(prompt.model)]
    chars = len(agent.system_prompt or "") + len(prompt.system or "")
    tools = rt.catalog(TOOLS)
    for name in agent.tools:
        tool = tools.get(ToolId(name))
        if tool is not None:
            schema = json.dumps(dict(tool.input_schema.json_schema), separators=(",", ":"))
            chars += len(tool.id) + len(tool.description) + len(schema)
    attachments = 0
    for message in (*prompt.history, prompt.message):
        chars += len(message.text)
        attachments += sum(isinstance(b, ImageBlock | FileBlock) for b in message.content)
    return math.ceil(chars / _CHARS_PER_TOKEN) + attachments * _ATTACHMENT_TOKENS
