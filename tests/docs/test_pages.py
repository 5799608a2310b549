"""The site's pages: the README stays a front page, the nav lists every page, and every test
file a page names exists (a moved or renamed test must take its documentation along)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
from types import ModuleType

import pytest
import yaml

from tests.docs.examples import DOCS, ROOT, pages


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for v in nav.values() for f in _nav_files(v)]
    return []


def test_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200


def test_nav_lists_every_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = set(_nav_files(config["nav"]))
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert nav == on_disk


def test_named_test_files_exist() -> None:
    named = {
        (page.relative_to(ROOT).as_posix(), m.group(0))
        for page in pages()
        for m in re.finditer(r"tests/[\w/]+\.(?:py|json)", page.read_text(encoding="utf-8"))
    }
    assert len(named) >= 20
    missing = sorted(f"{page}: {path}" for page, path in named if not (ROOT / path).exists())
    assert not missing


@pytest.mark.slow
def test_make_demo_prints_the_table() -> None:
    """`make demo`, the set-up command README.md and docs/install.md show, on this checkout
    (its virtual environment exists once the suite runs, so this is the demo run alone)."""
    p = subprocess.run(
        ["make", "--no-print-directory", "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert "person" in p.stdout and "0.4861" in p.stdout


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_cli_reference", DOCS / "gen_cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_covers_every_verb() -> None:
    gen = _generator()
    text = "Other verbs: iou, segment,\n labels, compare (iou-eval VERB --help). Shell completion"
    verbs = gen.verbs(text)
    assert verbs[0] == "evaluate" and {"iou", "segment", "labels", "compare"} <= set(verbs)
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for verb in verbs[1:]:
        assert f"$ iou-eval {verb} --help" in page


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_named_modules_exist() -> None:
    """Every `iou_cli/...` path and `iou_cli.x.y` name on a page exists (modules move)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages())
    paths = set(re.findall(r"iou_cli/[\w/]*\w(?:\.py|/)?", text))
    names = set(re.findall(r"iou_cli(?:\.\w+)+", text)) - {"iou_cli.py"}
    assert len(paths) >= 10 and len(names) >= 10
    assert not sorted(p for p in paths if not (ROOT / p).exists())
    assert not sorted(n for n in names if not _resolves(n))
