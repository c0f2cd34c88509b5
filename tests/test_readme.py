"""The README opens with exactly two command blocks; .ci/run runs the second verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _blocks() -> list[str]:
    return re.findall(r"```(?:bash|sh|console|shell)\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_readme_opens_with_two_commands():
    text = (ROOT / "README.md").read_text()
    blocks = _blocks()
    assert len(blocks) >= 2
    head = text[: text.index(blocks[1]) + len(blocks[1]) + 3]
    assert head.count("```") == 4, "the README must open with exactly two command blocks"
    assert "prefmem reproduce" in blocks[0] and "--model" not in blocks[0]
    assert '".[test]"' in blocks[1] and "pytest" in blocks[1]


def test_ci_runs_block_two_verbatim():
    """.ci/run installs the browser (the README says so), then runs block two verbatim."""
    ci = (ROOT / ".ci" / "run").read_text()
    cmd = [line for line in _blocks()[1].splitlines() if line.strip() and not line.startswith("#")]
    assert len(cmd) == 1
    body = [line for line in ci.splitlines() if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert body == [".ci/install-browser", *cmd]
    assert "chromium" in (ROOT / "README.md").read_text().split("## What it reproduces")[0]
