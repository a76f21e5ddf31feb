"""agentrig-keyring: the ``keyring`` credential store (the OS keychain).

Entry point ``keyring`` in ``agentrig.credential_stores``::

    [credential_stores.keychain]
    kind = "keyring"
    options = { backend = "keyring.backends.SecretService.Keyring" }   # optional

Without ``backend`` the store uses the backend keyring itself selects (its configuration
file or ``PYTHON_KEYRING_BACKEND``).  keyring's null and fail backends are refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrig.kernel import with_options
from agentrig_keyring._store import KeyringCredentialStore, backend_name, load_backend

__all__ = ["KeyringCredentialStore", "KeyringOptions", "backend_name", "factory"]


class KeyringOptions(BaseModel):
    """``[credential_stores.<id>] kind = "keyring"`` options."""

    model_config = ConfigDict(extra="forbid")

    #: Dotted path of a keyring backend class; ``None`` = keyring's own selection.
    backend: str | None = None


@with_options(KeyringOptions)
def factory(spec: dict[str, Any]) -> KeyringCredentialStore:
    """Entry point ``keyring`` of ``agentrig.credential_stores``."""
    options = KeyringOptions.model_validate(spec.get("options", {}))
    return KeyringCredentialStore(load_backend(options.backend))
