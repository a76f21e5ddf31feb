"""Class: a path spelled into an imported rule is a path, never a pattern (issue 28, point 4).

A Claude Code ``Read(/secrets/**)`` is anchored at its project directory.  Whatever that
directory's name holds -- ``[``, ``]``, ``*``, ``?``, ``{``, ``}``, ``!``, ``#``, ``\\``,
spaces -- the rule must deny the project's own ``secrets`` and nothing else: a name such as
``a[1]`` must not become the class ``[1]`` (which names ``a1``, not ``a[1]``), and ``{`` must
not turn the rule into a syntax error that protects nothing.  Relative patterns are anchored
at the workspace the same way.  Real directories, generated names.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.kernel import load_config
from agentrig.permissions import (
    PermissionArg,
    PermissionCall,
    PermissionContext,
    PermissionRules,
    ToolPermissions,
    escape_glob,
    evaluate_permission,
    match_path,
    permissions_config,
)

READ = ToolPermissions("Read", "inspect", PermissionArg("file_path", "path"), {"file_path"})
SPECIAL = "[]*?{}!# \\"
NAMES = st.text(alphabet=SPECIAL + "ab1-", min_size=1, max_size=10).filter(
    lambda n: n not in (".", "..") and not n.endswith(" ")
)


def _loaded_rules(project: Path) -> tuple[str, ...]:
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(/secrets/**)", "Read(./private/**)"]}})
    )
    config = {"claude_code": {"settings": [str(project / ".claude" / "settings.json")]}}
    return tuple(permissions_config(load_config(config)).deny)


def _decide(project: Path, deny: tuple[str, ...], path: Path) -> str:
    ctx = PermissionContext(
        workspace_root=str(project),
        rules=PermissionRules.parse(deny=deny, tools={"Read": READ}),
        mode="bypass",
        home=str(project.parent / "home"),
    )
    call = PermissionCall(READ, {"file_path": str(path)})
    return evaluate_permission(call, ctx).verdict


@settings(max_examples=150, deadline=None)
@given(NAMES)
def test_an_imported_rule_names_its_own_project_whatever_the_project_is_called(
    name: str,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / name
        deny = _loaded_rules(project)
        for directory in ("secrets", "private"):
            (project / directory).mkdir()
            assert _decide(project, deny, project / directory / "key.pem") == "deny", (name, deny)
        # a sibling that an unescaped name would have matched is not the project
        sibling = Path(tmp) / "".join("x" if ch in SPECIAL else ch for ch in name)
        if sibling != project:
            (sibling / "secrets").mkdir(parents=True)
            assert _decide(project, deny, sibling / "secrets" / "key.pem") == "allow", name
        shutil.rmtree(project)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=SPECIAL + "ab/.", min_size=1, max_size=16))
def test_escape_glob_names_exactly_the_path(text: str) -> None:
    path = "/" + "/".join(part for part in text.split("/") if part)  # no empty segment
    if path == "/" or any(part in (".", "..") for part in path.split("/")):
        return
    pattern = "/" + escape_glob(path)  # "//..." is absolute
    same = match_path(pattern, path, root="/", home="/home", resolve=lambda p: p)
    assert same == "match", (path, pattern)
    other = path + "x" if not path.endswith("/") else path + "x/y"
    assert match_path(pattern, other, root="/", home="/home", resolve=lambda p: p) == "no-match"


def test_the_documented_example_a_bracketed_project() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "client[1]"
        deny = _loaded_rules(project)
        (project / "secrets").mkdir()
        (Path(tmp) / "client1" / "secrets").mkdir(parents=True)
        assert _decide(project, deny, project / "secrets" / "k") == "deny"
        assert _decide(project, deny, Path(tmp) / "client1" / "secrets" / "k") == "allow"
