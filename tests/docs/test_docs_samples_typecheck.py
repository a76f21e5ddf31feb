"""Every runnable Python sample in README.md and docs/ also type-checks.

A sample that runs may still fail for a user who runs mypy over the same code: the public
signatures between packages take branded ids (``catalog.require(tool_id("add"))``, not
``catalog.require("add")``; the user's edge, ``rt.agent("assistant")``, takes a plain string)
and protocols a sample implements must be implemented as declared.  The samples are checked
with mypy's default settings (what a user's project most likely has), all pages in one run.
The ``python fragment`` blocks are checked too, each as the body of an async function.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs_samples import PAGES, ROOT, blocks

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def _write_samples(workdir: Path) -> list[Path]:
    """Each page's runnable samples as ``<page>_<line>.py``; a page's ``python file=`` blocks
    (modules its later samples import) under their own names."""
    written = []
    for page in PAGES:
        stem = _stem(page)
        for block in blocks(page):
            if block.language != "python" or "fragment" in block.words:
                continue
            target = workdir / (block.file or f"{stem}_{block.line}.py")
            target.write_text(block.text, encoding="utf-8")
            written.append(target)
    return written


def _mypy(workdir: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    cache = ROOT / ".mypy_cache" / "docs"  # warm after the first run
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(cache)]
        + [f.name for f in files],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_python_sample_type_checks(tmp_path: Path) -> None:
    samples = _write_samples(tmp_path)
    assert len(samples) > 40  # the pages' samples were found
    done = _mypy(tmp_path, samples)
    assert done.returncode == 0, (
        "docs samples that fail mypy (file = <page>_<line of the fence>.py); wrap plain "
        "strings in the id types (agentrig.ids: AgentId, SessionId, ...):\n" + done.stdout
    )


def test_a_plain_string_id_in_a_sample_is_caught(tmp_path: Path) -> None:
    sample = tmp_path / "page_1.py"
    sample.write_text(
        "import agentrig\nfrom agentrig.tools import TOOLS\n\n\n"
        "async def main(rt: agentrig.Runtime) -> None:\n"
        '    await rt.agent("assistant").run("hi")\n'
        '    rt.catalog(TOOLS).require("add")\n',
        encoding="utf-8",
    )
    done = _mypy(tmp_path, [sample])
    assert done.returncode == 1
    assert 'has incompatible type "str"; expected "ToolId"' in done.stdout
    assert "AgentId" not in done.stdout  # the user's edge takes a plain string


# ---- fragments: pieces of a larger program ---------------------------------------------------

# A fragment uses names of the program around it (``rt``, ``payload``) and may ``await`` or
# ``return`` at its top level, so each is checked as the body of an async function, with
# undefined names allowed; everything else -- syntax, the agentrig API it calls, the types it
# passes -- is checked as in a complete sample.  Modules a fragment imports that are not
# installed (the reader's own package) are ignored; an agentrig module that does not exist is
# not.
_FRAGMENT_HEAD = "from typing import Any\n\n\nasync def _fragment() -> Any:\n"
_FRAGMENT_CONFIG = """\
[mypy]
ignore_missing_imports = True
disable_error_code = name-defined

[mypy-agentrig.*]
ignore_missing_imports = False
"""


def _stem(page: Path) -> str:
    return re.sub(r"\W", "_", page.stem.lower())


def _fragments() -> list[tuple[str, str]]:
    """``(<page>_<line>, text)`` of every ```` ```python fragment ```` block."""
    return [
        (f"{_stem(page)}_{block.line}", block.text)
        for page in PAGES
        for block in blocks(page)
        if block.language == "python" and "fragment" in block.words
    ]


def _check_fragments(workdir: Path, fragments: list[tuple[str, str]]) -> str:
    files = []
    for name, text in fragments:
        body = "".join(f"    {line}" if line.strip() else line for line in text.splitlines(True))
        path = workdir / f"{name}.py"
        path.write_text(_FRAGMENT_HEAD + body + "\n", encoding="utf-8")
        files.append(path)
    (workdir / "mypy.ini").write_text(_FRAGMENT_CONFIG, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-error-summary"]
        + ["--cache-dir", str(ROOT / ".mypy_cache" / "docs")]
        + [f.name for f in files],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode else ""


def test_every_python_fragment_type_checks_as_a_function_body(tmp_path: Path) -> None:
    fragments = _fragments()
    assert len(fragments) > 15  # the pages' fragments were found
    problems = _check_fragments(tmp_path, fragments)
    assert not problems, (
        "docs fragments that fail mypy as an async function body (file = <page>_<line of the "
        "fence>.py, line numbers +4):\n" + problems
    )


def test_a_broken_fragment_is_caught(tmp_path: Path) -> None:
    syntax = _check_fragments(tmp_path, [("syntax_1", "result = await rt.agent(\n")])
    assert "syntax_1.py:" in syntax  # (mypy stops at a syntax error: nothing else is checked)
    problems = _check_fragments(
        tmp_path,
        [
            ("api_1", "from agentrig.nosuch import thing\n"),
            ("types_1", 'from agentrig.ids import AgentId\n\nAgentId(3) + "x"\n'),
            ("fine_1", "await rt.close()\nreturn payload\n"),
        ],
    )
    assert 'module named "agentrig.nosuch"' in problems
    assert "types_1.py:" in problems
    assert "fine_1.py" not in problems


def test_every_name_a_fragment_imports_from_agentrig_exists() -> None:
    """mypy takes any name from a module with a lazy ``__getattr__`` (``agentrig.plugin``);
    importing them for real does not."""
    missing = []
    for name, text in _fragments():
        tree = compile(text, name, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level:
                continue
            if not str(node.module).startswith("agentrig"):
                continue
            module = importlib.import_module(str(node.module))
            missing += [
                f"{name}: {node.module}.{alias.name}"
                for alias in node.names
                if not hasattr(module, alias.name)
                and importlib.util.find_spec(f"{node.module}.{alias.name}") is None
            ]
    assert not missing, f"docs fragments import names agentrig does not have: {missing}"
