"""A tool's ``idempotent`` declaration (issue 35 point 6): what a journal may run again
after a crash cut a call off.  Declared on the decorator or as a class attribute;
absent, it follows the risk (``inspect`` reads: idempotent); anything but a bool or None is
refused at registration."""

from __future__ import annotations

from typing import Any

import pytest

from agentrig.kernel import ContractViolation
from agentrig.tools import (
    PermissionArg,
    ToolContext,
    check_tool_contribution,
    is_idempotent,
    tool,
)


def test_the_decorator_declares_it_and_the_risk_decides_when_it_does_not() -> None:
    def look(path: str) -> str:
        """Read a file."""
        return path

    assert is_idempotent(tool(risk="inspect")(look))
    assert not is_idempotent(tool(risk="inspect", idempotent=False)(look))
    assert is_idempotent(tool(risk="modify", idempotent=True)(look))
    assert not is_idempotent(tool(risk="modify")(look))
    assert not is_idempotent(tool(look))  # undeclared risk: never


class _Upsert:
    """A class tool declaring the optional attribute."""

    id = "upsert"
    description = "Set a key to a value."
    risk = "modify"
    permission_arg: PermissionArg | None = None
    idempotent: Any = True

    def __init__(self) -> None:
        def upsert(key: str, value: str) -> str:
            """Set a key."""
            return key

        self.input_schema = tool(upsert).input_schema

    def authorize(self, input: Any, ctx: ToolContext) -> None:
        return None

    def execute(self, input: Any, ctx: ToolContext) -> str:
        return "set"

    def parse_output(self, value: Any) -> Any:
        return value


def test_a_class_tool_declares_it_as_an_attribute_and_a_wrong_value_is_refused() -> None:
    upsert = _Upsert()
    assert is_idempotent(check_tool_contribution(upsert)[0])
    upsert.idempotent = "sure"
    with pytest.raises(ContractViolation, match="idempotent must be True, False or None"):
        check_tool_contribution(upsert)
