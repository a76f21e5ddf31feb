"""agentrig.sealing: the artifact-sealer port, its kinds, errors and framing.

* :class:`Sealer` / :class:`Appender` -- the port: seal to the owner's public key, open with
  the secret key, bound to the artifact's kind and owner id.  The PyNaCl implementation is
  the ``agentrig-sodium`` plugin (entry point ``sodium`` in ``agentrig.sealers``).
* :class:`ArtifactKind` / :class:`ArtifactKinds` / :data:`artifact_kinds` -- every kind is
  classified ``whole`` (own data key each) or ``append`` (one data key per writer).
* :mod:`agentrig.sealing.framing` -- the versioned framing, readable without keys
  (:func:`~agentrig.sealing.framing.is_sealed`, :func:`~agentrig.sealing.framing.read_header`,
  :func:`~agentrig.sealing.framing.classify`).
* :class:`SealingGrant` / :class:`GrantingSealer` -- handing sealing to another process:
  public material only, offered only by a sealer whose key outlives the sealing process.
* Errors: :class:`LockedError` (intact, cannot open now) and :class:`CorruptError` (does not
  open here), neither carrying plaintext, a key or a path; plus :class:`UnclassifiedKindError`,
  :class:`KindClassError`, :class:`SealerKeyError`.

A conformance suite for third-party sealers is in :mod:`agentrig.testing.conformance_sealer`.
"""

from __future__ import annotations

from agentrig.sealing import framing
from agentrig.sealing._errors import (
    CorruptError,
    GrantError,
    KindClassError,
    LockedError,
    SealerError,
    SealerKeyError,
    UnclassifiedKindError,
    UnsupportedFramingError,
)
from agentrig.sealing._grant import GRANT_FORMAT, GrantingSealer, SealingGrant
from agentrig.sealing._kinds import (
    BUILTIN_KINDS,
    ArtifactKind,
    ArtifactKinds,
    Storage,
    artifact_kinds,
)
from agentrig.sealing._port import SEALERS, Appender, Sealer

__all__ = [
    "Appender",
    "ArtifactKind",
    "ArtifactKinds",
    "BUILTIN_KINDS",
    "CorruptError",
    "GRANT_FORMAT",
    "GrantError",
    "GrantingSealer",
    "KindClassError",
    "LockedError",
    "SEALERS",
    "Sealer",
    "SealerError",
    "SealerKeyError",
    "SealingGrant",
    "Storage",
    "UnclassifiedKindError",
    "UnsupportedFramingError",
    "artifact_kinds",
    "framing",
]
