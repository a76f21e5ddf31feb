"""One redactor for every place data leaves the process: logs, observations, hook payloads,
traces, ``sessions export``.

Several redactors drift apart: one misses ``x-api-key``, another hides ``max_tokens``.  So
there is one rule, and plugins use it too (``from agentrig.redaction import redact``).

A key is secret when its *normalised* form ends in a secret suffix.  Normalising splits
``camelCase``, lower-cases, and turns ``-``, ``.`` and spaces into ``_`` (``X-Api-Key``,
``apiKey`` and ``api.key`` are all ``..._api_key``).  The suffixes name what a value
authenticates with: ``api_key``, ``apikey``, ``token`` (``access_token``,
``refresh_token``, ``id_token``), ``secret`` (``client_secret``), ``password``,
``passwd``, ``passphrase``, ``authorization``, ``cookie``, ``credential(s)``,
``private_key``, ``access_key``, ``secret_key``, ``signature``, ``session_key``, and the
whole keys ``auth`` and ``pwd``.  A key that merely contains such a word is not secret:
``max_tokens``, ``prompt_tokens``, ``token_count`` and ``tokenizer`` keep their values.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "SECRET_SUFFIXES", "is_secret_key", "redact"]

REDACTED = "[REDACTED]"
"""What a secret value is replaced with."""

SECRET_SUFFIXES: tuple[str, ...] = (
    "api_key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "authorization",
    "cookie",
    "credential",
    "credentials",
    "private_key",
    "access_key",
    "secret_key",
    "signature",
    "session_key",
)
"""Normalised key suffixes (at a ``_`` boundary) whose values are secret."""

_WHOLE = frozenset({"auth", "pwd"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[-.\s]+")


@functools.lru_cache(maxsize=4096)  # keys are few and repeat (field names, header names)
def is_secret_key(key: str) -> bool:
    """Whether the value under ``key`` is a secret (see the module docs for the rule)."""
    normal = _SEPARATORS.sub("_", _CAMEL.sub("_", key)).lower().strip("_")
    if normal in _WHOLE:
        return True
    return any(normal == s or normal.endswith("_" + s) for s in SECRET_SUFFIXES)


def redact(value: Any, *, depth: int = 64) -> Any:
    """``value`` with the value of every secret key replaced by :data:`REDACTED`, at any
    depth of mappings, lists and tuples (a copy; ``value`` is not changed).  Anything else is
    returned as it is; below ``depth`` levels a container is replaced whole."""
    if depth <= 0 and isinstance(value, Mapping | list | tuple):
        return REDACTED
    if isinstance(value, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and is_secret_key(k) else redact(v, depth=depth - 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, depth=depth - 1) for v in value]
    return value
