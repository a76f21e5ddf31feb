"""The sealer's key files: generated on first use, kept owner-only.

``sealer.key`` holds the secret keys (the X25519 key that unwraps data keys and the
Ed25519 seed that makes authorship tags); it is created once, create-only and durable, so
two processes starting together cannot both generate and one of them lose its key.
``sealer.pub`` beside it holds the matching public keys, which is all a locked process
needs to seal.  Both go through :class:`~agentrig.host.OwnerOnlyStore`: a key file or
directory that is a symlink or readable by others is refused, never used.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import attrs
from nacl.public import PrivateKey, PublicKey
from nacl.signing import SigningKey, VerifyKey

from agentrig.host import AlreadyExistsError, HostError, OwnerOnlyStore
from agentrig.sealing import SealerKeyError
from agentrig_sodium._schemas import check_newer

__all__ = ["PUBLIC_FILE", "SECRET_FILE", "PublicKeys", "SecretKeys", "load_public", "load_secret"]

SECRET_FILE = "sealer.key"
PUBLIC_FILE = "sealer.pub"
_SECRET_FORMAT = "agentrig-sodium-secret/1"
_PUBLIC_FORMAT = "agentrig-sodium-public/1"


@attrs.frozen(slots=True)
class PublicKeys:
    box: PublicKey = attrs.field(repr=False)
    verify: VerifyKey = attrs.field(repr=False)

    def encode(self) -> bytes:
        return _dump(_PUBLIC_FORMAT, box=bytes(self.box), sign=bytes(self.verify))

    def same_as(self, other: PublicKeys) -> bool:
        return bytes(self.box) == bytes(other.box) and bytes(self.verify) == bytes(other.verify)


@attrs.frozen(slots=True)
class SecretKeys:
    box: PrivateKey = attrs.field(repr=False)
    sign: SigningKey = attrs.field(repr=False)

    @classmethod
    def generate(cls) -> SecretKeys:
        return cls(box=PrivateKey.generate(), sign=SigningKey.generate())

    @property
    def public(self) -> PublicKeys:
        return PublicKeys(box=self.box.public_key, verify=self.sign.verify_key)

    def encode(self) -> bytes:
        return _dump(_SECRET_FORMAT, box=bytes(self.box), sign=bytes(self.sign))


def _dump(fmt: str, *, box: bytes, sign: bytes) -> bytes:
    document = {
        "format": fmt,
        "box": base64.b64encode(box).decode("ascii"),
        "sign": base64.b64encode(sign).decode("ascii"),
    }
    return json.dumps(document, indent=1).encode("ascii") + b"\n"


def _parse(raw: bytes, fmt: str, what: str) -> tuple[bytes, bytes]:
    # No cause is chained: a decoding error would keep the key file's text.
    try:
        document: Any = json.loads(raw)
        if isinstance(document, dict):
            check_newer(document.get("format"))  # a newer key file: refused by name
        if not isinstance(document, dict) or document.get("format") != fmt:
            raise ValueError
        box = base64.b64decode(document["box"], validate=True)
        sign = base64.b64decode(document["sign"], validate=True)
    except (ValueError, KeyError, TypeError):
        raise SealerKeyError(f"the {what} file is not a {fmt} key file") from None
    if len(box) != 32 or len(sign) != 32:
        raise SealerKeyError(f"the {what} file holds keys of the wrong size")
    return box, sign


def _read(store: OwnerOnlyStore, name: str) -> bytes | None:
    try:
        return store.read_bytes(name)
    except FileNotFoundError:
        return None
    except (HostError, OSError) as exc:  # unsafe mode, symlink, link escaping, I/O
        raise SealerKeyError(f"cannot read the sealer's {name} file: {exc}") from exc


def _create(store: OwnerOnlyStore, name: str, data: bytes) -> bool:
    """Create ``name`` (create-only, durable); ``False`` when another process won."""
    try:
        store.create_bytes(name, data)
    except AlreadyExistsError:
        return False
    except (HostError, OSError) as exc:
        raise SealerKeyError(f"cannot create the sealer's {name} file: {exc}") from exc
    return True


def load_public(store: OwnerOnlyStore) -> PublicKeys | None:
    raw = _read(store, PUBLIC_FILE)
    if raw is None:
        return None
    box, verify = _parse(raw, _PUBLIC_FORMAT, "public key")
    return PublicKeys(box=PublicKey(box), verify=VerifyKey(verify))


def _decode_secret(raw: bytes) -> SecretKeys:
    box, seed = _parse(raw, _SECRET_FORMAT, "secret key")
    return SecretKeys(box=PrivateKey(box), sign=SigningKey(seed))


def load_secret(store: OwnerOnlyStore, *, create: bool) -> SecretKeys | None:
    """The secret keys, generated first when ``create`` and none exist; ``None`` if absent.

    Also makes sure the public key file exists and matches.
    """
    raw = _read(store, SECRET_FILE)
    if raw is None:
        if not create:
            return None
        generated = SecretKeys.generate()
        if _create(store, SECRET_FILE, generated.encode()):
            secret = generated
        else:  # another process generated them first: use its keys
            raw = _read(store, SECRET_FILE)
            if raw is None:
                raise SealerKeyError("the sealer's secret key file vanished while starting")
            secret = _decode_secret(raw)
    else:
        secret = _decode_secret(raw)
    public = load_public(store)
    if public is None and not _create(store, PUBLIC_FILE, secret.public.encode()):
        public = load_public(store)  # another process wrote it first: check it matches
    if public is not None and not public.same_as(secret.public):
        raise SealerKeyError(
            f"the sealer's {PUBLIC_FILE} does not match its {SECRET_FILE}; artifacts sealed "
            "to that public key cannot be opened -- restore the matching pair"
        )
    return secret
