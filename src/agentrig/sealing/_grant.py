"""Sealing grants: letting another process seal to a key without holding any secret.

A sealer may hand its sealing to another process -- a worker, a hook, a subprocess that
writes sealed logs -- as a :class:`SealingGrant`: the sealer's name, its algorithm suite and
its *public* key material, nothing else.  The receiving process builds a seal-only sealer
from it (for ``sodium``: ``options.grant``); that sealer seals artifacts the owner's
process opens, and opens nothing itself (:class:`~agentrig.sealing.LockedError`).

A sealer offers grants (:class:`GrantingSealer`) only when both hold:

* the grant carries no secret -- sealing needs only the public key;
* the key it seals to outlives the sealing process -- a key kept only in memory would die
  with its process, and everything sealed to it through a grant would be unreadable.

Any other sealer offers none.  A grant proves nothing about who made it: whoever passes
one to a process chooses whom that process seals to, so pass it over a channel you trust
(a pipe from the parent, a file only the owner can write).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Protocol, runtime_checkable

import attrs

from agentrig.sealing._errors import GrantError
from agentrig.sealing._port import Sealer

__all__ = ["GRANT_FORMAT", "GrantingSealer", "SealingGrant"]

#: The ``format`` of an encoded grant.
GRANT_FORMAT = "agentrig-seal-grant/1"


@attrs.frozen(slots=True)
class SealingGrant:
    """What another process needs to seal to a key: public material only."""

    #: the sealer's kind (its entry-point name), e.g. ``"sodium"``
    sealer: str
    #: the algorithm suite named in every artifact's header
    suite: str
    #: the public key material, in the sealer's own encoding
    public: bytes = attrs.field(repr=False)

    def encode(self) -> str:
        """One line of JSON, for a pipe, an environment variable or a config option."""
        return json.dumps(
            {
                "format": GRANT_FORMAT,
                "sealer": self.sealer,
                "suite": self.suite,
                "public": base64.b64encode(self.public).decode("ascii"),
            },
            separators=(",", ":"),
        )

    @classmethod
    def decode(cls, text: str) -> SealingGrant:
        """Parse :meth:`encode`'s output; :class:`GrantError` names what is wrong."""
        try:
            document: Any = json.loads(text)
        except ValueError:
            raise GrantError("the sealing grant is not JSON") from None
        if not isinstance(document, dict) or document.get("format") != GRANT_FORMAT:
            raise GrantError(f"the sealing grant is not a {GRANT_FORMAT} document")
        fields: dict[str, str] = {}
        for key in ("sealer", "suite", "public"):
            value = document.get(key)
            if not isinstance(value, str) or not value:
                raise GrantError(f"the sealing grant has no {key}")
            fields[key] = value
        try:
            public = base64.b64decode(fields["public"], validate=True)
        except (binascii.Error, ValueError):
            raise GrantError("the sealing grant's public key is not base64") from None
        return cls(sealer=fields["sealer"], suite=fields["suite"], public=public)


@runtime_checkable
class GrantingSealer(Sealer, Protocol):
    """A sealer that can hand its sealing to another process (see the module docstring)."""

    def grant(self) -> SealingGrant:
        """The grant another process seals with: no secret, a key that outlives us."""
        ...
