"""The sodium sealer: X25519 sealed-box key wrap, XChaCha20-Poly1305 payload, Ed25519 tags.

Sealing an artifact:

1. a fresh 32-byte data key (per whole artifact; per appender for append kinds);
2. the data key is wrapped to the owner's X25519 public key with a sealed box
   (ephemeral sender key, so sealing needs no secret), and the wrapped key goes into the
   framing header -- every record carries it, so every record opens on its own;
3. the payload is encrypted with XChaCha20-Poly1305 under a random 24-byte nonce, with the
   framing header, the kind and the owner id as associated data
   (:func:`agentrig.sealing.framing.bound_data`);
4. with ``author_tag=True`` (unlocked keys only) an Ed25519 signature over the associated
   data and the ciphertext is appended.

Opening reverses it.  Unwrapped data keys are cached by their wrapped bytes, so reading
back many records of one writer costs one public-key operation, not one per record.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from nacl.exceptions import BadSignatureError, CryptoError
from nacl.public import PublicKey, SealedBox
from nacl.secret import Aead
from nacl.signing import VerifyKey
from nacl.utils import random as random_bytes

from agentrig.host import HostError, OwnerOnlyStore
from agentrig.sealing import (
    ArtifactKind,
    ArtifactKinds,
    CorruptError,
    GrantError,
    LockedError,
    SealerKeyError,
    SealingGrant,
    Storage,
    artifact_kinds,
    framing,
)
from agentrig_sodium._keys import PublicKeys, SecretKeys, load_public, load_secret

__all__ = ["SUITE", "SodiumAppender", "SodiumSealer"]

#: The algorithm suite named in every artifact's header.
SUITE = "sodium-x25519-xchacha20poly1305-ed25519/1"

# a sealed box adds an ephemeral X25519 public key (32) and a Poly1305 tag (16)
_WRAPPED_SIZE = 32 + 16 + Aead.KEY_SIZE
_SIGNATURE_SIZE = 64
_CACHE_SIZE = 1024


_GRANTED = (
    "the sealed artifact is intact, but this sealer was made from a grant and holds no "
    "secret key; only the owner's process opens what it seals"
)


def _public_bytes(public: PublicKeys) -> bytes:
    return bytes(public.box) + bytes(public.verify)


def _corrupt(why: str) -> CorruptError:
    return CorruptError(f"the sealed artifact does not open here: {why}")


class SodiumAppender:
    """Seals the records of one writer under one data key (see :class:`SodiumSealer`)."""

    __slots__ = ("_author_tag", "_data_key", "_kind", "_owner_id", "_sealer", "_wrapped")

    def __init__(self, sealer: SodiumSealer, kind: str, owner_id: str, *, author_tag: bool) -> None:
        self._sealer = sealer
        self._kind = kind
        self._owner_id = owner_id
        self._author_tag = author_tag
        self._data_key, self._wrapped = sealer._new_data_key()

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def owner_id(self) -> str:
        return self._owner_id

    def seal_record(self, plaintext: bytes) -> bytes:
        return self._sealer._seal_with(
            "append",
            self._kind,
            self._owner_id,
            plaintext,
            self._data_key,
            self._wrapped,
            author_tag=self._author_tag,
        )

    def __repr__(self) -> str:
        return f"SodiumAppender(kind={self._kind!r})"


class SodiumSealer:
    """The PyNaCl sealer over a key directory (see the module docstring).

    ``locked=True`` starts with the public key only: it seals but does not open, and makes
    no authorship tags, until :meth:`unlock`.  ``create`` generates the keys on first use
    when the directory holds none (a locked sealer never creates keys).
    """

    name = "sodium"

    def __init__(
        self,
        directory: str | OwnerOnlyStore,
        *,
        locked: bool = False,
        create: bool = True,
        kinds: ArtifactKinds | None = None,
    ) -> None:
        try:
            self._store: OwnerOnlyStore | None = (
                directory if isinstance(directory, OwnerOnlyStore) else OwnerOnlyStore(directory)
            )
        except (HostError, OSError) as exc:
            raise SealerKeyError(f"the sealer's key directory cannot be used: {exc}") from exc
        self._kinds = artifact_kinds if kinds is None else kinds
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []
        self._cache: OrderedDict[bytes, bytes] = OrderedDict()
        self._secret: SecretKeys | None = None
        if locked:
            public = load_public(self._store)
            if public is None:
                raise SealerKeyError(
                    "the sealer has no public key yet; start it unlocked once to generate its keys"
                )
        else:
            self._secret = load_secret(self._store, create=create)
            if self._secret is None:
                raise SealerKeyError(
                    "the sealer's key directory holds no secret key and create is off"
                )
            public = self._secret.public
        self._public: PublicKeys = public

    # -- grants --------------------------------------------------------------------------

    def grant(self) -> SealingGrant:
        """A grant another process seals with: the public keys, never a secret.

        The key it seals to is the one in this sealer's key directory, which outlives the
        process (it is a durable, create-only file), so what a grantee seals stays
        readable to the owner's process.
        """
        return SealingGrant(sealer=self.name, suite=SUITE, public=_public_bytes(self._public))

    @classmethod
    def from_grant(
        cls, grant: SealingGrant | str, *, kinds: ArtifactKinds | None = None
    ) -> SodiumSealer:
        """A seal-only sealer from another process's :meth:`grant` (no key directory).

        It seals and opens appenders like the owner's sealer, makes no authorship tags,
        and opens nothing: :class:`~agentrig.sealing.LockedError`, for good -- only the
        owner's process reads what it seals.
        """
        parsed = SealingGrant.decode(grant) if isinstance(grant, str) else grant
        if parsed.sealer != cls.name:
            raise GrantError(f"the grant is for the {parsed.sealer!r} sealer, not {cls.name!r}")
        if parsed.suite != SUITE:
            raise GrantError(
                f"the grant is for the suite {parsed.suite!r}; this build seals {SUITE}"
            )
        if len(parsed.public) != 64:
            raise GrantError("the grant's public key material has the wrong size")
        sealer = cls.__new__(cls)
        sealer._store = None
        sealer._kinds = artifact_kinds if kinds is None else kinds
        sealer._lock = threading.Lock()
        sealer._listeners = []
        sealer._cache = OrderedDict()
        sealer._secret = None
        sealer._public = PublicKeys(
            box=PublicKey(parsed.public[:32]), verify=VerifyKey(parsed.public[32:])
        )
        return sealer

    # -- state ---------------------------------------------------------------------------

    @property
    def kinds(self) -> ArtifactKinds:
        return self._kinds

    @property
    def unlocked(self) -> bool:
        return self._secret is not None

    def describe(self) -> str:
        if self._store is None:
            return f"sodium sealer ({SUITE}), seal-only (from a grant)"
        state = "unlocked" if self.unlocked else "locked (public key only)"
        return f"sodium sealer ({SUITE}), {state}"

    def on_unlock(self, callback: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            already = self._secret is not None
            if not already:
                self._listeners.append(callback)
        if already:
            callback()

        def remove() -> None:
            with self._lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return remove

    def unlock(self) -> None:
        """Load the secret keys; run the :meth:`on_unlock` callbacks.

        :class:`~agentrig.sealing.LockedError` when this process has no secret key (it stays
        locked); :class:`~agentrig.sealing.SealerKeyError` when the key files are unsafe,
        unreadable or do not match.
        """
        if self._secret is not None:
            return
        if self._store is None:
            raise LockedError(_GRANTED)
        secret = load_secret(self._store, create=False)
        if secret is None:
            raise LockedError("this process holds no secret key for the sealer; it stays locked")
        if not secret.public.same_as(self._public):
            raise SealerKeyError("the sealer's secret key does not match the public key in use")
        with self._lock:
            self._secret = secret
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def lock(self) -> None:
        """Forget the secret keys and every cached data key (until :meth:`unlock`)."""
        with self._lock:
            self._secret = None
            self._cache.clear()

    # -- sealing -------------------------------------------------------------------------

    def _new_data_key(self) -> tuple[bytes, bytes]:
        data_key = random_bytes(Aead.KEY_SIZE)
        return data_key, SealedBox(self._public.box).encrypt(data_key)

    def _secret_for_tag(self) -> SecretKeys:
        secret = self._secret
        if secret is None and self._store is None:
            raise LockedError(_GRANTED)
        if secret is None:
            raise LockedError("authorship tags need unlocked keys; the sealer is locked")
        return secret

    def _seal_with(
        self,
        storage: Storage,
        kind: str,
        owner_id: str,
        plaintext: bytes,
        data_key: bytes,
        wrapped: bytes,
        *,
        author_tag: bool,
    ) -> bytes:
        signer = self._secret_for_tag().sign if author_tag else None
        nonce = random_bytes(Aead.NONCE_SIZE)
        header = framing.encode_header(
            storage=storage,
            suite=SUITE,
            key_block=wrapped,
            nonce=nonce,
            tag_length=_SIGNATURE_SIZE if signer is not None else 0,
        )
        associated = framing.bound_data(header, kind, owner_id)
        ciphertext = Aead(data_key).encrypt(plaintext, associated, nonce).ciphertext
        tag = signer.sign(associated + ciphertext).signature if signer is not None else b""
        return framing.assemble(header, ciphertext, tag)

    def seal(
        self, kind: str, owner_id: str, plaintext: bytes, *, author_tag: bool = False
    ) -> bytes:
        self._kinds.require(kind, "whole")
        if author_tag:
            self._secret_for_tag()
        data_key, wrapped = self._new_data_key()
        return self._seal_with(
            "whole", kind, owner_id, plaintext, data_key, wrapped, author_tag=author_tag
        )

    def open_appender(
        self, kind: str, owner_id: str, *, author_tag: bool = False
    ) -> SodiumAppender:
        self._kinds.require(kind, "append")
        if author_tag:
            self._secret_for_tag()
        return SodiumAppender(self, kind, owner_id, author_tag=author_tag)

    # -- opening -------------------------------------------------------------------------

    def _frame(self, kind: ArtifactKind, sealed: bytes) -> framing.Frame:
        frame = framing.parse_frame(sealed)
        header = frame.header
        if header.suite != SUITE:
            raise _corrupt("it was sealed with another algorithm suite")
        if header.storage != kind.storage:
            raise _corrupt("it is bound to another kind")
        if (
            len(header.key_block) != _WRAPPED_SIZE
            or len(header.nonce) != Aead.NONCE_SIZE
            or header.tag_length not in (0, _SIGNATURE_SIZE)
            or len(frame.payload) < Aead.MACBYTES
        ):
            raise _corrupt("its header fields have the wrong sizes")
        return frame

    def _unwrap(self, secret: SecretKeys, wrapped: bytes) -> bytes:
        with self._lock:
            cached = self._cache.get(wrapped)
            if cached is not None:
                self._cache.move_to_end(wrapped)
                return cached
        try:
            data_key = SealedBox(secret.box).decrypt(wrapped)
        except CryptoError:
            raise _corrupt(
                "its data key does not unwrap with this key (damaged, or sealed to another key)"
            ) from None
        with self._lock:
            self._cache[wrapped] = data_key
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return data_key

    def _open(self, kind: str, owner_id: str, sealed: bytes) -> tuple[bytes, bool]:
        frame = self._frame(self._kinds.classify(kind), sealed)
        secret = self._secret
        if secret is None and self._store is None:
            raise LockedError(_GRANTED)
        if secret is None:
            raise LockedError(
                "the sealed artifact is intact but the sealer is locked (it holds only the "
                "public key); unlock it, or let the owner's process open it"
            )
        header = frame.header
        associated = framing.bound_data(header.raw, kind, owner_id)
        data_key = self._unwrap(secret, header.key_block)
        try:
            plaintext = Aead(data_key).decrypt(frame.payload, associated, header.nonce)
        except CryptoError:
            raise _corrupt(
                "authentication failed (damaged, or bound to another owner or kind)"
            ) from None
        if frame.author_tag:
            try:
                secret.sign.verify_key.verify(associated + frame.payload, frame.author_tag)
            except BadSignatureError:
                raise _corrupt("its authorship tag is not valid for these keys") from None
        return plaintext, bool(frame.author_tag)

    def open(self, kind: str, owner_id: str, sealed: bytes) -> bytes:
        return self._open(kind, owner_id, sealed)[0]

    def verify_author(self, kind: str, owner_id: str, sealed: bytes) -> bool:
        self._secret_for_tag()
        return self._open(kind, owner_id, sealed)[1]

    def __repr__(self) -> str:
        if self._store is None:
            return "SodiumSealer(granted)"
        return f"SodiumSealer({'unlocked' if self.unlocked else 'locked'})"
