"""The README's notebook example runs and prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_python_example_prints_what_it_shows() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(
        r"<!-- readme-python[^>]*-->\n```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```",
        text,
        re.S,
    )
    assert m, "the README's notebook example (readme-python marker) is missing"
    code, expected = m.group(1), m.group(2)
    buf = io.StringIO()
    old = os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(old)
    assert buf.getvalue() == expected
