"""Writes sample_data/coco/preds_b.json: a second "model" for `iou-eval compare` examples.

Model B is the sample predictions without the four best-scored person detections, so it is
worse than A by construction. Run from the repository root:
python sample_data/make_compare_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path


def main() -> None:
    here = Path(__file__).parent / "coco"
    dets = json.loads((here / "preds.json").read_text())
    person = sorted((d for d in dets if d["category_id"] == 1), key=lambda d: -d["score"])
    drop = {id(d) for d in person[:4]}
    out = [d for d in dets if id(d) not in drop]
    (here / "preds_b.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
