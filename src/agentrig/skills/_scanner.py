"""Registration scanning: one seam for skills, tools and MCP tools.

What is about to be registered is described as a :class:`Registration` -- its kind, name
and every text field the model would read (for a skill: name, description, the whole
frontmatter, instructions, embedded tool declarations and text resources; for a tool: id,
description and input schema).  Guards judge it: :func:`scan` is the deterministic guard
(rules of :mod:`._rules` over folded text), and :func:`review` runs a chain of guards,
where a guard that raises or answers nothing blocks -- a check that could not be made never
lets a registration through.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, final

import attrs

from agentrig.skills._fold import fold, has_hidden_characters
from agentrig.skills._rules import Category, name_rules, text_rules

if TYPE_CHECKING:
    from agentrig.skills._format import Skill
    from agentrig.tools import Tool

__all__ = [
    "Finding",
    "Registration",
    "RegistrationGuard",
    "RegistrationKind",
    "Verdict",
    "registration_of_skill",
    "registration_of_tool",
    "review",
    "scan",
]

RegistrationKind = Literal["skill", "tool", "mcp_tool"]
_EXCERPT = 60


@final
@attrs.frozen(slots=True)
class Registration:
    """Something about to enter a registry, as the text fields a model would read."""

    kind: RegistrationKind
    name: str
    #: ``(where, text)``: ``description``, ``frontmatter.allowed-tools``, ``resources/x.md``
    fields: tuple[tuple[str, str], ...]
    source: str = ""
    #: SHA-256 of a skill's files (what trust is recorded against); None for tools
    digest: str | None = None


@final
@attrs.frozen(slots=True)
class Finding:
    """One rule that matched: its category, the field and the matched (folded) text."""

    category: Category | Literal["hidden_characters", "guard"]
    rule: str
    field: str
    excerpt: str

    def describe(self) -> str:
        return f"{self.category}/{self.rule} in {self.field}: {self.excerpt!r}"


@final
@attrs.frozen(slots=True)
class Verdict:
    """A guard's answer: allowed or not, with what it found and which guard spoke."""

    allowed: bool
    guard: str
    findings: tuple[Finding, ...] = ()
    reason: str = ""

    def describe(self) -> str:
        if self.allowed:
            return f"allowed by {self.guard}"
        found = "; ".join(f.describe() for f in self.findings[:5])
        more = f" (+{len(self.findings) - 5} more)" if len(self.findings) > 5 else ""
        return f"blocked by {self.guard}: {self.reason or found}{more}"


RegistrationGuard = Callable[[Registration], "Verdict | Awaitable[Verdict | None] | None"]
"""A guard: given a registration, a :class:`Verdict` -- or None, which blocks."""


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string (keys included) of JSON-like data, with its path."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield f"{where}.{key}", str(key)
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list | tuple | set | frozenset):
        for position, item in enumerate(value):
            yield from _strings(item, f"{where}[{position}]")
    elif value is not None:
        yield where, str(value)


def registration_of_skill(skill: Skill) -> Registration:
    """A skill's every model-readable field: the frontmatter walked whole (tool declarations
    such as ``allowed-tools`` included) and each text resource."""
    fields = [
        ("name", skill.name),
        ("description", skill.description),
        *_strings(
            {k: v for k, v in skill.frontmatter.items() if k not in {"name", "description"}},
            "frontmatter",
        ),
        ("instructions", skill.instructions),
        *((f"resources/{path}", text) for path, text in skill.text_resources()),
    ]
    return Registration("skill", skill.name, tuple(fields), skill.source, skill.digest)


def registration_of_tool(tool: Tool, *, kind: RegistrationKind = "tool") -> Registration:
    """A tool's id, description and input schema (descriptions and enum texts included)."""
    schema = tool.input_schema.json_schema
    fields = [
        ("name", str(tool.id)),
        ("description", tool.description),
        *_strings(json.loads(json.dumps(schema, default=str)), "input_schema"),
    ]
    return Registration(kind, str(tool.id), tuple(fields))


def _excerpt(text: str, start: int, end: int) -> str:
    left = max(0, start - 10)
    return text[left : min(len(text), end + 10)][: _EXCERPT + 20]


def _text_findings(where: str, text: str) -> Iterator[Finding]:
    folded = fold(text)
    for rule in text_rules():
        match = rule.pattern.search(folded)
        if match is not None:
            yield Finding(rule.category, rule.id, where, _excerpt(folded, *match.span()))


def scan(registration: Registration) -> Verdict:
    """The deterministic guard: every rule over every folded field; any finding blocks.

    Pure, so a small registration seen again (the same tools in every runtime a process
    opens) is answered from a bounded cache keyed by its value; a large one (a skill with
    big resources) is scanned every time rather than kept alive by the cache.
    """
    if sum(len(text) for _, text in registration.fields) <= _CACHED_CHARS:
        return _scan_cached(registration)
    return _scan(registration)


_CACHED_CHARS = 16_384


def _scan(registration: Registration) -> Verdict:
    findings: list[Finding] = []
    name = registration.name
    folded_name = fold(name)
    for rule in name_rules():
        if rule.pattern.search(folded_name):
            findings.append(Finding(rule.category, rule.id, "name", folded_name))
    if folded_name != name.casefold() or has_hidden_characters(name):
        findings.append(
            Finding(
                "privileged_name", "disguised-name", "name", f"{name!r} reads as {folded_name!r}"
            )
        )
    for where, text in registration.fields:
        if where != "name" and has_hidden_characters(text):
            findings.append(
                Finding("hidden_characters", "format-characters", where, fold(text)[:_EXCERPT])
            )
        findings.extend(_text_findings(where, text))
    return Verdict(not findings, "scanner", tuple(findings))


_scan_cached = functools.lru_cache(maxsize=512)(_scan)


async def review(
    registration: Registration, guards: Sequence[tuple[str, RegistrationGuard]]
) -> Verdict:
    """Run ``guards`` in order (named); the first refusal wins.  A guard that raises or
    returns no verdict blocks: a check that could not be made never allows."""
    last = Verdict(True, "no guard")
    for name, guard in guards:
        try:
            answer = guard(registration)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            reason = f"guard {name!r} failed ({type(exc).__name__}: {exc}); failing closed"
            return Verdict(False, name, (Finding("guard", "guard-failed", "-", reason),), reason)
        if not isinstance(answer, Verdict):
            reason = f"guard {name!r} returned no verdict; failing closed"
            return Verdict(False, name, (Finding("guard", "no-verdict", "-", reason),), reason)
        if not answer.allowed:
            return answer
        last = answer
    return last
