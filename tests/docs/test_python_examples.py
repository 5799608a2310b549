"""Every python block of README.md and docs/ runs from the repository root; where the page
says what it prints (`prints` and a text block), stdout must be exactly that."""

from __future__ import annotations

import contextlib
import io

import pytest

from tests.docs.examples import ROOT, Block, all_blocks

BLOCKS = [b for b in all_blocks(("python",)) if b.mode != "skip"]


def _param(b: Block) -> object:
    marks = [pytest.mark.slow] if b.mode == "slow" else []
    return pytest.param(b, id=b.id, marks=marks)


def test_pages_have_python_examples() -> None:
    assert any(b.page == "README.md" and b.expected for b in BLOCKS)
    assert sum(1 for b in BLOCKS if b.expected is not None) >= 4


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_python_example(monkeypatch: pytest.MonkeyPatch, block: Block) -> None:
    monkeypatch.chdir(ROOT)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile("\n".join(block.body) + "\n", block.id, "exec"), {"__name__": "__docs__"})
    if block.expected is not None:
        assert buf.getvalue() == block.expected, block.id
