"""Class: a read-only command is judged by everything its expansions reach (issue 28, point 2).

A word with a glob (``*``, ``?``, ``[...]``) or a brace (``{a,b}``) is expanded by the
shell; through a symlink inside the workspace it can reach a file outside, while the same
path spelled out is refused.  Such a command is ``inspect`` only when every path the
expansion reaches -- symlinks followed -- is inside the workspace; a sequence brace
(``{1..3}``) or an expansion the port cannot tell asks.  Readers that follow symlinks below
their arguments (``grep -R``, ``ls -L``, ``du -L``) are not read-only.

The ground truth is bash itself: each generated word is expanded by a real ``bash`` in the
workspace and every result resolved with ``os.path.realpath``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perm_support import BASH

from agentrig.permissions import (
    PermissionCall,
    PermissionContext,
    PermissionRules,
    evaluate_permission,
)
from agentrig.permissions._risk import expand_braces

NAMES = ("a", "b", "sub", "link", "out", "in")


def _tree(base: Path) -> Path:
    """ws/ holds real dirs and files, a link to a directory outside, a link to a file
    outside and a link to a directory inside."""
    ws, outside = base / "ws", base / "outside"
    (ws / "a" / "sub").mkdir(parents=True)
    (ws / "b").mkdir()
    outside.mkdir()
    for d in (ws / "a", ws / "a" / "sub", ws / "b", outside):
        (d / "in").write_text("x")
    (ws / "a" / "link").symlink_to(outside)
    (ws / "b" / "out").symlink_to(outside / "in")
    (ws / "b" / "sub").symlink_to(ws / "a" / "sub")
    return ws


def _bash_reaches(ws: Path, word: str) -> list[str]:
    done = subprocess.run(
        ["bash", "-c", f"printf '%s\\0' {word}"], cwd=ws, capture_output=True, check=True
    )
    return [os.path.realpath(ws / w) for w in done.stdout.decode().split("\0") if w]


def _inside(path: str, ws: Path) -> bool:
    root = os.path.realpath(ws)
    return path == root or path.startswith(root + os.sep)


def _decide(ws: Path, command: str) -> str:
    ctx = PermissionContext(
        workspace_root=str(ws), rules=PermissionRules(), home=str(ws.parent / "home")
    )
    return evaluate_permission(PermissionCall(BASH, {"command": command}), ctx).reason


_PART = st.sampled_from([*NAMES, "*", "?", "[ab]", "l*", "*n", "{a,b}", "{sub,link}", "[!s]*"])
_WORD = st.lists(_PART, min_size=1, max_size=3).map("/".join)


@pytest.mark.subprocess
@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(_WORD, st.sampled_from(["cat", "ls", "head -n 1", "wc -l", "grep -r x", "du"]))
def test_property_a_glob_reaching_outside_is_never_read_only(word: str, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = _tree(Path(tmp))
        reached = _bash_reaches(ws, word)
        reason = _decide(ws, f"{command} {word}")
        if any(not _inside(p, ws) for p in reached):
            assert reason != "read-only-command", (word, reached)


SPELLED = [
    "cat a/*/in", "cat a/l*/in", "cat a/[l]ink/in", "cat a/?ink/in", "cat */link/in",
    "cat b/o*", "cat b/*", "ls a/*", "head {a,b}/link/in", "cat a/{sub,link}/in",
    "cat {a/link,b}/in", "wc -l a/{link,sub}/*", "cat {1..3}", "cat a/{x..z}",
    "grep -R x a", "grep -Rn x .", "grep --dereference-recursive x a", "egrep -R x b",
    "ls -RL a", "ls -L a", "ls --dereference b", "du -L a", "du --dereference .",
    "cat $(echo a/link/in)",
]  # fmt: skip
INSIDE = [
    "cat a/sub/*", "ls a/sub/*", "cat a/{sub,x}/in", "grep -r x a/sub", "ls -R a/sub",
    "du a/sub", "cat b/sub/*", "cat a/nomatch*", "wc -l */in", "cat a/*/nomatch",
]  # fmt: skip


@pytest.mark.parametrize("command", SPELLED)
def test_expansions_and_link_following_readers_that_reach_outside_ask(
    command: str, tmp_path: Path
) -> None:
    ws = _tree(tmp_path)
    assert _decide(ws, command) != "read-only-command", command


@pytest.mark.parametrize("command", INSIDE)
def test_expansions_that_stay_inside_are_still_read_only(command: str, tmp_path: Path) -> None:
    ws = _tree(tmp_path)
    assert _decide(ws, command) == "read-only-command", command


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("word", "words"),
    [
        ("a{b,c}d", ["abd", "acd"]),
        ("{a,b}{c,d}", ["ac", "ad", "bc", "bd"]),
        ("x{a,{b,c}}", ["xa", "xb", "xc"]),
        ("{a}", ["{a}"]),
        ("plain", ["plain"]),
        ("{1..3}", None),
        ("{a,b", ["{a,b"]),
    ],
)
def test_brace_expansion_as_bash_does_it(word: str, words: list[str] | None) -> None:
    assert expand_braces(word) == words
    if words is not None:
        done = subprocess.run(["bash", "-c", f"printf '%s\\n' {word}"], capture_output=True)
        assert done.stdout.decode().split() == words
