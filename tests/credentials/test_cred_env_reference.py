"""``$ENV:NAME`` references: resolved through the caller's resolver only, never the environment."""

from __future__ import annotations

import pytest

from agentrig.credentials import resolve_secret


def test_plain_values_pass_through() -> None:
    assert resolve_secret("literal", None, path=("k",)) == ("literal", None)


def test_env_reference_resolved_only_through_the_resolver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def resolver(name: str) -> str | None:
        asked.append(name)
        return "s3cret"

    assert resolve_secret("$ENV:API_KEY", resolver, path=("k",)) == ("s3cret", None)
    assert asked == ["API_KEY"]
    # without a resolver, the process environment is NOT consulted
    monkeypatch.setenv("API_KEY", "from-the-environment")
    value, issue = resolve_secret("$ENV:API_KEY", None, path=("providers", "p", "credentials", "k"))
    assert value is None
    assert issue is not None
    assert issue.code == "config.secret_unresolved"
    assert issue.path == ("providers", "p", "credentials", "k")
    assert "resolver" in issue.message
    assert "from-the-environment" not in issue.message


def test_missing_variable_and_empty_reference_are_issues() -> None:
    _, missing = resolve_secret("$ENV:NOPE", dict[str, str]().get, path=("a",))
    assert missing is not None
    assert missing.code == "config.secret_missing"
    assert "NOPE" in missing.message
    _, empty = resolve_secret("$ENV:", dict[str, str]().get, path=("a",))
    assert empty is not None
    assert empty.code == "config.secret"
