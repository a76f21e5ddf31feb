"""The sourced address table: every special-purpose range and every embedded-IPv4 form."""

from __future__ import annotations

import ipaddress

import pytest

from agentrig.host import CLOUD_METADATA_ADDRESSES, SPECIAL_PURPOSE_NETWORKS, classify_address

BLOCKED_V4 = [
    ("0.0.0.0", "this-network"),
    ("0.1.2.3", "this-network"),
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("100.64.0.1", "shared-cgnat"),
    ("100.127.255.254", "shared-cgnat"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.1.1", "link-local"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.0.0.8", "ietf-protocol"),
    ("192.0.0.170", "ietf-protocol"),
    ("192.0.2.1", "documentation"),
    ("192.88.99.1", "6to4-relay"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("169.254.169.254", "cloud-metadata"),
    ("169.254.170.2", "cloud-metadata"),
    ("100.100.100.200", "cloud-metadata"),
    ("168.63.129.16", "cloud-metadata"),
]

PUBLIC_V4 = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "100.128.0.1", "11.0.0.1"]

BLOCKED_V6 = [
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("febf:ffff::1", "link-local"),
    ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("100::1", "discard-only"),
    ("2001:2::1", "ietf-protocol"),
    ("5f00::1", "srv6-sid"),
    ("4000::1", "not-global-unicast"),
    ("fd00:ec2::254", "cloud-metadata"),
    ("64:ff9b:1::a00:1", "nat64-local"),
    ("64:ff9b:1::808:808", "nat64-local"),
]

# (address, blocked?) for every IPv6 form that carries an IPv4 address, written both as the
# dotted form DNS answers use and the hex form URLs render.
EMBEDDED = [
    ("::ffff:127.0.0.1", True),
    ("::ffff:7f00:1", True),
    ("::ffff:10.1.2.3", True),
    ("::ffff:a01:203", True),
    ("::ffff:169.254.169.254", True),
    ("::ffff:a9fe:a9fe", True),
    ("::ffff:8.8.8.8", False),
    ("::ffff:808:808", False),
    ("::127.0.0.1", True),
    ("::8.8.8.8", True),  # IPv4-compatible: deprecated, refused whatever it embeds
    ("64:ff9b::127.0.0.1", True),
    ("64:ff9b::7f00:1", True),
    ("64:ff9b::192.168.0.1", True),
    ("64:ff9b::8.8.8.8", False),
    ("2002:7f00:1::", True),
    ("2002:a9fe:a9fe::1", True),
    ("2002:c0a8:101::", True),
    ("2002:808:808::1", False),
    # Teredo: server 65.54.227.120, client = NOT(last 32 bits)
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", True),  # client 127.0.0.1
    ("2001:0:4136:e378:8000:63bf:f5ff:fefd", True),  # client 10.0.1.2
    ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", False),  # client 8.8.8.8
    ("2001:0:7f00:1:8000:63bf:f7f7:f7f7", True),  # server 127.0.0.1
]


@pytest.mark.parametrize(("address", "label"), BLOCKED_V4 + BLOCKED_V6)
def test_special_purpose_addresses_are_blocked(address: str, label: str) -> None:
    verdict = classify_address(address)
    assert verdict.blocked
    assert verdict.label == label
    assert verdict.source


@pytest.mark.parametrize("address", [*PUBLIC_V4, "2606:4700:4700::1111", "2a00:1450::1"])
def test_public_addresses_pass(address: str) -> None:
    verdict = classify_address(address)
    assert not verdict.blocked
    assert verdict.label == "public"


@pytest.mark.parametrize(("address", "blocked"), EMBEDDED)
def test_embedded_ipv4_forms_are_judged_by_the_embedded_address(
    address: str, blocked: bool
) -> None:
    verdict = classify_address(address)
    assert verdict.blocked is blocked, verdict


def test_both_spellings_of_a_mapped_address_agree() -> None:
    assert classify_address("::ffff:127.0.0.1") == classify_address("::ffff:7f00:1")


def test_teredo_reports_both_embedded_addresses() -> None:
    verdict = classify_address("2001:0:4136:e378:8000:63bf:80ff:fffe")
    assert verdict.embedded == ("65.54.227.120", "127.0.0.1")
    assert verdict.label == "teredo:loopback"


@pytest.mark.parametrize("text", ["", "localhost", "127.1", "0177.0.0.1", "1.2.3", "::g", "x::1"])
def test_non_addresses_are_blocked_as_invalid(text: str) -> None:
    verdict = classify_address(text)
    assert verdict.blocked
    assert verdict.label == "invalid"


def test_zone_ids_are_ignored_for_classification() -> None:
    assert classify_address("fe80::1%eth0").label == "link-local"


def test_every_table_row_is_well_formed_and_sourced() -> None:
    for network, label, source in SPECIAL_PURPOSE_NETWORKS:
        ipaddress.ip_network(network)  # strict: no host bits set
        assert label
        assert ("RFC" in source) or ("IANA" in source)
    for address, label, source in CLOUD_METADATA_ADDRESSES:
        assert classify_address(address).blocked
        assert label == "cloud-metadata"
        assert source


def test_every_range_blocks_its_first_and_last_address() -> None:
    for network, _label, _source in SPECIAL_PURPOSE_NETWORKS:
        net = ipaddress.ip_network(network)
        for address in (net[0], net[-1]):
            assert classify_address(str(address)).blocked, address
