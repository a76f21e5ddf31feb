"""Classify IP addresses for the egress policy from an explicit, sourced table.

Why a table of our own rather than ``ipaddress``'s ``is_private`` / ``is_global``: those
flags have changed meaning between Python patch releases (3.11.10/3.12.4 reworked them), so a
security decision built on them would silently differ between two installs.  Every range
below names the registry entry or RFC it comes from; a reviewer can check each line.

Sources:

* IANA IPv4 Special-Purpose Address Registry
  (https://www.iana.org/assignments/iana-ipv4-special-registry/)
* IANA IPv6 Special-Purpose Address Registry
  (https://www.iana.org/assignments/iana-ipv6-special-registry/)
* IANA IPv6 Address Space registry: only ``2000::/3`` is allocated as global unicast
  (https://www.iana.org/assignments/ipv6-address-space/)
* the cloud providers' documented instance-metadata endpoints.

Rules, in order:

1. A cloud-metadata address is blocked (label ``cloud-metadata``).  These are matched
   first so a policy exemption for a broad private range never unblocks them by accident.
2. An IPv6 address that embeds an IPv4 address (IPv4-mapped, NAT64 well-known prefix,
   6to4, Teredo) is judged by the embedded address(es): blocked if any embedded address is.
   IPv4-compatible (``::/96``, deprecated by RFC 4291) and the NAT64 local-use prefix
   (``64:ff9b:1::/48``, never globally reachable) are blocked outright.
3. An address inside a special-purpose range that is not globally reachable is blocked.
4. An IPv6 address outside ``2000::/3`` is blocked (reserved or not global unicast).
5. Anything else is ``public``.

Ranges the registries mark globally reachable (AS112 anycast, AMT, PCP/TURN anycast inside
``2001::/23``...) carry no HTTP service; the IPv4 ones are left public, the IPv6 ones fall
inside ``2001::/23`` and are blocked with it, which errs on the side of refusing.
"""

from __future__ import annotations

import ipaddress
from typing import Final

import attrs

__all__ = [
    "CLOUD_METADATA_ADDRESSES",
    "SPECIAL_PURPOSE_NETWORKS",
    "AddressVerdict",
    "classify_address",
    "embedded_ipv4",
    "parse_ip",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_V4 = "IANA IPv4 Special-Purpose Address Registry"
_V6 = "IANA IPv6 Special-Purpose Address Registry"

#: (network, label, source) for every range refused as a destination.
SPECIAL_PURPOSE_NETWORKS: Final[tuple[tuple[str, str, str], ...]] = (
    # --- IPv4 ---------------------------------------------------------------------------
    ("0.0.0.0/8", "this-network", f"{_V4}: 'This network', RFC 791 s3.2"),
    ("10.0.0.0/8", "private", f"{_V4}: Private-Use, RFC 1918"),
    ("100.64.0.0/10", "shared-cgnat", f"{_V4}: Shared Address Space, RFC 6598"),
    ("127.0.0.0/8", "loopback", f"{_V4}: Loopback, RFC 1122 s3.2.1.3"),
    ("169.254.0.0/16", "link-local", f"{_V4}: Link Local, RFC 3927"),
    ("172.16.0.0/12", "private", f"{_V4}: Private-Use, RFC 1918"),
    ("192.0.0.0/24", "ietf-protocol", f"{_V4}: IETF Protocol Assignments, RFC 6890 s2.1"),
    ("192.0.2.0/24", "documentation", f"{_V4}: Documentation (TEST-NET-1), RFC 5737"),
    ("192.88.99.0/24", "6to4-relay", f"{_V4}: 6to4 Relay Anycast (deprecated), RFC 7526"),
    ("192.168.0.0/16", "private", f"{_V4}: Private-Use, RFC 1918"),
    ("198.18.0.0/15", "benchmarking", f"{_V4}: Benchmarking, RFC 2544"),
    ("198.51.100.0/24", "documentation", f"{_V4}: Documentation (TEST-NET-2), RFC 5737"),
    ("203.0.113.0/24", "documentation", f"{_V4}: Documentation (TEST-NET-3), RFC 5737"),
    ("224.0.0.0/4", "multicast", "IANA IPv4 Multicast Address Space Registry, RFC 5771"),
    ("240.0.0.0/4", "reserved", f"{_V4}: Reserved, RFC 1112 s4"),
    ("255.255.255.255/32", "broadcast", f"{_V4}: Limited Broadcast, RFC 8190 / RFC 919"),
    # --- IPv6 ---------------------------------------------------------------------------
    ("::/128", "unspecified", f"{_V6}: Unspecified Address, RFC 4291"),
    ("::1/128", "loopback", f"{_V6}: Loopback Address, RFC 4291"),
    ("100::/64", "discard-only", f"{_V6}: Discard-Only Address Block, RFC 6666"),
    ("100:0:0:1::/64", "dummy-prefix", f"{_V6}: Dummy IPv6 Prefix, RFC 9780"),
    ("2001::/23", "ietf-protocol", f"{_V6}: IETF Protocol Assignments, RFC 2928"),
    ("2001:db8::/32", "documentation", f"{_V6}: Documentation, RFC 3849"),
    ("3fff::/20", "documentation", f"{_V6}: Documentation, RFC 9637"),
    ("5f00::/16", "srv6-sid", f"{_V6}: Segment Routing (SRv6) SIDs, RFC 9602"),
    ("fc00::/7", "unique-local", f"{_V6}: Unique-Local, RFC 4193"),
    ("fe80::/10", "link-local", f"{_V6}: Link-Local Unicast, RFC 4291"),
    ("fec0::/10", "site-local", "Site-Local (deprecated), RFC 3879"),
    ("ff00::/8", "multicast", "IANA IPv6 Multicast Address Space Registry, RFC 4291 s2.7"),
)

#: (address, label, source) of instance-metadata and platform endpoints.
CLOUD_METADATA_ADDRESSES: Final[tuple[tuple[str, str, str], ...]] = (
    ("169.254.169.254", "cloud-metadata", "AWS/GCP/Azure/OCI/DigitalOcean/OpenStack IMDS"),
    ("fd00:ec2::254", "cloud-metadata", "AWS IMDS over IPv6 (Nitro)"),
    ("169.254.170.2", "cloud-metadata", "AWS ECS task metadata and credentials endpoint"),
    ("169.254.170.23", "cloud-metadata", "AWS EKS Pod Identity agent"),
    ("fd00:ec2::23", "cloud-metadata", "AWS EKS Pod Identity agent over IPv6"),
    ("100.100.100.200", "cloud-metadata", "Alibaba Cloud ECS metadata service"),
    ("168.63.129.16", "cloud-metadata", "Azure WireServer / platform endpoint (public range)"),
    ("192.0.0.192", "cloud-metadata", "Oracle Cloud legacy metadata endpoint"),
    ("169.254.0.23", "cloud-metadata", "Tencent Cloud metadata service"),
)

_TABLE: Final[tuple[tuple[IPNetwork, str, str], ...]] = tuple(
    (ipaddress.ip_network(net), label, source) for net, label, source in SPECIAL_PURPOSE_NETWORKS
)
_METADATA: Final[dict[IPAddress, tuple[str, str]]] = {
    ipaddress.ip_address(addr): (label, source) for addr, label, source in CLOUD_METADATA_ADDRESSES
}

_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64_WKP = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


@attrs.frozen(slots=True)
class AddressVerdict:
    """How one destination address is classified.

    ``label`` is ``public`` for an allowed address, otherwise the range's label;
    ``embedded`` lists the IPv4 addresses an IPv6 address was judged by.
    """

    address: str
    blocked: bool
    label: str
    source: str
    embedded: tuple[str, ...] = ()


def parse_ip(text: str) -> IPAddress | None:
    """Parse a canonical IP address string (an IPv6 zone id is dropped); ``None`` if not one.

    Only the strict forms :mod:`ipaddress` accepts are recognised: dotted-quad IPv4 without
    leading zeros and standard IPv6 text.  Other numeric spellings are the egress policy's
    concern (it refuses them as host names).
    """
    if not isinstance(text, str) or not text:
        return None
    candidate = text.split("%", 1)[0] if ":" in text else text
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


def embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, tuple[ipaddress.IPv4Address, ...]]:
    """The IPv4 address(es) an IPv6 address carries, with the form's name.

    Returns ``("", ())`` when the address embeds none.  Teredo carries two: the server (bits
    32-63) and the client (the bitwise NOT of the last 32 bits).
    """
    value = int(address)
    low32 = ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if address in _MAPPED:
        return "ipv4-mapped", (low32,)
    if address in _NAT64_WKP:
        return "nat64", (low32,)
    if address in _SIX_TO_FOUR:
        return "6to4", (ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF),)
    if address in _TEREDO:
        server = ipaddress.IPv4Address((value >> 64) & 0xFFFFFFFF)
        client = ipaddress.IPv4Address(~value & 0xFFFFFFFF)
        return "teredo", (server, client)
    return "", ()


def _table_lookup(address: IPAddress) -> tuple[str, str] | None:
    for network, label, source in _TABLE:
        if network.version == address.version and address in network:
            return label, source
    return None


def _classify_ipv4(address: ipaddress.IPv4Address) -> AddressVerdict:
    text = str(address)
    meta = _METADATA.get(address)
    if meta is not None:
        return AddressVerdict(text, True, meta[0], meta[1])
    hit = _table_lookup(address)
    if hit is not None:
        return AddressVerdict(text, True, hit[0], hit[1])
    return AddressVerdict(text, False, "public", "not in any special-purpose range")


def classify_address(
    address: str | ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> AddressVerdict:
    """Classify one destination address; a string that is not an IP address is blocked."""
    parsed = parse_ip(address) if isinstance(address, str) else address
    if parsed is None:
        return AddressVerdict(str(address), True, "invalid", "not an IP address")
    if isinstance(parsed, ipaddress.IPv4Address):
        return _classify_ipv4(parsed)
    text = str(parsed.__class__(int(parsed)))  # canonical, without a zone id
    meta = _METADATA.get(ipaddress.IPv6Address(int(parsed)))
    if meta is not None:
        return AddressVerdict(text, True, meta[0], meta[1])
    form, inner = embedded_ipv4(parsed)
    if inner:
        judged = tuple(_classify_ipv4(v4) for v4 in inner)
        embedded = tuple(str(v4) for v4 in inner)
        bad = next((v for v in judged if v.blocked), None)
        if bad is not None:
            return AddressVerdict(
                text, True, f"{form}:{bad.label}", f"embedded {bad.address}: {bad.source}", embedded
            )
        return AddressVerdict(text, False, "public", f"{form} of public IPv4", embedded)
    if parsed in _NAT64_LOCAL:
        return AddressVerdict(
            text, True, "nat64-local", f"{_V6}: IPv4-IPv6 Translat. (local-use), RFC 8215"
        )
    if parsed in _COMPATIBLE:
        hit = _table_lookup(parsed)  # :: and ::1 keep their own labels
        if hit is not None:
            return AddressVerdict(text, True, hit[0], hit[1])
        return AddressVerdict(
            text, True, "ipv4-compatible", "IPv4-Compatible IPv6 (deprecated), RFC 4291 s2.5.5.1"
        )
    hit = _table_lookup(parsed)
    if hit is not None:
        return AddressVerdict(text, True, hit[0], hit[1])
    if parsed not in _GLOBAL_UNICAST:
        return AddressVerdict(
            text, True, "not-global-unicast", "IANA IPv6 Address Space: outside 2000::/3"
        )
    return AddressVerdict(text, False, "public", "global unicast, not special-purpose")
