"""Action blockers (deny-only, after permission) and the tools withheld from the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from perm_support import context

from agentrig.errors import AgentrigError
from agentrig.permissions import (
    DEFAULT_BLOCK_RULES,
    ActionBlocked,
    ActionBlockedError,
    ActionBlocker,
    RuleBasedActionBlocker,
    first_block,
    withheld_tools,
)

BLOCKED = [
    ("command", "git push"),
    ("command", "cd x && git push"),
    ("cmd", "'git' 'push' origin"),
    ("script", "set -e\ngit commit -m 'x'"),
    ("shell", "sudo ls"),
    ("command", "env FOO=1 sudo ls"),
    ("command", "timeout 5 git add ."),
    ("command", "rm -rf build"),
    ("command", "rm -fr build"),
    ("command", "rm -r -f build"),
    ("command", "rm --recursive --force build"),
    ("command", "git reset --hard HEAD~1"),
    ("command", "git reset HEAD~1 --hard"),
    ("command", "git merge main"),
    ("command", "git rebase -i main"),
    ("command", "bash -c 'git push'"),
    ("command", "echo $(git push)"),
    ("command", "git -C repo push"),
    ("command", "/usr/bin/git push"),
    ("command", "x=git; $x push"),
    ("command", "echo 'unterminated"),
    ("argv", ["git", "push", "origin"]),
    ("argv", ["sudo", "ls"]),
    ("argv", ["bash", "-c", "git commit -am x"]),
    ("argv", [1, 2]),
    ("command", {"not": "a command"}),
]


@pytest.mark.parametrize(("key", "value"), BLOCKED)
def test_blocked(key: str, value: object) -> None:
    blocked = RuleBasedActionBlocker().check("shell", {key: value})
    assert isinstance(blocked, ActionBlocked), (key, value)


PASSES = [
    ("command", "echo git push"),
    ("command", "grep -n 'git push' README.md"),
    ("command", "git status && git log"),
    ("command", "git pushy"),
    ("command", "rm -r build"),
    ("command", "rm -f x"),
    ("command", "git reset HEAD~1"),
    ("command", "ls $HOME"),
    ("argv", ["git", "diff"]),
    ("argv", []),
    ("path", "git push"),  # not a command argument
]


@pytest.mark.parametrize(("key", "value"), PASSES)
def test_passes(key: str, value: object) -> None:
    assert RuleBasedActionBlocker().check("shell", {key: value}) is None


@pytest.mark.parametrize("tool", ["git_push", "GitPush", "git-push", "mcp__gh__git_push", "sudo"])
def test_tool_names_are_normalised(tool: str) -> None:
    blocked = RuleBasedActionBlocker().check(tool, {})
    assert blocked is not None
    assert "blocked" in blocked.reason


def test_tool_name_prefix_is_token_aligned() -> None:
    blocker = RuleBasedActionBlocker()
    assert blocker.check("git_push_force", {}) is not None
    assert blocker.check("git_pushover", {}) is None
    assert RuleBasedActionBlocker(match_tool_names=False).check("git_push", {}) is None


def test_rules_are_configurable() -> None:
    blocker = RuleBasedActionBlocker(["npm publish"])
    assert blocker.check("shell", {"command": "npm publish --tag x"}) is not None
    assert blocker.check("shell", {"command": "git push"}) is None
    assert [r.text for r in DEFAULT_BLOCK_RULES] == [
        "sudo",
        "rm -rf",
        "git add",
        "git commit",
        "git push",
        "git reset --hard",
        "git merge",
        "git rebase",
    ]
    with pytest.raises(ValueError, match="command name"):
        RuleBasedActionBlocker(["-rf"])


def test_first_block_runs_in_order_and_raises_cleanly() -> None:
    class Never:
        def check(self, tool: str, arguments: object) -> ActionBlocked | None:
            return None

    class Always:
        def check(self, tool: str, arguments: object) -> ActionBlocked | None:
            return ActionBlocked("custom", "no")

    assert isinstance(Always(), ActionBlocker)
    blockers = [Never(), RuleBasedActionBlocker(), Always()]
    assert first_block(blockers, "shell", {"command": "ls"}) == ActionBlocked("custom", "no")  # type: ignore[arg-type]
    hit = first_block(blockers, "shell", {"command": "git push"})  # type: ignore[arg-type]
    assert hit is not None
    assert hit.rule == "git push"
    error = ActionBlockedError(hit, tool="shell")
    assert isinstance(error, AgentrigError)
    assert error.code == "permissions.action_blocked"
    assert "git push" in str(error)


TOOLS = ["Bash", "Read", "Edit", "WebFetch", "mcp__github__create_issue", "mcp__slack__post"]


@pytest.mark.parametrize(
    ("kwargs", "withheld"),
    [
        ({}, ()),
        ({"deny": ["Bash"]}, ("Bash",)),
        ({"deny": ["Bash(*)"]}, ("Bash",)),
        ({"deny": ["Bash(rm:*)"]}, ()),  # scoped: the tool stays, matching calls are refused
        ({"deny": ["mcp__*"]}, ("mcp__github__create_issue", "mcp__slack__post")),
        ({"deny": ["*"]}, tuple(TOOLS)),
        ({"ceiling": ["Read", "Bash(git status)"]}, ("Edit", "WebFetch", *TOOLS[4:])),
        ({"ceiling": ["mcp__github__*"]}, ("Bash", "Read", "Edit", "WebFetch", "mcp__slack__post")),
        ({"allow": ["Bash"], "deny": ["Edit"]}, ("Edit",)),
    ],
)
def test_withheld_tools(
    tmp_path: Path, kwargs: dict[str, object], withheld: tuple[str, ...]
) -> None:
    assert withheld_tools(TOOLS, context(tmp_path, **kwargs)) == withheld  # type: ignore[arg-type]
