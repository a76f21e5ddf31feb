"""The dry run of ``agentrig config check``: composing without reading a secret.

The built-in composition steps recognise the resolver below: they construct every factory
(so one that raises is found) but resolve every secret reference -- ``$ENV:`` and
``$STORE:`` alike -- to a placeholder, call no model and change nothing.
"""

from __future__ import annotations

import attrs

__all__ = ["PlaceholderResolver"]


@attrs.frozen(slots=True)
class PlaceholderResolver:
    """Resolves every secret reference to a placeholder and reads no secret at all."""

    value: str = "<placeholder: secrets are not read here>"

    def __call__(self, name: str) -> str:
        return self.value
