"""Fixtures for the agent-loop contract tests.

Nothing from agentrig is imported at module level: this conftest may load before typeguard
installs its import hook, and an early import would leave agentrig uninstrumented.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agentloop_support import EnvFactory

    from agentrig.kernel import MemorySource
    from agentrig.testing import Overrides, RuntimeFactory


@pytest.fixture
def env(
    agentrig_runtime: RuntimeFactory,
    agentrig_entries: MemorySource,
    agentrig_overrides: Overrides,
) -> EnvFactory:
    """``async with env(replies, tools=[...], **agent_settings) as e`` -- see EnvFactory."""
    from agentloop_support import EnvFactory

    return EnvFactory(agentrig_runtime, agentrig_entries, agentrig_overrides)


@pytest.fixture(autouse=True)
def _each_session_storage(session_storage: str) -> None:
    """Every test here runs on the compact and on the reference session storage (conftest.py
    at the root says which run on both)."""
