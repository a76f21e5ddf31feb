"""Branded IDs: each factory validates its syntax; minted ids are unique and time-ordered."""

from __future__ import annotations

import os
import threading
import time

import pytest

from agentrig import ids
from agentrig.errors import AgentrigError, InvalidIdError

VALIDATING = [
    (ids.session_id, "ses_1", "bad id with spaces"),
    (ids.agent_id, "assistant", "1starts-with-digit"),
    (ids.message_id, "msg_01:a", "-leading-dash"),
    (ids.tool_id, "read_file", "has space"),
    (ids.provider_id, "main", "has/slash"),
    (ids.plugin_name, "greeter", ""),
    (ids.entry_id, "entry.one", "ümlaut"),
    (ids.run_id, "run_1", "a" * 129),
    (ids.invocation_id, "inv_1", "new\nline"),
    (ids.model_id, "gpt-x/with spaces ok", "bad\x00control"),
]


@pytest.mark.parametrize(("factory", "good", "bad"), VALIDATING)
def test_factory_accepts_valid_and_returns_plain_str(factory, good, bad) -> None:
    value = factory(good)
    assert value == good
    assert type(value) is str  # at runtime a branded id is a plain string


@pytest.mark.parametrize(("factory", "good", "bad"), VALIDATING)
def test_factory_refuses_invalid_syntax_with_coded_error(factory, good, bad) -> None:
    with pytest.raises(InvalidIdError) as info:
        factory(bad)
    error = info.value
    assert isinstance(error, AgentrigError)
    assert isinstance(error, ValueError)
    assert error.code == "ids.invalid"
    assert error.category == "user"
    assert error.kind  # names the id type
    assert error.kind in str(error)


def test_tool_id_length_limit() -> None:
    assert ids.tool_id("a" * 128)
    with pytest.raises(InvalidIdError):
        ids.tool_id("a" * 129)


def test_call_id_accepts_any_string_even_empty() -> None:
    assert ids.call_id("") == ""
    assert ids.call_id("call with spaces / anything") == "call with spaces / anything"


def test_model_id_refuses_empty() -> None:
    with pytest.raises(InvalidIdError):
        ids.model_id("")


@pytest.mark.parametrize(
    ("mint", "check", "prefix"),
    [
        (ids.new_session_id, ids.session_id, "ses_"),
        (ids.new_message_id, ids.message_id, "msg_"),
        (ids.new_run_id, ids.run_id, "run_"),
        (ids.new_invocation_id, ids.invocation_id, "inv_"),
    ],
)
def test_minted_ids_are_unique_valid_and_prefixed(mint, check, prefix) -> None:
    minted = [mint() for _ in range(2000)]
    assert len(set(minted)) == len(minted)
    for value in minted[:20]:
        assert value.startswith(prefix)
        assert check(value) == value  # a minted id passes its own factory


def test_minted_ids_are_time_ordered() -> None:
    first = ids.new_session_id()
    time.sleep(0.003)  # the time part has millisecond resolution
    second = ids.new_session_id()
    time.sleep(0.003)
    third = ids.new_session_id()
    assert first < second < third


def _random_part(value: str) -> str:
    return value.rsplit("_", 1)[1][12:]  # after the prefix and the 12 hex digits of time


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_a_forked_child_never_mints_its_parents_next_bits() -> None:
    # a child never mints what its parent mints next (no random bits shared across a fork)
    ids.new_invocation_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its first id, then leave without pytest's teardown
        os.close(read)
        os.write(write, ids.new_invocation_id().encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    parent = ids.new_invocation_id()
    assert child.startswith("inv_")
    assert _random_part(child) != _random_part(parent)


def test_ids_minted_on_many_threads_are_unique() -> None:
    minted: list[str] = []

    def mint() -> None:
        minted.extend(ids.new_message_id() for _ in range(500))

    threads = [threading.Thread(target=mint) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(minted)) == len(minted) == 4000
