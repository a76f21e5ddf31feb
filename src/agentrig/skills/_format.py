"""The SKILL.md folder format (as Claude Code, Codex and other coding agents write it).

A skill is a folder holding ``SKILL.md``: YAML frontmatter between ``---`` lines, then a
Markdown body.  The body is the skill's instructions; the frontmatter gives its ``name``,
``description`` and ``version`` (default ``"1"``; a version the caller passes wins) and any
other field, kept as is; every other file of the folder is a resource, kept as bytes.

Loading is bounded (:class:`SkillLimits`), reads only what is inside the folder, and never
follows a symlink: a symlinked ``SKILL.md``, resource or sub-folder refuses the whole skill,
since whoever controls the link's target would choose what the model reads.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, final

import attrs

from agentrig.catalog import freeze_data
from agentrig.skills._errors import SkillFormatError, SkillSymlinkError, SkillTooLargeError

__all__ = ["SKILL_FILE", "Skill", "SkillLimits", "load_skill", "parse_skill_text"]

SKILL_FILE = "SKILL.md"

#: a skill name: letters, digits, ``-``, ``_`` and ``.``, starting with a letter or digit
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,31}")
#: folders a Python package or a checkout leaves beside the skill's own files
_SKIPPED_DIRS = frozenset({"__pycache__", ".git"})


@final
@attrs.frozen(slots=True)
class SkillLimits:
    """How much one skill may hold; more refuses the skill (``skill.too_large``)."""

    max_files: int = 200
    max_bytes: int = 4 * 1024 * 1024
    #: the frontmatter alone (the model sees the description in its catalog)
    max_description_chars: int = 1024


def _read_only(files: Mapping[str, bytes]) -> Mapping[str, bytes]:
    return MappingProxyType(dict(files))


@final
@attrs.frozen(slots=True)
class Skill:
    """One loaded skill: instructions, metadata and resources (read-only)."""

    name: str
    version: str
    description: str
    #: the Markdown body of SKILL.md
    instructions: str
    #: the whole frontmatter (``name``, ``description`` ... and every other field)
    frontmatter: Mapping[str, Any] = attrs.field(converter=freeze_data)
    #: companion files by their ``/``-separated path inside the folder
    resources: Mapping[str, bytes] = attrs.field(converter=_read_only)
    #: where it came from: a folder path, or ``entry point <group>:<name>``
    source: str
    #: SHA-256 over every file's path and bytes (SKILL.md included): any change changes it
    digest: str

    def text_resources(self) -> Iterator[tuple[str, str]]:
        """The resources that are UTF-8 text, as ``(path, text)``."""
        for path, data in self.resources.items():
            try:
                yield path, data.decode("utf-8")
            except UnicodeDecodeError:
                continue


def _split_frontmatter(text: str, where: str) -> tuple[str, str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError(
            f"{where}: SKILL.md must start with YAML frontmatter between '---' lines "
            "(name and description at least)"
        )
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise SkillFormatError(f"{where}: the frontmatter's closing '---' line is missing")


def _frontmatter(raw: str, where: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise SkillFormatError(f"{where}: the frontmatter is not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise SkillFormatError(f"{where}: the frontmatter must be a mapping of names to values")
    return data


def _version(value: object, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise SkillFormatError(f"{where}: version must be a number or a string, not {value!r}")
    text = str(value).strip()
    if not _VERSION.fullmatch(text):
        raise SkillFormatError(f"{where}: version {text!r} is not like '1', '2.1' or '3-beta'")
    return text


def parse_skill_text(
    text: str,
    *,
    where: str,
    default_name: str | None = None,
    version: str | int | None = None,
    limits: SkillLimits | None = None,
) -> tuple[str, str, str, str, dict[str, Any]]:
    """``(name, version, description, instructions, frontmatter)`` of a SKILL.md text.

    ``version`` (when given) wins over the frontmatter's; without either it is ``"1"``.
    ``default_name`` stands in for a missing ``name`` (the folder's name, as Claude Code does).
    """
    limits = limits or SkillLimits()
    raw, body = _split_frontmatter(text, where)
    front = _frontmatter(raw, where)
    name = front.get("name", default_name)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise SkillFormatError(
            f"{where}: name {name!r} must be 1-64 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit"
        )
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError(
            f"{where}: description is missing; it tells the model when to use the skill"
        )
    if len(description) > limits.max_description_chars:
        raise SkillFormatError(
            f"{where}: description has {len(description)} characters "
            f"(at most {limits.max_description_chars})"
        )
    chosen = _version(version if version is not None else front.get("version", 1), where)
    return name, chosen, description.strip(), body.strip("\n"), front


def _walk(root: Path, limits: SkillLimits, skip: frozenset[str]) -> dict[str, bytes]:
    """Every file under ``root`` by relative path; refuses symlinks and oversize folders."""
    files: dict[str, bytes] = {}
    total = 0
    folders = 0
    pending = [root]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as listing:
            found = sorted(listing, key=lambda e: e.name)
        for entry in found:
            rel = Path(entry.path).relative_to(root).as_posix()
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                raise SkillSymlinkError(
                    f"{root}: {rel} is a symlink (to {os.readlink(entry.path)}); skills are "
                    "never loaded through symlinks -- copy the file into the skill folder"
                )
            if stat.S_ISDIR(info.st_mode):
                if entry.name not in _SKIPPED_DIRS:
                    folders += 1  # folders count too: an empty tree is no cheaper to walk
                    if folders > limits.max_files:
                        raise SkillTooLargeError(
                            f"{root}: the skill holds more than {limits.max_files} folders"
                        )
                    pending.append(Path(entry.path))
                continue
            if not stat.S_ISREG(info.st_mode) or rel in skip or entry.name.endswith(".pyc"):
                continue
            total += info.st_size
            if len(files) + 1 > limits.max_files or total > limits.max_bytes:
                raise SkillTooLargeError(
                    f"{root}: the skill holds more than {limits.max_files} files or "
                    f"{limits.max_bytes} bytes (SkillLimits)"
                )
            files[rel] = _read_regular(Path(entry.path))
    return files


def _read_regular(path: Path) -> bytes:
    """Read a file that must still be a regular file (``O_NOFOLLOW``: no late swap to a link)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise SkillSymlinkError(f"{path}: cannot be read without following a link: {exc}") from None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def digest_files(files: Mapping[str, bytes]) -> str:
    """SHA-256 over the sorted paths and contents (length-prefixed: no ambiguous joins)."""
    h = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        encoded = rel.encode("utf-8")
        h.update(len(encoded).to_bytes(8, "big") + encoded)
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def _resources(files: Mapping[str, bytes]) -> dict[str, bytes]:
    return {rel: data for rel, data in files.items() if rel != SKILL_FILE}


def load_skill(
    path: str | os.PathLike[str],
    *,
    version: str | int | None = None,
    limits: SkillLimits | None = None,
    source: str | None = None,
    skip: frozenset[str] = frozenset(),
) -> Skill:
    """Load the skill in folder ``path`` (or of the ``SKILL.md`` file ``path`` names).

    ``version`` overrides the frontmatter's.  ``skip`` names files (relative paths) that are
    not the skill's (a Python package's ``__init__.py``).  Raises a :class:`SkillError`.
    """
    limits = limits or SkillLimits()
    given = Path(path)
    folder = given.parent if given.name == SKILL_FILE and not given.is_dir() else given
    folder = Path(os.path.abspath(folder))
    if folder.is_symlink():
        raise SkillSymlinkError(
            f"{folder} is a symlink (to {os.readlink(folder)}); skills are never loaded "
            "through symlinks -- point the config at the real folder"
        )
    if not folder.is_dir():
        raise SkillFormatError(f"no skill folder at {str(folder)!r}")
    if not os.path.lexists(folder / SKILL_FILE):
        raise SkillFormatError(f"{folder}: there is no {SKILL_FILE} in the folder")
    files = _walk(folder, limits, skip)
    if SKILL_FILE not in files:
        raise SkillFormatError(f"{folder}: {SKILL_FILE} is not a regular file")
    try:
        text = files[SKILL_FILE].decode("utf-8")
    except UnicodeDecodeError:
        raise SkillFormatError(f"{folder}: {SKILL_FILE} is not UTF-8 text") from None
    name, chosen, description, body, front = parse_skill_text(
        text,
        where=str(folder / SKILL_FILE),
        default_name=folder.name,
        version=version,
        limits=limits,
    )
    return Skill(
        name=name,
        version=chosen,
        description=description,
        instructions=body,
        frontmatter=front,
        resources=_resources(files),
        source=source or str(folder),
        digest=digest_files(files),
    )
