"""Every `$ ...` example of README.md and docs/ runs and prints what the page shows.

Each block runs in a scratch folder holding links to sample_data/ and tests/; its commands run
one after another in one bash (so `$ echo $?` sees the previous status). stdout must equal the
shown lines (blank lines and trailing blanks aside); shown lines that start with
`iou-eval: error|warning|fail-...|read|note` are stderr lines and must appear there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.examples import ROOT, Block, all_blocks
from tests.docs.terminal import run_in_terminal

BLOCKS = [b for b in all_blocks(("console", "shell")) if b.mode != "skip"]
MARKER = "__docs_step__"
STDERR_LINE = re.compile(
    r"iou-eval: (error|warning|fail-under|fail-over|fail-if-worse|read|note|interrupted)"
)


def _param(b: Block) -> object:
    marks = [pytest.mark.slow] if b.mode == "slow" else []
    return pytest.param(b, id=b.id, marks=marks)


def test_pages_have_console_examples() -> None:
    assert len(BLOCKS) >= 30
    assert any(b.page == "README.md" for b in BLOCKS)


def _scratch(tmp_path: Path) -> dict[str, str]:
    for name in ("sample_data", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for var in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR"):
        env.pop(var, None)
    return env


def _check(b: Block, cmd: str, expected: list[str], out: str, err: str) -> None:
    want = [ln.rstrip() for ln in expected if ln.strip()]
    have = [ln.rstrip() for ln in out.splitlines() if ln.strip()]
    errs = [ln for ln in err.splitlines() if ln.strip()]
    # a shown line that looks like a message is looked for on stderr, unless stdout has it
    # (`cat gate.txt` of a saved stderr)
    shown_err = [ln for ln in want if STDERR_LINE.match(ln) and ln not in have]
    want = [ln for ln in want if ln not in shown_err]
    assert have == want, f"{b.id}: {cmd}"
    for ln in shown_err:
        assert ln in errs, f"{b.id}: {cmd}: stderr lacks {ln!r}"


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_console_example(tmp_path: Path, block: Block) -> None:
    env = _scratch(tmp_path)
    if block.mode == "terminal":
        for cmd, expected in block.steps:
            out, err = run_in_terminal(cmd, cwd=tmp_path, env=env, columns=80)
            _check(block, cmd, expected, out, err)
        return
    # `$?` must survive the marker line: each step restores the previous step's status
    script = "__s=0\n" + "\n".join(
        f"echo {MARKER}; (exit $__s); {cmd}\n__s=$?" for cmd, _ in block.steps
    )
    p = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    chunks = p.stdout.split(MARKER + "\n")[1:]
    assert len(chunks) == len(block.steps), p.stderr
    # stderr is not split per step: a shown stderr line must appear somewhere in the block's
    for (cmd, expected), got in zip(block.steps, chunks, strict=True):
        _check(block, cmd, expected, got, p.stderr)
