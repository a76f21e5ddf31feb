"""An unknown key inside an array of tables gets its "did you mean" too.

The config has several arrays of tables -- ``[[hooks.<Event>]]`` (a ``Seq``), a scripted
provider's ``script`` and each reply's ``tool_calls`` (lists), a hook's ``options`` inside an
entry of ``[[hooks.<Event>]]``, and ``[mcp_servers.<name>]`` (a root model over a mapping).
:func:`known_keys` follows each of them, so the error names the key, where it is, and the
nearest known key.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from pydantic import BaseModel, RootModel

from agentrig.agent import AgentsConfig, DelegationConfig, ModelSelectionConfig
from agentrig.builtins._scripted import ScriptedOptions
from agentrig.errors import ConfigError
from agentrig.hooks import ClaudeCodeConfig, HooksConfig
from agentrig.kernel import open_runtime
from agentrig.kernel._config import RuntimeConfig, known_keys
from agentrig.permissions import PermissionsConfig


def _unwrap(annotation: Any) -> Any:
    """``Annotated[X, ...]`` -> X; ``X | None`` -> X."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return _unwrap(rest[0])
    return annotation


class _Item(BaseModel):
    name: str = ""
    weight: int = 0


class _Shapes(BaseModel):
    as_list: list[_Item] = []
    as_tuple: tuple[_Item, ...] = ()
    as_pair: tuple[int, _Item] = (0, _Item())
    as_frozenset: frozenset[int] = frozenset()
    nested: dict[str, list[list[_Item]]] = {}


class _Named(RootModel[dict[str, _Item]]):
    pass


@pytest.mark.parametrize(
    ("model", "path", "expected"),
    [
        (_Shapes, ("as_list", 0), ["name", "weight"]),
        (_Shapes, ("as_tuple", 3), ["name", "weight"]),
        (_Shapes, ("as_pair", 1), ["name", "weight"]),
        (_Shapes, ("as_pair", 0), []),
        (_Shapes, ("as_pair", 2), []),
        (_Shapes, ("nested", "k", 0, 1), ["name", "weight"]),
        (_Shapes, ("as_frozenset", 0), []),
        (_Named, ("any",), ["name", "weight"]),
        (_Named, (), []),  # the names of a root mapping are free
        (HooksConfig, ("PreToolUse", 0), ["strategy", "matcher", "options", "on_error"]),
        (ScriptedOptions, ("script", 0, "tool_calls", 2), ["name", "arguments", "id"]),
    ],
)
def test_known_keys_steps_through_lists_tuples_and_root_models(
    model: type[BaseModel], path: tuple[str | int, ...], expected: list[str]
) -> None:
    assert known_keys(model, path) == expected


@pytest.mark.parametrize(
    "top",
    [
        RuntimeConfig,
        AgentsConfig,
        ClaudeCodeConfig,
        DelegationConfig,
        HooksConfig,
        ModelSelectionConfig,
        PermissionsConfig,
    ],
)
def test_every_list_of_tables_of_the_core_config_is_followed(top: type[BaseModel]) -> None:
    """Walk the core's models: every array whose items are tables has its keys known."""
    found: list[tuple[str | int, ...]] = []

    def walk(model: type[BaseModel], path: tuple[str | int, ...]) -> None:
        if issubclass(model, RootModel):  # a root model's location does not name ``root``
            visit(model.model_fields["root"].annotation, path)
            return
        for name, field in model.model_fields.items():
            visit(field.annotation, (*path, name))

    def visit(annotation: Any, path: tuple[str | int, ...]) -> None:
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            walk(annotation, path)
            return
        origin = get_origin(annotation)
        args = get_args(annotation)
        if origin is dict:
            visit(args[1], (*path, "k"))
        elif origin in (list, tuple) and args:
            item = _unwrap(args[0])
            if isinstance(item, type) and issubclass(item, BaseModel):
                found.append((*path, 0))
                assert known_keys(top, (*path, 0)) == list(item.model_fields)
            visit(args[0], (*path, 0))

    walk(top, ())
    if top is HooksConfig:
        assert ("k", 0) in found


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agentrig.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


SCRIPT_TYPO = """
    [providers.p]
    kind = "scripted"

    [[providers.p.options.script]]
    text = "hi"

    [[providers.p.options.script]]
    txet = "typo"

    [[providers.p.options.script]]
    tool_calls = [{ name = "t", argumnets = {} }]
    """

HOOK_TYPO = """
    [[hooks.PreToolUse]]
    strategy = "command"
    options = { command = "true" }

    [[hooks.PreToolUse]]
    strategy = "command"
    matcher = "Bash"
    options = { command = "true", timout = 3 }
    """

MCP_TYPO = """
    [mcp_servers.github]
    comand = "github-mcp"
    """


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        (
            SCRIPT_TYPO,
            "providers.p.options.script[1].txet",
            "unknown key 'txet'; did you mean 'text'?",
        ),
        (
            SCRIPT_TYPO,
            "providers.p.options.script[2].tool_calls[0].argumnets",
            "unknown key 'argumnets'; did you mean 'arguments'?",
        ),
        (
            HOOK_TYPO,
            "hooks.PreToolUse[1].options.timout",
            "unknown key 'timout'; did you mean 'timeout'?",
        ),
        (
            MCP_TYPO,
            "mcp_servers.github.comand",
            "unknown key 'comand'; did you mean 'command'?",
        ),
    ],
)
async def test_a_typo_inside_an_array_of_tables_is_named_with_a_suggestion(
    tmp_path: Path, text: str, location: str, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        async with open_runtime(path, environ={}):
            pytest.fail("must not compose")
    shown = {issue.location(): issue.message for issue in info.value.issues}
    assert shown[location] == message


def test_config_check_prints_one_error_line_per_typo_in_an_array_of_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentrig.cli import main

    path = _write(tmp_path, HOOK_TYPO)
    assert main(["config", "check", str(path)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if "error [" in line]
    assert lines == [
        f"agentrig config: error [config.extra_forbidden]: {path}: "
        "hooks.PreToolUse[1].options.timout: unknown key 'timout'; did you mean 'timeout'?"
    ]
