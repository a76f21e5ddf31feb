"""The egress policy: may this process send a request to that URL?

Every caller- or model-supplied URL an agentrig component fetches is judged here.  The
decision has two halves:

* :func:`check_url` is pure: it parses the URL with the same parser the HTTP client uses
  (httpx), so the host it judges is the host that reaches the connection, and refuses bad
  schemes, ports, user info, malformed or inward-pointing host names and blocked IP literals.
* :func:`check_destination` adds the one DNS resolution a request gets: every answer must
  pass the address table of :mod:`agentrig.host._addresses`.  The validated answers travel
  with the :class:`EgressAllowed` value so the transport can connect to exactly them.

Policy outcomes are values (:class:`EgressAllowed` / :class:`EgressRejected`), never raised;
only the httpx transport, which cannot return a value, turns a rejection into
:class:`~agentrig.host.EgressRejectedError`.

Host-name decisions (documented in ``docs/security.md``):

* Numeric host spellings other than a canonical dotted quad (``2130706433``, ``0x7f.1``,
  ``127.1``, ``0177.0.0.1``, ``1.2.3.4.5``) are refused: httpx passes them through as names
  and the system resolver would turn them into loopback addresses.  Any name whose last label
  is numeric is refused the same way.
* Single-label names (``metadata``, ``intranet``) are refused by default: a resolver's
  search list can turn them into internal names.
* ``localhost``, ``.local``, ``.internal``, ``.home.arpa``/``.arpa``, ``.localdomain``, the
  private-use names of RFC 6762 Appendix G and known metadata names are blocked outright.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Final, Literal

import attrs
import httpx

from agentrig.host._addresses import AddressVerdict, classify_address, embedded_ipv4, parse_ip
from agentrig.host._resolver import Resolver, SystemResolver

__all__ = [
    "DEFAULT_BLOCKED_HOSTS",
    "EgressAllowed",
    "EgressOutcome",
    "EgressPolicy",
    "EgressRejected",
    "RejectionReason",
    "check_destination",
    "check_url",
]

RejectionReason = Literal[
    "url.invalid",
    "url.invalid_char",
    "url.userinfo",
    "scheme.not_allowed",
    "port.invalid",
    "port.not_allowed",
    "host.missing",
    "host.invalid",
    "host.numeric",
    "host.idna_invalid",
    "host.single_label",
    "host.blocked",
    "address.blocked",
    "resolve.empty",
    "redirect.downgrade",
    "redirect.cross_origin_body",
]

#: (pattern, source): ``name`` matches that name; ``*.name`` matches it and every subdomain.
DEFAULT_BLOCKED_HOSTS: Final[tuple[tuple[str, str], ...]] = (
    ("localhost", "RFC 6761 s6.3"),
    ("*.localhost", "RFC 6761 s6.3"),
    ("*.local", "RFC 6762 (multicast DNS)"),
    ("*.internal", "ICANN private-use TLD; metadata.google.internal, *.ec2.internal"),
    ("*.arpa", "RFC 3172 infrastructure names, incl. home.arpa (RFC 8375)"),
    ("*.localdomain", "conventional /etc/hosts loopback domain"),
    ("*.intranet", "RFC 6762 Appendix G private-use name"),
    ("*.private", "RFC 6762 Appendix G private-use name"),
    ("*.corp", "RFC 6762 Appendix G private-use name"),
    ("*.home", "RFC 6762 Appendix G private-use name"),
    ("*.lan", "RFC 6762 Appendix G private-use name"),
    ("*.onion", "RFC 7686 (not reachable through DNS)"),
    ("metadata", "GCE metadata server (search-list name)"),
    ("metadata.goog", "GCE metadata server"),
    ("instance-data", "AWS EC2 metadata (search-list name)"),
    ("metadata.tencentyun.com", "Tencent Cloud metadata service"),
    ("kubernetes.default", "Kubernetes API service (search-list name)"),
    ("kubernetes.default.svc", "Kubernetes API service (search-list name)"),
)

_DEFAULT_PORTS: Final[dict[str, int]] = {"http": 80, "https": 443}
_LABEL_CHARS: Final[frozenset[str]] = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


@attrs.frozen(slots=True)
class _AllowRule:
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    host: str | None
    port: int | None

    def port_matches(self, port: int) -> bool:
        return self.port is None or self.port == port


def _parse_port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"allow_private entry {entry!r}: bad port {text!r}")
    return int(text)


def _parse_allow_entry(entry: str) -> _AllowRule:
    text = entry.strip().lower()
    port: int | None = None
    if text.startswith("["):
        inner, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"allow_private entry {entry!r} is malformed")
        if rest:
            port = _parse_port(rest[1:], entry)
        text = inner
    elif text.count(":") == 1:
        text, _, port_text = text.partition(":")
        port = _parse_port(port_text, entry)
    try:
        return _AllowRule(ipaddress.ip_network(text, strict=True), None, port)
    except ValueError:
        pass
    host = text.rstrip(".") if text.endswith(".") and not text.endswith("..") else text
    problem = _host_problem(host)
    if problem is not None or parse_ip(host) is not None:
        raise ValueError(f"allow_private entry {entry!r} is neither a network nor a host name")
    return _AllowRule(None, host, port)


def _to_str_frozenset(values: Iterable[str]) -> frozenset[str]:
    if isinstance(values, str):
        raise TypeError("expected a collection of strings, not one string")
    return frozenset(values)


def _to_int_frozenset(values: Iterable[int] | None) -> frozenset[int] | None:
    return None if values is None else frozenset(values)


@attrs.frozen(slots=True)
class EgressPolicy:
    """What outbound HTTP requests may reach.

    ``allow_private`` exempts destinations from the special-purpose block, each entry one of
    ``127.0.0.1``, ``10.0.0.0/8``, ``127.0.0.1:11434``, ``[::1]:8080`` or a host name
    (``ollama`` / ``ollama:11434``).  A host-name entry trusts that name: it may be single
    label or otherwise blocked, and its DNS answers may be private.  Cloud-metadata addresses
    are exempted only by an entry naming that exact single address.

    ``allowed_ports`` of ``None`` admits every port from 1 to 65535.  ``blocked_hosts`` adds
    patterns to :data:`DEFAULT_BLOCKED_HOSTS` (``name`` or ``*.suffix``).
    """

    allowed_schemes: frozenset[str] = attrs.field(
        default=frozenset({"http", "https"}), converter=_to_str_frozenset
    )
    allowed_ports: frozenset[int] | None = attrs.field(default=None, converter=_to_int_frozenset)
    allow_private: frozenset[str] = attrs.field(default=frozenset(), converter=_to_str_frozenset)
    blocked_hosts: frozenset[str] = attrs.field(default=frozenset(), converter=_to_str_frozenset)
    max_redirects: int = 5
    allow_single_label: bool = False
    allow_https_downgrade: bool = False
    _rules: tuple[_AllowRule, ...] = attrs.field(init=False, repr=False, eq=False)
    _blocked: tuple[tuple[str, bool], ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        bad = self.allowed_schemes - {"http", "https"}
        if bad or not self.allowed_schemes:
            raise ValueError(f"allowed_schemes must be a non-empty subset of http/https: {bad}")
        if self.allowed_ports is not None and any(not 0 < p < 65536 for p in self.allowed_ports):
            raise ValueError("allowed_ports must lie between 1 and 65535")
        if self.max_redirects < 0:
            raise ValueError("max_redirects must not be negative")
        rules = tuple(_parse_allow_entry(entry) for entry in sorted(self.allow_private))
        patterns = [p for p, _ in DEFAULT_BLOCKED_HOSTS] + sorted(self.blocked_hosts)
        blocked = tuple(
            (p[2:].lower().rstrip("."), True)
            if p.startswith("*.")
            else (p.lower().rstrip("."), False)
            for p in patterns
        )
        object.__setattr__(self, "_rules", rules)
        object.__setattr__(self, "_blocked", blocked)

    def host_blocked(self, host: str) -> bool:
        """Whether a normalised host name matches the name blocklist."""
        for name, wildcard in self._blocked:
            if host == name or (wildcard and host.endswith("." + name)):
                return True
        return False

    def host_trusted(self, host: str, port: int) -> bool:
        """Whether an ``allow_private`` host-name entry names this host (and port)."""
        return any(r.host == host and r.port_matches(port) for r in self._rules)

    def address_allowed(self, verdict: AddressVerdict, port: int, *, trusted_name: bool) -> bool:
        """Whether a classified address may be reached on ``port`` under this policy."""
        if not verdict.blocked:
            return True
        if verdict.label == "invalid":
            return False
        address = ipaddress.ip_address(verdict.address)
        candidates: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [address]
        if (
            isinstance(address, ipaddress.IPv6Address)
            and embedded_ipv4(address)[0] == "ipv4-mapped"
        ):
            candidates.extend(embedded_ipv4(address)[1])
        metadata = verdict.label.endswith("cloud-metadata")
        if trusted_name and not metadata:
            return True
        for rule in self._rules:
            if rule.network is None or not rule.port_matches(port):
                continue
            if metadata and rule.network.num_addresses != 1:
                continue
            if any(c.version == rule.network.version and c in rule.network for c in candidates):
                return True
        return False


@attrs.frozen(slots=True)
class EgressAllowed:
    """A URL the policy admits.

    ``host`` is the normalised name (lower case, ASCII/punycode, no trailing dot) and
    ``connect_host`` the host text the HTTP stack connects with; ``addresses`` holds the
    validated IP addresses (empty from :func:`check_url` for a name not yet resolved).
    """

    url: str
    scheme: str
    host: str
    connect_host: str
    port: int
    addresses: tuple[str, ...] = ()
    is_ip_literal: bool = False
    trusted_name: bool = False

    @property
    def ok(self) -> Literal[True]:
        return True


@attrs.frozen(slots=True)
class EgressRejected:
    """A URL the policy refuses: ``reason`` is a stable code, ``message`` says why."""

    reason: RejectionReason
    message: str
    url: str
    verdict: AddressVerdict | None = None

    @property
    def ok(self) -> Literal[False]:
        return False


EgressOutcome = EgressAllowed | EgressRejected


def _bad_char(text: str) -> str | None:
    for ch in text:
        if ch == "\\" or ch.isspace() or ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F:
            return ch
    return None


def _is_numeric_label(label: str) -> bool:
    if label.isdigit():
        return True
    return label.startswith("0x") and all(c in "0123456789abcdef" for c in label[2:])


def _host_problem(host: str) -> tuple[RejectionReason, str] | None:
    """Why a normalised (lower-case, no trailing dot) host name is malformed, or ``None``."""
    if not host:
        return "host.missing", "the URL has no host"
    if "%" in host:
        return "host.invalid", "percent-encoded host names are refused"
    labels = host.split(".")
    if any(not label for label in labels):
        return "host.invalid", f"host {host!r} has an empty label"
    for label in labels:
        if not set(label) <= _LABEL_CHARS or len(label) > 63:
            return "host.invalid", f"host {host!r} has a label with forbidden characters"
        if label.startswith("xn--"):
            try:
                label.encode("ascii").decode("idna")
            except UnicodeError:
                return "host.idna_invalid", f"label {label!r} is not valid IDNA"
    if len(host) > 253:
        return "host.invalid", "host name longer than 253 characters"
    if _is_numeric_label(labels[-1]):
        return "host.numeric", (
            f"host {host!r} is a numeric spelling other than a canonical dotted-quad address"
        )
    return None


def _reject(
    reason: RejectionReason, message: str, url: str, verdict: AddressVerdict | None = None
) -> EgressRejected:
    return EgressRejected(reason=reason, message=message, url=url, verdict=verdict)


def check_url(url: str | httpx.URL, *, policy: EgressPolicy) -> EgressOutcome:
    """Judge a URL without touching the network.

    A host name passes with ``addresses=()`` (it still has to be resolved by
    :func:`check_destination`); an IP literal passes with its one validated address.
    """
    text = str(url)
    bad = _bad_char(text)
    if bad is not None:
        return _reject("url.invalid_char", f"the URL contains the character {bad!r}", text)
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        return _reject("url.invalid", f"the URL cannot be parsed: {exc}", text)
    scheme = parsed.scheme.lower()
    if scheme not in policy.allowed_schemes:
        allowed = ", ".join(sorted(policy.allowed_schemes))
        return _reject("scheme.not_allowed", f"scheme {scheme!r} is not one of {allowed}", text)
    if parsed.userinfo:
        return _reject("url.userinfo", "credentials in the URL (user info) are refused", text)
    port = parsed.port if parsed.port is not None else _DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return _reject("port.invalid", f"port {port} is outside 1-65535", text)
    if policy.allowed_ports is not None and port not in policy.allowed_ports:
        return _reject("port.not_allowed", f"port {port} is not an allowed port", text)
    try:
        connect_host = parsed.raw_host.decode("ascii").lower()
    except UnicodeDecodeError:
        return _reject("host.invalid", "the host is not ASCII after IDNA encoding", text)
    bad = _bad_char(connect_host)
    if bad is not None:
        return _reject("url.invalid_char", f"the host contains the character {bad!r}", text)
    if ":" in connect_host:  # an IPv6 literal (httpx strips the brackets)
        if "%" in connect_host:
            return _reject("host.invalid", "IPv6 zone identifiers are refused", text)
        address = parse_ip(connect_host)
        if address is None:
            return _reject("host.invalid", f"{connect_host!r} is not an IPv6 address", text)
        return _judge_literal(text, scheme, connect_host, connect_host, port, str(address), policy)
    host = connect_host[:-1] if connect_host.endswith(".") else connect_host
    literal = parse_ip(host) if host[:1].isdigit() else None
    if literal is not None and str(literal) == host:
        return _judge_literal(text, scheme, host, connect_host, port, host, policy)
    problem = _host_problem(host)
    if problem is not None:
        return _reject(problem[0], problem[1], text)
    trusted = policy.host_trusted(host, port)
    if not trusted:
        if policy.host_blocked(host):
            return _reject("host.blocked", f"host {host!r} is on the blocklist", text)
        if "." not in host and not policy.allow_single_label:
            return _reject(
                "host.single_label", f"single-label host {host!r} is refused (search lists)", text
            )
    return EgressAllowed(
        url=text,
        scheme=scheme,
        host=host,
        connect_host=connect_host,
        port=port,
        trusted_name=trusted,
    )


def _judge_literal(
    text: str,
    scheme: str,
    host: str,
    connect_host: str,
    port: int,
    address: str,
    policy: EgressPolicy,
) -> EgressOutcome:
    verdict = classify_address(address)
    if not policy.address_allowed(verdict, port, trusted_name=False):
        return _reject(
            "address.blocked",
            f"address {verdict.address} is {verdict.label} ({verdict.source})",
            text,
            verdict,
        )
    return EgressAllowed(
        url=text,
        scheme=scheme,
        host=host,
        connect_host=connect_host,
        port=port,
        addresses=(verdict.address,),
        is_ip_literal=True,
    )


async def check_destination(
    url: str | httpx.URL,
    *,
    policy: EgressPolicy,
    resolver: Resolver | None = None,
) -> EgressOutcome:
    """Judge a URL and, for a host name, resolve it once and judge every answer.

    Refused when any answer is blocked or there is none.  A resolver's :class:`OSError`
    propagates, since a failed lookup is a network error, not a policy outcome; bound the
    call with :func:`anyio.fail_after` to limit the lookup's time.
    """
    outcome = check_url(url, policy=policy)
    if isinstance(outcome, EgressRejected) or outcome.is_ip_literal:
        return outcome
    active = resolver if resolver is not None else SystemResolver()
    answers: Sequence[str] = await active.resolve(outcome.host, outcome.port)
    if not answers:
        return _reject(
            "resolve.empty", f"host {outcome.host!r} resolved to no address", outcome.url
        )
    validated: dict[str, None] = {}
    for answer in answers:
        verdict = classify_address(answer)
        if not policy.address_allowed(verdict, outcome.port, trusted_name=outcome.trusted_name):
            return _reject(
                "address.blocked",
                f"host {outcome.host!r} resolves to {verdict.address}, which is "
                f"{verdict.label} ({verdict.source})",
                outcome.url,
                verdict,
            )
        validated.setdefault(verdict.address, None)
    return attrs.evolve(outcome, addresses=tuple(validated))
