"""Path containment: the one answer to "is this path inside that root?".

Why not ``os.path.normpath`` + ``startswith``: lexical normalisation never consults the
filesystem, so a symlink sitting inside the root but pointing outside passes the check while
the ``open`` that follows escapes.  And a string prefix says ``/srv/ab`` is inside
``/srv/a``.  Every security decision about containment in agentrig goes through
:func:`is_within` / :func:`require_within` so two checks can never disagree.

Canonicalisation (:func:`canonical_path`) walks the path one component at a time with
``lstat``: every component that exists and is a symlink is replaced by its target (at most
40 links, like the kernel, then it is a loop); a component that does not exist yet is kept
as written, and later ``..`` components are applied to the canonical prefix.  The result is
absolute and contains no symlink that existed at the time of the check.

Residuals, by design (see ``docs/security.md``):

* **Check-then-use (TOCTOU).**  The answer describes the filesystem at the moment of the
  check; a process that can write inside the root can swap a directory for a symlink
  afterwards.  Code that opens paths under an attacker-writable root must also open with
  ``O_NOFOLLOW`` / directory descriptors (the owner-only store does).
* **Hard links.**  A hard link inside the root to a file outside it *is* inside the root by
  every path-based measure; containment cannot see it.
* **Case-insensitive filesystems.**  Components are compared exactly, so a differently-cased
  spelling of an inside path may be judged outside (a refusal, never a false "inside").
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from agentrig.host._errors import PathContainmentError, PathEscapeError

__all__ = ["canonical_path", "is_within", "require_within", "resolve_path"]

_MAX_LINKS = 40

StrPath = str | os.PathLike[str]


def _text(value: StrPath, what: str, root: str | None = None) -> str:
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str path, not {type(text).__name__}")
    if "\x00" in text:
        raise PathContainmentError(f"{what} contains a NUL byte", path=repr(text), root=root)
    if not text:
        raise PathContainmentError(f"{what} is empty", path=text, root=root)
    return text


def canonical_path(path: StrPath, *, base: StrPath | None = None) -> Path:
    """Resolve every existing symlink in ``path``; a missing tail is kept as written.

    A relative ``path`` is taken relative to ``base``, which must then be given and be
    absolute -- the current directory is never used implicitly.  Raises
    :class:`PathContainmentError` for a NUL byte, a symlink loop (more than 40 links) or a
    component that cannot be examined (e.g. permission denied).
    """
    text = _text(path, "path")
    if not os.path.isabs(text):
        if base is None:
            raise PathContainmentError("a relative path needs an explicit absolute base", path=text)
        base_text = _text(base, "base")
        if not os.path.isabs(base_text):
            raise PathContainmentError("the base must be an absolute path", path=base_text)
        text = os.path.join(base_text, text)
    if os.name != "posix":  # pragma: no cover - exercised on Windows only
        try:
            return Path(os.path.realpath(text, strict=False))
        except OSError as exc:
            raise PathContainmentError(f"cannot resolve {text!r}: {exc}", path=text) from exc
    return Path(_walk(text))


def resolve_path(path: str) -> str | None:
    """The canonical form of ``path`` as text, or ``None`` when it cannot be told.

    The default answer of the permission evaluator's path port (``PathResolver``): the same
    walk as :func:`canonical_path`, a relative ``path`` read against the current directory,
    and a NUL byte, a symlink loop or an unreadable component answered with ``None`` (which
    the evaluator turns into "unevaluable", never into an allow).
    """
    try:
        return str(canonical_path(os.path.abspath(path)))
    except (PathContainmentError, OSError, ValueError):
        return None


def expand_glob(pattern: str, *, limit: int = 4096) -> list[str] | None:
    """The paths a shell would expand the absolute glob ``pattern`` to, as written (symlinks
    not resolved), or ``None`` when that cannot be told (not absolute, a NUL byte, more
    than ``limit`` matches, an unreadable directory).

    The default answer of the permission evaluator's glob port (``GlobExpander``): a
    read-only command's ``cat dir/*`` is judged by every path it can reach.  Read as bash
    reads a word without ``globstar`` or ``dotglob``: ``*`` and ``?`` do not match a leading
    ``.``; ``**`` is ``*``.  An empty list is an expansion that matched nothing (bash then
    passes the word on as written).
    """
    import glob

    if "\x00" in pattern or not os.path.isabs(pattern):
        return None
    found: list[str] = []
    try:
        for match in glob.iglob(pattern):
            found.append(match)
            if len(found) > limit:
                return None
    except (OSError, ValueError):
        return None
    return found


def _walk(text: str) -> str:
    pending = [part for part in text.split("/") if part]
    pending.reverse()  # a stack: the next component is pending[-1]
    resolved: list[str] = []
    links = 0
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            # ``resolved`` holds no symlink, so dropping its last component is its real parent.
            if resolved:
                resolved.pop()
            continue
        candidate = "/" + "/".join([*resolved, part])
        try:
            info = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            resolved.append(part)  # not there (yet): kept as written
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathContainmentError(f"symlink loop at {candidate!r}", path=text) from exc
            raise PathContainmentError(
                f"cannot examine {candidate!r}: {exc.strerror or exc}", path=text
            ) from exc
        if not stat.S_ISLNK(info.st_mode):
            resolved.append(part)
            continue
        links += 1
        if links > _MAX_LINKS:
            raise PathContainmentError(
                f"symlink loop (more than {_MAX_LINKS} links) at {candidate!r}", path=text
            )
        try:
            target = os.readlink(candidate)
        except OSError as exc:
            raise PathContainmentError(f"cannot read link {candidate!r}: {exc}", path=text) from exc
        if "\x00" in target:  # pragma: no cover - the kernel forbids it
            raise PathContainmentError(f"link {candidate!r} holds a NUL byte", path=text)
        if target.startswith("/"):
            resolved = []
        pending.extend(reversed([p for p in target.split("/") if p]))
    return "/" + "/".join(resolved)


def _parts(path: Path) -> tuple[str, ...]:
    return tuple(os.path.normcase(p) for p in path.parts)


def is_within(path: StrPath, root: StrPath, *, base: StrPath | None = None) -> bool:
    """Whether ``path``, symlinks resolved, is ``root`` itself or lies beneath it.

    ``root`` must be absolute and is canonicalised the same way (a symlinked root is
    followed).  A relative ``path`` is relative to ``base``, defaulting to ``root`` itself.
    Components are compared one by one, never as string prefixes.  Raises
    :class:`PathContainmentError` when the question cannot be answered (NUL byte, symlink
    loop, unreadable component): an unanswerable containment check is not a "no" to be
    ignored but an error to be reported.
    """
    root_text = _text(root, "root")
    if not os.path.isabs(root_text):
        raise PathContainmentError("the root must be an absolute path", path=root_text)
    canonical_root = canonical_path(root_text)
    canonical = canonical_path(path, base=base if base is not None else root_text)
    root_parts = _parts(canonical_root)
    return _parts(canonical)[: len(root_parts)] == root_parts


def require_within(path: StrPath, root: StrPath, *, base: StrPath | None = None) -> Path:
    """Return the canonical ``path`` if it is inside ``root``; raise :class:`PathEscapeError`.

    Same rules as :func:`is_within`.
    """
    root_text = _text(root, "root")
    if not os.path.isabs(root_text):
        raise PathContainmentError("the root must be an absolute path", path=root_text)
    canonical_root = canonical_path(root_text)
    canonical = canonical_path(path, base=base if base is not None else root_text)
    root_parts = _parts(canonical_root)
    if _parts(canonical)[: len(root_parts)] != root_parts:
        raise PathEscapeError(
            f"{os.fspath(path)!r} resolves to {str(canonical)!r}, outside {str(canonical_root)!r}",
            path=os.fspath(path),
            root=str(canonical_root),
        )
    return canonical
