"""The hook markers, in a module that imports nothing but pluggy (cheap to import)."""

from __future__ import annotations

import pluggy

PROJECT = "agentrig"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
