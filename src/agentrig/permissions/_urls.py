"""URL patterns, compared part by part (scheme, host, port, path), never as one string.

A wildcard over a whole URL string also spans the scheme, the userinfo and the host, so
``https://example.com*`` would cover ``https://example.com.evil.net``.  Here the argument is
parsed first and each part is compared on its own, after normalising what parsers disagree
on: hosts are lower-cased, IDNA-encoded, stripped of a trailing dot, and numeric IPv4 forms
(``2130706433``, ``0x7f.1``) become dotted quads; userinfo is ignored; the path is
percent-decoded and its dot segments resolved.  A URL holding whitespace, control
characters or backslashes, an encoded slash in its path, a bad port or no host is
unevaluable.

Pattern forms:

* ``domain:example.com`` - the host ``example.com`` and every subdomain of it, any scheme,
  port and path;
* ``[scheme://]host[:port][/path]`` - ``host`` may be ``*`` or start with ``*.``
  (``*.example.com`` is every subdomain, not the apex; any other wildcard in a host is
  unevaluable), ``port`` may be ``*``, the path is a glob (``*`` in a segment, ``**``
  across); no scheme means http or https; no path (or ``/``) means every path; no port
  means every port for deny/ask rules and the scheme's default port for allow rules.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
import socket
from fnmatch import fnmatchcase
from typing import Literal
from urllib.parse import unquote, urlsplit

import attrs

__all__ = ["match_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_BAD_CHARS = re.compile(r"[\s\\\x00-\x1f\x7f]")
_NUMERIC_HOST = re.compile(r"[0-9a-fx.]+", re.IGNORECASE)


@attrs.frozen(slots=True)
class _Url:
    scheme: str
    host: str
    port: int | None
    path: str


def _normalise_host(host: str) -> str | None:
    host = host.strip().rstrip(".").lower()
    if not host or "%" in host or "@" in host:
        return None
    try:
        return ipaddress.ip_address(host).compressed if ":" in host else _ipv4_or_name(host)
    except ValueError:
        return None


def _ipv4_or_name(host: str) -> str:
    if _NUMERIC_HOST.fullmatch(host) and any(ch.isdigit() for ch in host):
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            pass
    if not host.isascii():
        host = host.encode("idna").decode("ascii")  # raises UnicodeError (a ValueError)
    return host


def _parse_url(value: str) -> _Url | None:
    if _BAD_CHARS.search(value):
        return None
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc or parts.hostname is None:
        return None
    host = _normalise_host(parts.hostname)
    if host is None:
        return None
    if mapped := _mapped_ipv4(host):
        host = mapped
    if re.search(r"%(2f|5c)", parts.path, re.IGNORECASE):
        return None
    path = unquote(parts.path) or "/"
    path = posixpath.normpath(path) if path != "/" else path
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    if parts.path.endswith("/") and not path.endswith("/"):
        path += "/"
    return _Url(scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme), path)


def _mapped_ipv4(host: str) -> str | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return None


def _path_regex(pattern: str, loose: bool) -> re.Pattern[str]:
    if pattern.endswith("/"):
        pattern += "**"  # a trailing slash covers everything below, as for file paths
    parts: list[str] = []
    for segment in pattern.strip("/").split("/"):
        if segment == "**":
            parts.append("(?:/[^/]*)*")
        else:
            parts.append(
                "/"
                + "".join(
                    "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch)
                    for ch in segment
                )
            )
    return re.compile("".join(parts) + "/?", re.IGNORECASE if loose else 0)


def match_url(
    pattern: str, value: str, *, direction: Literal["restrict", "grant"] = "grant"
) -> _Outcome:
    """Match a URL pattern (see the module docs) against a URL argument."""
    if pattern in ("*", "**"):
        return "match"
    url = _parse_url(value)
    if url is None:
        return "unevaluable"
    if pattern.startswith("domain:"):
        domain = _normalise_host(pattern[len("domain:") :])
        if domain is None:
            return "unevaluable"
        hit = url.host == domain or url.host.endswith("." + domain)
        return "match" if hit else "no-match"
    parts = _pattern_parts(pattern)
    if parts is None:
        return "unevaluable"
    scheme, host, port_text, path = parts
    if scheme is None:
        if url.scheme not in ("http", "https"):
            return "no-match"
    elif not fnmatchcase(url.scheme, scheme):
        return "no-match"
    restrict = direction == "restrict"
    for outcome in (_host_outcome(host, url), _port_outcome(port_text, url, restrict)):
        if outcome != "match":
            return outcome
    everything = path is None or path.strip("/") in ("", "**")
    if not everything and not _path_regex("/" + str(path), restrict).fullmatch(url.path):
        return "no-match"
    return "match"


_Outcome = Literal["match", "no-match", "unevaluable"]


def _pattern_parts(pattern: str) -> tuple[str | None, str, str, str | None] | None:
    """``(scheme, host, port, path)`` of a URL pattern (None: it cannot be read).

    The scheme is lowercased (None: not written); the path is None when the pattern has no
    ``/`` after its host.
    """
    if _BAD_CHARS.search(pattern) or any(ch in pattern for ch in "@?#"):
        return None
    scheme: str | None = None
    rest = pattern
    if "://" in rest:
        scheme, rest = rest.split("://", 1)
        scheme = scheme.lower()
    hostport, slash, path = rest.partition("/")
    if hostport.startswith("["):
        host, _, after = hostport[1:].partition("]")
        if after and not after.startswith(":"):
            return None
        port_text = after[1:]
    else:
        host, _, port_text = hostport.partition(":")
    if not host:
        return None
    return scheme, host, port_text, path if slash else None


def _host_outcome(host: str, url: _Url) -> _Outcome:
    if host == "*":
        return "match"
    if host.startswith("*."):
        suffix = _normalise_host(host[2:])
        if suffix is None or "*" in suffix:
            return "unevaluable"  # only a whole leftmost label may be a wildcard
        return "match" if url.host.endswith("." + suffix) else "no-match"
    if "*" in host:
        return "unevaluable"  # only a whole leftmost label may be a wildcard
    normal = _normalise_host(host)
    if normal is None:
        return "unevaluable"
    return "match" if url.host == (_mapped_ipv4(normal) or normal) else "no-match"


def _port_outcome(port_text: str, url: _Url, restrict: bool) -> _Outcome:
    if port_text == "*":
        return "match"
    if port_text:
        if not port_text.isdigit():
            return "unevaluable"
        return "match" if url.port == int(port_text) else "no-match"
    if not restrict and url.port != _DEFAULT_PORTS.get(url.scheme):
        return "no-match"
    return "match"
