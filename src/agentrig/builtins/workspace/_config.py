"""The ``[workspace]`` table: bounds of the file tools, the Bash sandbox and WebFetch.

Fail-closed by construction: the sandbox ``backend`` names a concrete backend, and every
spelling that would mean "no sandbox" is refused with its reason instead of being read as a
choice.  A resource limit of 0 is refused too -- rlimits read it as "nothing may run" and
container runtimes as "unlimited", and neither is what anyone meant.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentrig.kernel import Duration

__all__ = ["FetchConfig", "FilesConfig", "Limits", "SandboxConfig", "WorkspaceConfig"]

#: spellings that would switch the sandbox off; each is an error, never a choice
DISABLING = frozenset({"", "none", "off", "false", "0", "no", "null", "disabled", "disable"})
BACKENDS = ("native", "bubblewrap")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Strict):
    """Resource limits applied to every command (rlimits); each must be positive."""

    #: CPU seconds (``RLIMIT_CPU``)
    cpu_seconds: int | None = Field(default=None, strict=True)
    #: bytes of address space (``RLIMIT_AS``)
    memory_bytes: int | None = Field(default=None, strict=True)
    #: processes of the sandbox user (``RLIMIT_NPROC``)
    processes: int | None = Field(default=None, strict=True)
    #: bytes one file may grow to (``RLIMIT_FSIZE``)
    file_size_bytes: int | None = Field(default=None, strict=True)
    #: open file descriptors (``RLIMIT_NOFILE``)
    open_files: int | None = Field(default=None, strict=True)

    @field_validator("*")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError(
                f"a resource limit must be positive, got {value}: 0 means 'nothing may run' to "
                "rlimits and 'unlimited' to container runtimes -- leave the key out for no limit"
            )
        return value


class SandboxConfig(_Strict):
    """``[workspace.sandbox]``: where and how ``Bash`` runs its commands."""

    backend: str = "native"
    #: the restricted user commands run as (a name or a uid); required by ``native``
    user: str | int | None = None
    #: its group (a name or a gid); default: the user's primary group from the user database
    group: str | int | None = None
    #: whether commands may use the network; ``native`` cannot take it away, so it must be
    #: ``true`` there (an explicit acceptance, never a silent weakening)
    network: bool = False
    #: more paths ``bubblewrap`` shows read-only (the system directories always are)
    read_only_paths: tuple[str, ...] = ()
    limits: Limits = Field(default_factory=Limits)
    #: bytes of output kept per command (the rest is counted and dropped while it is read)
    output_limit: int = Field(default=30_000, gt=0, strict=True)
    #: the timeout of a command that names none, and the most one may ask for
    default_timeout: Duration = 120.0
    max_timeout: Duration = 600.0

    @field_validator("backend", mode="before")
    @classmethod
    def _concrete(cls, value: Any) -> Any:
        text = value if isinstance(value, str) else str(value) if value is not None else ""
        if value is None or value is False or text.strip().lower() in DISABLING:
            raise ValueError(
                f"backend {value!r} would run commands without a sandbox, and that is not an "
                f"option: name one of {', '.join(BACKENDS)}"
            )
        if text not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {text!r}: name one of {', '.join(BACKENDS)}")
        return text

    @model_validator(mode="after")
    def _enforceable(self) -> SandboxConfig:
        if self.backend == "native" and not self.network:
            raise ValueError(
                "the native backend cannot take the network away from a command: set "
                "network = true to accept that, or use backend = 'bubblewrap'"
            )
        if self.backend == "native" and self.user is None:
            raise ValueError("the native backend needs a restricted user: set user = 'name'")
        if self.backend == "bubblewrap" and self.group is not None and self.user is None:
            raise ValueError("group needs user: bubblewrap maps both or neither")
        if self.default_timeout > self.max_timeout:
            raise ValueError("default_timeout is longer than max_timeout")
        return self


class FilesConfig(_Strict):
    """``[workspace.files]``: how much the file tools read and show."""

    #: bytes Read returns at most (one call); longer files are read in ranges
    max_read_bytes: int = Field(default=256_000, gt=0, strict=True)
    #: lines Read returns when the call names no ``limit``
    default_lines: int = Field(default=2000, gt=0, strict=True)
    #: characters kept of one line
    max_line_chars: int = Field(default=2000, gt=0, strict=True)
    #: matches / paths Glob and Grep list at most
    max_results: int = Field(default=1000, gt=0, strict=True)


class FetchConfig(_Strict):
    """``[workspace.fetch]``: WebFetch's bounds."""

    #: bytes of a response body read at most
    max_bytes: int = Field(default=2_000_000, gt=0, strict=True)
    #: seconds one fetch may take, connecting and reading included
    timeout: Duration = 30.0
    #: characters of extracted text returned at most
    max_chars: int = Field(default=100_000, gt=0, strict=True)
    #: private destinations (``host``, ``host:port``, an address or network) the user
    #: consented to; every other loopback, private or link-local address is refused
    allow_private: tuple[str, ...] = ()


class WorkspaceConfig(_Strict):
    """``[workspace]`` in ``agentrig.toml``; the root is ``[permissions] workspace``."""

    sandbox: SandboxConfig | None = None
    files: FilesConfig = Field(default_factory=FilesConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
