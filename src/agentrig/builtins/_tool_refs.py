"""Tools named by reference in config: ``"package.module:function"``, ``"file.py:function"``.

So a script's own functions become an agent's tools without packaging them as entry points.
Loading a reference **runs that code** (it is imported), exactly as an installed entry point
is: references belong in a config you trust, never in one a user or a model wrote.

A reference's target is a file when it ends in ``.py`` or contains a path separator (relative
paths are relative to the config file's directory), otherwise an importable module (the config
file's directory is put on ``sys.path`` for it, as ``python`` puts a script's).  The attribute
may be a tool, a toolset or list of tools, or a plain function, which becomes a tool the way
``@agentrig.tool`` makes one (its name is the tool id, its docstring the description).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.errors import Issue, did_you_mean

if TYPE_CHECKING:
    from agentrig.tools import Tool

__all__ = ["ToolRefs", "anchored", "bare_file_issue", "is_tool_ref", "static_issue"]

#: ``sys.modules`` prefix of files loaded by path (one module per file)
MODULE_PREFIX = "agentrig_tool_refs"


def is_tool_ref(name: str) -> bool:
    """Is this entry of an agent's ``tools`` a code reference (not an entry-point name)?"""
    return ":" in name


def _is_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target


def bare_file_issue(name: str, path: tuple[str | int, ...]) -> Issue | None:
    """A tool entry that names a file but no tool in it (``"tools.py"``): say so, rather than
    report an uninstalled plugin of that name."""
    if is_tool_ref(name) or not _is_file(name):
        return None
    return Issue(
        "config.tool_ref",
        f"tool reference {name!r} names a file but no tool in it: write {name + ':NAME'!r}, "
        "NAME being the function (or tool, or list of tools) to load from it",
        path,
    )


def anchored(ref: str, base_dir: Path) -> str:
    """``ref`` with a relative file target made absolute against ``base_dir``."""
    target, _, attribute = ref.rpartition(":")
    if not _is_file(target):
        return ref
    return f"{(base_dir / Path(target).expanduser()).resolve()}:{attribute}"


def static_issue(ref: str, base_dir: Path, path: tuple[str | int, ...]) -> Issue | None:
    """What can be said about ``ref`` without running it (``agentrig config check``): its
    syntax, and that its file or top-level package exists."""
    target, _, attribute = ref.rpartition(":")
    problem: tuple[str, str] | None = None
    if not target or not all(part.isidentifier() for part in attribute.split(".")):
        problem = ("config.tool_ref", _SYNTAX)
    elif _is_file(target):
        file = base_dir / Path(target).expanduser()
        if not file.is_file():
            problem = ("config.tool_ref_file", f"no such file: {file.resolve()}")
    else:
        top = target.partition(".")[0]
        try:  # an imported module (a script's __main__ too) or one the import system finds
            found = top in sys.modules or importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        found = found or (base_dir / top).is_dir()
        if not found and not (base_dir / f"{top}.py").is_file():
            problem = ("config.tool_ref_module", f"no module named {top!r}")
    if problem is None:
        return None
    return Issue(problem[0], f"tool reference {ref!r}: {problem[1]}", path)


_SYNTAX = 'expected "package.module:function" or "path/to/file.py:function"'


class _RefError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ToolRefs:
    """Resolves the references of one composition; each target is loaded once, and a plain
    function named twice is one tool."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir
        self._modules: dict[str, Any] = {}
        # the function itself is the key (not its id): an entry can never answer for
        # another function, even one born where a dead one lived
        self._wrapped: dict[Any, Tool] = {}

    def load(self, ref: str, path: tuple[str | int, ...]) -> tuple[Tool, ...] | Issue:
        """The tools ``ref`` names, or an :class:`Issue` at ``path`` saying what is wrong."""
        try:
            return self._load(ref)
        except _RefError as exc:
            return Issue(exc.code, f"tool reference {ref!r}: {exc}", path)

    def _load(self, ref: str) -> tuple[Tool, ...]:
        from agentrig.kernel import ContractViolation
        from agentrig.tools import Tool, Toolset, check_tool_contribution, tool

        target, _, attribute = ref.rpartition(":")
        if not target or not all(part.isidentifier() for part in attribute.split(".")):
            raise _RefError("config.tool_ref", _SYNTAX)
        module = self._module(target)
        obj: Any = module
        for part in attribute.split("."):
            if not hasattr(obj, part):
                names = [n for n in dir(obj) if not n.startswith("_")]
                hint = did_you_mean(part, names)
                raise _RefError(
                    "config.tool_ref_attribute", f"{target} has no attribute {part!r}{hint}"
                )
            obj = getattr(obj, part)
        if inspect.isfunction(obj) or inspect.ismethod(obj):
            wrapped = self._wrapped.get(obj)
            if wrapped is None:
                try:
                    wrapped = self._wrapped[obj] = tool(obj)
                except Exception as exc:  # the function cannot describe a tool
                    raise _RefError(
                        "config.tool_ref_invalid", f"{attribute} cannot be a tool: {exc}"
                    ) from exc
            obj = wrapped
        elif not isinstance(obj, Tool | Toolset | list | tuple) and not callable(obj):
            raise _RefError(
                "config.tool_ref_not_callable",
                f"{attribute} is a {type(obj).__name__}, not a function, a tool or a toolset",
            )
        try:
            return check_tool_contribution(obj)
        except ContractViolation as exc:
            raise _RefError("config.tool_ref_invalid", str(exc)) from None

    def _module(self, target: str) -> Any:
        if target in self._modules:
            return self._modules[target]
        module = self._from_file(target) if _is_file(target) else self._import(target)
        self._modules[target] = module
        return module

    def _from_file(self, target: str) -> Any:
        file = Path(target).expanduser()
        file = (file if file.is_absolute() else self.base_dir / file).resolve()
        if not file.is_file():
            raise _RefError("config.tool_ref_file", f"no such file: {file}")
        digest = hashlib.sha256(str(file).encode()).hexdigest()[:12]
        name = f"{MODULE_PREFIX}.{file.stem}_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            raise _RefError("config.tool_ref_file", f"{file} cannot be loaded as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pydantic look their module up
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise _RefError(
                "config.tool_ref_import", f"loading {file} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return module

    def _import(self, target: str) -> Any:
        base = str(self.base_dir.resolve())
        if base not in sys.path:
            sys.path.insert(0, base)
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (target == exc.name or target.startswith(exc.name + ".")):
                raise _RefError(
                    "config.tool_ref_module",
                    f"no module named {exc.name!r} (looked in {base} and the Python path; "
                    "name a file as path/to/file.py:function)",
                ) from None
            raise _RefError("config.tool_ref_import", f"importing {target} failed: {exc}") from exc
        except Exception as exc:
            raise _RefError(
                "config.tool_ref_import",
                f"importing {target} failed: {type(exc).__name__}: {exc}",
            ) from exc
