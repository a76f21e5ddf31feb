"""The ``compose-instructions`` step: ``AGENTS.md`` / ``CLAUDE.md`` into every system prompt.

Codex and Claude Code users keep standing instructions in ``AGENTS.md`` and ``CLAUDE.md``;
this step reads them the way those tools do and provides them as
:data:`~agentrig.agent.PROJECT_INSTRUCTIONS`, which every agent of the runtime appends to its
own system prompt.  The files are read from the home folder (``~/AGENTS.md``,
``~/CLAUDE.md``, ``~/.codex/AGENTS.md``, ``~/.claude/CLAUDE.md``), then from the Git root
down to the working directory (each folder's ``AGENTS.md`` and ``CLAUDE.md``), in that
order.  The ``[instructions]`` table turns each part off::

    [instructions]
    home = true          # the home folder's files
    project = true       # the Git root down to the working directory
    agents_md = true     # AGENTS.md files
    claude_md = true     # CLAUDE.md files
    workdir = "."        # default: the process's working directory; relative: the config's
    max_bytes = 65536    # per file; a longer file is cut, with a note saying so
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agentrig.agent import PROJECT_INSTRUCTIONS, ProjectInstructions

if TYPE_CHECKING:
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = [
    "InstructionsConfig",
    "compose_instructions",
    "find_instruction_files",
    "instruction_sources",
    "read_instructions",
]


class InstructionsConfig(BaseModel):
    """The ``[instructions]`` table."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    home: bool = True
    project: bool = True
    agents_md: bool = True
    claude_md: bool = True
    workdir: str | None = None
    max_bytes: int = Field(default=65_536, gt=0)


def _up(start: str) -> list[str]:
    """``start`` and each folder above it, as ``Path(start).parents`` names them."""
    chain = [start]
    while (parent := os.path.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    return chain


def find_instruction_files(config: InstructionsConfig, home: Path, workdir: Path) -> list[Path]:
    """The instruction files that exist, in the order they are added (no file twice).

    Plain strings until a file is found: most candidates are missing, and each
    :class:`~pathlib.Path` made to stat one costs more than the stat."""
    names = [
        n for n, on in (("AGENTS.md", config.agents_md), ("CLAUDE.md", config.claude_md)) if on
    ]
    join = os.path.join
    candidates: list[str] = []
    if config.home:
        top_home = str(home)
        candidates += [join(top_home, name) for name in names]
        if config.agents_md:
            candidates.append(join(top_home, ".codex", "AGENTS.md"))
        if config.claude_md:
            candidates.append(join(top_home, ".claude", "CLAUDE.md"))
    if config.project:
        chain = _up(str(workdir))
        top = next((f for f in chain if os.path.exists(join(f, ".git"))), chain[0])
        folders = reversed(chain[: chain.index(top) + 1])
        candidates += [join(folder, name) for folder in folders for name in names]
    found: list[Path] = []
    seen: set[Path] = set()
    for candidate in candidates:
        if os.path.isfile(candidate):
            path = Path(candidate)
            real = path.resolve()
            if real not in seen:  # AGENTS.md and CLAUDE.md are often one file, linked
                seen.add(real)
                found.append(path)
    return found


def read_instructions(config: InstructionsConfig, home: Path, workdir: Path) -> ProjectInstructions:
    sections = []
    for path in find_instruction_files(config, home, workdir):
        data = path.read_bytes()
        text = data[: config.max_bytes].decode("utf-8", errors="replace")
        if len(data) > config.max_bytes:
            text += f"\n[cut: the file has {len(data)} bytes; [instructions] max_bytes is "
            text += f"{config.max_bytes}]"
        if text.strip():
            sections.append((str(path), text))
    return ProjectInstructions(tuple(sections))


def workdir_of(loaded: LoadedConfig, config: InstructionsConfig) -> Path:
    if config.workdir is None:
        return Path.cwd()
    given = Path(config.workdir).expanduser()
    return given if given.is_absolute() else loaded.base_dir / given


def instruction_sources(loaded: LoadedConfig) -> tuple[str, ...]:
    """The files a runtime of ``loaded`` adds to every system prompt (for ``doctor``)."""
    config = InstructionsConfig.model_validate(loaded.sections.get("instructions") or {})
    found = find_instruction_files(config, Path.home(), workdir_of(loaded, config).resolve())
    return tuple(str(path) for path in found)


async def compose_instructions(rt: Runtime) -> None:
    """Provide the project instructions every agent of this runtime carries."""
    config = rt.config_section("instructions", InstructionsConfig) or InstructionsConfig()
    home = Path.home()
    found = read_instructions(config, home, workdir_of(rt.loaded, config).resolve())
    if found.sections:
        rt.services.provide(PROJECT_INSTRUCTIONS, found, source="compose-instructions")
