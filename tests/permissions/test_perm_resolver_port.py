"""The evaluator reads paths only through its ``PathResolver`` port and does no FS I/O.

A fake resolver maps paths that do not exist on this machine; the decisions follow its
answers (a "symlink" only the port knows about is still caught), an unresolvable path still
asks rather than allows, and with every filesystem call of ``os`` made to fail the
evaluation still decides.  An AST check keeps the evaluator modules free of filesystem
imports and calls.
"""

from __future__ import annotations

import ast
import builtins
import os
import posixpath
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from perm_support import BASH, EDIT, READ

import agentrig.permissions as permissions
from agentrig.permissions import (
    PathResolver,
    PermissionCall,
    PermissionContext,
    PermissionDecision,
    PermissionRules,
    ToolPermissions,
    evaluate_permission,
)
from agentrig.permissions._risk import canonical_root

# nothing under this prefix exists: every answer below can only come from the port
WS = "/nonexistent-agentrig-port/ws"
HOME = "/nonexistent-agentrig-port/home"
SECRET = "/nonexistent-agentrig-port/secret"


class FakeResolver:
    """Folds ``..`` by text, then swaps the prefixes it was told are symlinks; records calls."""

    def __init__(self, links: Mapping[str, str], broken: tuple[str, ...] = ()) -> None:
        self.links = dict(links)
        self.broken = broken
        self.asked: list[str] = []

    def __call__(self, path: str) -> str | None:
        self.asked.append(path)
        out = posixpath.normpath(path)
        if any(out == b or out.startswith(b + "/") for b in self.broken):
            return None  # "a loop / an unreadable component": cannot be told
        for link, target in self.links.items():
            if out == link or out.startswith(link + "/"):
                out = target + out[len(link) :]
        return out


def _decide(
    tool: ToolPermissions,
    arguments: Mapping[str, object],
    resolve: PathResolver,
    *,
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
) -> PermissionDecision:
    ctx = PermissionContext(
        workspace_root=WS,
        rules=PermissionRules.parse(allow=allow, deny=deny),
        home=HOME,
        resolve_path=resolve,
    )
    return evaluate_permission(PermissionCall(tool, dict(arguments)), ctx)


def test_a_symlink_only_the_port_knows_is_followed_into_a_deny_rule() -> None:
    linked = FakeResolver({f"{WS}/link": SECRET})
    decision = _decide(READ, {"path": "link/key.pem"}, linked, deny=(f"Read(/{SECRET}/**)",))
    assert (decision.verdict, decision.reason) == ("deny", "deny-rule")
    assert f"{WS}/link/key.pem" in linked.asked
    # the same call through a port that knows no link is not denied: the port decided
    plain = _decide(READ, {"path": "link/key.pem"}, FakeResolver({}), deny=(f"Read(/{SECRET}/**)",))
    assert plain.verdict == "allow"


def test_the_workspace_root_is_canonicalised_through_the_port() -> None:
    # the root itself is a "symlink" to SECRET: an edit of a root file is an edit in SECRET
    moved = FakeResolver({WS: SECRET})
    decision = _decide(EDIT, {"path": "a.txt"}, moved, deny=(f"Edit(/{SECRET}/a.txt)",))
    assert decision.verdict == "deny"
    assert WS in moved.asked


def test_a_re_pointed_root_symlink_is_followed_at_once() -> None:
    # the same port, the root's "symlink" moved between two calls: nothing remembers the
    # first answer, so the second call is judged where the root points now (a remembered
    # root let an edit into the denied place through as an edit of the old place)
    port = FakeResolver({WS: HOME})
    deny = (f"Edit(/{SECRET}/a.txt)",)
    assert _decide(EDIT, {"path": "a.txt"}, port, deny=deny).verdict != "deny"
    port.links = {WS: SECRET}
    assert _decide(EDIT, {"path": "a.txt"}, port, deny=deny).verdict == "deny"
    assert canonical_root(WS, port) == SECRET
    before = port.asked.count(WS)
    canonical_root(WS, port)
    assert port.asked.count(WS) == before + 1  # asked again, not remembered
    # a root the port cannot read is folded by text (every path check under it then asks)
    assert canonical_root(f"{WS}/sub/..", FakeResolver({}, broken=(WS,))) == WS


def test_an_unresolvable_path_asks_and_is_never_allowed() -> None:
    broken = FakeResolver({}, broken=(f"{WS}/loop",))
    denied = _decide(EDIT, {"path": "loop/x"}, broken, deny=("Edit(./other/**)",))
    assert (denied.verdict, denied.reason, denied.always_ask) == (
        "ask",
        "unevaluable-rule",
        True,
    )
    allowed = _decide(EDIT, {"path": "loop/x"}, broken, allow=("Edit(./**)",))
    assert allowed.verdict == "ask"
    # the same allow rule grants a path the port can answer
    fine = _decide(EDIT, {"path": "ok/x"}, broken, allow=("Edit(./**)",))
    assert (fine.verdict, fine.reason) == ("allow", "allow-rule")


def test_an_unresolvable_word_keeps_a_command_from_counting_as_read_only() -> None:
    broken = FakeResolver({}, broken=(f"{WS}/loop",))
    assert _decide(BASH, {"command": "cat ok.txt"}, broken).reason == "read-only-command"
    assert _decide(BASH, {"command": "cat loop/x"}, broken).verdict == "ask"
    # a word the port resolves outside the workspace is not read-only either
    out = FakeResolver({f"{WS}/link": SECRET})
    assert _decide(BASH, {"command": "cat link/key.pem"}, out).verdict == "ask"


def test_a_catastrophic_target_is_judged_by_the_ports_answer() -> None:
    # "rm -rf sub" is harmless unless the port says sub is the home directory
    to_home = FakeResolver({f"{WS}/sub": HOME})
    decision = _decide(BASH, {"command": "rm -rf sub"}, to_home)
    assert (decision.reason, decision.always_ask) == ("catastrophic-removal", True)
    assert _decide(BASH, {"command": "rm -rf sub"}, FakeResolver({})).reason != (
        "catastrophic-removal"
    )


_FS_CALLS: tuple[tuple[object, str], ...] = (
    (os, "stat"),
    (os, "lstat"),
    (os, "readlink"),
    (os, "getcwd"),
    (os, "listdir"),
    (os, "scandir"),
    (os.path, "realpath"),
    (os.path, "exists"),
    (os.path, "lexists"),
    (os.path, "isdir"),
    (os.path, "islink"),
    (os.path, "abspath"),
    (builtins, "open"),
)


@contextmanager
def _no_filesystem(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    touched: list[str] = []

    def refuse(name: str) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            touched.append(name)
            raise AssertionError(f"the evaluator called {name}")

        return call

    with monkeypatch.context() as patch:
        for owner, name in _FS_CALLS:
            patch.setattr(owner, name, refuse(name))
        yield touched


def test_evaluation_does_no_filesystem_io(monkeypatch: pytest.MonkeyPatch) -> None:
    port = FakeResolver({f"{WS}/link": SECRET})
    ctx = PermissionContext(
        workspace_root=WS,
        rules=PermissionRules.parse(
            deny=(f"Read(/{SECRET}/**)", "Bash(curl:*)"),
            ask=("Edit(~/.ssh/**)",),
            allow=("Edit(./src/**)", "Edit(/conf/*.toml)"),
        ),
        home=HOME,
        additional_roots=("/nonexistent-agentrig-port/extra",),
        rules_root="/nonexistent-agentrig-port/cfg",
        resolve_path=port,
    )
    calls = [
        PermissionCall(READ, {"path": "link/key.pem"}),
        PermissionCall(EDIT, {"path": "src/a.py"}),
        PermissionCall(EDIT, {"path": "~/.bashrc"}),
        PermissionCall(EDIT, {"path": ["src/a.py", "../x"]}),
        PermissionCall(BASH, {"command": f"ls src && cat {WS}/link/key.pem"}),
        PermissionCall(BASH, {"command": "rm -rf ~ ; find . -delete"}),
    ]
    with _no_filesystem(monkeypatch) as touched:
        verdicts = [evaluate_permission(call, ctx).verdict for call in calls]
    assert touched == []
    assert verdicts == ["deny", "allow", "ask", "ask", "ask", "ask"]
    assert port.asked  # every path went through the port


_EVALUATOR = ("_match.py", "_risk.py", "_evaluate.py")
_FS_MODULES = frozenset({"os", "pathlib", "shutil", "io", "glob", "tempfile", "agentrig.host"})
_FS_NAMES = frozenset(
    {"realpath", "abspath", "exists", "lexists", "lstat", "stat", "readlink", "resolve"}
    | {"getcwd", "listdir", "scandir", "isdir", "isfile", "islink", "open", "expanduser"}
)


@pytest.mark.parametrize("module", _EVALUATOR)
def test_evaluator_modules_import_and_call_nothing_that_touches_the_filesystem(
    module: str,
) -> None:
    source = Path(permissions.__file__).with_name(module)
    tree = ast.parse(source.read_text(encoding="utf-8"))
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
            names += [f"{node.module}.{a.name}" for a in node.names]
        else:
            names = []
        line = getattr(node, "lineno", 0)
        problems += [
            f"line {line}: imports {n}"
            for n in names
            if n in _FS_MODULES
            or n.split(".")[0] in {"os", "pathlib", "shutil"}
            or n.startswith("agentrig.host")
        ]
        # (``resolve`` as a bare name is the port itself; ``.resolve`` is Path.resolve)
        if isinstance(node, ast.Attribute) and node.attr in _FS_NAMES:
            problems.append(f"line {node.lineno}: uses .{node.attr}")
        if isinstance(node, ast.Name) and node.id in _FS_NAMES - {"resolve"}:
            problems.append(f"line {node.lineno}: uses {node.id}")
    assert problems == []


def test_the_default_port_is_the_hosts_one_canonicalisation(tmp_path: Path) -> None:
    from agentrig.host import resolve_path

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    ctx = PermissionContext(workspace_root=str(tmp_path), rules=PermissionRules.parse())
    assert ctx.resolve_path is resolve_path
    real = str((tmp_path / "real").resolve())
    assert resolve_path(str(tmp_path / "link" / "f")) == f"{real}/f"
    assert resolve_path(str(tmp_path / "loop" / "f")) is None
    assert resolve_path("a\x00b") is None
    assert permissions.canonical_path("link/f", root=str(tmp_path), home=str(tmp_path)) == (
        f"{real}/f"
    )


def test_with_extra_roots_relative_words_are_read_from_the_workspace() -> None:
    """A relative word names a path under the workspace (where the command runs), never
    under an extra root: ``link`` escaping the workspace is not read-only just because
    ``<extra>/link/key.pem`` would lie inside the extra root."""
    extra = "/nonexistent-agentrig-port/extra"
    port = FakeResolver({f"{WS}/link": SECRET})

    def decide(command: str) -> PermissionDecision:
        ctx = PermissionContext(
            workspace_root=WS,
            rules=PermissionRules.parse(),
            home=HOME,
            additional_roots=(extra,),
            resolve_path=port,
        )
        return evaluate_permission(PermissionCall(BASH, {"command": command}), ctx)

    assert decide("cat link/key.pem").verdict == "ask"
    # what lies inside an extra root is still read-only, named absolutely or relatively
    assert decide(f"cat {extra}/notes.txt").reason == "read-only-command"
    assert decide("cat ../extra/notes.txt").reason == "read-only-command"
    assert decide("cat src/a.py").reason == "read-only-command"
