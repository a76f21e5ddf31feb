"""The error base (code / category / recoverable) and error_info() over any exception."""

from __future__ import annotations

import asyncio

import pydantic
import pytest

from agentrig.errors import (
    AbortError,
    AgentrigError,
    ConfigError,
    ErrorInfo,
    Issue,
    PluginLoadError,
    RuntimeClosedError,
    UnknownIdError,
    closest_match,
    did_you_mean,
    error_info,
)
from agentrig.tools import CheckResult


def test_base_carries_code_category_recoverable_with_class_defaults() -> None:
    error = AgentrigError("boom")
    assert (error.code, error.category, error.recoverable) == ("agentrig.error", "system", False)
    custom = AgentrigError("x", code="my.code", category="provider", recoverable=True)
    assert (custom.code, custom.category, custom.recoverable) == ("my.code", "provider", True)
    assert str(custom) == "x"
    # instance overrides do not leak into the class
    assert AgentrigError.code == "agentrig.error"


@pytest.mark.parametrize(
    ("error", "code", "category"),
    [
        (RuntimeClosedError("closed"), "runtime.closed", "user"),
        (AbortError(), "aborted", "user"),
        (UnknownIdError("u", id="x", known=(), suggestion=None), "catalog.unknown_id", "user"),
        (
            PluginLoadError(
                "p", kind="tools", name="t", distribution="d", entry_point="e", rule="r"
            ),
            "plugin.load_failed",
            "system",
        ),
    ],
)
def test_subclasses_have_codes_and_categories(error, code, category) -> None:
    assert isinstance(error, AgentrigError)
    assert (error.code, error.category) == (code, category)


def test_a_subclass_states_code_category_recoverable_in_its_header() -> None:
    class StoreError(AgentrigError, code="store.example", recoverable=True):
        """A base of the test's own."""

    class FullError(StoreError, LookupError, code="store.full", category="user"):
        """Inherits what it does not state."""

    error = FullError("no room")
    assert (error.code, error.category, error.recoverable) == ("store.full", "user", True)
    assert isinstance(error, LookupError)
    assert (StoreError.code, StoreError.category) == ("store.example", "system")
    assert error_info(error).is_retryable is True
    # the tree test reads a class's own code from its namespace
    assert vars(FullError)["code"] == "store.full"


def test_a_malformed_code_or_unknown_category_fails_at_class_definition() -> None:
    with pytest.raises(TypeError, match=r"BadCode: error code 'Not A Code' is not like"):

        class BadCode(AgentrigError, code="Not A Code"):
            """Refused."""

    # a category outside the Literal, set as a class attribute (the older form) -- the form a
    # type checker cannot see through, so the class check is what catches it
    with pytest.raises(TypeError, match=r"BadCategory: category 'everyone' is not one of"):
        type("BadCategory", (AgentrigError,), {"code": "x.y", "category": "everyone"})


def test_abort_error_is_recognisable_by_name_and_keeps_reason() -> None:
    error = AbortError(reason="user pressed stop")
    assert error.name == "AbortError"
    assert error.reason == "user pressed stop"


def test_config_error_message_names_source_and_key_path() -> None:
    error = ConfigError([Issue("config.x", "bad value", ("agents", "a", "tools", 0))], source="f")
    assert "f: agents.a.tools[0]: bad value" in str(error)
    assert error.issues[0].location() == "agents.a.tools[0]"


def test_error_info_of_agentrig_error_keeps_fields_and_identity() -> None:
    error = ConfigError([Issue("config.missing", "required", ("providers",))], source="a.toml")
    info = error_info(error, stage_id="compose")
    assert isinstance(info, ErrorInfo)
    assert info.code == "config.invalid"
    assert info.codes == ("config.invalid",)
    assert info.category == "user"
    assert info.is_retryable is False
    assert info.issues == error.issues
    assert info.stage_id == "compose"
    assert info.cause is error


def test_error_info_recoverable_maps_to_retryable() -> None:
    info = error_info(AgentrigError("x", recoverable=True))
    assert info.is_retryable is True


def test_error_info_of_exception_group_lists_member_codes() -> None:
    group = ExceptionGroup(
        "several",
        [RuntimeClosedError("closed"), ValueError("v"), RuntimeClosedError("again")],
    )
    info = error_info(group)
    assert info.codes == ("runtime.closed", "python.ValueError")  # de-duplicated, in order
    assert info.code == "runtime.closed"
    assert info.cause is group


def test_error_info_of_pydantic_validation_error_has_issues_with_paths() -> None:
    class Model(pydantic.BaseModel):
        count: int
        tags: list[str]

    with pytest.raises(pydantic.ValidationError) as caught:
        Model.model_validate({"count": "many", "tags": ["ok", 3]})
    info = error_info(caught.value)
    assert info.code == "python.ValidationError"
    assert info.category == "system"
    paths = {issue.path for issue in info.issues}
    assert ("count",) in paths
    assert ("tags", 1) in paths
    assert all(issue.code and issue.message for issue in info.issues)


def test_error_info_reads_an_external_errors_array_attribute() -> None:
    class VendorError(Exception):
        def __init__(self) -> None:
            super().__init__("vendor failed")
            self.errors = [{"code": "E42", "message": "bad field", "path": ["body", "x"]}, "raw"]

    info = error_info(VendorError())
    assert info.issues[0] == Issue(code="E42", message="bad field", path=("body", "x"))
    assert info.issues[1].message == "raw"


def test_error_info_survives_a_broken_errors_method() -> None:
    class Weird(Exception):
        def errors(self) -> list[object]:
            raise RuntimeError("nope")

    info = error_info(Weird("w"))
    assert info.issues == ()
    assert info.code == "python.Weird"


@pytest.mark.parametrize("error", [asyncio.CancelledError(), AbortError("stopped")])
def test_error_info_of_cancellation_is_aborted(error) -> None:
    info = error_info(error)
    assert info.code == "aborted"
    assert info.category == "user"
    assert info.cause is error


def test_error_info_of_trio_cancelled_is_aborted() -> None:
    import trio  # a dev dependency: the suite runs on trio too

    caught: list[BaseException] = []

    async def main() -> None:
        with trio.CancelScope() as scope:
            scope.cancel()
            try:
                await trio.sleep(1)
            except trio.Cancelled as exc:
                caught.append(exc)
                raise

    trio.run(main)
    info = error_info(caught[0])
    assert info.code == "aborted"
    assert info.cause is caught[0]


def test_error_info_of_plain_exception() -> None:
    error = KeyError("k")
    info = error_info(error)
    assert info.code == "python.KeyError"
    assert info.category == "system"
    assert info.cause is error
    assert info.to_dict()["cause"] == "KeyError"


def test_check_result_rules() -> None:
    assert CheckResult.ok().passed
    assert not CheckResult.ok().has_value
    assert CheckResult.ok(None).has_value  # None is a legitimate value
    failed = CheckResult.fail(Issue("x", "y"))
    assert not failed.passed
    with pytest.raises(ValueError, match="passed"):
        CheckResult("passed", (Issue("x", "y"),))
    with pytest.raises(ValueError, match="failed"):
        CheckResult("failed", ())


def test_error_info_and_is_abort_agree_on_what_an_abort_is() -> None:
    """One rule decides a cancellation (DESIGN §4.8): the backend's own exception or a
    subclass of it, recognised by module and name; a foreign class that merely shares the
    name (``concurrent.futures.CancelledError``, a thread pool's) is not an abort."""
    import asyncio
    import concurrent.futures

    from agentrig.cancel import is_abort
    from agentrig.errors import AbortError, error_info, is_cancellation

    class Subclassed(asyncio.CancelledError):
        """A library's own cancellation, derived from the backend's."""

    class Named(Exception):
        name = "AbortError"

    aborts = [asyncio.CancelledError(), Subclassed(), AbortError(), Named()]
    others = [concurrent.futures.CancelledError(), type("CancelledError", (Exception,), {})()]
    for error in aborts:
        assert is_abort(error), error
        assert error_info(error).code == "aborted", error
    for error in others:
        assert not is_abort(error), error
        assert error_info(error).code != "aborted", error
    assert is_cancellation(Subclassed())
    assert not is_cancellation(AbortError())


def test_did_you_mean_names_the_nearest_choice_or_says_nothing() -> None:
    choices = {"assistant": 1, "reviewer": 2}  # any iterable of names: a dict's keys here
    assert closest_match("asistant", choices) == "assistant"
    assert did_you_mean("asistant", choices) == "; did you mean 'assistant'?"
    assert closest_match("zzz", choices) is None
    assert did_you_mean("zzz", choices) == ""
    assert did_you_mean("x", []) == ""
    # how the suggestion is shown is the caller's (a qualified name, or without quotes)
    assert (
        did_you_mean("tols", ["tools"], show=lambda k: f"{k}:echo") == "; did you mean tools:echo?"
    )
    assert did_you_mean("tols", ("tools",), show=str) == "; did you mean tools?"


def test_every_did_you_mean_comes_from_the_one_helper() -> None:
    """No module of agentrig or of a first-party plugin asks difflib itself: an unknown name
    is answered by :func:`did_you_mean` / :func:`closest_match`, so every message suggests
    the same way."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sources = [*root.glob("src/agentrig/**/*.py"), *root.glob("plugins/*/src/**/*.py")]
    callers = [
        str(path.relative_to(root))
        for path in sources
        if "get_close_matches" in path.read_text(encoding="utf-8")
    ]
    assert callers == ["src/agentrig/errors.py"]
