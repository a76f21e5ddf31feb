"""check_url / check_destination: the pure policy and the one resolution."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest

from agentrig.host import (
    EgressAllowed,
    EgressPolicy,
    EgressRejected,
    check_destination,
    check_url,
)

DEFAULT = EgressPolicy()

REFUSED = [
    # schemes
    ("ftp://example.com/", "scheme.not_allowed"),
    ("file:///etc/passwd", "scheme.not_allowed"),
    ("gopher://example.com/", "scheme.not_allowed"),
    ("javascript:alert(1)", "scheme.not_allowed"),
    ("ws://example.com/", "scheme.not_allowed"),
    # user info
    ("http://user:pw@example.com/", "url.userinfo"),
    ("http://user@example.com/", "url.userinfo"),
    ("http://example.com@127.0.0.1/", "url.userinfo"),
    # characters parsers disagree on
    ("http://evil.com\\@good.com/", "url.invalid_char"),
    ("http://good.com/\\evil", "url.invalid_char"),
    ("http://exa mple.com/", "url.invalid_char"),
    ("http://example.com/\x00", "url.invalid_char"),
    ("http://example.com/\x7f", "url.invalid_char"),
    ("http://example.com\u0085/", "url.invalid_char"),
    (" http://example.com/", "url.invalid_char"),
    ("http://example.com/\r\nX: y", "url.invalid_char"),
    # ports
    ("http://example.com:0/", "port.invalid"),
    ("http://example.com:65536/", "port.invalid"),
    # host syntax
    ("http:///path", "host.missing"),
    ("http://a..b.com/", "host.invalid"),
    ("http://.example.com/", "host.invalid"),
    ("http://example.com../", "host.invalid"),
    ("http://%6c%6fcalhost/", "host.invalid"),
    ("http://exa%2ecom/", "host.invalid"),
    ("http://[fe80::1%25eth0]/", "host.invalid"),
    ("http://xn--zz.com/", "host.idna_invalid"),
    ("http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", "url.invalid"),  # fullwidth
    # numeric spellings the system resolver would turn into loopback
    ("http://2130706433/", "host.numeric"),
    ("http://0x7f000001/", "host.numeric"),
    ("http://0x7f.1/", "host.numeric"),
    ("http://127.1/", "host.numeric"),
    ("http://127.0.1/", "host.numeric"),
    ("http://1.2.3.4.5/", "host.numeric"),
    ("http://foo.123/", "host.numeric"),
    ("http://0177.0.0.1/", "url.invalid"),  # httpx already refuses leading zeros
    # blocked names
    ("http://localhost/", "host.blocked"),
    ("http://LOCALHOST./", "host.blocked"),
    ("http://api.localhost/", "host.blocked"),
    ("http://printer.local/", "host.blocked"),
    ("http://metadata.google.internal/computeMetadata/v1/", "host.blocked"),
    ("http://metadata.google.internal./", "host.blocked"),
    ("http://instance-data.ec2.internal/", "host.blocked"),
    ("http://metadata.goog/", "host.blocked"),
    ("http://metadata/", "host.blocked"),
    ("http://instance-data/", "host.blocked"),
    ("http://router.home.arpa/", "host.blocked"),
    ("http://1.0.0.127.in-addr.arpa/", "host.blocked"),
    ("http://nas.lan/", "host.blocked"),
    ("http://box.localdomain/", "host.blocked"),
    ("http://kubernetes.default.svc/", "host.blocked"),
    ("http://metadata.tencentyun.com/", "host.blocked"),
    ("http://wiki/", "host.single_label"),
    ("http://ollama:11434/", "host.single_label"),
    # IP literals
    ("http://127.0.0.1/", "address.blocked"),
    ("http://127.0.0.1./", "address.blocked"),
    ("http://10.0.0.1:8080/", "address.blocked"),
    ("http://169.254.169.254/latest/meta-data/", "address.blocked"),
    ("http://100.100.100.200/", "address.blocked"),
    ("http://0.0.0.0/", "address.blocked"),
    ("http://[::1]/", "address.blocked"),
    ("http://[::]/", "address.blocked"),
    ("http://[::ffff:127.0.0.1]/", "address.blocked"),
    ("http://[::ffff:7f00:1]/", "address.blocked"),
    ("http://[::ffff:a9fe:a9fe]/", "address.blocked"),
    ("http://[64:ff9b::7f00:1]/", "address.blocked"),
    ("http://[2002:7f00:1::]/", "address.blocked"),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "address.blocked"),
    ("http://[fd00:ec2::254]/", "address.blocked"),
    ("http://[FE80::1]/", "address.blocked"),
]

ALLOWED = [
    "http://example.com/",
    "https://Example.COM:8443/path?q=1#frag",
    "http://example.com./",
    "http://bücher.de/",
    "http://xn--bcher-kva.de/",
    "https://8.8.8.8/",
    "http://[2606:4700:4700::1111]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[64:ff9b::808:808]/",
    "http://[2002:808:808::1]/",
    "http://under_score.example.com/",
    "http://localhost.example.com/",
]


@pytest.mark.parametrize(("url", "reason"), REFUSED)
def test_refused_urls(url: str, reason: str) -> None:
    outcome = check_url(url, policy=DEFAULT)
    assert isinstance(outcome, EgressRejected), outcome
    assert outcome.reason == reason, outcome
    assert not outcome.ok
    assert outcome.message


@pytest.mark.parametrize("url", ALLOWED)
def test_allowed_urls(url: str) -> None:
    outcome = check_url(url, policy=DEFAULT)
    assert isinstance(outcome, EgressAllowed), outcome
    assert outcome.ok


def test_host_is_normalised() -> None:
    outcome = check_url("HTTP://WWW.Example.COM./x", policy=DEFAULT)
    assert isinstance(outcome, EgressAllowed)
    assert outcome.host == "www.example.com"
    assert outcome.connect_host == "www.example.com."
    assert outcome.port == 80
    assert outcome.addresses == ()
    idn = check_url("https://bücher.de/", policy=DEFAULT)
    assert isinstance(idn, EgressAllowed)
    assert (idn.host, idn.port) == ("xn--bcher-kva.de", 443)


def test_ip_literal_carries_its_validated_address() -> None:
    outcome = check_url("http://[::ffff:808:808]:8080/", policy=DEFAULT)
    assert isinstance(outcome, EgressAllowed)
    assert outcome.is_ip_literal
    assert outcome.addresses == ("::ffff:808:808",)


def test_accepts_httpx_url_objects() -> None:
    assert isinstance(check_url(httpx.URL("http://127.0.0.1/"), policy=DEFAULT), EgressRejected)
    assert isinstance(check_url(httpx.URL("http://example.com/"), policy=DEFAULT), EgressAllowed)


def test_policy_schemes_and_ports() -> None:
    https_only = EgressPolicy(allowed_schemes={"https"})
    assert check_url("http://example.com/", policy=https_only).reason == "scheme.not_allowed"  # type: ignore[union-attr]
    ports = EgressPolicy(allowed_ports={443, 8443})
    assert check_url("https://example.com/", policy=ports).ok
    assert check_url("https://example.com:8443/", policy=ports).ok
    rejected = check_url("http://example.com/", policy=ports)
    assert isinstance(rejected, EgressRejected)
    assert rejected.reason == "port.not_allowed"
    with pytest.raises(ValueError, match="subset"):
        EgressPolicy(allowed_schemes={"ftp"})
    with pytest.raises(ValueError, match="between"):
        EgressPolicy(allowed_ports={0})


def test_blocked_hosts_additions() -> None:
    policy = EgressPolicy(blocked_hosts={"evil.example", "*.corp.example"})
    for url in ("http://evil.example/", "http://corp.example/", "http://a.b.corp.example/"):
        outcome = check_url(url, policy=policy)
        assert isinstance(outcome, EgressRejected)
        assert outcome.reason == "host.blocked"
    assert check_url("http://notevil.example/", policy=policy).ok


def test_allow_private_entries() -> None:
    policy = EgressPolicy(allow_private={"127.0.0.1:11434", "10.0.0.0/8", "[::1]:8080", "ollama"})
    assert check_url("http://127.0.0.1:11434/", policy=policy).ok
    assert not check_url("http://127.0.0.1:11435/", policy=policy).ok
    assert check_url("http://[::ffff:127.0.0.1]:11434/", policy=policy).ok
    assert check_url("http://10.20.30.40/", policy=policy).ok
    assert check_url("http://[::1]:8080/", policy=policy).ok
    assert not check_url("http://[::1]:8081/", policy=policy).ok
    assert check_url("http://ollama:11434/", policy=policy).ok
    assert not check_url("http://192.168.0.1/", policy=policy).ok


def test_metadata_needs_an_exact_allow_entry() -> None:
    broad = EgressPolicy(allow_private={"169.254.0.0/16", "0.0.0.0/0"})
    assert check_url("http://169.254.1.1/", policy=broad).ok
    assert not check_url("http://169.254.169.254/", policy=broad).ok
    assert not check_url("http://[::ffff:169.254.169.254]/", policy=broad).ok
    exact = EgressPolicy(allow_private={"169.254.169.254"})
    assert check_url("http://169.254.169.254/", policy=exact).ok


@pytest.mark.parametrize(
    "entry", ["not a host", "1.2.3.4:0", "[::1", "10.0.0.1/8", "a..b", "127.1"]
)
def test_malformed_allow_entries_are_errors(entry: str) -> None:
    with pytest.raises(ValueError, match="allow_private"):
        EgressPolicy(allow_private={entry})


def test_single_label_can_be_enabled() -> None:
    policy = EgressPolicy(allow_single_label=True)
    assert check_url("http://wiki/", policy=policy).ok
    assert not check_url("http://metadata/", policy=policy).ok  # still on the blocklist


class ScriptedResolver:
    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, int]] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.mark.anyio
async def test_destination_resolves_once_and_keeps_validated_answers() -> None:
    resolver = ScriptedResolver(["93.184.216.34", "2606:2800:220:1::1"])
    outcome = await check_destination("https://example.com/", policy=DEFAULT, resolver=resolver)
    assert isinstance(outcome, EgressAllowed)
    assert outcome.addresses == ("93.184.216.34", "2606:2800:220:1::1")
    assert resolver.calls == [("example.com", 443)]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answers",
    [
        ["93.184.216.34", "10.0.0.1"],
        ["127.0.0.1"],
        ["93.184.216.34", "::ffff:127.0.0.1"],
        ["169.254.169.254"],
        ["fd00:ec2::254"],
        ["not-an-ip"],
        ["2130706433"],
    ],
)
async def test_any_blocked_answer_refuses(answers: list[str]) -> None:
    outcome = await check_destination(
        "http://example.com/", policy=DEFAULT, resolver=ScriptedResolver(answers)
    )
    assert isinstance(outcome, EgressRejected)
    assert outcome.reason == "address.blocked"
    assert outcome.verdict is not None


@pytest.mark.anyio
async def test_no_answer_refuses() -> None:
    outcome = await check_destination(
        "http://example.com/", policy=DEFAULT, resolver=ScriptedResolver([])
    )
    assert isinstance(outcome, EgressRejected)
    assert outcome.reason == "resolve.empty"


@pytest.mark.anyio
async def test_rejected_url_is_never_resolved() -> None:
    resolver = ScriptedResolver(["93.184.216.34"])
    outcome = await check_destination("http://localhost/", policy=DEFAULT, resolver=resolver)
    assert isinstance(outcome, EgressRejected)
    assert resolver.calls == []


@pytest.mark.anyio
async def test_trusted_name_may_resolve_private_but_not_metadata() -> None:
    policy = EgressPolicy(allow_private={"ollama"})
    ok = await check_destination(
        "http://ollama:11434/", policy=policy, resolver=ScriptedResolver(["172.18.0.3"])
    )
    assert isinstance(ok, EgressAllowed)
    assert ok.addresses == ("172.18.0.3",)
    bad = await check_destination(
        "http://ollama:11434/", policy=policy, resolver=ScriptedResolver(["169.254.169.254"])
    )
    assert isinstance(bad, EgressRejected)


@pytest.mark.anyio
async def test_resolver_errors_propagate() -> None:
    class Failing:
        async def resolve(self, host: str, port: int) -> Sequence[str]:
            raise OSError("no such host")

    with pytest.raises(OSError, match="no such host"):
        await check_destination("http://example.com/", policy=DEFAULT, resolver=Failing())
