"""Class: a program that arrives on a side channel is unevaluable (issue 28, point 1).

An interpreter, shell, console or scheduler whose program comes from standard input (a pipe,
a here-string, a here-document, a ``<`` redirection), ``-``, ``/dev/stdin``, ``/dev/fd/N``,
``/proc/self/fd/N``, a process substitution or a path decided at run time cannot be judged
from the text.  With a deny rule configured it asks in every mode (bypass included; plan
mode denies), and an allow rule naming the program grants nothing.  Programs stored in
files (``python3 build.py``) stay the documented limit and are not asked about.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perm_support import BASH, decide

from agentrig.permissions import split_command

MODES = ("default", "accept-edits", "bypass", "plan")

SCRIPT_READERS = (
    "python3", "python", "python3.12", "pypy3", "perl", "ruby", "node", "nodejs", "php",
    "lua", "luajit", "Rscript", "deno", "bun", "bash", "sh", "zsh", "dash", "ksh", "fish",
)  # fmt: skip
CONSOLES = (
    "ed", "ex", "vi", "vim -es", "vim -Es", "nvim --headless", "emacs --batch", "gdb -batch",
    "lldb", "sqlite3 db", "psql", "mysql", "dc", "bc", "sftp host", "ftp", "lftp", "at now",
    "at 5pm", "batch", "crontab", "crontab -", "tclsh", "irb", "julia", "guile", "ghci",
)  # fmt: skip
FILE_OPTION_READERS = ("awk -f {}", "gawk --file={} x", "sed -f {} f", "make -f {}", "gmake -f{}")
SIDE_PATHS = ("-", "/dev/stdin", "/dev/fd/0", "/dev/fd/3", "/proc/self/fd/0", "<(curl x)", "$P")
FEEDS = (
    "{} <<< 'rm -rf x'",
    "echo 'rm -rf x' | {}",
    "cat prog |& {}",
    "{} < prog.txt",
    "{} <<EOF\nrm -rf x\nEOF",
    "{} 0< prog.txt",
)
WRAPPERS = ("", "sudo ", "env A=1 ", "timeout 5 ", "nice -n 5 ", "nohup ", "command ", "exec ")


def _corpus() -> list[str]:
    out: list[str] = []
    for reader in SCRIPT_READERS:
        for feed in FEEDS:
            out.append(feed.format(reader))  # no script operand: standard input
        for path in SIDE_PATHS:
            out.append(f"{reader} {path}")
            out.append(f"cat p | {reader} {path} arg")
    for console in CONSOLES:
        out.append(console)
        out.extend(feed.format(console) for feed in FEEDS[:2])
    for template in FILE_OPTION_READERS:
        out.extend(template.format(path) for path in SIDE_PATHS)
    for path in ("/dev/stdin", "<(curl x)", "/dev/fd/5", "-", "$F"):
        out.extend([f"source {path}", f". {path}"])
    out += [
        "echo rm x | xargs sh", "xargs python3 < list", "bash -s arg <<< x", "sh -is",
        "python3 -i script.py <<< 'import os'", "node -i", "php -f /dev/stdin",
        "python3 -X dev", "perl -I lib", "ruby -r json", "mytool <<< 'rm -rf x'",
        "busybox sh < x", "cd x && python3 <<< x", "true; perl - <<< x",
    ]  # fmt: skip
    return out


CORPUS = _corpus()


def _wrapped() -> list[str]:
    return [w + c for c in CORPUS[::7] for w in WRAPPERS if not c.startswith(("echo", "cat"))]


def test_the_corpus_is_large() -> None:
    assert len(CORPUS) >= 300
    assert len(_wrapped()) >= 250


@pytest.mark.parametrize("mode", MODES)
def test_every_side_channel_program_asks_under_a_deny_rule(mode: str, tmp_path: Path) -> None:
    for command in [*CORPUS, *_wrapped()]:
        d = decide(tmp_path, BASH, {"command": command}, mode=mode, deny=["Bash(rm:*)"])
        assert d.verdict != "allow", (command, d.reason)
        if mode != "plan":
            assert d.verdict == "ask" or d.reason == "deny-rule", (command, d.reason)
            assert d.always_ask or d.reason == "deny-rule", command


def test_an_allow_rule_naming_the_program_grants_none_of_them(tmp_path: Path) -> None:
    for command in CORPUS:
        program = command.split()[0]
        if program == "mytool":
            continue  # an unknown program: granting it by name is the operator's choice
        allow = [f"Bash({program}:*)", "Bash(echo:*)", "Bash(cat:*)"]
        d = decide(tmp_path, BASH, {"command": command}, allow=allow)
        assert d.verdict != "allow", command
        assert not split_command(command).conclusive, command


STORED = [
    "python3 build.py",
    "python3 -u tools/gen.py --out x",
    "cat data.json | python3 script.py",
    "python3 -m json.tool < data.json",
    "python3 --version",
    "node server.js",
    "perl -w script.pl a b",
    "bash scripts/test.sh",
    "sh -e ./configure",
    "ruby app.rb < input.txt",
    "awk '{print $1}' file",
    "awk -f prog.awk data",
    "sed -f edits.sed file",
    "sed -n 1p file",
    "make -f Makefile all",
    "make test",
    "source .venv/bin/activate",
    ". ./env.sh",
]


@pytest.mark.parametrize("command", STORED)
def test_programs_stored_in_files_are_not_asked_about(command: str, tmp_path: Path) -> None:
    d = decide(tmp_path, BASH, {"command": command}, mode="bypass", deny=["Bash(rm:*)"])
    assert (d.verdict, d.reason) == ("allow", "bypass"), command


_READER = st.sampled_from(SCRIPT_READERS + tuple(c.split()[0] for c in CONSOLES))
_FLAG = st.sampled_from(["", "-u ", "-B ", "-q ", "-E ", "-W error ", "-X dev "])
_CHANNEL = st.sampled_from(
    [f"{{}} {p}" for p in SIDE_PATHS] + list(FEEDS) + ["{}", "x | {}", "{} <<< ok"]
)
_WRAP = st.sampled_from(WRAPPERS)
_BEFORE = st.sampled_from(["", "cd src && ", "true; ", "ls | ", "(", "{ "])


@settings(max_examples=200, deadline=None)
@given(_WRAP, _READER, _FLAG, _CHANNEL, _BEFORE, st.sampled_from(MODES))
def test_property_side_channel_programs_never_allow(
    wrap: str, reader: str, flag: str, channel: str, before: str, mode: str
) -> None:
    command = before + channel.format(wrap + reader + " " + flag.strip()).strip()
    if before == "(":
        command += ")"
    elif before == "{ ":
        command += "; }"
    with tempfile.TemporaryDirectory() as tmp:
        d = decide(
            Path(tmp), BASH, {"command": command}, mode=mode, deny=["Bash(rm:*)"],
            allow=[f"Bash({reader}:*)"],
        )  # fmt: skip
    assert d.verdict != "allow", command
