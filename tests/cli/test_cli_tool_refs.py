"""Tools without packaging: ``"file.py:function"`` and ``"package.module:function"`` in an
agent's ``tools`` and in ``--tools``, run through the real ``agentrig`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
AGENTRIG = str(Path(sys.executable).with_name("agentrig"))

SCRIPT = """\
[providers.local]
kind = "scripted"
options.script = [
  { tool_calls = [{ name = "add", arguments = { a = 2, b = 3 } }] },
  { text = "2 + 3 = 5" },
]
"""

PLAIN = '''\
from pathlib import Path


def add(a: int, b: int) -> int:
    """Add two integers."""
    Path("called.txt").write_text(f"add {a} {b}")
    return a + b


NOT_A_FUNCTION = 42


def undocumented(a: int) -> int:
    return a
'''


def _agentrig(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    return subprocess.run(
        [AGENTRIG, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _config(folder: Path, tools: str, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agentrig.toml"
    path.write_text(
        SCRIPT
        + f'\n[agents.assistant]\nprovider = "local"\nmodel = "m"\ntools = {tools}\n'
        + '\n[permissions]\nallow = ["add"]\n'
        + extra,
        encoding="utf-8",
    )
    return path


def test_a_plain_function_in_a_file_beside_the_config_is_a_tool(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = _config(project, '["lib/helpers.py:add"]')
    (project / "lib").mkdir()
    (project / "lib" / "helpers.py").write_text(PLAIN, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _agentrig("run", "-c", str(config), "What is 2 + 3?", cwd=elsewhere)
    assert (done.returncode, done.stdout) == (0, "2 + 3 = 5\n"), done.stderr
    assert done.stderr.endswith("[tool] add -> ok: 5\n")  # tool activity: stderr only
    assert (elsewhere / "called.txt").read_text() == "add 2 3"  # the function ran


def test_a_module_reference_imports_from_the_config_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = _config(project, '["mytools.maths:add"]')
    (project / "mytools").mkdir()
    (project / "mytools" / "__init__.py").write_text("", encoding="utf-8")
    (project / "mytools" / "maths.py").write_text(PLAIN, encoding="utf-8")
    done = _agentrig("run", "-c", str(config), "What is 2 + 3?", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "2 + 3 = 5\n"), done.stderr
    assert done.stderr.endswith("[tool] add -> ok: 5\n")  # tool activity: stderr only
    assert (tmp_path / "called.txt").read_text() == "add 2 3"


def test_tools_option_adds_a_reference_relative_to_the_current_directory(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path / "conf", "[]")
    (tmp_path / "helpers.py").write_text(PLAIN, encoding="utf-8")
    done = _agentrig(
        "run", "-c", str(config), "--tools", "helpers.py:add", "What is 2 + 3?", cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (0, "2 + 3 = 5\n"), done.stderr
    assert done.stderr.endswith("[tool] add -> ok: 5\n")  # tool activity: stderr only
    assert (tmp_path / "called.txt").read_text() == "add 2 3"
    (tmp_path / "called.txt").unlink()
    module = _agentrig(
        "run", "-c", str(config), "--tools", "helpers:add", "What is 2 + 3?", cwd=tmp_path
    )
    assert (module.returncode, module.stdout) == (0, "2 + 3 = 5\n"), module.stderr
    assert module.stderr.endswith("[tool] add -> ok: 5\n")
    assert (tmp_path / "called.txt").read_text() == "add 2 3"
    chat = _agentrig(
        "chat", "-c", str(config), "--tools", "helpers.py:add", cwd=tmp_path, stdin="2+3?\n"
    )
    assert chat.returncode == 0, chat.stderr
    assert "2 + 3 = 5" in chat.stdout
    assert "[tool] add -> ok: 5" in chat.stderr


@pytest.mark.parametrize(
    ("tools", "code", "says"),
    [
        ('["missing.py:add"]', "config.tool_ref_file", "no such file: "),
        ('["nosuchpackage.tools:add"]', "config.tool_ref_module", "no module named"),
        ('["helpers.py:ad"]', "config.tool_ref_attribute", "did you mean 'add'?"),
        ('["helpers.py:NOT_A_FUNCTION"]', "config.tool_ref_not_callable", "is a int"),
        ('["helpers.py:"]', "config.tool_ref", "expected"),
        ('["helpers.py:undocumented"]', "config.tool_ref_invalid", "add a docstring"),
    ],
)
def test_a_bad_reference_is_one_error_line_naming_the_entry(
    tmp_path: Path, tools: str, code: str, says: str
) -> None:
    config = _config(tmp_path, tools)
    (tmp_path / "helpers.py").write_text(PLAIN, encoding="utf-8")
    done = _agentrig("run", "-c", str(config), "hi", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"agentrig run: error [{code}]: {config}: agents.assistant.tools[0]")
    assert says in lines[0]
    assert not (tmp_path / "called.txt").exists()


def test_config_check_finds_a_missing_file_without_running_code(tmp_path: Path) -> None:
    config = _config(tmp_path, '["helpers.py:add", "gone.py:add"]')
    (tmp_path / "helpers.py").write_text(
        "raise SystemExit('config check must not run this')\n", encoding="utf-8"
    )
    done = _agentrig("config", "check", str(config), cwd=tmp_path)
    assert done.returncode == 1
    assert "agents.assistant.tools[1]" in done.stderr + done.stdout
    assert "no such file" in done.stdout
    assert "agents.assistant.tools[0]" not in done.stderr + done.stdout


def test_a_reference_that_fails_to_import_names_the_failure(tmp_path: Path) -> None:
    config = _config(tmp_path, '["broken.py:add"]')
    (tmp_path / "broken.py").write_text("import nosuchmodule_xyz\n", encoding="utf-8")
    done = _agentrig("run", "-c", str(config), "hi", cwd=tmp_path)
    assert done.returncode == 2
    assert "error [config.tool_ref_import]" in done.stderr
    assert "ModuleNotFoundError: No module named 'nosuchmodule_xyz'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_quickstart_runs_from_agentrig_run_and_chat(tmp_path: Path) -> None:
    config = str(ROOT / "examples" / "quickstart" / "agentrig.toml")
    done = _agentrig("run", "-c", config, "Weather in Lisbon?", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # what the model wrote, as it arrived: its words before the tool call, then the answer
    assert done.stdout.endswith("It is 21 °C and sunny in Lisbon, with a 5% chance of rain.\n")
    assert "[tool] get_weather -> ok:" in done.stderr
    chat = _agentrig("chat", "-c", config, cwd=tmp_path, stdin="Weather in Lisbon?\n")
    assert chat.returncode == 0, chat.stderr
    assert "[tool] get_weather -> ok:" in chat.stderr
    assert "sunny in Lisbon" in chat.stdout


def test_the_readme_example_runs_from_agentrig_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "docs"))
    try:
        from test_docs_samples import blocks
    finally:
        sys.path.remove(str(ROOT / "tests" / "docs"))
    for block in blocks(ROOT / "README.md"):
        if block.file is not None:
            (tmp_path / block.file).write_text(block.text, encoding="utf-8")
    done = _agentrig("run", "-c", "agentrig.toml", "What is 2 + 3?", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "2 + 3 = 5\n"), done.stderr
    chat = _agentrig("chat", "-c", "agentrig.toml", cwd=tmp_path, stdin="What is 2 + 3?\n")
    assert chat.returncode == 0, chat.stderr
    assert "[tool] add -> ok: 5" in chat.stderr
