"""Every runnable Python sample in README.md and docs/ also type-checks.

A sample that runs may still fail for a user who runs mypy over the same code: the public
signatures take branded ids (``rt.agent(AgentId("assistant"))``, not ``rt.agent("assistant")``)
and protocols a sample implements must be implemented as declared.  The samples are checked
with mypy's default settings (what a user's project most likely has), all pages in one run.
"""

from __future__ import annotations

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
        stem = re.sub(r"\W", "_", page.stem.lower())
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
        "import agentrig\n\n\nasync def main(rt: agentrig.Runtime) -> None:\n"
        '    await rt.agent("assistant").run("hi")\n',
        encoding="utf-8",
    )
    done = _mypy(tmp_path, [sample])
    assert done.returncode == 1
    assert 'has incompatible type "str"; expected "AgentId"' in done.stdout
