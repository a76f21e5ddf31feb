"""Properties: the splitter and matchers never raise, and a denied prefix never turns into allow."""

from __future__ import annotations

import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st
from perm_support import BASH, FETCH, READ

from agentrig.permissions import (
    PermissionCall,
    PermissionContext,
    PermissionRules,
    evaluate_permission,
    match_command,
    match_url,
    split_command,
)

_SHELLISH = st.text(alphabet="gitpush $`'\"\\;&|()<>{}*?=-\n\t/~.xc", max_size=40)
_ROOT = os.path.realpath(tempfile.gettempdir())


@settings(max_examples=400, deadline=None)
@given(_SHELLISH)
def test_splitter_and_matcher_never_raise(text: str) -> None:
    split_command(text)
    for direction in ("restrict", "grant"):
        assert match_command("git push:*", text, direction=direction) in (  # type: ignore[arg-type]
            "match",
            "no-match",
            "unevaluable",
        )


@settings(max_examples=300, deadline=None)
@given(
    # quotes and backslashes can legitimately swallow the separator (``x\\; git push``)
    st.text(max_size=30).filter(lambda s: not any(ch in s for ch in "\\'\"")),
    st.sampled_from(["; ", " && ", "\n", " | ", " & "]),
)
def test_denied_prefix_after_anything_is_never_allowed(prefix: str, separator: str) -> None:
    ctx = PermissionContext(
        workspace_root=_ROOT,
        rules=PermissionRules.parse(allow=["Bash"], deny=["Bash(git push:*)"]),
        mode="bypass",
        home=_ROOT,
    )
    command = f"{prefix}{separator}git push"
    decision = evaluate_permission(PermissionCall(BASH, {"command": command}), ctx)
    assert decision.verdict != "allow", command


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_url_and_path_rules_never_raise(text: str) -> None:
    assert match_url("https://*.example.com/a/**", text, direction="grant") in (
        "match",
        "no-match",
        "unevaluable",
    )
    ctx = PermissionContext(
        workspace_root=_ROOT,
        rules=PermissionRules.parse(deny=["Read(secrets/**)", "WebFetch(domain:x.com)"]),
        home=_ROOT,
    )
    evaluate_permission(PermissionCall(READ, {"path": text}), ctx)
    evaluate_permission(PermissionCall(FETCH, {"url": text}), ctx)
