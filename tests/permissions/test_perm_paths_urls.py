"""Path rules through symlinks and URL rules against parser tricks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from perm_support import BASH as BASH_TOOL
from perm_support import EDIT, FETCH, READ, WRITE, decide, workspace

from agentrig.permissions import canonical_path, match_path, match_url


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A workspace holding ``link`` -> a denied directory outside it."""
    root, _ = workspace(tmp_path)
    outside = tmp_path / "outside" / "secrets"
    outside.mkdir(parents=True)
    (outside / "key.pem").write_text("x")
    os.symlink(outside, root / "link")
    os.symlink(outside / "key.pem", root / "src" / "innocent.txt")
    (root / ".git").mkdir()
    os.symlink(root / ".git", root / "gitlink")
    return tmp_path


@pytest.mark.parametrize(
    "path",
    ["link/key.pem", "./link/key.pem", "src/../link/key.pem", "src/innocent.txt", "link"],
)
def test_symlink_into_denied_dir_is_denied(planted: Path, path: str) -> None:
    denied = str(planted / "outside" / "secrets") + "/**"
    decision = decide(planted, READ, {"path": path}, deny=[f"Read(/{denied})"], mode="bypass")
    assert (decision.verdict, decision.reason) == ("deny", "deny-rule")


def test_absolute_path_through_symlink(planted: Path) -> None:
    root = planted / "ws"
    denied = str(planted / "outside" / "secrets") + "/**"
    decision = decide(
        planted, READ, {"path": str(root / "link" / "key.pem")}, deny=[f"Read(/{denied})"]
    )
    assert decision.verdict == "deny"


def test_allow_rule_does_not_follow_symlink_out(planted: Path) -> None:
    decision = decide(planted, EDIT, {"path": "src/innocent.txt"}, allow=["Edit(src/**)"])
    assert (decision.verdict, decision.reason) == ("ask", "mode-requires-approval")


def test_symlink_into_git_dir_is_trust_widening(planted: Path) -> None:
    decision = decide(planted, WRITE, {"path": "gitlink/hooks/post-checkout"}, mode="bypass")
    assert (decision.verdict, decision.reason) == ("ask", "trust-widening-write")


def test_canonical_path_forms(tmp_path: Path) -> None:
    root, home = workspace(tmp_path)
    r, h = os.path.realpath(root), os.path.realpath(home)
    assert canonical_path("a/b", root=r, home=h) == f"{r}/a/b"
    assert canonical_path("~/x", root=r, home=h) == f"{h}/x"
    assert canonical_path("/etc/../etc/hosts", root=r, home=h) == "/etc/hosts"
    assert canonical_path("~other/x", root=r, home=h) is None
    assert canonical_path("a\x00b", root=r, home=h) is None


@pytest.mark.parametrize(
    ("pattern", "value", "direction", "expected"),
    [
        ("src/**", "src", "restrict", "match"),
        ("src/**", "src/a/b/c", "grant", "match"),
        # gitignore: "src/*" names src/a, and with it everything inside src/a
        ("src/*", "src/a/b", "grant", "match"),
        ("src/*.py", "src/a/b.py", "grant", "no-match"),
        ("src/", "src/a/b", "grant", "match"),
        ("*.py", "deep/er/m.py", "grant", "match"),
        ("/src/**", "src/a", "restrict", "match"),  # /x: the settings source (here the root)
        ("/etc/**", "/etc/hosts", "restrict", "no-match"),  # ... never the filesystem root
        ("./.env", "sub/.env", "restrict", "no-match"),  # ./x: only at the top
        ("./.env", ".env", "restrict", "match"),
        (".env", "sub/deeper/.env", "grant", "match"),  # a bare name: any depth
        ("secrets/**", "a/secrets/k", "restrict", "match"),  # one dir segment: deny any depth
        ("secrets/**", "a/secrets/k", "grant", "no-match"),  # ... allow only at the top
        ("src/lib/**", "a/src/lib/x", "restrict", "no-match"),  # deeper shapes stay anchored
        ("//etc/hosts", "/etc/hosts", "grant", "match"),
        ("~/notes/*", "~/notes/a", "grant", "match"),
        ("~bob/x", "x", "restrict", "unevaluable"),
        ("src/../**", "x", "restrict", "match"),
        ("src/**/../x", "x", "restrict", "unevaluable"),
        ("Src/**", "src/a", "grant", "no-match"),
        ("Src/**", "src/a", "restrict", "match"),
        ("*", "anything/at/all", "grant", "match"),
    ],
)
def test_path_matching(
    tmp_path: Path, pattern: str, value: str, direction: str, expected: str
) -> None:
    root, home = workspace(tmp_path)
    got = match_path(
        pattern,
        value,
        root=os.path.realpath(root),
        home=os.path.realpath(home),
        direction=direction,  # type: ignore[arg-type]
    )
    assert got == expected


DENY_EVIL_HOST = [
    "https://evil.com/",
    "https://EVIL.com/",
    "HTTPS://EVIL.COM/X",
    "https://evil.com./",
    "https://user:pw@evil.com/",
    "https://good.com@evil.com/",
    "https://sub.evil.com/",
    "http://evil.com:8080/",
    "ws://evil.com/",
    "https://evil.com:443/a/../b",
]


@pytest.mark.parametrize("url", DENY_EVIL_HOST)
def test_domain_deny_survives_url_tricks(tmp_path: Path, url: str) -> None:
    decision = decide(
        tmp_path, FETCH, {"url": url}, deny=["WebFetch(domain:evil.com)"], allow=["WebFetch"]
    )
    assert (decision.verdict, decision.reason) == ("deny", "deny-rule"), url


UNEVALUABLE_URLS = [
    "https://evil.com\\@good.com/",
    " https://evil.com/",
    "https://evil.com/\n",
    "https://evil.com:99999/",
    "https://evil.com:port/",
    "evil.com/path",
    "https:///nohost",
    "https://good.com/a%2f..%2fb",
    "https://ev%69l.com/",
]


@pytest.mark.parametrize("url", UNEVALUABLE_URLS)
def test_unparseable_url_asks_even_in_bypass(tmp_path: Path, url: str) -> None:
    decision = decide(
        tmp_path, FETCH, {"url": url}, deny=["WebFetch(domain:evil.com)"], mode="bypass"
    )
    assert (decision.verdict, decision.reason) == ("ask", "unevaluable-rule"), url


LOOPBACK = [
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/admin",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://0177.0.0.1/",
    "http://[::ffff:127.0.0.1]/",
]


@pytest.mark.parametrize("url", LOOPBACK)
def test_ip_spellings_are_normalised(tmp_path: Path, url: str) -> None:
    decision = decide(tmp_path, FETCH, {"url": url}, deny=["WebFetch(127.0.0.1)"], mode="bypass")
    assert decision.verdict == "deny", url


@pytest.mark.parametrize(
    ("pattern", "url", "direction", "expected"),
    [
        ("https://api.example.com/v1/**", "https://api.example.com/v1", "grant", "match"),
        ("https://api.example.com/v1/**", "https://API.example.com/v1/a/b", "grant", "match"),
        ("https://api.example.com/v1/*", "https://api.example.com/v1/a/b", "grant", "no-match"),
        ("https://*.example.com", "https://a.b.example.com/x", "grant", "match"),
        ("https://*.example.com", "https://example.com/x", "grant", "no-match"),
        ("https://example.com", "https://example.com.evil.net/", "grant", "no-match"),
        ("https://example.com", "https://example.com:444/", "grant", "no-match"),
        ("https://example.com", "https://example.com:444/", "restrict", "match"),
        ("https://example.com:*", "https://example.com:444/", "grant", "match"),
        ("https://example.com:8443", "https://example.com:8443/", "grant", "match"),
        ("example.com", "http://example.com/", "grant", "match"),
        ("example.com", "ftp://example.com/", "restrict", "no-match"),
        ("https://example.com*", "https://example.com.evil.net/", "grant", "unevaluable"),
        ("https://*", "https://anything.net/", "grant", "match"),
        ("https://a.*.com", "https://a.b.com/", "restrict", "unevaluable"),
        ("https://example.com/a?b", "https://example.com/a", "restrict", "unevaluable"),
        ("domain:bücher.de", "https://xn--bcher-kva.de/", "restrict", "match"),
        ("*", "not a url", "grant", "match"),
    ],
)
def test_url_matching(pattern: str, url: str, direction: str, expected: str) -> None:
    assert match_url(pattern, url, direction=direction) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("command", ["cat src/innocent.txt", "ls link", "grep x link/key.pem"])
def test_read_only_command_through_symlink_out_is_not_inspect(planted: Path, command: str) -> None:
    decision = decide(planted, BASH_TOOL, {"command": command})
    assert (decision.verdict, decision.reason) == ("ask", "mode-requires-approval")


def test_read_only_command_inside_is_inspect(planted: Path) -> None:
    decision = decide(planted, BASH_TOOL, {"command": "cat src/a.py | head -5"}, mode="plan")
    assert (decision.verdict, decision.reason) == ("allow", "read-only-command")
