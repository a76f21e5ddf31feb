# ruff: noqa: E501
"""The decision table: mode x risk class x rules x argument -> verdict and reason.

Rows are written out by hand (not computed) so a change to the order shows up as a failing
row rather than as a silently shifted expectation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from perm_support import BASH, EDIT, FETCH, ISSUE, MYSTERY, PING, READ, SEARCH, WRITE, decide

from agentrig.permissions import ToolPermissions

# the five risk situations of the matrix: (label, tool, arguments, rule tool name)
SUBJECTS: dict[str, tuple[ToolPermissions, dict[str, Any]]] = {
    "inspect": (READ, {"path": "src/a.py"}),
    "modify": (EDIT, {"path": "src/a.py"}),
    "execute": (BASH, {"command": "make build"}),
    "undeclared": (MYSTERY, {"path": "src/a.py"}),
    "ro-cmd": (BASH, {"command": "ls src && git status"}),
}
MODES = ("default", "accept-edits", "bypass", "plan")

# expected (verdict, reason) with no rules at all
NO_RULES = {
    "default": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("ask", "mode-requires-approval"),
        "execute": ("ask", "mode-requires-approval"),
        "undeclared": ("ask", "undeclared-risk"),
        "ro-cmd": ("allow", "read-only-command"),
    },
    "accept-edits": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("allow", "mode-allows"),
        "execute": ("ask", "mode-requires-approval"),
        "undeclared": ("ask", "undeclared-risk"),
        "ro-cmd": ("allow", "read-only-command"),
    },
    "bypass": {
        "inspect": ("allow", "bypass"),
        "modify": ("allow", "bypass"),
        "execute": ("allow", "bypass"),
        "undeclared": ("allow", "bypass"),
        "ro-cmd": ("allow", "bypass"),
    },
    "plan": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("deny", "plan-mode"),
        "execute": ("deny", "plan-mode"),
        "undeclared": ("deny", "plan-undeclared-risk"),
        "ro-cmd": ("allow", "read-only-command"),
    },
}
# with an allow rule naming the tool
WITH_ALLOW = {
    "default": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("allow", "allow-rule"),
        "execute": ("allow", "allow-rule"),
        "undeclared": ("allow", "allow-rule"),
        "ro-cmd": ("allow", "read-only-command"),
    },
    "accept-edits": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("allow", "mode-allows"),
        "execute": ("allow", "allow-rule"),
        "undeclared": ("allow", "allow-rule"),
        "ro-cmd": ("allow", "read-only-command"),
    },
    "bypass": {k: ("allow", "bypass") for k in SUBJECTS},
    "plan": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("allow", "allow-rule"),
        "execute": ("allow", "allow-rule"),
        "undeclared": ("allow", "allow-rule"),
        "ro-cmd": ("allow", "read-only-command"),
    },
}
# with a deny rule naming the tool: denied everywhere, bypass included
WITH_DENY = {mode: {k: ("deny", "deny-rule") for k in SUBJECTS} for mode in MODES}
# with an ask rule naming the tool: asks everywhere; plan turns asks about changes into denials
WITH_ASK = {
    mode: {k: ("ask", "ask-rule") for k in SUBJECTS}
    for mode in ("default", "accept-edits", "bypass")
}
WITH_ASK["plan"] = {
    "inspect": ("ask", "ask-rule"),
    "modify": ("deny", "plan-mode"),
    "execute": ("deny", "plan-mode"),
    "undeclared": ("deny", "plan-mode"),
    "ro-cmd": ("ask", "ask-rule"),
}
# with remembered consent for the tool (and no allow rule)
WITH_REMEMBERED = {
    "default": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("allow", "remembered-consent"),
        "execute": ("allow", "remembered-consent"),
        "undeclared": ("allow", "remembered-consent"),
        "ro-cmd": ("allow", "read-only-command"),
    },
    "accept-edits": {
        "inspect": ("allow", "mode-allows"),
        "modify": ("allow", "mode-allows"),
        "execute": ("allow", "remembered-consent"),
        "undeclared": ("allow", "remembered-consent"),
        "ro-cmd": ("allow", "read-only-command"),
    },
    "bypass": {k: ("allow", "bypass") for k in SUBJECTS},
    "plan": NO_RULES["plan"],  # only an explicit allow rule lets a change proceed in plan mode
}

MATRIX = []
for label, table, list_name in (
    ("none", NO_RULES, None),
    ("allow", WITH_ALLOW, "allow"),
    ("deny", WITH_DENY, "deny"),
    ("ask", WITH_ASK, "ask"),
    ("remembered", WITH_REMEMBERED, "remembered"),
):
    for mode in MODES:
        for subject in SUBJECTS:
            verdict, reason = table[mode][subject]
            MATRIX.append(
                pytest.param(
                    mode, subject, list_name, verdict, reason, id=f"{label}-{mode}-{subject}"
                )
            )


@pytest.mark.parametrize(("mode", "subject", "list_name", "verdict", "reason"), MATRIX)
def test_mode_risk_rule_matrix(
    tmp_path: Path, mode: str, subject: str, list_name: str | None, verdict: str, reason: str
) -> None:
    tool, arguments = SUBJECTS[subject]
    rules: dict[str, Any] = {list_name: [tool.tool_id]} if list_name else {}
    decision = decide(tmp_path, tool, arguments, mode=mode, **rules)
    assert (decision.verdict, decision.reason) == (verdict, reason), decision.message


# (id, tool, arguments, context kwargs, expected verdict, expected reason)
# fmt: off
ROWS = [
    # --- path rules ---------------------------------------------------------------------
    ("read-deny-glob", READ, {"path": "secrets/key.pem"}, {"deny": ["Read(secrets/**)"]}, "deny", "deny-rule"),
    ("read-deny-dir-itself", READ, {"path": "secrets"}, {"deny": ["Read(secrets/**)"]}, "deny", "deny-rule"),
    ("read-deny-dotdot", READ, {"path": "src/../secrets/k"}, {"deny": ["Read(./secrets/**)"]}, "deny", "deny-rule"),
    ("read-deny-case", READ, {"path": "SECRETS/k"}, {"deny": ["Read(secrets/**)"]}, "deny", "deny-rule"),
    ("read-deny-bare-name-any-depth", READ, {"path": "a/b/.env"}, {"deny": ["Read(.env)"]}, "deny", "deny-rule"),
    ("read-deny-star-env", READ, {"path": "conf/prod.env"}, {"deny": ["Read(*.env)"]}, "deny", "deny-rule"),
    ("read-deny-absolute", READ, {"path": "/etc/shadow"}, {"deny": ["Read(//etc/**)"]}, "deny", "deny-rule"),
    ("read-deny-double-slash", READ, {"path": "/etc/shadow"}, {"deny": ["Read(//etc/shadow)"]}, "deny", "deny-rule"),
    ("read-deny-home", READ, {"path": "~/.aws/credentials"}, {"deny": ["Read(~/.aws/**)"]}, "deny", "deny-rule"),
    ("read-deny-no-match", READ, {"path": "src/a.py"}, {"deny": ["Read(secrets/**)"]}, "allow", "mode-allows"),
    ("read-deny-star-segment", READ, {"path": "src/x/y.py"}, {"deny": ["Read(src/*.py)"]}, "allow", "mode-allows"),
    ("read-deny-missing-arg", READ, {}, {"deny": ["Read(secrets/**)"]}, "ask", "unevaluable-rule"),
    ("read-deny-tilde-user", READ, {"path": "~root/x"}, {"deny": ["Read(secrets/**)"]}, "ask", "unevaluable-rule"),
    ("read-deny-nonstring", READ, {"path": 5}, {"deny": ["Read(secrets/**)"]}, "ask", "unevaluable-rule"),
    ("edit-allow-glob", EDIT, {"path": "src/pkg/m.py"}, {"allow": ["Edit(src/**)"]}, "allow", "allow-rule"),
    ("edit-allow-case-strict", EDIT, {"path": "SRC/m.py"}, {"allow": ["Edit(src/**)"]}, "ask", "mode-requires-approval"),
    ("edit-allow-outside", EDIT, {"path": "../other/m.py"}, {"allow": ["Edit(src/**)"]}, "ask", "mode-requires-approval"),
    ("edit-allow-dotdot-escape", EDIT, {"path": "src/../../x"}, {"allow": ["Edit(src/**)"]}, "ask", "mode-requires-approval"),
    ("edit-ask-beats-allow", EDIT, {"path": "src/m.py"}, {"allow": ["Edit"], "ask": ["Edit(src/m.py)"]}, "ask", "ask-rule"),
    ("edit-deny-beats-allow", EDIT, {"path": "src/m.py"}, {"allow": ["Edit(src/**)"], "deny": ["Edit(src/m.py)"]}, "deny", "deny-rule"),
    ("edit-deny-beats-bypass", EDIT, {"path": "src/m.py"}, {"mode": "bypass", "deny": ["Edit(src/**)"]}, "deny", "deny-rule"),
    # --- trust-widening writes and catastrophic removals ----------------------------------
    ("write-git-hooks-bypass", WRITE, {"path": ".git/hooks/pre-commit"}, {"mode": "bypass"}, "ask", "trust-widening-write"),
    ("write-nested-git", WRITE, {"path": "vendor/lib/.git/config"}, {"mode": "bypass"}, "ask", "trust-widening-write"),
    ("write-agentrig-toml", WRITE, {"path": "agentrig.toml"}, {"mode": "accept-edits"}, "ask", "trust-widening-write"),
    ("write-agentrig-dir", WRITE, {"path": ".agentrig/settings.json"}, {"allow": ["Write"]}, "ask", "trust-widening-write"),
    ("write-envrc", WRITE, {"path": ".envrc"}, {"mode": "bypass", "allow": ["Write"]}, "ask", "trust-widening-write"),
    ("write-bashrc", WRITE, {"path": "~/.bashrc"}, {"mode": "bypass"}, "ask", "trust-widening-write"),
    ("write-profile", WRITE, {"path": "~/.profile"}, {"mode": "bypass"}, "ask", "trust-widening-write"),
    ("write-ssh", WRITE, {"path": "~/.ssh/authorized_keys"}, {"mode": "bypass"}, "ask", "trust-widening-write"),
    ("write-husky", WRITE, {"path": ".husky/pre-push"}, {"mode": "accept-edits"}, "ask", "trust-widening-write"),
    ("write-etc", WRITE, {"path": "/etc/profile.d/x.sh"}, {"mode": "bypass"}, "ask", "trust-widening-write"),
    ("write-plan-trust-denied", WRITE, {"path": ".git/config"}, {"mode": "plan"}, "deny", "plan-mode"),
    ("write-gitignore-fine", WRITE, {"path": ".gitignore"}, {"mode": "accept-edits"}, "allow", "mode-allows"),
    ("read-git-config-fine", READ, {"path": ".git/config"}, {"mode": "default"}, "allow", "mode-allows"),
    ("write-workspace-root", WRITE, {"path": "."}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("write-home", WRITE, {"path": "~"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("write-root", WRITE, {"path": "/"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-rm-rf-root", BASH, {"command": "rm -rf /"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-rm-rf-home", BASH, {"command": "rm -rf ~"}, {"mode": "bypass", "allow": ["Bash"]}, "ask", "catastrophic-removal"),
    ("bash-rm-fr-home-var", BASH, {"command": "rm -fr $HOME"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-rm-workspace", BASH, {"command": "rm -r ."}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-rm-star", BASH, {"command": "cd src; rm -rf *"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-sudo-rm-root-star", BASH, {"command": "sudo rm --recursive /*"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-find-delete-home", BASH, {"command": "find ~ -name x -delete"}, {"mode": "bypass"}, "ask", "catastrophic-removal"),
    ("bash-rm-build-fine", BASH, {"command": "rm -rf build"}, {"mode": "bypass"}, "allow", "bypass"),
    ("bash-rm-not-recursive", BASH, {"command": "rm ./x"}, {"mode": "bypass"}, "allow", "bypass"),
    # --- commands -------------------------------------------------------------------------
    ("bash-allow-prefix", BASH, {"command": "npm run test -- --watch"}, {"allow": ["Bash(npm run test:*)"]}, "allow", "allow-rule"),
    ("bash-allow-prefix-boundary", BASH, {"command": "npm run testing"}, {"allow": ["Bash(npm run test:*)"]}, "ask", "mode-requires-approval"),
    ("bash-allow-exact", BASH, {"command": "npm run build"}, {"allow": ["Bash(npm run build)"]}, "allow", "allow-rule"),
    ("bash-allow-exact-extra", BASH, {"command": "npm run build x"}, {"allow": ["Bash(npm run build)"]}, "ask", "mode-requires-approval"),
    ("bash-allow-space-star", BASH, {"command": "ls -la"}, {"allow": ["Bash(ls *)"], "deny": ["Bash(rm:*)"]}, "allow", "read-only-command"),
    ("bash-allow-compound-needs-all", BASH, {"command": "npm test && curl x"}, {"allow": ["Bash(npm test:*)"]}, "ask", "mode-requires-approval"),
    ("bash-allow-compound-all", BASH, {"command": "npm test && npm run lint"}, {"allow": ["Bash(npm:*)"]}, "allow", "allow-rule"),
    ("bash-allow-env-prefix-no", BASH, {"command": "NODE_OPTIONS=x npm test"}, {"allow": ["Bash(npm test:*)"]}, "ask", "mode-requires-approval"),
    ("bash-allow-sudo-no", BASH, {"command": "sudo npm test"}, {"allow": ["Bash(npm test:*)"]}, "ask", "mode-requires-approval"),
    ("bash-allow-subst-no", BASH, {"command": "npm test $(rm -rf x)"}, {"allow": ["Bash(npm test:*)"]}, "ask", "mode-requires-approval"),
    ("bash-allow-opaque-no", BASH, {"command": "$CMD test"}, {"allow": ["Bash(npm:*)"]}, "ask", "mode-requires-approval"),
    ("bash-deny-exact-only", BASH, {"command": "git push origin"}, {"deny": ["Bash(git push)"]}, "ask", "mode-requires-approval"),
    ("bash-deny-option-order", BASH, {"command": "rm -fr build"}, {"deny": ["Bash(rm -rf:*)"]}, "deny", "deny-rule"),
    ("bash-deny-unevaluable", BASH, {"command": "x=git; $x push"}, {"deny": ["Bash(git push:*)"], "mode": "bypass"}, "ask", "unevaluable-rule"),
    ("bash-ask-unevaluable", BASH, {"command": 'eval "$X"'}, {"ask": ["Bash(git push:*)"], "mode": "bypass"}, "ask", "unevaluable-rule"),
    ("bash-deny-unrelated-conclusive", BASH, {"command": "make build"}, {"deny": ["Bash(git push:*)"], "mode": "bypass"}, "allow", "bypass"),
    ("bash-argv-list", BASH, {"command": ["git", "push"]}, {"deny": ["Bash(git push:*)"], "mode": "bypass"}, "deny", "deny-rule"),
    ("bash-ro-outside-workspace", BASH, {"command": "cat /etc/passwd"}, {}, "ask", "mode-requires-approval"),
    ("bash-ro-redirect-write", BASH, {"command": "echo hi > out.txt"}, {}, "ask", "mode-requires-approval"),
    ("bash-ro-devnull", BASH, {"command": "ls src 2>/dev/null | wc -l"}, {}, "allow", "read-only-command"),
    ("bash-ro-git-log", BASH, {"command": "git log --oneline -5"}, {}, "allow", "read-only-command"),
    ("bash-ro-git-push-not", BASH, {"command": "git push"}, {}, "ask", "mode-requires-approval"),
    ("bash-ro-git-output-not", BASH, {"command": "git diff --output=/tmp/x"}, {}, "ask", "mode-requires-approval"),
    ("bash-ro-ask-rule-first", BASH, {"command": "git status"}, {"ask": ["Bash(git status)"]}, "ask", "ask-rule"),
    ("bash-ro-deny-rule-first", BASH, {"command": "cat src/a"}, {"deny": ["Bash(cat:*)"]}, "deny", "deny-rule"),
    ("bash-ro-plan", BASH, {"command": "grep -rn TODO src"}, {"mode": "plan"}, "allow", "read-only-command"),
    ("bash-ro-dotdot", BASH, {"command": "ls .."}, {"mode": "plan"}, "deny", "plan-mode"),
    # --- URLs -----------------------------------------------------------------------------
    ("url-allow-domain", FETCH, {"url": "https://docs.example.com/x"}, {"allow": ["WebFetch(domain:example.com)"]}, "allow", "allow-rule"),
    ("url-allow-domain-lookalike", FETCH, {"url": "https://example.com.evil.net/"}, {"allow": ["WebFetch(domain:example.com)"]}, "ask", "mode-requires-approval"),
    ("url-allow-userinfo", FETCH, {"url": "https://example.com@evil.net/"}, {"allow": ["WebFetch(domain:example.com)"]}, "ask", "mode-requires-approval"),
    ("url-allow-path", FETCH, {"url": "https://api.example.com/v1/users"}, {"allow": ["WebFetch(https://api.example.com/v1/**)"]}, "allow", "allow-rule"),
    ("url-allow-path-escape", FETCH, {"url": "https://api.example.com/v1/../admin"}, {"allow": ["WebFetch(https://api.example.com/v1/**)"]}, "ask", "mode-requires-approval"),
    ("url-allow-port", FETCH, {"url": "https://api.example.com:8443/v1/x"}, {"allow": ["WebFetch(https://api.example.com/v1/**)"]}, "ask", "mode-requires-approval"),
    ("url-allow-scheme", FETCH, {"url": "http://api.example.com/v1/x"}, {"allow": ["WebFetch(https://api.example.com/v1/**)"]}, "ask", "mode-requires-approval"),
    ("url-deny-any-port", FETCH, {"url": "http://evil.com:8080/"}, {"deny": ["WebFetch(evil.com)"]}, "deny", "deny-rule"),
    ("url-deny-unparseable", FETCH, {"url": "not a url"}, {"deny": ["WebFetch(domain:evil.com)"]}, "ask", "unevaluable-rule"),
    ("url-deny-backslash", FETCH, {"url": "https://evil.com\\@good.com/"}, {"deny": ["WebFetch(domain:evil.com)"], "mode": "bypass"}, "ask", "unevaluable-rule"),
    # --- text and parameter rules ---------------------------------------------------------
    ("text-deny-glob", SEARCH, {"query": "DROP TABLE users"}, {"deny": ["Search(drop *)"]}, "deny", "deny-rule"),
    ("text-allow-glob", SEARCH, {"query": "how to x"}, {"allow": ["Search(how *)"], "mode": "plan"}, "allow", "mode-allows"),
    ("param-deny", ISSUE, {"repo": "acme/secret", "title": "x"}, {"deny": ["mcp__github__create_issue(repo:acme/*)"]}, "deny", "deny-rule"),
    ("param-deny-other", ISSUE, {"repo": "me/pub", "title": "x"}, {"deny": ["mcp__github__create_issue(repo:acme/*)"]}, "ask", "mode-requires-approval"),
    ("param-deny-absent", ISSUE, {"title": "x"}, {"deny": ["mcp__github__create_issue(repo:acme/*)"]}, "ask", "mode-requires-approval"),
    ("param-deny-list-value", ISSUE, {"labels": ["a"]}, {"deny": ["mcp__github__create_issue(labels:a)"]}, "ask", "unevaluable-rule"),
    ("param-primary-asks", BASH, {"command": "ls"}, {"deny": ["Bash(command:rm *)"]}, "ask", "unevaluable-rule"),
    ("param-shaped-not-param", BASH, {"command": "git status"}, {"deny": ["Bash(git:*)"]}, "deny", "deny-rule"),
    ("param-url-colon-kept", FETCH, {"url": "https://x.com/a"}, {"deny": ["WebFetch(https://x.com/*)"]}, "deny", "deny-rule"),
    ("param-allow-never-grants", ISSUE, {"repo": "me/x"}, {"allow": ["mcp__github__create_issue(repo:me/*)"]}, "ask", "mode-requires-approval"),
    ("mcp-server-glob-allow", ISSUE, {"repo": "me/x"}, {"allow": ["mcp__github__*"]}, "allow", "allow-rule"),
    ("mcp-glob-deny", ISSUE, {"repo": "me/x"}, {"deny": ["mcp__*"], "mode": "bypass"}, "deny", "deny-rule"),
    ("tool-glob-deny-all", READ, {"path": "src/a"}, {"deny": ["*"]}, "deny", "deny-rule"),
    # --- keyless tools and match-everything patterns -----------------------------------------
    ("keyless-star-deny", PING, {"host": "x"}, {"deny": ["Ping(*)"]}, "deny", "deny-rule"),
    ("keyless-star-allow", PING, {"host": "x"}, {"allow": ["Ping(*)"]}, "allow", "allow-rule"),
    ("keyless-doublestar-allow-plan", PING, {"host": "x"}, {"allow": ["Ping(**)"], "mode": "plan"}, "allow", "allow-rule"),
    ("keyless-pattern-deny", PING, {"host": "x"}, {"deny": ["Ping(example.com)"]}, "ask", "unevaluable-rule"),
    ("keyless-pattern-allow", PING, {"host": "x"}, {"allow": ["Ping(example.com)"]}, "ask", "mode-requires-approval"),
    ("star-allow-any-kind", BASH, {"command": "make"}, {"allow": ["Bash(*)"]}, "allow", "allow-rule"),
    # --- ceilings ------------------------------------------------------------------------
    ("ceiling-outside", EDIT, {"path": "src/a"}, {"ceiling": ["Read"], "mode": "bypass"}, "deny", "outside-ceiling"),
    ("ceiling-inside", READ, {"path": "src/a"}, {"ceiling": ["Read"]}, "allow", "mode-allows"),
    ("ceiling-inside-still-asks", EDIT, {"path": "src/a"}, {"ceiling": ["Edit(src/**)"]}, "ask", "mode-requires-approval"),
    ("ceiling-arg-outside", EDIT, {"path": "docs/a"}, {"ceiling": ["Edit(src/**)"], "allow": ["Edit"]}, "deny", "outside-ceiling"),
    ("ceiling-command-compound", BASH, {"command": "npm test; curl evil"}, {"ceiling": ["Bash(npm test:*)"], "mode": "bypass"}, "deny", "outside-ceiling"),
    ("ceiling-unevaluable-denies", BASH, {"command": "$X"}, {"ceiling": ["Bash(npm:*)"], "mode": "bypass"}, "deny", "outside-ceiling"),
    ("ceiling-not-softened-by-allow", PING, {}, {"ceiling": ["Read"], "allow": ["Ping"]}, "deny", "outside-ceiling"),
]
# fmt: on


@pytest.mark.parametrize(
    ("tool", "arguments", "kwargs", "verdict", "reason"),
    [pytest.param(*row[1:], id=row[0]) for row in ROWS],
)
def test_decision_rows(
    tmp_path: Path,
    tool: ToolPermissions,
    arguments: dict[str, Any],
    kwargs: dict[str, Any],
    verdict: str,
    reason: str,
) -> None:
    decision = decide(tmp_path, tool, arguments, **kwargs)
    assert (decision.verdict, decision.reason) == (verdict, reason), decision.message


def test_table_is_large() -> None:
    assert len(MATRIX) + len(ROWS) >= 100
