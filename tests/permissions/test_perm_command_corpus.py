"""Shell spellings of a denied command: each must come out deny or ask, never allow.

Every spelling is checked with broad allow rules present and in bypass mode, the two places
where a missed deny would silently turn into an approval.
"""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perm_support import BASH, decide

from agentrig.permissions import match_command, split_command
from agentrig.permissions._wrappers import INERT_PROGRAMS, WRAPPERS

BROAD = [
    pytest.param({"mode": "bypass"}, id="bypass"),
    pytest.param({"allow": ["Bash"]}, id="allow-Bash"),
    pytest.param({"allow": ["Bash(*)"], "mode": "accept-edits"}, id="allow-Bash-star"),
    pytest.param({"allow": ["Bash(git:*)", "Bash(true:*)", "Bash(echo:*)"]}, id="allow-git"),
    pytest.param({"remembered": ["Bash"], "mode": "bypass"}, id="remembered-bypass"),
]

GIT_PUSH_SPELLINGS = [
    "git push",
    "git  push",
    "git\tpush",
    "'git' push",
    '"git" "push"',
    "g\\it push",
    "gi''t pu\"\"sh",
    "\\git push",
    "/usr/bin/git push",
    "./git push",
    "env A=1 git push",
    "env -i PATH=/bin git push",
    "A=1 git push",
    "GIT_TRACE=1 B=2 git push origin main",
    "sudo git push",
    "sudo -u root -E git push",
    "sudo -- git push",
    "doas git push",
    "timeout 5 git push",
    "timeout -s KILL 5 git push",
    "nice git push",
    "nice -n 10 git push",
    "nohup git push &",
    "time git push",
    "command git push",
    "command -p git push",
    "builtin git push",
    "exec git push",
    "exec -a name git push",
    "stdbuf -o0 git push",
    "setsid git push",
    "busybox git push",
    "true && git push",
    "false || git push",
    "true; git push",
    "true | git push",
    "true |& git push",
    "echo ok & git push",
    "true\ngit push",
    "true\r\ngit push",
    "git \\\npush",
    "git pu\\\nsh",
    "(git push)",
    "( cd x && git push )",
    "{ git push; }",
    "if true; then git push; fi",
    "while true; do git push; done",
    "for i in 1; do git push; done",
    "! git push",
    "git push 2>&1",
    "git push >/dev/null 2>&1",
    "2>/dev/null git push",
    "git push < /dev/null",
    "git push;",
    "git push origin --force",
    "git -C . push",
    "git -C/tmp push",
    "git --no-pager push",
    "git -c user.name=x push",
    "git --git-dir=.git push",
    "git --work-tree . push",
    "$(echo git) push",
    "`echo git` push",
    "git $(echo push)",
    "git `echo push`",
    "echo $(git push)",
    "echo `git push`",
    "cat <(git push)",
    "diff <(git push) x",
    'echo "$(git push)"',
    "bash -c 'git push'",
    'sh -c "git push origin"',
    "bash -lc 'git push'",
    "/bin/sh -c 'git push'",
    "zsh -c 'true && git push'",
    "sh -c \"sh -c 'git push'\"",
    "echo git push | sh",
    "echo git push | bash -s",
    "eval git push",
    'eval "git push"',
    "eval 'git' 'push'",
    "x=git; $x push",
    "CMD='git push'; $CMD",
    "${GIT:-git} push",
    "$'git' push",
    "{git,push}",
    "gi? push",
    "/usr/bin/gi* push",
    "git pu*",
    "git p?sh",
    "git ${SUB}",
    "xargs git push",
    "echo push | xargs git",
    "xargs -n1 git push",
    "find . -exec git push \\;",
    "find . -execdir git push {} +",
    "f() { git push; }; f",
    "function f { git push; }; f",
    "alias p='git push'",
    "watch git push",
    "ssh host git push",
    "su -c 'git push'",
    "python -c 'import os; os.system(\"git push\")'",
    "awk 'BEGIN { system(\"git push\") }'",
    "git -c alias.p=push p",
    "trap 'git push' EXIT",
    "cat <<EOF\ngit push\nEOF",
    "echo 'unterminated; git push",
    "env -S 'git push'",
    "sudo -Q git push",
    "git --unknown-global push",
]


@pytest.mark.parametrize("kwargs", BROAD)
@pytest.mark.parametrize("command", GIT_PUSH_SPELLINGS)
def test_git_push_spellings_never_allowed(
    tmp_path: Path, command: str, kwargs: dict[str, object]
) -> None:
    decision = decide(tmp_path, BASH, {"command": command}, deny=["Bash(git push:*)"], **kwargs)
    assert decision.verdict in ("deny", "ask"), (command, decision)


# a program nobody taught the splitter, carrying the denied program among its words: it may
# be a wrapper (``mytool`` could exec its arguments), so the call asks -- never allows
UNKNOWN_WRAPPER_SPELLINGS = [
    "mytool git push",
    "mytool --flag git push origin",
    "mytool -- git push",
    "mytool /usr/bin/git push",
    "mytool --run=git push",
    "mytool 'git push'",
    "mytool -c 'git push origin'",
    "MYTOOL GIT PUSH",
    "./run-with-retry.sh 3 git push",
    "/opt/bin/with-creds git push",
    "sudo mytool git push",
    "npx git push",
    "git submodule foreach git push",
    "true && mytool git push",
    "mytool a b c d e f git",
]


@pytest.mark.parametrize("kwargs", [*BROAD, pytest.param({"allow": ["Bash(mytool:*)"]})])
@pytest.mark.parametrize("command", UNKNOWN_WRAPPER_SPELLINGS)
def test_an_unknown_program_carrying_a_denied_one_is_asked(
    tmp_path: Path, command: str, kwargs: dict[str, object]
) -> None:
    decision = decide(tmp_path, BASH, {"command": command}, deny=["Bash(git push:*)"], **kwargs)
    assert (decision.verdict, decision.reason) == ("ask", "unevaluable-rule"), command


@pytest.mark.parametrize(
    "command",
    ["echo git push", "grep -r git .", "cat git.txt", "ls git", "rm -f git", "mytool status"],
)
def test_inert_programs_and_unrelated_words_are_not_asked(tmp_path: Path, command: str) -> None:
    decision = decide(
        tmp_path, BASH, {"command": command}, deny=["Bash(git push:*)"], allow=["Bash"]
    )
    assert decision.verdict == "allow", (command, decision)


_PROGRAM = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True).filter(
    lambda name: name not in INERT_PROGRAMS and name not in WRAPPERS
)
_WORD = st.from_regex(r"[A-Za-z0-9_./=-]{1,8}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(program=_PROGRAM, before=st.lists(_WORD, max_size=3), after=st.lists(_WORD, max_size=3))
def test_a_denied_program_behind_any_unknown_program_is_never_allowed(
    program: str, before: list[str], after: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        command = shlex.join([program, *before, "git", "push", *after])
        for kwargs in ({"mode": "bypass"}, {"allow": [f"Bash({program}:*)"]}):
            decision = decide(
                Path(tmp), BASH, {"command": command}, deny=["Bash(git push:*)"], **kwargs
            )
            assert decision.verdict in ("deny", "ask"), (command, decision)


# spellings the splitter reads conclusively: they must be denied outright, not just asked
DENIED_OUTRIGHT = [
    "git push",
    "'git' push",
    '"git" "push"',
    "g\\it push",
    "/usr/bin/git push",
    "env A=1 git push",
    "sudo git push",
    "timeout 5 git push",
    "true && git push",
    "true; git push",
    "true | git push",
    "true\ngit push",
    "bash -c 'git push'",
    'sh -c "git push origin"',
    "eval git push",
    "git -C . push",
    "nohup git push &",
    "xargs git push",
    "command git push",
    "exec git push",
    "(git push)",
    "{ git push; }",
    "git push 2>&1",
    "echo $(git push)",
    "find . -exec git push \\;",
]


@pytest.mark.parametrize("command", DENIED_OUTRIGHT)
def test_conclusive_spellings_are_denied(tmp_path: Path, command: str) -> None:
    decision = decide(
        tmp_path, BASH, {"command": command}, deny=["Bash(git push:*)"], mode="bypass"
    )
    assert (decision.verdict, decision.reason) == ("deny", "deny-rule"), command


# git -C dir push: the global option is stripped, so the deny rule matches (documented)
def test_git_dash_c_is_caught(tmp_path: Path) -> None:
    decision = decide(
        tmp_path, BASH, {"command": "git -C ../other push"}, deny=["Bash(git push:*)"]
    )
    assert decision.verdict == "deny"


RM_RF_SPELLINGS = [
    "rm -rf build",
    "rm -fr build",
    "rm -r -f build",
    "rm -Rf build",
    "rm --recursive --force build",
    "rm -f -r build",
    "rm build -rf",
    "/bin/rm -rf build",
    "\\rm -rf build",
    "sudo rm -rf build",
    "command rm -rf build",
    "busybox rm -rf build",
    "find . -name x -exec rm -rf {} +",
    "ls | xargs rm -rf",
    "sh -c 'rm -rf build'",
    "true && rm -rf build",
]


@pytest.mark.parametrize("kwargs", BROAD)
@pytest.mark.parametrize("command", RM_RF_SPELLINGS)
def test_rm_rf_spellings_never_allowed(
    tmp_path: Path, command: str, kwargs: dict[str, object]
) -> None:
    decision = decide(tmp_path, BASH, {"command": command}, deny=["Bash(rm -rf:*)"], **kwargs)
    assert decision.verdict in ("deny", "ask"), (command, decision)


CURL_SPELLINGS = [
    "curl https://x",
    "/usr/bin/curl x",
    "c\\url x",
    "'curl' x",
    "env curl x",
    "$(which curl) x",
    "timeout 3 curl x",
    "echo | xargs curl",
    "npm test && curl x",
    "bash -c 'curl x'",
]


@pytest.mark.parametrize("kwargs", BROAD)
@pytest.mark.parametrize("command", CURL_SPELLINGS)
def test_curl_spellings_asked_never_allowed(
    tmp_path: Path, command: str, kwargs: dict[str, object]
) -> None:
    decision = decide(tmp_path, BASH, {"command": command}, ask=["Bash(curl:*)"], **kwargs)
    assert decision.verdict == "ask", (command, decision)


BENIGN = [
    ("echo git push", "Bash(git push:*)"),
    ("grep 'git push' notes.txt", "Bash(git push:*)"),
    ("git status", "Bash(git push:*)"),
    ("git pushy", "Bash(git push:*)"),
    ("gitpush", "Bash(git push:*)"),
    ("ls $HOME", "Bash(git push:*)"),
    ("echo $(date)", "Bash(git push:*)"),
    ("npm run testing", "Bash(npm run test:*)"),
]


@pytest.mark.parametrize(("command", "pattern"), BENIGN)
def test_benign_commands_do_not_match(command: str, pattern: str) -> None:
    rule = pattern[len("Bash(") : -1]
    assert match_command(rule, command, direction="restrict") == "no-match"


def test_unevaluable_is_distinct_from_no_match() -> None:
    assert match_command("git push:*", "$X push", direction="restrict") == "unevaluable"
    assert match_command("git push:*", "$X push", direction="grant") == "unevaluable"
    assert match_command("git push:*", "make", direction="restrict") == "no-match"


def test_splitter_reports_why() -> None:
    parsed = split_command("x=git; $x push")
    assert not parsed.conclusive
    assert any("$x" in reason for reason in parsed.reasons)


def test_corpus_sizes() -> None:
    assert len(GIT_PUSH_SPELLINGS) >= 100
