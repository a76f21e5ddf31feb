"""The sealed-artifact framing, read without any key."""

from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from agentrig.sealing import CorruptError, UnsupportedFramingError, framing
from agentrig.testing.conformance_sealer import assert_leaks_nothing


def _artifact(version: int = framing.CURRENT_VERSION, body: bytes = b"payload+tag") -> bytes:
    header = framing.encode_header(
        storage="whole", suite="test-suite/1", key_block=b"K" * 80, nonce=b"N" * 24, tag_length=4
    )
    return header[:8] + version.to_bytes(2, "big") + header[10:] + body


def test_header_round_trip() -> None:
    data = _artifact()
    header = framing.read_header(data)
    assert (header.version, header.storage, header.suite) == (1, "whole", "test-suite/1")
    assert (header.key_block, header.nonce, header.tag_length) == (b"K" * 80, b"N" * 24, 4)
    assert header.tagged
    assert data.startswith(header.raw)
    frame = framing.parse_frame(data)
    assert (frame.payload, frame.author_tag) == (b"payload", b"+tag")
    assert framing.classify(data) == "sealed"


@pytest.mark.parametrize("version", [0, 1, 2, 7, 255, 256, 65535])
def test_every_version_counts_as_sealed(version: int) -> None:
    data = _artifact(version)
    assert framing.is_sealed(data)
    assert framing.read_version(data) == version
    if version in framing.SUPPORTED_VERSIONS:
        assert framing.classify(data) == "sealed"
    else:
        assert framing.classify(data) == "unsupported"
        with pytest.raises(UnsupportedFramingError) as info:
            framing.read_header(data)
        assert info.value.version == version
        assert isinstance(info.value, CorruptError)


@pytest.mark.parametrize(
    "data",
    [b"", b"hello", b'{"type": "turn/start"}\n', framing.MAGIC[:7], b"\x89PNG\r\n\x1a\n"],
)
def test_plaintext_is_not_sealed(data: bytes) -> None:
    assert not framing.is_sealed(data)
    assert framing.classify(data) == "plaintext"
    with pytest.raises(CorruptError, match="not a sealed artifact"):
        framing.read_header(data)


def test_text_encodings_must_be_decoded_first() -> None:
    data = _artifact()
    assert not framing.is_sealed(base64.b64encode(data))
    assert framing.is_sealed(base64.b64decode(base64.b64encode(data)))


def test_damaged_framing_is_sealed_but_damaged() -> None:
    data = _artifact()
    header_size = framing.read_header(data).size
    for cut in range(len(framing.MAGIC), header_size):
        assert framing.is_sealed(data[:cut])
        assert framing.classify(data[:cut]) == "damaged"
    bad_storage = bytearray(data)
    bad_storage[framing.PREFIX_SIZE] = 9
    assert framing.classify(bytes(bad_storage)) == "damaged"
    longer = bytearray(data)
    longer[10:12] = (int.from_bytes(data[10:12], "big") + 1).to_bytes(2, "big")
    assert framing.classify(bytes(longer)) == "damaged"  # header would end inside the body
    assert framing.classify(data[: header_size + 2]) == "damaged"  # body shorter than the tag


def test_framing_errors_leak_nothing() -> None:
    data = _artifact(body=b"SECRET-BODY-BYTES!")
    for broken in (data[:20], data[:9], _artifact(version=3), b"SECRET-BODY-BYTES!"):
        with pytest.raises(CorruptError) as info:
            framing.parse_frame(broken)
        assert_leaks_nothing(info.value, [b"SECRET-BODY-BYTES!", b"K" * 16])


def test_encode_header_limits() -> None:
    with pytest.raises(ValueError, match="255"):
        framing.encode_header(storage="whole", suite="x" * 300, key_block=b"", nonce=b"")
    with pytest.raises(ValueError, match="65535"):
        framing.encode_header(storage="append", suite="s", key_block=b"k" * 70000, nonce=b"")


def test_framing_needs_no_cryptography_and_conformance_needs_no_pytest() -> None:
    code = (
        "import sys\n"
        "import agentrig.sealing.framing\n"
        "assert not any(m.startswith('nacl') for m in sys.modules), 'framing imported nacl'\n"
        "import agentrig.testing.conformance_sealer, agentrig.testing.conformance_credentials\n"
        "assert 'pytest' not in sys.modules, 'a conformance module imported pytest'\n"
        "assert '_pytest' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
