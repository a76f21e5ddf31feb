"""``$ENV:NAME`` references to secrets, resolved only through the caller's resolver.

The library reads no environment variable on its own: a runtime holds the
:data:`~agentrig.kernel.SecretResolver` its caller passed (``agentrig.env_resolver()`` in
the CLI), and a composition step resolves a provider's or plugin's credentials through it.
``$STORE:`` references (a credential store) are :mod:`agentrig.credentials._reference`'s.
"""

from __future__ import annotations

from agentrig.errors import Issue
from agentrig.kernel import SecretResolver

__all__ = ["ENV_PREFIX", "resolve_secret"]

ENV_PREFIX = "$ENV:"


def resolve_secret(
    value: str, resolver: SecretResolver | None, *, path: tuple[str | int, ...]
) -> tuple[str | None, Issue | None]:
    """Resolve a ``$ENV:NAME`` reference; plain strings pass through unchanged."""
    if not value.startswith(ENV_PREFIX):
        return value, None
    name = value[len(ENV_PREFIX) :]
    if not name:
        return None, Issue("config.secret", "empty $ENV: reference", path)
    if resolver is None:
        return None, Issue(
            "config.secret_unresolved",
            f"secret reference {value!r} needs a resolver; pass resolver=agentrig.env_resolver() "
            "(the CLI does) -- agentrig never reads the environment on its own",
            path,
        )
    resolved = resolver(name)
    if resolved is None:
        return None, Issue("config.secret_missing", f"environment variable {name} is not set", path)
    return resolved, None
