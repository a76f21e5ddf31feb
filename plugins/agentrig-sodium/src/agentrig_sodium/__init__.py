"""agentrig-sodium: the ``sodium`` artifact sealer, over PyNaCl (libsodium).

Entry point ``sodium`` in ``agentrig.sealers``::

    [sealers.main]
    kind = "sodium"
    options = { directory = ".agentrig/keys", locked = false }

Another process seals without any secret through a grant
(``SodiumSealer.grant().encode()``, passed to it over a channel you trust)::

    [sealers.main]
    kind = "sodium"
    options = { grant = "<the grant's JSON>" }

See the distribution's README for the format, the key files and what is not covered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.errors import ConfigError, Issue
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
    #: Seal with another process's grant (``SodiumSealer.grant().encode()``) instead of a
    #: key directory: seal-only, opens nothing.  Not combined with the options above.
    grant: str | None = None


@with_options(SodiumOptions)
def factory(spec: dict[str, Any]) -> SodiumSealer:
    """Entry point ``sodium`` of ``agentrig.sealers``.

    ``spec`` holds ``options`` (:class:`SodiumOptions`), optionally ``base_dir`` and
    ``kinds`` (an :class:`~agentrig.sealing.ArtifactKinds`; default: the process-wide
    :data:`agentrig.sealing.artifact_kinds`).
    """
    options = SodiumOptions.model_validate(spec.get("options", {}))
    kinds = spec.get("kinds")
    if kinds is not None and not isinstance(kinds, ArtifactKinds):
        raise TypeError(f"spec['kinds'] must be an ArtifactKinds registry, not {type(kinds)!r}")
    if options.grant is not None:
        mixed = sorted(options.model_fields_set & {"directory", "locked", "create"})
        if mixed:
            raise ConfigError(
                [
                    Issue(
                        "config.invalid",
                        f"options.grant makes a seal-only sealer without keys; "
                        f"{', '.join(mixed)} cannot be combined with it",
                        ("sealers", str(spec.get("id", "?")), "options", mixed[0]),
                    )
                ]
            )
        return SodiumSealer.from_grant(options.grant, kinds=kinds)
    directory = Path(options.directory).expanduser()
    if not directory.is_absolute():
        directory = Path(spec.get("base_dir", ".")) / directory
    return SodiumSealer(str(directory), locked=options.locked, create=options.create, kinds=kinds)
