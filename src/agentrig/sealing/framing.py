"""The framing of a sealed artifact, readable without any key.

A reader that holds no sealer -- a backup tool, ``agentrig doctor``, an older build -- must
still tell a sealed artifact it cannot read from a damaged file or from plaintext.  This
module is that reader.  It imports no cryptography.

Every framing version starts with the same 12-byte prefix, and that prefix is the part of
the format that never changes::

    offset  size  field
    0       8     MAGIC  = 89 41 52 53 4C 0D 0A 1A   ("\\x89ARSL\\r\\n\\x1a")
    8       2     version, unsigned big-endian (1 today)
    10      2     header length H, unsigned big-endian
    12      H     header (layout depends on the version)
    12+H    ...   body

``MAGIC`` begins with a byte that is not ASCII and ends with CR LF and ^Z, so text-mode
transfers and line-ending conversions damage it visibly (the PNG trick).  Any data starting
with ``MAGIC`` is sealed: an unknown *newer* version is "sealed, not readable by this build"
(:class:`~agentrig.sealing.UnsupportedFramingError`), never plaintext.

Version 1 header (all lengths unsigned big-endian)::

    1   storage      1 = whole artifact, 2 = append record
    1   suite length S, then S bytes of ASCII: the sealer's algorithm suite
    2   key-block length K, then K bytes: the data key, wrapped to the owner's public key
    1   nonce length N, then N bytes
    2   author-tag length T (0 = untagged)

and the body is the sealed payload followed by T bytes of authorship tag.  The whole prefix
and header are authenticated with the payload (see :func:`bound_data`), so no header field
can be changed without the artifact failing to open.

A text container (a JSONL line) must decode its encoding (base64) before calling these
functions: :func:`is_sealed` looks at raw bytes.
"""

from __future__ import annotations

import struct
from typing import Literal

import attrs

from agentrig.schemas import SCHEMAS
from agentrig.sealing._errors import CorruptError, UnsupportedFramingError
from agentrig.sealing._kinds import Storage

__all__ = [
    "CURRENT_VERSION",
    "MAGIC",
    "SEALED_FRAMING_SCHEMA",
    "PREFIX_SIZE",
    "SUPPORTED_VERSIONS",
    "Frame",
    "FrameHeader",
    "FrameStatus",
    "assemble",
    "bound_data",
    "classify",
    "encode_header",
    "is_sealed",
    "parse_frame",
    "read_header",
    "read_version",
]

MAGIC = b"\x89ARSL\r\n\x1a"
CURRENT_VERSION = 1
SUPPORTED_VERSIONS: frozenset[int] = frozenset({1})
#: the persisted schema of the framing (its version is the prefix's version field)
SEALED_FRAMING_SCHEMA = "agentrig.sealed.framing"

_PREFIX = struct.Struct(">8sHH")
PREFIX_SIZE = _PREFIX.size

_STORAGE_CODES: dict[Storage, int] = {"whole": 1, "append": 2}
_STORAGE_NAMES: dict[int, Storage] = {code: name for name, code in _STORAGE_CODES.items()}

FrameStatus = Literal["plaintext", "sealed", "unsupported", "damaged"]

Bytes = bytes | bytearray | memoryview


@attrs.frozen(slots=True)
class FrameHeader:
    """The parsed prefix and header of a sealed artifact (no key needed)."""

    version: int
    storage: Storage
    suite: str
    key_block: bytes = attrs.field(repr=False)
    nonce: bytes = attrs.field(repr=False)
    tag_length: int
    #: prefix + header exactly as stored: the authenticated part before the body
    raw: bytes = attrs.field(repr=False)

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def tagged(self) -> bool:
        return self.tag_length > 0


@attrs.frozen(slots=True)
class Frame:
    """A whole parsed artifact: header, sealed payload and authorship tag (may be empty)."""

    header: FrameHeader
    payload: bytes = attrs.field(repr=False)
    author_tag: bytes = attrs.field(repr=False)


def _damaged(why: str) -> CorruptError:
    return CorruptError(f"the sealed artifact is damaged: {why}")


def is_sealed(data: Bytes) -> bool:
    """Whether ``data`` is a sealed artifact of *any* framing version (damaged or not).

    ``True`` means: never treat this as plaintext.  Use :func:`classify` to tell a readable
    artifact from a damaged one or from a newer build's.
    """
    return bytes(data[: len(MAGIC)]) == MAGIC


def read_version(data: Bytes) -> int:
    """The framing version of a sealed artifact; :class:`CorruptError` if there is none."""
    if not is_sealed(data):
        raise CorruptError("not a sealed artifact (the framing magic is missing)")
    if len(data) < PREFIX_SIZE:
        raise _damaged("truncated inside the framing prefix")
    _magic, version, _length = _PREFIX.unpack_from(bytes(data[:PREFIX_SIZE]))
    return int(version)


class _Reader:
    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def take(self, size: int) -> bytes:
        end = self._pos + size
        if end > len(self._data):
            raise _damaged("truncated inside the header")
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int.from_bytes(self.take(2), "big")

    @property
    def done(self) -> bool:
        return self._pos == len(self._data)


def read_header(data: Bytes) -> FrameHeader:
    """Parse the prefix and header.

    Raises :class:`CorruptError` for data that is not sealed or whose header is damaged, and
    :class:`UnsupportedFramingError` (a ``CorruptError``) for a version this build does not
    read.
    """
    version = read_version(data)
    if version not in SUPPORTED_VERSIONS:
        upgrade = SCHEMAS.info(SEALED_FRAMING_SCHEMA).upgrade
        raise UnsupportedFramingError(
            f"sealed with {SEALED_FRAMING_SCHEMA} version {version}; this build reads "
            f"version(s) {', '.join(map(str, sorted(SUPPORTED_VERSIONS)))} -- open it with a "
            f"newer build (upgrade: {upgrade})",
            version=version,
        )
    _magic, _version, length = _PREFIX.unpack_from(bytes(data[:PREFIX_SIZE]))
    end = PREFIX_SIZE + length
    if len(data) < end:
        raise _damaged("truncated inside the header")
    reader = _Reader(bytes(data[PREFIX_SIZE:end]))
    storage = _STORAGE_NAMES.get(reader.u8())
    if storage is None:
        raise _damaged("unknown storage class in the header")
    try:
        suite = reader.take(reader.u8()).decode("ascii")
    except UnicodeDecodeError:
        raise _damaged("the suite name is not ASCII") from None
    key_block = reader.take(reader.u16())
    nonce = reader.take(reader.u8())
    tag_length = reader.u16()
    if not reader.done:
        raise _damaged("unexpected bytes at the end of the header")
    return FrameHeader(
        version=version,
        storage=storage,
        suite=suite,
        key_block=key_block,
        nonce=nonce,
        tag_length=tag_length,
        raw=bytes(data[:end]),
    )


def parse_frame(data: Bytes) -> Frame:
    """Parse a whole artifact: header, payload and tag (raises as :func:`read_header` does)."""
    header = read_header(data)
    body = bytes(data[header.size :])
    if len(body) < header.tag_length:
        raise _damaged("truncated inside the body")
    cut = len(body) - header.tag_length
    return Frame(header=header, payload=body[:cut], author_tag=body[cut:])


def classify(data: Bytes) -> FrameStatus:
    """``plaintext`` (no framing), ``sealed`` (readable framing), ``unsupported`` (a newer
    version) or ``damaged`` (the framing itself is broken).  Needs no key; a ``sealed``
    artifact may still fail to open (damaged payload, other owner or kind)."""
    if not is_sealed(data):
        return "plaintext"
    try:
        parse_frame(data)
    except UnsupportedFramingError:
        return "unsupported"
    except CorruptError:
        return "damaged"
    return "sealed"


def encode_header(
    *,
    storage: Storage,
    suite: str,
    key_block: bytes,
    nonce: bytes,
    tag_length: int = 0,
) -> bytes:
    """The prefix and version-1 header for an artifact about to be sealed."""
    suite_bytes = suite.encode("ascii")
    if len(suite_bytes) > 0xFF or len(nonce) > 0xFF:
        raise ValueError("suite name and nonce are limited to 255 bytes")
    if len(key_block) > 0xFFFF or not 0 <= tag_length <= 0xFFFF:
        raise ValueError("key block and author tag are limited to 65535 bytes")
    header = b"".join(
        (
            bytes((_STORAGE_CODES[storage], len(suite_bytes))),
            suite_bytes,
            len(key_block).to_bytes(2, "big"),
            key_block,
            bytes((len(nonce),)),
            nonce,
            tag_length.to_bytes(2, "big"),
        )
    )
    return _PREFIX.pack(MAGIC, CURRENT_VERSION, len(header)) + header


def assemble(header_raw: bytes, payload: bytes, author_tag: bytes = b"") -> bytes:
    """Join an encoded header, the sealed payload and the authorship tag."""
    return header_raw + payload + author_tag


def _length_prefixed(text: str) -> bytes:
    raw = text.encode("utf-8")
    return len(raw).to_bytes(4, "big") + raw


def bound_data(header_raw: bytes, kind: str, owner_id: str) -> bytes:
    """The associated data every sealer authenticates: header, kind and owner id.

    Binding the kind and the owner id means an artifact moved to another owner's path, or
    read back as another kind, does not open.
    """
    return header_raw + _length_prefixed(kind) + _length_prefixed(owner_id)


def _v1_shape(data: Bytes) -> None:
    """Version 1's shape, for the schema registry: a sealed artifact whose header parses."""
    try:
        read_header(data)
    except CorruptError as exc:
        raise ValueError(str(exc)) from None


SCHEMAS.define(SEALED_FRAMING_SCHEMA, 1, _v1_shape)
