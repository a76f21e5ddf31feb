"""The terminal's answer to an MCP server's request for input (``run`` and ``chat``).

The person chooses to fill the form in, decline or cancel; each field is asked with its
title, type and default, checked as typed and asked again when it does not fit; enum fields
take a value or its number; the end of input cancels; URL mode asks for consent only.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from agentrig.cli._approve import CliApprover
from agentrig.cli._elicit import ask_elicitation
from agentrig.ids import AgentId
from agentrig.lifecycle import ElicitationAnswer, ElicitationQuestion

pytestmark = pytest.mark.anyio

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "guests": {"type": "integer", "minimum": 1, "maximum": 10},
        "vegetarian": {"type": "boolean", "default": False},
        "course": {"type": "string", "enum": ["fish", "meat", "pasta"]},
        "note": {"type": "string", "description": "anything else"},
    },
    "required": ["name", "guests", "course"],
}


def lines(*typed: str | None) -> Callable[[], Awaitable[str | None]]:
    pending = list(typed)

    async def read() -> str | None:
        return pending.pop(0) if pending else None

    return read


def question(**more: Any) -> ElicitationQuestion:
    source = "MCP server 'dinner'"
    return ElicitationQuestion(AgentId("assistant"), source, "Who is coming?", **more)


async def test_a_form_is_filled_field_by_field_and_checked_as_typed() -> None:
    err = io.StringIO()
    typed = lines("y", "A", "Ada", "many", "50", "3", "", "2", "")
    answer = await ask_elicitation(question(schema=FORM), typed, err)
    assert answer == ElicitationAnswer.accept(
        {"name": "Ada", "guests": 3, "vegetarian": False, "course": "meat"}
    )
    shown = err.getvalue()
    assert "MCP server 'dinner' asks for input: Who is coming?" in shown
    assert "Name (string, required): " in shown
    assert "'many' does not fit: expected an integer" in shown
    assert "vegetarian (boolean) [false]: " in shown
    assert "1) fish, 2) meat, 3) pasta" in shown
    assert "note -- anything else (string): " in shown
    assert shown.count("guests (integer, required)") == 3  # asked until it fitted


async def test_decline_cancel_and_the_end_of_input() -> None:
    err = io.StringIO()
    assert await ask_elicitation(question(schema=FORM), lines("n"), err) == (
        ElicitationAnswer.decline()
    )
    assert await ask_elicitation(question(schema=FORM), lines("c"), err) == (
        ElicitationAnswer.cancel()
    )
    # the input ends half-way through the form: nothing half-filled is sent
    assert await ask_elicitation(question(schema=FORM), lines("y", "Ada"), err) == (
        ElicitationAnswer.cancel()
    )


async def test_url_mode_asks_for_consent_only() -> None:
    err = io.StringIO()
    answer = await ask_elicitation(question(url="https://example.com/pay"), lines("y"), err)
    assert answer == ElicitationAnswer.accept()
    assert "it asks you to open: https://example.com/pay" in err.getvalue()


async def test_without_a_terminal_the_command_declines_and_says_so() -> None:
    err = io.StringIO()
    approver = CliApprover(consent=True, read_line=None, err=err)
    answer = await approver.elicitation(question(schema=FORM))
    assert answer == ElicitationAnswer.decline()  # --yes approves calls, it types no input
    assert "no terminal to answer: declined" in err.getvalue()
    on_terminal = CliApprover(consent=False, read_line=lines("c"), err=io.StringIO())
    assert await on_terminal.elicitation(question(schema=FORM)) == ElicitationAnswer.cancel()
