"""Diagnostics: agentrig logs through ``logging.getLogger("agentrig...")`` and is silent by default.

Importing agentrig prints nothing: the package logger carries a ``NullHandler``.  A host turns
diagnostics on deliberately, e.g. with :func:`enable_diagnostics` or its own logging config.
Every logger :func:`get_logger` hands out redacts the mappings it is given as arguments
(``log.warning("options: %s", options)``) with the shared redactor
(:mod:`agentrig.redaction`), whatever handler the host attaches.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from agentrig.redaction import redact

__all__ = ["enable_diagnostics", "get_logger"]

_ROOT = logging.getLogger("agentrig")
_ROOT.addHandler(logging.NullHandler())


def _redacted(arg: Any) -> Any:
    return redact(arg) if isinstance(arg, Mapping | list | tuple) else arg


class _Redacting(logging.Filter):
    """Replaces secret values in a record's mapping and list arguments before it is shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, Mapping):
            record.args = redact(args)
        elif isinstance(args, tuple) and any(isinstance(a, Mapping | list | tuple) for a in args):
            record.args = tuple(_redacted(a) for a in args)
        return True


_REDACTING = _Redacting()


def get_logger(name: str) -> logging.Logger:
    """The logger ``agentrig.<name>`` (silent until a host configures logging)."""
    logger = logging.getLogger(f"agentrig.{name}" if name else "agentrig")
    if _REDACTING not in logger.filters:
        logger.addFilter(_REDACTING)
    return logger


def enable_diagnostics(level: int = logging.INFO) -> logging.Handler:
    """Send agentrig's diagnostics to stderr at ``level``; returns the handler it installed."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _ROOT.addHandler(handler)
    _ROOT.setLevel(level)
    return handler
