"""Every fenced Python sample in README.md and docs/ runs as written, offline.

The rules (CONTRIBUTING.md, "Samples in the docs"): a ```` ```python ```` block is a complete
program, run on its own with ``python sample.py`` in a fresh directory per page, in page
order; ```` ```python fragment ```` marks a piece of a larger program (shown, never run); the
repository's ``examples/`` is reachable as ``examples/`` there; a block of any language whose
info string says ``file=NAME`` (e.g. ```` ```toml file=agentrig.toml ````) is written to
``NAME`` in that directory when the page reaches it, so later samples of the same page read
it (a ``python file=...`` block is a module the later samples import).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^`\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
TIMEOUT = 120

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its info string, its text and where it starts."""

    language: str
    words: tuple[str, ...]
    text: str
    line: int

    @property
    def file(self) -> str | None:
        return next((w[len("file=") :] for w in self.words if w.startswith("file=")), None)


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        info = match.group(1).split()
        found.append(
            Block(
                language=info[0] if info else "",
                words=tuple(info[1:]),
                text=match.group(2),
                line=text.count("\n", 0, match.start()) + 1,
            )
        )
    return found


def _offline_env(workdir: Path) -> dict[str, str]:
    """The environment a sample runs in: no AGENTRIG_ switches, no way out but loopback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRIG_")}
    env.pop("PYTHONPATH", None)
    blackhole = "http://127.0.0.1:9"  # the discard port: refused at once
    env.update(
        HTTP_PROXY=blackhole,
        HTTPS_PROXY=blackhole,
        ALL_PROXY=blackhole,
        NO_PROXY="127.0.0.1,localhost,::1",
        HOME=str(workdir),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _run_page(page: Path, workdir: Path, name: str) -> list[str]:
    """Run the page's samples in ``workdir``; one message (``name:line: ...``) per failure."""
    failures = []
    env = _offline_env(workdir)
    if not (workdir / "examples").exists():  # samples may use the repository's examples/
        (workdir / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    for block in blocks(page):
        if block.file is not None:
            target = workdir / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
            continue
        if block.language != "python" or "fragment" in block.words:
            continue
        script = workdir / f"sample_{block.line}.py"
        script.write_text(block.text, encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, script.name],
                cwd=workdir,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            failures.append(f"{name}:{block.line}: still running after {TIMEOUT}s")
            continue
        if done.returncode != 0:
            tail = "\n    ".join((done.stderr or done.stdout).strip().splitlines()[-8:])
            failures.append(f"{name}:{block.line}: exit {done.returncode}\n    {tail}")
    return failures


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_sample_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    failures = _run_page(page, tmp_path, str(page.relative_to(ROOT)))
    assert not failures, (
        f"{len(failures)} sample(s) failed; fix them or mark a piece of a larger program "
        "```python fragment (CONTRIBUTING.md):\n" + "\n".join(failures)
    )


def test_the_rules_recognise_fragments_files_and_programs(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```toml file=conf/agentrig.toml\nx = 1\n```\n"
        "```python fragment\nawait nothing_defined\n```\n"
        "```python file=helper.py\nVALUE = 41\n```\n"
        "```python\nimport pathlib, helper\n"
        "assert pathlib.Path('conf/agentrig.toml').read_text() == 'x = 1\\n'\n"
        "print(helper.VALUE + 1)\n```\n"
        "```python\nraise SystemExit('sample broke')\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.language, b.file, b.line) for b in found] == [
        ("toml", "conf/agentrig.toml", 1),
        ("python", None, 4),
        ("python", "helper.py", 7),
        ("python", None, 10),
        ("python", None, 15),
    ]
    workdir = tmp_path / "run"
    workdir.mkdir()
    failures = _run_page(page, workdir, "page.md")
    assert len(failures) == 1
    assert failures[0].startswith("page.md:15: exit 1")
    assert "sample broke" in failures[0]
