"""Diagnostics: agentrig logs through ``logging.getLogger("agentrig...")`` and is silent by default.

Importing agentrig prints nothing: the package logger carries a ``NullHandler``.  A host turns
diagnostics on deliberately, e.g. with :func:`enable_diagnostics` or its own logging config.
"""

from __future__ import annotations

import logging

__all__ = ["enable_diagnostics", "get_logger"]

_ROOT = logging.getLogger("agentrig")
_ROOT.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger ``agentrig.<name>`` (silent until a host configures logging)."""
    return logging.getLogger(f"agentrig.{name}" if name else "agentrig")


def enable_diagnostics(level: int = logging.INFO) -> logging.Handler:
    """Send agentrig's diagnostics to stderr at ``level``; returns the handler it installed."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _ROOT.addHandler(handler)
    _ROOT.setLevel(level)
    return handler
