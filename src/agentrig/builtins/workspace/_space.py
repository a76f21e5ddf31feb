"""One workspace: its root, its bounds, and the checks every file tool goes through.

Every path a tool touches is judged by the host's one containment check
(:func:`agentrig.host.require_within`, symlinks resolved), so the file tools, the permission
evaluator and the sandbox can never disagree about what "inside" means.  Writes also refuse
Git's own files (``.git/``, ``.gitattributes``, ``.gitmodules`` at any depth, as written and
as resolved): a model that can write there can make the next ``git`` command run a program.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from agentrig.builtins.workspace._config import WorkspaceConfig
from agentrig.builtins.workspace._errors import GitProtectedError, WorkspacePathError
from agentrig.builtins.workspace._sandbox import Backend
from agentrig.host import PathContainmentError, require_within
from agentrig.kernel import ServiceKey

if TYPE_CHECKING:
    import httpx

__all__ = ["WORKSPACE", "FetchClient", "Workspace", "git_protected_part", "staged_write"]

#: the names no workspace tool writes to: Git's repository and the files that make Git run
#: programs (filter, diff and merge drivers) or fetch other repositories
GIT_PROTECTED: Final = frozenset({".git", ".gitattributes", ".gitmodules"})


def git_protected_part(path: str | os.PathLike[str]) -> str | None:
    """The component of ``path`` that makes a write to it a write into Git, or ``None``."""
    for part in Path(path).parts:
        if part.lower() in GIT_PROTECTED:  # case-insensitive filesystems see ".GIT" as ".git"
            return part
    return None


class FetchClient:
    """WebFetch's one HTTP client per runtime, built on first use by the runtime's factory
    (which owns and closes it), with the private destinations the config consented to."""

    __slots__ = ("_allow_private", "_built", "_factory")

    def __init__(self, factory: Callable[..., Any], allow_private: tuple[str, ...]) -> None:
        self._factory = factory
        self._allow_private = allow_private
        self._built: Any = None

    def client(self) -> httpx.AsyncClient:
        if self._built is None:
            self._built = self._factory(
                allow_private=self._allow_private, follow_redirects=True, timeout=None
            )
        client: httpx.AsyncClient = self._built
        return client


@attrs.frozen(slots=True)
class Workspace:
    """The root the tools work in (``[permissions] workspace``) and their ``[workspace]``."""

    root: Path
    config: WorkspaceConfig = attrs.field(factory=WorkspaceConfig)
    #: the Bash sandbox, built when the runtime opened (None: not configured or not here)
    backend: Backend | None = None
    #: why ``backend`` is None although a sandbox is configured
    backend_problem: str | None = None
    #: WebFetch's client (None: the runtime has no HTTP factory)
    http: FetchClient | None = None

    def resolve(self, path: str, *, what: str = "file_path") -> Path:
        """The canonical ``path`` (relative: to the root) if it lies inside the root."""
        if not path:
            raise WorkspacePathError(f"{what} is empty")
        try:
            return require_within(path, self.root)
        except PathContainmentError as exc:  # PathEscapeError included
            raise WorkspacePathError(f"{what}: {exc.message}") from None

    def resolve_for_write(self, path: str) -> Path:
        """:meth:`resolve`, refusing Git's files as written and as resolved."""
        written = git_protected_part(path)
        target = self.resolve(path)
        relative = target.relative_to(self.root)
        hit = written or git_protected_part(relative)
        if hit is not None:
            raise GitProtectedError(
                f"refused to write {path!r}: {hit!r} is Git's own (Git stays inspection-only: "
                "the workspace tools never write into .git/, .gitattributes or .gitmodules)"
            )
        return target

    def display(self, path: Path) -> str:
        """``path`` as the model should see it: absolute, as the tools accept it back."""
        return str(path)


WORKSPACE: ServiceKey[Workspace] = ServiceKey("agentrig.workspace")
"""The runtime's workspace (provided by the ``workspace`` compose step)."""


def staged_write(target: Path, data: bytes) -> bool:
    """Replace ``target`` with ``data`` through a temp file beside it; True when it is new.

    The temp file is created ``O_EXCL | O_NOFOLLOW`` in the parent opened without following
    a link, gets the old file's mode (a new one: ``0666`` less the umask), is flushed, then
    renamed over the target: a reader sees the old content or the new, never half of it.
    """
    parent, name = target.parent, target.name
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        dir_fd = os.open(parent, flags)
    except FileNotFoundError:
        os.makedirs(parent, exist_ok=True)
        dir_fd = os.open(parent, flags)
    except OSError as exc:
        raise WorkspacePathError(f"cannot open the directory {str(parent)!r}: {exc}") from None
    try:
        try:
            old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise WorkspacePathError(f"{str(target)!r} exists and is not a regular file")
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        # a new file: 0666 less the umask, as the kernel applies it; a replaced one keeps its mode
        initial = 0o600 if old is not None else 0o666
        fd = os.open(temp, create | getattr(os, "O_CLOEXEC", 0), initial, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb", closefd=True) as handle:
                handle.write(data)
                handle.flush()
                if old is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
                os.fsync(handle.fileno())
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        return old is None
    finally:
        os.close(dir_fd)
