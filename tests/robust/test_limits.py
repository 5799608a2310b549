"""Hostile inputs answer fast and in bounded memory: each runs as ``python -m iou_cli`` under
a 4 GiB address-space limit (RLIMIT_AS) and a wall-clock budget, and must exit 2 with one
located error line. Megabyte inputs in subprocesses: marked slow (``make test-slow``, CI)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.helpers import ERROR_LINE
from tests.robust.test_corpus import billion_laughs, deep_json, deep_object, quadratic_blowup

GOOD = DATA / "bad" / "good"
LIMIT = 4 << 30  # bytes of address space
BUDGET = 10.0  # seconds per run ("a few seconds", with room for a loaded CI machine)


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _write(folder: Path, name: str, data: str | bytes) -> str:
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return str(p)


HOSTILE: dict[str, tuple[str, Callable[[], str | bytes], str]] = {
    # name: (file name, content, role)
    "deep-list-pred": ("deep.json", deep_json, "pred"),
    "deep-object-gt": ("deep.json", deep_object, "gt"),
    "billion-laughs": ("voc/a.xml", billion_laughs, "voc"),
    "quadratic-blowup": ("voc/a.xml", quadratic_blowup, "voc"),
    "deep-xml": (
        "voc/a.xml",
        lambda: "<annotation>" + "<a>" * 100_000 + "</a>" * 100_000 + "</annotation>",
        "voc",
    ),
    "binary-8MB": ("noise.json", lambda: bytes(range(256)) * 32_768, "pred"),
    "long-yolo-line": ("yolo/a.txt", lambda: "0 " * 2_000_000 + "\n", "yolo"),
    "many-digits": ("digits.json", lambda: "[" + "9" * 1_000_000 + "]", "pred"),
    "unclosed-string": ("open.json", lambda: '[{"image_id": "' + "x" * 8_000_000, "pred"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_under_4gib_address_space(tmp_path: Path, name: str) -> None:
    fname, make, role = HOSTILE[name]
    path = _write(tmp_path, fname, make())
    if role == "pred":
        args = [path, str(GOOD / "coco_gt.json")]
    elif role == "gt":
        args = [str(GOOD / "coco_pred.json"), path]
    elif role == "voc":
        args = [str(GOOD / "voc_pred"), str(Path(path).parent)]
    else:
        args = [str(GOOD / "yolo_pred"), str(Path(path).parent)]
    t0 = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", *args, "-q"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit,
    )
    elapsed = time.monotonic() - t0
    lines = p.stderr.splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert len(lines) == 1 and ERROR_LINE.match(lines[0]) and p.stdout == "", p.stderr[-2000:]
    assert elapsed < BUDGET, elapsed
