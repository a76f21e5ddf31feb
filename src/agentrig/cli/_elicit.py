"""An MCP server's request for input, answered on the terminal (``run`` and ``chat``).

The person sees who asks and why, chooses to fill the form in, decline or cancel, then types
one field at a time; each value is checked against its property's schema as it is typed and
asked again when it does not fit, so what goes back matches the schema the server sent.  The
end of input, or the turn being interrupted, cancels.  In URL mode the person is shown the
address and asked whether to go on; nothing is opened for them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import IO, Any

from agentrig.lifecycle import ElicitationAnswer, ElicitationQuestion

__all__ = ["ask_elicitation"]

ReadLine = Callable[[], Awaitable[str | None]]
_TRUE = ("y", "yes", "true", "1")
_FALSE = ("n", "no", "false", "0")


class _Ended(Exception):
    """The person ended the input (or the turn was interrupted): the answer is ``cancel``."""


def _choices(prop: Mapping[str, Any]) -> list[Any]:
    """The values an enum property allows (``enum``, or ``oneOf`` of ``const``s)."""
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list):
        return [o["const"] for o in options if isinstance(o, Mapping) and "const" in o]
    items = prop.get("items")
    return _choices(items) if isinstance(items, Mapping) else []


def _parse(text: str, prop: Mapping[str, Any]) -> Any:
    """The typed value of ``text`` for ``prop`` (ValueError names what was expected)."""
    kind = prop.get("type")
    choices = _choices(prop)
    if kind == "array":
        picked = [part.strip() for part in text.split(",") if part.strip()]
        return [_pick(part, choices) for part in picked]
    if choices:
        return _pick(text, choices)
    if kind == "boolean":
        lowered = text.lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise ValueError("yes or no")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() else number
    except ValueError:
        raise ValueError(f"a{'n' if kind == 'integer' else ''} {kind}") from None
    return text


def _pick(text: str, choices: list[Any]) -> Any:
    if text in choices:
        return text
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    raise ValueError("one of " + ", ".join(map(str, choices)))


def _label(name: str, prop: Mapping[str, Any], required: bool) -> str:
    title = prop.get("title") or name
    about = prop.get("description")
    kind = str(prop.get("type", "string"))
    choices = _choices(prop)
    if choices:
        kind = "one or more of" if kind == "array" else "one of"
        kind += " " + ", ".join(f"{i}) {c}" for i, c in enumerate(choices, 1))
    extra = f" -- {about}" if about else ""
    default = f" [{json.dumps(prop['default'])}]" if "default" in prop else ""
    need = ", required" if required else ""
    return f"  {title}{extra} ({kind}{need}){default}: "


class _Form:
    """One question's form on the terminal."""

    def __init__(self, question: ElicitationQuestion, read_line: ReadLine, err: IO[str]) -> None:
        self.question = question
        self.read_line = read_line
        self.err = err

    def say(self, text: str) -> None:
        self.err.write(text)
        self.err.flush()

    async def line(self, prompt: str) -> str:
        self.say(prompt)
        line = await self.read_line()
        if line is None:
            raise _Ended()
        return line.strip()

    async def field(self, name: str, prop: Mapping[str, Any], required: bool) -> tuple[bool, Any]:
        """``(given, value)`` for one property, asked until it fits its schema."""
        from agentrig.tools.schema import validate_json

        while True:
            text = await self.line(_label(name, prop, required))
            if not text:
                if "default" in prop:
                    return True, prop["default"]
                if not required:
                    return False, None
                self.say("    an answer is required\n")
                continue
            try:
                value = _parse(text, prop)
            except ValueError as exc:
                self.say(f"    {text!r} does not fit: expected {exc}\n")
                continue
            issues = validate_json(value, dict(prop))
            if not issues:
                return True, value
            self.say("    " + "; ".join(issue.message for issue in issues) + "\n")

    async def fill(self) -> ElicitationAnswer:
        schema = self.question.schema or {}
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = set(schema.get("required") or ())
        content: dict[str, Any] = {}
        for name, prop in properties.items():
            shape = prop if isinstance(prop, Mapping) else {}
            given, value = await self.field(str(name), shape, name in required)
            if given:
                content[str(name)] = value
        return ElicitationAnswer.accept(content)

    async def run(self) -> ElicitationAnswer:
        question = self.question
        self.say(f"\n{question.source} asks for input: {question.message}\n")
        if question.url is not None:
            self.say(f"  it asks you to open: {question.url}\n")
            choice = (await self.line("Go on? [y] accept  [n] decline  [c] cancel: ")).lower()
        else:
            choice = (await self.line("Answer? [y] fill in  [n] decline  [c] cancel: ")).lower()
        if choice in ("c", "cancel"):
            return ElicitationAnswer.cancel()
        if choice not in ("y", "yes"):
            self.say("declined\n")
            return ElicitationAnswer.decline()
        if question.url is not None:
            return ElicitationAnswer.accept()
        return await self.fill()


async def ask_elicitation(
    question: ElicitationQuestion, read_line: ReadLine, err: IO[str]
) -> ElicitationAnswer:
    """Ask the person ``question`` on the terminal (see the module docs)."""
    try:
        return await _Form(question, read_line, err).run()
    except _Ended:
        err.write("\ncancelled (end of input)\n")
        err.flush()
        return ElicitationAnswer.cancel()
