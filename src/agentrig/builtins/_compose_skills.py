"""The ``compose-skills`` step: fill the runtime's skill registry and offer the skill tools.

Skills come from installed distributions (``agentrig.skills`` entry points, checked and
scanned when loaded), then from the skill roots in precedence order (the home folder's
``.claude`` / ``.codex`` / ``.agents`` skills, ``[skills] extra_roots``, the skills of each
``[claude_code] plugins`` folder, then the project's roots, ``.agentrig/skills`` last so it
wins a duplicate).  A skill read from a folder passes the deterministic scanner and then the
``registration_guard`` hook (the model guard) -- unless its files' SHA-256 is recorded as
trusted; a review that passes records it.  A refused skill is kept with its reason
(``agentrig doctor`` lists it) and never registered.

The ``compose-tool-scan`` step runs the same scanner over every tool in the runtime's
catalog before the agents are built; a tool it blocks refuses the composition.  The skill
tools listing no skill read as the core's own text, known to pass: they are not rescanned.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.builtins._dry_run import PlaceholderResolver
from agentrig.builtins._skill_guard import GUARD_NAME
from agentrig.builtins._skill_tools import TOOLSET, ReadSkillResource, SkillTool
from agentrig.builtins._skill_trust import TrustStore
from agentrig.builtins._skills_config import DEFAULT_ROOTS, SkillsConfig
from agentrig.diagnostics import get_logger
from agentrig.errors import AgentrigError, ConfigError, Issue
from agentrig.skills import (
    SKILLS,
    Registration,
    RegistrationKind,
    RegistrationReview,
    Skill,
    SkillBlockedError,
    SkillError,
    SkillLimits,
    SkillRegistry,
    SkillVersionError,
    Verdict,
    load_skill,
    registration_of_skill,
    registration_of_tool,
    review,
    scan,
    skill_folders,
)

if TYPE_CHECKING:
    from agentrig.kernel import LoadedConfig, Runtime

__all__ = ["compose_skills", "describe_skills", "scan_tools", "skill_roots", "skills_config"]

_log = get_logger("skills")


def skills_config(rt: Runtime) -> SkillsConfig:
    return rt.config_section("skills", SkillsConfig) or SkillsConfig()


def _resolve(path: str, base: Path) -> str:
    """``path`` from the config, absolute: a string, as most roots are missing (a ``Path``
    costs more than the look that finds nothing there)."""
    given = os.path.expanduser(path)
    if given[:1] == "~":  # no home folder to expand to: pathlib's error says so
        return str(Path(path).expanduser())
    return os.path.join(base, given)  # (an absolute ``given`` stays as it is)


def skill_roots(loaded: LoadedConfig, config: SkillsConfig) -> list[tuple[str, str]]:
    """``(label, folder)`` of every root, in precedence order (the last wins a duplicate)."""
    base = loaded.base_dir
    chosen: dict[str, str | bool] = {}
    for name, default in DEFAULT_ROOTS.items():
        chosen[name] = config.roots.get(name, default)
    roots: list[tuple[str, str]] = []
    for label, path in chosen.items():
        if label != "project_agentrig" and isinstance(path, str):
            roots.append((label, _resolve(path, base)))
    roots += [(f"extra_roots[{i}]", _resolve(p, base)) for i, p in enumerate(config.extra_roots)]
    if "claude_code" in loaded.sections:  # the hooks layer only when the table is there
        from agentrig.hooks import claude_code_config

        for i, plugin in enumerate(claude_code_config(loaded).plugins):
            folder = os.path.join(_resolve(plugin, base), "skills")
            roots.append((f"claude_code.plugins[{i}]", folder))
    last = chosen["project_agentrig"]
    if isinstance(last, str):
        roots.append(("project_agentrig", _resolve(last, base)))
    return roots


def _from_entry_points(rt: Runtime, registry: SkillRegistry) -> None:
    for entry in rt.index.entries("skills"):
        if rt.index.is_disabled("skills", entry.name):
            continue
        try:
            loaded: Any = rt.index.load("skills", entry.name)  # checked and scanned
        except AgentrigError as exc:
            registry.refuse(entry.describe(), exc)
            continue
        if isinstance(loaded, Skill):
            with contextlib.suppress(SkillBlockedError):  # recorded in refused() by register
                registry.register(loaded)


async def _model_review(rt: Runtime, registration: Registration) -> Verdict:
    async def hook(subject: Registration) -> Any:
        return await rt.hooks.first_result("registration_guard", RegistrationReview(subject, rt))

    if isinstance(rt.resolver, PlaceholderResolver):  # `config check` calls no model
        reason = "not reviewed: the model guard does not run during a config check"
        return Verdict(False, GUARD_NAME, (), reason)
    return await review(registration, [(GUARD_NAME, hook)])


async def _from_folder(
    rt: Runtime, registry: SkillRegistry, folder: Path, trust: TrustStore
) -> None:
    try:
        skill = load_skill(folder, limits=registry.limits)
    except SkillError as exc:
        registry.refuse(str(folder), exc)
        return
    registration = registration_of_skill(skill)
    verdicts: list[Verdict] = []
    trusted = trust.is_trusted(skill.source, skill.digest)
    checking = isinstance(rt.resolver, PlaceholderResolver)  # `config check` changes nothing
    if not trusted and not checking:
        trust.revoke(skill.source)  # a changed skill loses its trust before anything else
    if not trusted and scan(registration).allowed:
        verdicts.append(await _model_review(rt, registration))
    try:
        registry.register(skill, verdicts=verdicts)  # scans; refuses on any refusal
    except SkillBlockedError:
        return
    if verdicts and not checking:
        trust.trust(skill.source, skill.name, skill.version, skill.digest)


async def compose_skills(rt: Runtime) -> None:
    """Provide the skill registry (``SKILLS``) and register the ``skills`` toolset."""
    from agentrig.tools import TOOLS, TOOLSETS

    config = skills_config(rt)
    if not config.enabled:
        return
    limits = SkillLimits(max_files=config.limits.max_files, max_bytes=config.limits.max_bytes)
    registry = SkillRegistry(limits=limits)
    _from_entry_points(rt, registry)
    trust = TrustStore(Path(_resolve(config.trust_dir, rt.loaded.base_dir)))
    for _label, root in skill_roots(rt.loaded, config):
        for folder in skill_folders(root):
            await _from_folder(rt, registry, folder, trust)
    issues = []
    for name, version in config.active.items():
        try:
            registry.activate(name, version)
        except SkillVersionError as exc:
            issues.append(Issue("config.skill_version", exc.message, ("skills", "active", name)))
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)
    for refusal in registry.refused():  # a refused skill is never silent: doctor lists it too
        _log.warning("skill refused: %s", refusal.describe())
    rt.services.provide(SKILLS, registry, source="compose-skills")
    tools = rt.registry(TOOLS)
    offered = []
    for tool in (SkillTool(registry), ReadSkillResource(registry)):
        if not tools.has(tool.id):  # a test override keeps its own
            tools.register(tool, id=tool.id, source="compose-skills")
        offered.append(tool.id)
    if not rt.registry(TOOLSETS).has(TOOLSET):
        rt.registry(TOOLSETS).register(tuple(offered), id=TOOLSET, source="compose-skills")


async def scan_tools(rt: Runtime) -> None:
    """Refuse the composition when the registration scanner blocks a registered tool."""
    from agentrig.tools import TOOLS

    if not skills_config(rt).scan_tools:
        return
    catalog = rt.registry(TOOLS)
    issues = []
    for tool_id, tool in catalog.entries():
        if _says_core_text(tool):
            continue
        source = catalog.source_of(tool_id) or "?"
        kind: RegistrationKind = "mcp_tool" if source.startswith("mcp:") else "tool"
        try:
            registration = registration_of_tool(tool, kind=kind)
        except AttributeError:  # a test's stand-in without a schema: nothing a model reads
            continue
        verdict = scan(registration)
        if not verdict.allowed:
            issues.append(
                Issue(
                    "registration.blocked",
                    f"{kind} {tool_id!r} (from {source}) was refused: {verdict.describe()}; "
                    "rename or reword it, or set [skills] scan_tools = false",
                    ("tools", tool_id),
                )
            )
    if issues:
        raise ConfigError(issues, source=rt.loaded.source)


_CORE_TOOLS = (SkillTool, ReadSkillResource)


def _says_core_text(tool: Any) -> bool:
    """Whether ``tool`` is a core skill tool reading as it does with no skill to list: the
    core's own text, which the scanner allows (a test checks it).

    Its class fixes its id and schema, and its description is compared as it reads now, so
    a runtime without skills compiles none of the scanner's rules (nor builds the tools'
    registrations), and a tool saying anything else is scanned.
    """
    core = _core_descriptions().get(type(tool))
    return core is not None and bool(tool.description == core)


@functools.cache
def _core_descriptions() -> dict[type, str]:
    empty = SkillRegistry()
    return {kind: kind(empty).description for kind in _CORE_TOOLS}


def describe_skills(loaded: LoadedConfig) -> tuple[list[str], int]:
    """``agentrig doctor``'s lines about skill folders, and how many problems they show.

    Nothing is registered and no model is asked: each folder is loaded and scanned, and
    its trust looked up -- what a runtime would do before the model guard.
    """
    config = SkillsConfig.model_validate(loaded.sections.get("skills") or {})
    if not config.enabled:
        return ["skills     off ([skills] enabled = false)"], 0
    lines: list[str] = []
    problems = 0
    trust = TrustStore(Path(_resolve(config.trust_dir, loaded.base_dir)))
    limits = SkillLimits(max_files=config.limits.max_files, max_bytes=config.limits.max_bytes)
    for label, root in skill_roots(loaded, config):
        for folder in skill_folders(root):
            try:
                skill = load_skill(folder, limits=limits)
            except SkillError as exc:
                problems += 1
                lines.append(f"  REFUSED skill {folder} ({label}): [{exc.code}] {exc.message}")
                continue
            verdict = scan(registration_of_skill(skill))
            if not verdict.allowed:
                problems += 1
                lines.append(
                    f"  REFUSED skill {skill.name} {folder} ({label}): {verdict.describe()}"
                )
            elif trust.is_trusted(skill.source, skill.digest):
                lines.append(f"  skill {skill.name} {skill.version} {folder} ({label}): trusted")
            else:
                lines.append(
                    f"  skill {skill.name} {skill.version} {folder} ({label}): not reviewed yet "
                    "(the model guard of [skills.guard] reviews it when a runtime opens)"
                )
    head = f"skills     {len(lines)} in folders" + (f", {problems} refused" if problems else "")
    return [head, *lines], problems
