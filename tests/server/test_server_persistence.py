"""A served run is recorded in its agent's session store, like any other run.

The store here is the built-in ``jsonl`` store on disk; after the server stops, a fresh
runtime loads what the server wrote: the request's history, the answer, and a disconnected
stream recorded ``interrupted``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
import pytest
from server_support import KEY, RunningServer, scripted_config

import agentrig
from agentrig.ids import EntryId
from agentrig.plugin import SESSION_STORES

pytestmark = pytest.mark.integration

SETTINGS = {"api_keys": ["$ENV:SERVER_KEY"], "agents": {"assistant": {}}}


def _config(directory: Path, script: list[dict[str, Any]]) -> dict[str, Any]:
    agents = {"assistant": {"provider": "local", "model": "scripted-1", "session_store": "disk"}}
    extra = {
        "session_stores": {"disk": {"kind": "jsonl", "options": {"directory": str(directory)}}}
    }
    return scripted_config(script, agents=agents, extra=extra)


def _stored(config: dict[str, Any]) -> list[list[Any]]:
    """Every session the store holds, as its list of events (read by a fresh runtime)."""

    async def load() -> list[list[Any]]:
        async with agentrig.open_runtime(config) as rt:
            store = rt.catalog(SESSION_STORES).require(EntryId("disk"))
            reports = [await store.load(sid) for sid in await store.list_sessions()]
        assert not any(report.damaged for report in reports)
        return [list(report.events) for report in reports]

    return anyio.run(load)


def test_a_served_completion_is_written_to_the_agents_session_store(tmp_path: Path) -> None:
    config = _config(tmp_path / "sessions", [{"text": "Stored answer."}])
    with RunningServer(config, SETTINGS, environ={"SERVER_KEY": KEY}) as srv:
        client = openai.OpenAI(base_url=f"{srv.base_url}/v1", api_key=KEY, max_retries=0)
        reply = client.chat.completions.create(
            model="assistant",
            messages=[
                {"role": "user", "content": "Earlier question"},
                {"role": "assistant", "content": "Earlier answer"},
                {"role": "user", "content": "Now this"},
            ],
        )
    assert reply.choices[0].message.content == "Stored answer."
    (events,) = _stored(config)
    texts = [
        (event.type, event.data.message.text)
        for event in events
        if event.type in ("user/message", "assistant/message")
    ]
    assert texts == [
        ("user/message", "Earlier question"),
        ("assistant/message", "Earlier answer"),
        ("user/message", "Now this"),
        ("assistant/message", "Stored answer."),
    ]


def test_a_disconnected_stream_is_stored_interrupted(tmp_path: Path) -> None:
    config = _config(
        tmp_path / "sessions", [{"text": "word " * 200, "delay": 0.05, "chunk_size": 5}]
    )
    with RunningServer(config, SETTINGS, environ={"SERVER_KEY": KEY}) as srv:
        body = {
            "model": "assistant",
            "messages": [{"role": "user", "content": "Hi"}],
            "stream": True,
        }
        with (
            httpx.Client(base_url=srv.base_url, timeout=30) as http,
            http.stream(
                "POST",
                "/v1/chat/completions",
                json=body,
                headers={"authorization": f"Bearer {KEY}"},
            ) as response,
        ):
            for line in response.iter_lines():
                if '"content":"word' in line:
                    break
    # leaving the server waits for its runs to end and their writers to close
    (events,) = _stored(config)
    ends = [event.data.reason for event in events if event.type == "turn/end"]
    assert ends == ["interrupted"]
