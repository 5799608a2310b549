"""Coverage-guided fuzzing of the loaders with atheris (optional: ``make fuzz`` installs it).

    python tests/robust/atheris_loaders.py -atheris_runs=20000

Each input's first byte picks a target (COCO results, COCO dataset, VOC XML, YOLO txt); the
rest is the file. The CLI must answer with exit 0 or exit 2 and one ``iou-eval: error:``
line; any other exception (or a traceback) is a crash that atheris reports with its input.
Not a pytest module (no ``test_`` prefix): ``make test`` never needs atheris.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOOD = ROOT / "tests" / "data" / "bad" / "good"


def _targets(d: Path) -> list[tuple[str, list[str]]]:
    return [
        ("p.json", [str(d / "p.json"), str(GOOD / "coco_gt.json")]),
        ("g.json", [str(GOOD / "coco_pred.json"), str(d / "g.json")]),
        ("voc/a.xml", [str(GOOD / "voc_pred"), str(d / "voc")]),
        ("yolo/a.txt", [str(GOOD / "yolo_pred"), str(d / "yolo")]),
    ]


def main() -> None:
    import atheris

    with atheris.instrument_imports():
        import iou_cli.cli  # noqa: F401
        import iou_cli.loaders.coco  # noqa: F401
        import iou_cli.loaders.voc  # noqa: F401
        import iou_cli.loaders.yolo  # noqa: F401
    sys.path.insert(0, str(ROOT))
    from tests.helpers import assert_one_error_line, run_cli

    work = Path(tempfile.mkdtemp(prefix="iou-eval-atheris-"))
    (work / "voc").mkdir()
    (work / "yolo").mkdir()
    (work / "yolo" / "classes.txt").write_text("cat\ndog\n")
    targets = _targets(work)

    def one(data: bytes) -> None:
        if not data:
            return
        name, args = targets[data[0] % len(targets)]
        (work / name).write_bytes(data[1:])
        code, out, err = run_cli([*args, "-q", "-o", "json"])
        if code == 2:
            assert_one_error_line(code, out, err)
        elif code != 0 or any(not ln.startswith("iou-eval: warning: ") for ln in err.splitlines()):
            raise AssertionError((code, err))

    argv = [sys.argv[0], *sys.argv[1:]]
    if not any(not a.startswith("-") for a in argv[1:]):  # no corpus folder given: seed one
        seeds = work / "seeds"
        seeds.mkdir()
        for k, f in enumerate(
            [
                GOOD / "coco_pred.json",
                GOOD / "coco_gt.json",
                GOOD / "voc_gt" / "a.xml",
                GOOD / "yolo_gt" / "a.txt",
            ]
        ):
            (seeds / f"seed{k}").write_bytes(bytes([k]) + f.read_bytes())
        argv.append(str(seeds))
    atheris.Setup(argv, one)
    os.chdir(work)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
