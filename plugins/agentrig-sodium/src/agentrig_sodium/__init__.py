"""agentrig-sodium: the ``sodium`` artifact sealer, over PyNaCl (libsodium).

Entry point ``sodium`` in ``agentrig.sealers``::

    [sealers.main]
    kind = "sodium"
    options = { directory = ".agentrig/keys", locked = false }

See the distribution's README for the format, the key files and what is not covered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.kernel import with_options
from agentrig.sealing import ArtifactKinds
from agentrig_sodium._sealer import SUITE, SodiumAppender, SodiumSealer

__all__ = ["SUITE", "SodiumAppender", "SodiumOptions", "SodiumSealer", "factory"]


class SodiumOptions(BaseModel):
    """``[sealers.<id>] kind = "sodium"`` options."""

    model_config = ConfigDict(extra="forbid")

    #: Where ``sealer.key`` and ``sealer.pub`` live; relative to the composition's base dir.
    directory: str = ".agentrig/keys"
    #: Start with the public key only: seal, but neither open nor tag, until ``unlock()``.
    locked: bool = False
    #: Generate the keys on first use when the directory holds none.
    create: bool = True


@with_options(SodiumOptions)
def factory(spec: dict[str, Any]) -> SodiumSealer:
    """Entry point ``sodium`` of ``agentrig.sealers``.

    ``spec`` holds ``options`` (:class:`SodiumOptions`), optionally ``base_dir`` and
    ``kinds`` (an :class:`~agentrig.sealing.ArtifactKinds`; default: the process-wide
    :data:`agentrig.sealing.artifact_kinds`).
    """
    options = SodiumOptions.model_validate(spec.get("options", {}))
    directory = Path(options.directory).expanduser()
    if not directory.is_absolute():
        directory = Path(spec.get("base_dir", ".")) / directory
    kinds = spec.get("kinds")
    if kinds is not None and not isinstance(kinds, ArtifactKinds):
        raise TypeError(f"spec['kinds'] must be an ArtifactKinds registry, not {type(kinds)!r}")
    return SodiumSealer(str(directory), locked=options.locked, create=options.create, kinds=kinds)
