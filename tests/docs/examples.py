"""The examples of README.md and docs/*.md, read from their fenced blocks.

* ```` ```console ```` / ```` ```shell ```` blocks: each line starting with ``$ `` is a command
  (a trailing ``\\`` continues it on the next line); the lines up to the next ``$ `` are its
  expected output. Blocks without a ``$ `` line (set-up commands such as ``make demo``) are
  not run here.
* ```` ```python ```` blocks: run as they are; when the block is followed by a line ``prints``
  and a ```` ```text ```` block, that text is the exact expected stdout.
* An HTML comment on the line before a block, ``<!-- docs-test: MODE -->``, picks how it runs:
  ``slow`` (only in ``make test-slow``), ``terminal`` (stdout is an 80-column pseudo-terminal,
  for the table output), ``skip`` (not run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MODES = {"fast", "slow", "terminal", "skip"}
_MARKER = re.compile(r"<!--\s*docs-test:\s*([a-z]+)\b[^>]*-->")  # text after the mode: why


@dataclass
class Block:
    page: str  # path relative to the repository root
    line: int  # 1-based line of the opening fence
    lang: str
    mode: str
    body: list[str]
    expected: str | None = None  # python: the `prints` text block
    steps: list[tuple[str, list[str]]] = field(default_factory=list)  # console: (command, output)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """README.md and every markdown page of the site."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _fences(lines: list[str]) -> list[tuple[int, int, str]]:
    """(opening line index, closing line index, info string) of each fenced block."""
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})\s*([\w+-]*)", lines[i])
        if m:
            fence, j = m.group(1), i + 1
            while j < len(lines) and not lines[j].startswith(fence):
                j += 1
            out.append((i, j, m.group(2)))
            i = j
        i += 1
    return out


def _steps(body: list[str]) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    j = 0
    while j < len(body):
        if body[j].startswith("$ "):
            cmd = body[j][2:]
            while cmd.endswith("\\") and j + 1 < len(body):
                j += 1
                cmd = cmd[:-1] + " " + body[j].strip()
            steps.append((cmd, []))
        elif steps:
            steps[-1][1].append(body[j])
        j += 1
    return steps


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    rel = page.relative_to(ROOT).as_posix()
    fences = _fences(lines)
    out: list[Block] = []
    for k, (start, end, lang) in enumerate(fences):
        prev = next((ln for ln in reversed(lines[:start]) if ln.strip()), "")
        m = _MARKER.fullmatch(prev.strip())
        mode = m.group(1) if m else "fast"
        if mode not in MODES:
            raise ValueError(f"{rel}:{start}: unknown docs-test mode {mode!r}")
        body = lines[start + 1 : end]
        block = Block(rel, start + 1, lang, mode, body)
        if lang in ("console", "shell"):
            block.steps = _steps(body)
            if not block.steps:
                continue
        elif lang == "python":
            after = [ln for ln in lines[end + 1 : end + 4] if ln.strip()]
            if after and re.match(r"prints\b", after[0].strip()) and k + 1 < len(fences):
                n_start, n_end, n_lang = fences[k + 1]
                if n_lang == "text":
                    block.expected = "\n".join(lines[n_start + 1 : n_end]) + "\n"
        else:
            continue
        out.append(block)
    return out


def all_blocks(lang: tuple[str, ...]) -> list[Block]:
    return [b for p in pages() for b in blocks(p) if b.lang in lang]
