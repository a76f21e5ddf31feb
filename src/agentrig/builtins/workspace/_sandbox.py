"""Sandbox backends for ``Bash``: how one command is wrapped, and what each can enforce.

* ``native``: the command runs as a configured restricted user (real, effective and saved
  uid and gid changed, supplementary groups cleared, no new privileges, the capability
  bounding, inheritable and ambient sets emptied) under rlimits -- applied by its command
  server as it starts the command.  It cannot take the network away, so it needs
  ``network = true`` -- an explicit acceptance.
* ``bubblewrap``: Debian's ``bwrap`` -- new user, pid, ipc, uts, cgroup and (unless
  ``network = true``) network namespaces, every capability dropped, the system directories
  and the sandbox's own root read-only, ``/tmp`` empty, the workspace the one writable place
  (its ``.git``, ``.gitattributes`` and ``.gitmodules`` stay read-only).

Both keep a few command servers per workspace and run each command through one
(:mod:`._sandbox_session`): ``native``'s run as root under the host's reaper
(:func:`agentrig.host.open_reaped`) and are the reapers of their commands
(:mod:`._native_server`); ``bubblewrap``'s run in a sandbox each, whose pid namespace is
the reaper.  Without an interpreter for a server, ``native`` starts each command under a
reaper of its own (confined by it) and ``bubblewrap`` sets up a sandbox per command.
Either way a timeout or a cancellation ends the whole tree -- descendants that ignore
SIGTERM or left the process group included -- and a command gets a minimal environment: the
agent's own variables (API keys among them) never reach it.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import resource
import shutil
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Protocol

import attrs

from agentrig.builtins.workspace._config import Limits, SandboxConfig
from agentrig.builtins.workspace._errors import SandboxUnavailableError
from agentrig.builtins.workspace._sandbox_session import (
    BwrapProcess,
    ReapedProcess,
    SandboxPool,
    server_source,
    settings_json,
)
from agentrig.host import REAPING, Confinement

__all__ = ["Backend", "BubblewrapBackend", "NativeBackend", "backend_for"]

_PATH = "/usr/local/bin:/usr/bin:/bin"
#: rlimit options of prlimit(1), by ``Limits`` field (bubblewrap's per-command form)
_PRLIMIT = {
    "cpu_seconds": "--cpu",
    "memory_bytes": "--as",
    "processes": "--nproc",
    "file_size_bytes": "--fsize",
    "open_files": "--nofile",
}
#: the same rlimits by number, as both backends' command servers (and the reaper of a native
#: command without one) set them per command
_RLIMIT = {
    "cpu_seconds": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "processes": resource.RLIMIT_NPROC,
    "file_size_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
}
#: what a process in the sandbox must never write: Git's own files in the workspace
_GIT_FILES = (".git", ".gitattributes", ".gitmodules")
#: the native backend's command server (run by path: it is never imported)
NATIVE_SERVER = Path(__file__).with_name("_native_server.py")


class Backend(Protocol):
    """One way of running a command confined; built only when it can enforce its policy."""

    @property
    def name(self) -> str:
        """``native`` or ``bubblewrap``."""
        ...

    def argv(self, command: str, cwd: Path) -> list[str]:
        """The argv that runs ``command`` (a shell command line) confined, in ``cwd``."""
        ...

    def env(self) -> dict[str, str]:
        """The whole environment the command gets."""
        ...

    @property
    def pool(self) -> SandboxPool | None:
        """The persistent command servers (None: each command is started alone)."""
        ...


def _tool(name: str) -> str:
    found = shutil.which(name, path=_PATH + ":/usr/sbin:/sbin")
    if found is None:
        raise SandboxUnavailableError(f"the sandbox needs {name!r}, which is not installed")
    return found


def _prlimit(limits: Limits) -> list[str]:
    chosen = [
        f"{option}={value}"
        for field, option in _PRLIMIT.items()
        if (value := getattr(limits, field)) is not None
    ]
    return [_tool("prlimit"), *chosen, "--"] if chosen else []


def _base_env(home: str) -> dict[str, str]:
    return {"PATH": _PATH, "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb"}


def _uid_of(user: str | int) -> pwd.struct_passwd | int:
    try:
        return pwd.getpwuid(user) if isinstance(user, int) else pwd.getpwnam(user)
    except KeyError:
        if isinstance(user, int):
            return user  # a bare uid with no passwd entry is still an identity
        raise SandboxUnavailableError(f"no user named {user!r} on this machine") from None


def _gid_of(group: str | int) -> int:
    if isinstance(group, int):
        return group
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        raise SandboxUnavailableError(f"no group named {group!r} on this machine") from None


def _rlimits(limits: Limits) -> tuple[tuple[int, int], ...]:
    return tuple(
        (number, value)
        for field, number in _RLIMIT.items()
        if (value := getattr(limits, field)) is not None
    )


def _confinement(backend: NativeBackend) -> Confinement:
    return Confinement(backend.uid, backend.gid, _rlimits(backend.limits))


def _native_pool(backend: NativeBackend) -> SandboxPool | None:
    if backend.python is None:
        return None
    settings = {
        "cwd": str(backend.root),
        "env": backend.env(),
        "uid": backend.uid,
        "gid": backend.gid,
        "limits": [list(pair) for pair in _rlimits(backend.limits)],
    }
    argv = [backend.python, "-I", "-S", str(NATIVE_SERVER), json.dumps(settings)]
    start = ReapedProcess.starter(argv, "/", _base_env("/"))
    return SandboxPool(start, _same_layout)


def _same_layout() -> Hashable:
    """A native server mounts nothing: any one serves (it finds the root per command)."""
    return None


@attrs.frozen(slots=True)
class NativeBackend:
    """The command runs as the restricted ``uid``/``gid``, no supplementary groups."""

    uid: int
    gid: int
    home: str
    limits: Limits
    #: the workspace root, where each command starts
    root: Path
    name: str = "native"
    #: the interpreter of the command servers (None: a reaper of the host per command)
    python: str | None = attrs.field(default=sys.executable or None, repr=False)
    #: what the host's reaper applies to a command it starts (identity, privileges, rlimits)
    confinement: Confinement = attrs.field(
        init=False, default=attrs.Factory(_confinement, takes_self=True), eq=False, repr=False
    )
    #: the persistent command servers (None without an interpreter for them)
    pool: SandboxPool | None = attrs.field(
        init=False, default=attrs.Factory(_native_pool, takes_self=True), eq=False, repr=False
    )

    @classmethod
    def build(cls, config: SandboxConfig, root: Path) -> NativeBackend:
        assert config.user is not None  # the config refuses native without a user
        entry = _uid_of(config.user)
        uid = entry if isinstance(entry, int) else entry.pw_uid
        if config.group is not None:
            gid = _gid_of(config.group)
        elif isinstance(entry, int):
            raise SandboxUnavailableError(f"uid {uid} has no passwd entry: set group too")
        else:
            gid = entry.pw_gid
        if uid == 0 or gid == 0:
            raise SandboxUnavailableError("the restricted user and group must not be root's")
        if uid == os.geteuid():
            raise SandboxUnavailableError(
                f"uid {uid} is this process's own user: commands would not be restricted"
            )
        if gid == os.getgid():
            raise SandboxUnavailableError(
                f"gid {gid} is this process's primary group: a command must not keep it"
            )
        if os.geteuid() != 0:
            raise SandboxUnavailableError(
                f"the native backend changes to uid {uid}, which needs root; run agentrig as "
                "root or use backend = 'bubblewrap'"
            )
        if not REAPING:
            raise SandboxUnavailableError("the native backend needs Linux (its reaper)")
        home = "/" if isinstance(entry, int) else entry.pw_dir
        return cls(uid=uid, gid=gid, home=home, limits=config.limits, root=root)

    def argv(self, command: str, cwd: Path) -> list[str]:
        """The shell; the reaper confines it (:attr:`confinement`)."""
        return ["/bin/sh", "-c", command]

    def env(self) -> dict[str, str]:
        return _base_env(self.home)


def _system() -> tuple[str, ...]:
    """The read-only system directories, as found once (``/bin`` may be a link to usr)."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc", "/etc"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return tuple(args)


def _server_python(shown: tuple[str, ...]) -> str | None:
    """An interpreter the sandbox shows already (below ``/usr`` or a read-only path) to run
    the command server; None when there is none (each command then sets up its own)."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        real = os.path.realpath(candidate)
        if os.access(real, os.X_OK) and any(
            real.startswith(place.rstrip("/") + "/") for place in ("/usr", *shown)
        ):
            return real
    return None


def _bwrap_pool(backend: BubblewrapBackend) -> SandboxPool | None:
    if backend.python is None:
        return None
    limits = list(_rlimits(backend.limits))
    settings = settings_json(backend.root, backend.env(), limits, backend.read_only)
    start = BwrapProcess.starter(lambda: backend.server_argv(settings))
    return SandboxPool(start, backend.layout)


@attrs.frozen(slots=True)
class BubblewrapBackend:
    """The command runs in bwrap's namespaces: read-only system, writable workspace."""

    bwrap: str
    root: Path
    network: bool
    read_only: tuple[str, ...]
    limits: Limits
    name: str = "bubblewrap"
    system: tuple[str, ...] = attrs.field(factory=_system, repr=False)
    #: the interpreter of the command server (None: a sandbox per command)
    python: str | None = attrs.field(default=None, repr=False)
    #: the persistent sandboxes (None without an interpreter for their server)
    pool: SandboxPool | None = attrs.field(
        init=False, default=attrs.Factory(_bwrap_pool, takes_self=True), eq=False, repr=False
    )

    @classmethod
    def build(cls, config: SandboxConfig, root: Path) -> BubblewrapBackend:
        if config.user is not None or config.group is not None:
            raise SandboxUnavailableError(
                "user and group are the native backend's: bubblewrap runs the command as the "
                "calling user inside a user namespace, with every capability dropped"
            )
        if config.limits.processes is not None and os.geteuid() == 0:
            raise SandboxUnavailableError(
                "limits.processes cannot be enforced: the kernel does not apply RLIMIT_NPROC "
                "to root, and bubblewrap runs the command as the calling user (root here)"
            )
        bwrap = _tool("bwrap")
        _prlimit(config.limits)
        for path in config.read_only_paths:
            if not os.path.isabs(path):
                raise SandboxUnavailableError(f"read_only_paths: {path!r} is not absolute")
        read_only = tuple(config.read_only_paths)
        return cls(
            bwrap=bwrap,
            root=root,
            network=config.network,
            read_only=read_only,
            limits=config.limits,
            python=_server_python(read_only),
        )

    def _namespaces(self) -> list[str]:
        return [
            self.bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--cap-drop",
            "ALL",
            *(["--share-net"] if self.network else []),
            *self.system,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
        ]

    def _mounts(self) -> list[str]:
        """The mounts that depend on what exists now: extra read-only paths, the workspace."""
        args: list[str] = []
        for path in self.read_only:
            args += ["--ro-bind-try", path, path]
        root = str(self.root)
        args += ["--bind", root, root]
        for name in _GIT_FILES:
            # Git's own files stay read-only inside the workspace: a command cannot plant a
            # filter driver or a hook for the next git command (or for the person) to run
            path = os.path.join(root, name)
            if os.path.lexists(path) and not os.path.islink(path):
                args += ["--ro-bind", path, path]
        return [*args, "--remount-ro", "/"]

    def layout(self) -> Hashable:
        """What a sandbox set up now would mount, down to the inodes: a sandbox set up for
        another layout is not reused (a ``.git`` made since must be read-only too)."""
        found: list[tuple[str, int, int] | None] = []
        for path in (
            str(self.root),
            *(os.path.join(self.root, n) for n in _GIT_FILES),
            *self.read_only,
        ):
            try:
                info = os.lstat(path)
            except OSError:
                found.append(None)
                continue
            found.append((path, info.st_dev, info.st_ino))
        return (tuple(self._mounts()), tuple(found))

    def argv(self, command: str, cwd: Path) -> list[str]:
        """A sandbox of its own for ``command`` (the per-command form)."""
        return [
            *_prlimit(self.limits),
            *self._namespaces(),
            *self._mounts(),
            "--chdir",
            str(cwd),
            "--",
            "/bin/sh",
            "-c",
            command,
        ]

    def server_argv(self, settings: str) -> list[str]:
        """A persistent sandbox running the command server (rlimits: set per command)."""
        assert self.python is not None
        return [
            *self._namespaces(),
            *self._mounts(),
            "--chdir",
            str(self.root),
            "--",
            self.python,
            "-I",
            "-S",
            "-c",
            server_source(),
            settings,
        ]

    def env(self) -> dict[str, str]:
        return _base_env(str(self.root))


def backend_for(config: SandboxConfig, root: Path) -> Backend:
    """The configured backend, or :class:`SandboxUnavailableError` saying why not."""
    if config.backend == "native":
        return NativeBackend.build(config, root)
    if config.backend == "bubblewrap":
        return BubblewrapBackend.build(config, root)
    raise SandboxUnavailableError(f"unknown sandbox backend {config.backend!r}")  # pragma: no cover
