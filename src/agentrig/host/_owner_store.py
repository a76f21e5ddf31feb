"""The owner-only store: directories and files only their owner can read or change.

Why not ``os.makedirs(mode=...)`` and ``open(..., "w")``: an existing directory keeps
whatever mode it had, a file keeps the mode it was first created with, and tightening
after creation leaves a window where the content is readable.  This module therefore:

* creates with the final mode from the start -- ``mkdir(0o700)``, ``open(O_CREAT | O_EXCL |
  O_NOFOLLOW, 0o600)`` -- and never widens anything to others afterwards;
* verifies the mode on the opened descriptor (``fstat``) after *every* create, whatever the
  umask: a mode wider than 0600 / 0700 means the filesystem ignored it
  (:class:`ModeNotEnforcedError`, and a created file is removed); a narrower one (a umask
  that took the owner's own bits) is set to exactly 0600 / 0700 and verified again;
* refuses a store root that is itself a symlink (:class:`UnsafeExistingError`): whoever can
  replace the link would choose where the records go.  The root's *ancestors* are resolved
  once, when the store is made (``/tmp`` may be a link on macOS); from then on every path
  is walked from the resolved root without following any link;
* reports, never adopts, anything already there that is a symlink, not owned by this user,
  or open to group/other (:class:`UnsafeExistingError`);
* walks every path from the root through directory descriptors opened with ``O_NOFOLLOW``,
  so a symlink planted anywhere under the root is refused, not followed;
* replaces by writing a temp file beside the target and renaming it; ``durable=True`` adds
  ``fsync`` of the file before and of the directory after the rename, so a crash leaves the
  old content or the new one;
* replaces several files as one step (:meth:`OwnerOnlyStore.write_many`): each is staged
  and flushed beside its target before any is renamed, so no rename publishes content that
  is not on disk yet;
* commits create-only writes by ``link``-ing a flushed temp file into place, which fails
  when anything is already there, so two creators cannot both succeed;
* raises :class:`InPlaceUnconfirmed` when something fails *after* the new content became
  visible -- never "not written", because the old content is gone.

POSIX only for now: Windows has no ``dir_fd`` or owner-only mode bits; :func:`guarantee`
says which guarantee is in force and the store refuses to run where it cannot keep it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Literal

from agentrig.host._errors import (
    AlreadyExistsError,
    InPlaceUnconfirmed,
    ModeNotEnforcedError,
    OwnerStoreError,
    PartialReplaceError,
    UnsafeExistingError,
)
from agentrig.host._paths import StrPath, canonical_path, require_within

__all__ = ["OwnerOnlyStore", "guarantee"]

_DIR_MODE = 0o700
_FILE_MODE = 0o600
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC


def guarantee() -> Literal["posix-mode", "windows-acl"]:
    """Which owner-only guarantee this platform can give.

    ``posix-mode``: mode bits 0700/0600, set at creation and verified.  ``windows-acl``:
    only what the inherited ACL of the parent directory grants; this store does not run
    there (it raises), so callers can choose another store rather than assume POSIX.
    """
    return "posix-mode" if os.name == "posix" else "windows-acl"


def _describe(mode: int) -> str:
    return f"{stat.S_IMODE(mode):04o}"


def _check_existing(info: os.stat_result, path: str, *, want_dir: bool) -> None:
    kind = "directory" if want_dir else "regular file"
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeExistingError(
            f"{path} is a symlink; refusing to follow it", path=path, mode=None, uid=info.st_uid
        )
    if (stat.S_ISDIR(info.st_mode) if want_dir else stat.S_ISREG(info.st_mode)) is False:
        raise UnsafeExistingError(
            f"{path} exists but is not a {kind}", path=path, mode=info.st_mode, uid=info.st_uid
        )
    if info.st_uid != os.geteuid():
        raise UnsafeExistingError(
            f"{path} is owned by uid {info.st_uid}, not by this user ({os.geteuid()})",
            path=path,
            mode=info.st_mode,
            uid=info.st_uid,
        )
    if info.st_mode & 0o077:
        raise UnsafeExistingError(
            f"{path} has mode {_describe(info.st_mode)}; an owner-only {kind} must grant "
            "nothing to group or others (it is reported, not repaired: its content may "
            "already have been read or replaced) -- check it, then "
            f"`chmod {'700' if want_dir else '600'} {path}`, or use another location",
            path=path,
            mode=info.st_mode,
            uid=info.st_uid,
        )


def _check_created(fd: int, path: str, want: int) -> None:
    """Verify what this store just created: exactly ``want``, owned by this user.

    Wider than ``want`` means the filesystem ignored the mode: :class:`ModeNotEnforcedError`.
    Narrower means the umask took some of the owner's own bits (``umask 0277``): the mode is
    set to ``want`` on the descriptor -- granting nothing to anyone else, so no window opens
    -- and verified again.
    """
    info = os.fstat(fd)
    bits = stat.S_IMODE(info.st_mode) & 0o777
    if bits & ~want or info.st_uid != os.geteuid():
        raise ModeNotEnforcedError(
            f"{path} was created with mode {want:04o} but reports mode {_describe(info.st_mode)} "
            f"owned by uid {info.st_uid}: this filesystem does not enforce owner-only modes",
            path=path,
            mode=info.st_mode,
        )
    if bits != want:
        os.fchmod(fd, want)
        info = os.fstat(fd)
        if stat.S_IMODE(info.st_mode) & 0o777 != want:
            raise ModeNotEnforcedError(
                f"{path} stays at mode {_describe(info.st_mode)} after setting {want:04o}: "
                "this filesystem does not keep the modes it is given",
                path=path,
                mode=info.st_mode,
            )


def _open_created_dir(name: str, parent_fd: int | None) -> int:
    """Open a directory this store just created, even if the umask left it unreadable."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        # umask 0700 and up leave a new directory 0000; only its creator's own bits are
        # restored (it is ours and empty), then it is opened and verified like any other
        os.chmod(name, _DIR_MODE, dir_fd=parent_fd)
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)


def _lstat_at(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _discard(staged: list[tuple[int, str, str]]) -> None:
    """Remove staged temp files that were never renamed into place."""
    for dir_fd, temp, _name in staged:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class OwnerOnlyStore:
    """Owner-only files and directories under one root.

    Every ``rel`` path is a plain relative path of names (no ``..``, no absolute path); it
    is checked with :func:`~agentrig.host.require_within` and then walked without following
    any symlink.  The root itself is created owner-only if missing and verified if present.
    """

    def __init__(self, root: StrPath) -> None:
        if guarantee() != "posix-mode":  # pragma: no cover - Windows only
            raise OwnerStoreError(
                "the owner-only store needs POSIX modes and dir_fd support", path=str(root)
            )
        given = os.path.abspath(os.fspath(root))
        if os.path.islink(given):
            target = os.readlink(given)
            raise UnsafeExistingError(
                f"the store root {given} is a symlink (to {target}); refusing it: whoever can "
                "replace the link chooses where the records go -- configure the real "
                "directory instead",
                path=given,
                mode=None,
                uid=os.lstat(given).st_uid,
            )
        self._root = canonical_path(given)
        self._ensure_root()

    @property
    def root(self) -> Path:
        """The canonical (symlink-resolved) root directory."""
        return self._root

    def guarantee(self) -> Literal["posix-mode", "windows-acl"]:
        """The owner-only guarantee in force for this store (see :func:`guarantee`)."""
        return guarantee()

    # -- directories -------------------------------------------------------------------

    def _ensure_root(self) -> None:
        missing: list[Path] = []
        current = self._root
        while not os.path.lexists(current):
            missing.append(current)
            current = current.parent
        for directory in reversed(missing):
            try:
                os.mkdir(directory, _DIR_MODE)
            except FileExistsError:
                continue  # made meanwhile by someone else: checked like any existing one
            fd = _open_created_dir(str(directory), None)
            try:
                _check_created(fd, str(directory), _DIR_MODE)
            finally:
                os.close(fd)
        fd = self._open_root()
        os.close(fd)

    def _open_root(self) -> int:
        path = str(self._root)
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                info = os.lstat(path)
                _check_existing(info, path, want_dir=True)
            raise OwnerStoreError(f"cannot open store root {path}: {exc}", path=path) from exc
        try:
            _check_existing(os.fstat(fd), path, want_dir=True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _split(self, rel: StrPath) -> tuple[str, ...]:
        text = os.fspath(rel)
        if not isinstance(text, str):
            raise TypeError("store paths are str")
        parts = tuple(p for p in text.split("/") if p not in ("", "."))
        if os.path.isabs(text) or not parts or ".." in parts:
            raise OwnerStoreError(
                f"{text!r} is not a plain relative path inside the store", path=text
            )
        require_within(os.path.join(self._root, *parts), self._root)
        return parts

    def _open_dir_at(self, parent_fd: int, name: str, path: str, *, create: bool) -> int:
        created = False
        if create:
            try:
                os.mkdir(name, _DIR_MODE, dir_fd=parent_fd)
                created = True
            except FileExistsError:
                pass
        try:
            fd = (
                _open_created_dir(name, parent_fd)
                if created
                else os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            )
        except OSError as exc:
            info = _lstat_at(name, parent_fd)
            if info is not None:
                _check_existing(info, path, want_dir=True)
            if isinstance(exc, FileNotFoundError):
                raise
            raise OwnerStoreError(f"cannot open directory {path}: {exc}", path=path) from exc
        try:
            if created:
                _check_created(fd, path, _DIR_MODE)
            else:
                _check_existing(os.fstat(fd), path, want_dir=True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def _directory(self, parts: tuple[str, ...], *, create: bool) -> Iterator[int]:
        fd = self._open_root()
        path = str(self._root)
        try:
            for name in parts:
                path = os.path.join(path, name)
                next_fd = self._open_dir_at(fd, name, path, create=create)
                os.close(fd)
                fd = next_fd
            yield fd
        finally:
            os.close(fd)

    def ensure_dir(self, rel: StrPath) -> Path:
        """Create (owner-only) or verify the directory ``rel`` and its parents."""
        parts = self._split(rel)
        with self._directory(parts, create=True):
            pass
        return self._root.joinpath(*parts)

    def make_dir(self, rel: StrPath) -> Path:
        """Create the directory ``rel`` owner-only; :class:`AlreadyExistsError` if taken."""
        parts = self._split(rel)
        target = str(self._root.joinpath(*parts))
        with self._directory(parts[:-1], create=True) as dir_fd:
            try:
                os.mkdir(parts[-1], _DIR_MODE, dir_fd=dir_fd)
            except FileExistsError as exc:
                raise AlreadyExistsError(f"{target} already exists", path=target) from exc
            fd = _open_created_dir(parts[-1], dir_fd)
            try:
                _check_created(fd, target, _DIR_MODE)
            finally:
                os.close(fd)
        return Path(target)

    def path(self, rel: StrPath) -> Path:
        """The absolute path of ``rel`` (validated, not created)."""
        return self._root.joinpath(*self._split(rel))

    # -- files ---------------------------------------------------------------------------

    def _new_file(self, dir_fd: int, name: str, path: str) -> int:
        fd = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
            _FILE_MODE,
            dir_fd=dir_fd,
        )
        try:
            _check_created(fd, path, _FILE_MODE)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            raise
        return fd

    def _stage(self, dir_fd: int, name: str, data: bytes, *, fsync: bool) -> str:
        """Write ``data`` to a fresh owner-only temp file beside ``name``; return its name."""
        temp = f".{name}.{secrets.token_hex(8)}.tmp"
        fd = self._new_file(dir_fd, temp, temp)
        try:
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        os.close(fd)
        return temp

    def write_bytes(self, rel: StrPath, data: bytes, *, durable: bool = False) -> Path:
        """Replace ``rel`` atomically with ``data`` (owner-only); create it if missing.

        An existing file that is not owner-only (or is a symlink) is reported, not replaced.
        With ``durable=True`` the file is flushed before the rename and the directory after
        it; a failure of that last flush raises :class:`InPlaceUnconfirmed`.
        """
        parts = self._split(rel)
        target = str(self._root.joinpath(*parts))
        with self._directory(parts[:-1], create=True) as dir_fd:
            name = parts[-1]
            existing = _lstat_at(name, dir_fd)
            if existing is not None:
                _check_existing(existing, target, want_dir=False)
            temp = self._stage(dir_fd, name, data, fsync=durable)
            try:
                os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
            if durable:
                try:
                    os.fsync(dir_fd)
                except OSError as exc:
                    raise InPlaceUnconfirmed(
                        f"{target} holds the new content but the directory flush failed: {exc}",
                        path=target,
                    ) from exc
        return Path(target)

    def write_many(self, files: Mapping[str, bytes], *, durable: bool = True) -> tuple[Path, ...]:
        """Replace several files as one step: stage every one, then rename them all.

        Each file is written to a temp file beside its target (flushed when ``durable``)
        before *any* rename, so no rename publishes content that is not yet on disk -- on
        macOS, where the flush stops at the drive's cache, that order is most of the
        protection.  A failure while staging leaves every old file untouched (the temp
        files are removed).  A failure between renames raises
        :class:`PartialReplaceError` naming what is replaced and what is not; a failed
        directory flush after all renames raises :class:`InPlaceUnconfirmed`.
        """
        plan = [(self._split(rel), data) for rel, data in files.items()]
        targets = [str(self._root.joinpath(*parts)) for parts, _data in plan]
        if len(set(targets)) != len(targets):
            raise OwnerStoreError("write_many() got the same file twice", path=str(self._root))
        with contextlib.ExitStack() as stack:
            staged: list[tuple[int, str, str]] = []  # (directory fd, temp name, name)
            try:
                for (parts, data), target in zip(plan, targets, strict=True):
                    dir_fd = stack.enter_context(self._directory(parts[:-1], create=True))
                    existing = _lstat_at(parts[-1], dir_fd)
                    if existing is not None:
                        _check_existing(existing, target, want_dir=False)
                    temp = self._stage(dir_fd, parts[-1], data, fsync=durable)
                    staged.append((dir_fd, temp, parts[-1]))
            except BaseException:
                _discard(staged)
                raise
            for index, (dir_fd, temp, name) in enumerate(staged):
                try:
                    os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except BaseException as exc:
                    _discard(staged[index:])
                    if index == 0:
                        raise  # nothing was published: every old file is still there
                    raise PartialReplaceError(
                        f"replacing {len(staged)} files stopped after {index}: {exc}; "
                        f"{', '.join(targets[:index])} hold the new content, "
                        f"{', '.join(targets[index:])} the old",
                        replaced=tuple(targets[:index]),
                        not_replaced=tuple(targets[index:]),
                    ) from exc
            if durable:
                for dir_fd in dict.fromkeys(fd for fd, _temp, _name in staged):
                    try:
                        os.fsync(dir_fd)
                    except OSError as exc:
                        raise InPlaceUnconfirmed(
                            f"{len(targets)} files hold their new content but a directory "
                            f"flush failed: {exc}",
                            path=targets[0],
                        ) from exc
        return tuple(Path(t) for t in targets)

    def create_bytes(self, rel: StrPath, data: bytes) -> Path:
        """Create ``rel`` with ``data`` only if nothing is there; otherwise raise.

        The content is flushed to a temp file and linked into place, so the file appears
        complete or not at all, and of two concurrent creators exactly one succeeds
        (:class:`AlreadyExistsError` for the other).
        """
        parts = self._split(rel)
        target = str(self._root.joinpath(*parts))
        with self._directory(parts[:-1], create=True) as dir_fd:
            name = parts[-1]
            temp = self._stage(dir_fd, name, data, fsync=True)
            try:
                os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise AlreadyExistsError(f"{target} already exists", path=target) from exc
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
            try:
                os.unlink(temp, dir_fd=dir_fd)
                os.fsync(dir_fd)
            except OSError as exc:
                raise InPlaceUnconfirmed(
                    f"{target} was created but could not be confirmed: {exc}", path=target
                ) from exc
        return Path(target)

    def _open_existing(self, dir_fd: int, name: str, path: str, flags: int) -> int:
        try:
            fd = os.open(name, flags | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                info = _lstat_at(name, dir_fd)
                if info is not None:
                    _check_existing(info, path, want_dir=False)
            raise
        try:
            _check_existing(os.fstat(fd), path, want_dir=False)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read_bytes(self, rel: StrPath) -> bytes:
        """Read ``rel``; a file that is not owner-only (or a symlink) is reported."""
        parts = self._split(rel)
        target = str(self._root.joinpath(*parts))
        with self._directory(parts[:-1], create=False) as dir_fd:
            fd = self._open_existing(dir_fd, parts[-1], target, os.O_RDONLY)
            with open(fd, "rb", closefd=True) as handle:
                return handle.read()

    def open_append(self, rel: StrPath) -> io.BufferedWriter:
        """Open ``rel`` for appending (created owner-only if missing, verified otherwise)."""
        parts = self._split(rel)
        target = str(self._root.joinpath(*parts))
        with self._directory(parts[:-1], create=True) as dir_fd:
            name = parts[-1]
            try:
                fd = os.open(
                    name,
                    os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                    _FILE_MODE,
                    dir_fd=dir_fd,
                )
            except FileExistsError:
                fd = self._open_existing(dir_fd, name, target, os.O_WRONLY | os.O_APPEND)
            else:
                try:
                    _check_created(fd, target, _FILE_MODE)
                except BaseException:
                    os.close(fd)
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=dir_fd)
                    raise
            return open(fd, "ab", closefd=True)

    def remove(self, rel: StrPath) -> bool:
        """Remove the file ``rel`` (not following links); ``False`` if it was not there."""
        parts = self._split(rel)
        try:
            with self._directory(parts[:-1], create=False) as dir_fd:
                os.unlink(parts[-1], dir_fd=dir_fd)
        except FileNotFoundError:
            return False
        return True

    def exists(self, rel: StrPath) -> bool:
        """Whether something (a link included) is at ``rel``."""
        parts = self._split(rel)
        try:
            with self._directory(parts[:-1], create=False) as dir_fd:
                return _lstat_at(parts[-1], dir_fd) is not None
        except FileNotFoundError:
            return False
