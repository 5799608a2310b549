"""The README's examples really run: every `$ ...` block (but the rich table) is executed in a
scratch folder and its output must be the one the README shows, line for line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _blocks() -> list[tuple[int, list[tuple[str, list[str]]]]]:
    """(line number, [(command, expected output lines)]) for each ``` block with a `$ `."""
    out: list[tuple[int, list[tuple[str, list[str]]]]] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start = i
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            steps: list[tuple[str, list[str]]] = []
            j = 0
            while j < len(body):
                if body[j].startswith("$ "):
                    cmd = body[j][2:]
                    while cmd.endswith("\\"):
                        j += 1
                        cmd = cmd[:-1] + " " + body[j].strip()
                    steps.append((cmd, []))
                elif steps:
                    steps[-1][1].append(body[j])
                j += 1
            if steps and not any("┏" in line for _, exp in steps for line in exp):
                out.append((start + 1, steps))
        i += 1
    return out


BLOCKS = _blocks()


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize(("line", "steps"), BLOCKS, ids=[f"README.md:{b[0]}" for b in BLOCKS])
def test_readme_block_output(tmp_path: Path, line: int, steps: list[tuple[str, list[str]]]) -> None:
    for name in ("sample_data", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    marker = "__readme_step__"
    # `$?` must survive the marker line: each step restores the previous step's status
    script = "__s=0\n" + "\n".join(f"echo {marker}; (exit $__s); {cmd}\n__s=$?" for cmd, _ in steps)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("COLUMNS", None)
    p = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    chunks = (p.stdout).split(marker + "\n")[1:]
    # stderr lines the README shows (warnings, the fail-under line) come after stdout here
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(chunks) == len(steps), p.stderr
    for (cmd, expected), got in zip(steps, chunks, strict=True):
        want = [ln.rstrip() for ln in expected if ln.strip()]
        have = [ln.rstrip() for ln in got.splitlines() if ln.strip()]
        shown_err = [
            ln
            for ln in want
            if re.match(r"iou-eval: (error|warning|fail-under|fail-over|read|note)", ln)
        ]
        want = [ln for ln in want if ln not in shown_err]
        assert have == want, f"README.md:{line}: {cmd}"
        for ln in shown_err:
            assert ln in err, f"README.md:{line}: {cmd}: stderr lacks {ln!r}"
