"""Path-rule globs mean what they say: gitignore's reading, or a config error -- never less.

The reference is the ``pathspec`` library's gitignore matching: whatever it matches, a deny
rule with the same text must match too; what an allow rule grants, gitignore must name.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perm_support import EDIT, READ, TOOLS, decide

from agentrig.permissions import PermissionRuleError, PermissionRules, match_path


def _match(tmp_path: Path, pattern: str, value: str, direction: str = "grant") -> str:
    root = os.path.realpath(tmp_path / "ws")
    return match_path(pattern, value, root=root, home=root, direction=direction)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        ("*.[ch]", ["a.c", "d/a.h"], ["a.x", "a.[ch]"]),
        ("x[!a]y", ["xby", "xYy"], ["xay", "x[!a]y"]),
        ("x[^a]y", ["xby"], ["xay"]),
        ("x[a-c]y", ["xby"], ["xdy", "x-y"]),
        ("x[]a]y", ["x]y", "xay"], ["xby"]),
        ("x[!]]y", ["xby"], ["x]y"]),
        ("x[\\]]y", ["x]y"], ["xby"]),
        ("\\*.txt", ["*.txt"], ["a.txt"]),
        ("\\[ab].txt", ["[ab].txt"], ["a.txt"]),
        ("name\\ ", ["name "], ["name"]),
        ("\\!important", ["!important"], ["important"]),
        ("\\#tag", ["#tag"], ["tag"]),
        ("\\{a,b}", ["{a,b}"], ["a"]),
        ("a?c", ["abc"], ["ac", "a/c"]),
        ("a**b", ["ab", "axxb"], ["a/b"]),
        ("src/**/k.pem", ["src/k.pem", "src/a/b/k.pem"], ["k.pem", "lib/k.pem"]),
        # whatever a pattern names, it names with everything inside (gitignore)
        ("secrets", ["secrets", "secrets/k.pem", "a/secrets/b/k.pem"], ["secretsx"]),
        ("secrets/*", ["secrets/a", "secrets/a/b/k.pem"], ["secrets"]),
        ("*.env", ["x.env", "deep/x.env", "x.env/inner"], ["x.envy"]),
    ],
)
def test_each_glob_character_means_what_gitignore_says(
    tmp_path: Path, pattern: str, hits: list[str], misses: list[str]
) -> None:
    for value in hits:
        assert _match(tmp_path, pattern, value) == "match", (pattern, value)
    for value in misses:
        assert _match(tmp_path, pattern, value) == "no-match", (pattern, value)
    # the same rule text, with the tools known, is accepted
    PermissionRules.parse(deny=[f"Read({pattern})"], allow=[f"Read({pattern})"], tools=TOOLS)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("!secrets", "leading '!'"),
        ("#notes", "leading '#'"),
        ("a[bc", "never closed"),
        ("*.[ch", "never closed"),
        ("[[:alpha:]]x", "POSIX character classes"),
        ("x[z-a]", "reversed"),
        ("x[a/b]", "cannot hold '/'"),
        ("x[+-0]", "includes '/'"),
        ("x[!+-0]", "includes '/'"),
        ("*.{pem,key}", "braces are not glob syntax"),
        ("secrets/{a", "braces are not glob syntax"),
        ("secrets ", "ends with a space"),
        ("secrets\\", "lone '\\'"),
        ("a\\/b", "cannot escape a separator"),
        ("~root/.ssh", "'~user' paths"),
    ],
)
def test_what_the_syntax_does_not_read_is_a_config_error(pattern: str, reason: str) -> None:
    for lists in ({"deny": [f"Read({pattern})"]}, {"ask": [f"Edit({pattern})"]}):
        with pytest.raises(PermissionRuleError) as caught:
            PermissionRules.parse(**lists, tools=TOOLS)  # type: ignore[arg-type]
        assert reason in caught.value.reason
        assert caught.value.rule in (f"Read({pattern})", f"Edit({pattern})")
    # a tool-name glob that reaches a path tool checks the pattern too
    with pytest.raises(PermissionRuleError):
        PermissionRules.parse(deny=[f"Rea*({pattern})"], tools=TOOLS)


@pytest.mark.parametrize("pattern", ["!secrets", "a[bc", "*.{pem,key}", "secrets "])
def test_without_the_tools_a_bad_pattern_asks_and_never_grants(
    tmp_path: Path, pattern: str
) -> None:
    # parsed without declarations (a library caller), the rule cannot be refused up front:
    # as a deny rule it asks, as an allow rule it grants nothing
    denied = decide(tmp_path, READ, {"path": "secrets"}, deny=[f"Read({pattern})"])
    assert (denied.verdict, denied.reason) == ("ask", "unevaluable-rule")
    granted = decide(
        tmp_path, READ, {"path": "x"}, allow=[f"Read({pattern})"], mode="plan", deny=[]
    )
    assert granted.reason != "allow-rule"


def test_the_text_kind_and_parameter_rules_keep_their_own_syntax() -> None:
    # not a path: no glob check (command and text patterns have their own readings)
    PermissionRules.parse(deny=["Bash(echo {a,b}:*)", "Search(!x)"], tools=TOOLS)


def test_a_directory_denied_by_name_covers_its_files(tmp_path: Path) -> None:
    # would pass through before: "secrets" matched only the directory itself
    for rule in ("Read(secrets)", "Read(secrets/*)", "Read(.env*)"):
        decision = decide(
            tmp_path,
            READ,
            {"path": "secrets/sub/.env.local/key.pem"},
            deny=[rule],
            mode="bypass",
        )
        assert (decision.verdict, decision.reason) == ("deny", "deny-rule"), rule


# ---- against the reference ----------------------------------------------------------------

_SEGMENT_ATOMS = ["a", "b", "ab", ".x", "*", "?", "[ab]", "[!a]", "[a-b]", "\\*", "a*", "*b"]
_PATTERN_SEGMENT = st.lists(st.sampled_from(_SEGMENT_ATOMS), min_size=1, max_size=3).map("".join)
_PATTERN = st.builds(
    lambda lead, segs, trail: lead + "/".join(segs) + trail,
    st.sampled_from(["", "/", "**/"]),
    st.lists(st.one_of(_PATTERN_SEGMENT, st.just("**")), min_size=1, max_size=3),
    st.sampled_from(["", "/", "/**"]),
)
_PATH = st.lists(
    st.sampled_from(["a", "b", "ab", "ba", "aab", ".x", "*", "b.x", "A"]), min_size=1, max_size=4
).map("/".join)
_ROOT = os.path.realpath(tempfile.gettempdir())


def _reference(pattern: str, path: str) -> bool:
    spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    return bool(spec.match_file(path))


def _ours(pattern: str, path: str, direction: str) -> str:
    # gitignore anchors "/x" at the repository; here that is "./x" ("/x" is absolute)
    ours = "./" + pattern[1:] if pattern.startswith("/") else pattern
    root = os.path.join(_ROOT, "agentrig-glob-ref")
    return match_path(ours, path, root=root, home=root, direction=direction)  # type: ignore[arg-type]


@settings(max_examples=1500, deadline=None)
@given(pattern=_PATTERN, path=_PATH)
def test_a_deny_rule_never_matches_less_than_gitignore(pattern: str, path: str) -> None:
    if _reference(pattern, path):
        assert _ours(pattern, path, "restrict") == "match", (pattern, path)


@settings(max_examples=1500, deadline=None)
@given(pattern=_PATTERN, path=_PATH)
def test_an_allow_rule_grants_only_what_gitignore_names(pattern: str, path: str) -> None:
    if _ours(pattern, path, "grant") == "match":
        # the path itself, or the directory the pattern names (``a/`` and ``a/**`` cover a)
        assert _reference(pattern, path) or _reference(pattern, path + "/x"), (pattern, path)
    elif _reference(pattern, path) and "[!" not in pattern:
        # (pathspec lets "[!a]" match "/"; git does not, and neither does a grant here)
        raise AssertionError(f"{pattern!r} names {path!r} in gitignore but grants nothing")


def test_a_glob_over_a_symlinked_directory_matches_the_path_as_written(tmp_path: Path) -> None:
    # the call's path resolves to ws/real/key.pem, which "src/*/key.pem" does not name; the
    # path as written (ws/src/link/key.pem) does, and a deny rule must not match less
    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "link").symlink_to(root / "real")
    for rule in ("Read(src/*/key.pem)", "Read(src/link/*.pem)", "Read(**/link/**)"):
        decision = decide(tmp_path, READ, {"path": "src/link/key.pem"}, deny=[rule], mode="bypass")
        assert (decision.verdict, decision.reason) == ("deny", "deny-rule"), rule
    # an allow rule reads only where the path leads: the written path grants nothing
    granted = decide(tmp_path, EDIT, {"path": "src/link/key.pem"}, allow=["Edit(src/*/key.pem)"])
    assert (granted.verdict, granted.reason) == ("ask", "mode-requires-approval")
    # and the resolved reading still applies: a deny on the target covers the link
    target = decide(tmp_path, READ, {"path": "src/link/key.pem"}, deny=["Read(real/**)"])
    assert target.verdict == "deny"
