"""Big tool results: cut what the model sees, keep the whole result owner-only on disk.

A result longer than the agent's ``tool_result_max_bytes`` (UTF-8) reaches the model as its
first that-many bytes plus a note saying it was cut, how long it was and where the whole
result is.  The whole text goes to ``<state_dir>/<session id>/results/<invocation>.txt``
through the host's owner-only store (directories 0700, files 0600, verified), and a
``tool/result/stored`` event in the session log links the call to that file.  The history
keeps only the cut form, so a resumed session replays exactly what the model saw.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from agentrig._seams import owner_only_files
from agentrig.llm import TextBlock, ToolMessage
from agentrig.session import ToolResultStored

if TYPE_CHECKING:
    from agentrig.agent._agent import Agent

__all__ = ["cap_result", "result_note", "state_root"]


def state_root(agent: Agent) -> Path:
    """The agent's state directory: ``state_dir``, relative to the config file's directory."""
    path = Path(agent.config.state_dir).expanduser()
    if path.is_absolute():
        return path
    loaded = agent.runtime.loaded
    base = loaded.base_dir if loaded is not None else Path(os.getcwd())
    return base / path


def result_note(total: int, shown: int, where: str) -> str:
    """What the model reads after a cut result."""
    return (
        f"\n\n[agentrig: this tool result was cut: it is {total} bytes long and only the "
        f"first {shown} bytes are shown above. {where}]"
    )


def _cut(text: str, limit: int) -> str:
    # the first `limit` bytes, never splitting a character
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def _write(root: Path, rel: str, data: bytes) -> Path:
    return owner_only_files(root).write_bytes(rel, data)  # the host's, bound by agentrig._seams


async def cap_result(
    agent: Agent, message: ToolMessage, invocation_id: str
) -> tuple[ToolMessage, ToolResultStored | None]:
    """``message`` as the model may see it, and the log event linking the kept whole result.

    Results within the limit come back unchanged (and no event).  A result that could not
    be kept is still cut, and its note says why the whole one is not available.
    """
    limit = agent.config.tool_result_max_bytes
    text = message.text
    if not limit or len(text) <= limit // 4:  # at most 4 bytes a character: surely short
        return message, None
    data = text.encode("utf-8")
    if len(data) <= limit:
        return message, None
    shown = _cut(text, limit)
    shown_bytes = len(shown.encode("utf-8"))
    rel = f"{agent.session.id}/results/{invocation_id}.txt"
    try:
        path = await anyio.to_thread.run_sync(_write, state_root(agent), rel, data)
    except Exception as exc:  # the disk refused: say so instead of pointing at nothing
        where = f"The whole result could not be kept ({type(exc).__name__}: {exc})."
        stored = None
    else:
        where = (
            f"The whole result is saved in the file {path}; read that file in parts (by line "
            f"or byte range) with a file tool if you need more."
        )
        stored = ToolResultStored(
            call_id=message.call_id,
            invocation_id=invocation_id,
            path=str(path),
            size_bytes=len(data),
            shown_bytes=shown_bytes,
        )
    # the text is cut; anything else the result holds (an image) stays as it was
    others = tuple(block for block in message.content if not isinstance(block, TextBlock))
    text_block = TextBlock(text=shown + result_note(len(data), shown_bytes, where))
    return message.model_copy(update={"content": (text_block, *others)}), stored
