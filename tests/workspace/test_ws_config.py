"""``[workspace.sandbox]`` is fail-closed: no "off", no silent weakening, no limit of 0."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agentrig.builtins.workspace import SandboxConfig, SandboxUnavailableError, backend_for


@pytest.mark.parametrize(
    "value", ["none", "off", "", "  ", "false", "0", "null", "OFF", False, None, 0]
)
def test_disabling_spellings_are_invalid(value: Any) -> None:
    with pytest.raises(ValidationError, match="without a sandbox, and that is not an option"):
        SandboxConfig.model_validate({"backend": value})


def test_an_unknown_backend_is_named() -> None:
    with pytest.raises(ValidationError, match="unknown sandbox backend 'docker'"):
        SandboxConfig.model_validate({"backend": "docker"})


def test_native_refuses_a_policy_it_cannot_enforce() -> None:
    with pytest.raises(ValidationError, match="cannot take the network away"):
        SandboxConfig.model_validate({"backend": "native", "user": "nobody"})
    with pytest.raises(ValidationError, match="needs a restricted user"):
        SandboxConfig.model_validate({"backend": "native", "network": True})
    with pytest.raises(ValidationError, match="cannot take the network away"):
        SandboxConfig.model_validate({})  # an unset backend is native, held to the same rules


@pytest.mark.parametrize(
    "field", ["cpu_seconds", "memory_bytes", "processes", "file_size_bytes", "open_files"]
)
def test_a_resource_limit_of_zero_is_refused(field: str) -> None:
    with pytest.raises(ValidationError, match="0 means 'nothing may run'"):
        SandboxConfig.model_validate({"backend": "bubblewrap", "limits": {field: 0}})


def test_native_refuses_root_and_the_callers_own_identity() -> None:
    me = os.geteuid()
    config = SandboxConfig(backend="native", user=me, group=12345, network=True)
    with pytest.raises(SandboxUnavailableError, match=r"root's|own user"):
        backend_for(config, Path("/"))
    with pytest.raises(SandboxUnavailableError, match="no user named"):
        backend_for(SandboxConfig(backend="native", user="no-such-user-x", network=True), Path("/"))


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
def test_bubblewrap_refuses_what_it_cannot_enforce() -> None:
    with pytest.raises(SandboxUnavailableError, match="native backend's"):
        backend_for(SandboxConfig(backend="bubblewrap", user="nobody"), Path("/"))
    if os.geteuid() == 0:
        with pytest.raises(SandboxUnavailableError, match="RLIMIT_NPROC"):
            backend_for(
                SandboxConfig(backend="bubblewrap", limits={"processes": 10}),  # type: ignore[arg-type]
                Path("/"),
            )
