"""Run xtcocotools' keypoint COCOeval (custom sigmas) on scenes given as JSON on stdin.

Runs in the fixture venv ``make xtcocotools-oracle`` makes (``.venv/xtcocotools-oracle``:
xtcocotools 1.14.3 from PyPI with NumPy < 2, which its wheels are built against); started
by tests/oracle/test_keypoints_oracle.py. Nothing of xtcocotools is copied.

Input: ``[{"gt": dataset, "dets": results, "sigmas": [..]}, ...]``. Output per scene:
``{"stats": [10 values], "per_class": [[10 values] per category]}`` (-1: undefined).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

import numpy as np


def per_class(ev: object) -> list[list[float]]:
    """The 10 keypoint stats restricted to each category (as pycocotools' _summarize)."""
    prec = ev.eval["precision"]  # type: ignore[attr-defined]
    rec = ev.eval["recall"]  # type: ignore[attr-defined]
    thrs = ev.params.iouThrs  # type: ignore[attr-defined]
    out = []
    for k in range(prec.shape[2]):
        row = []
        for ap in (True, False):
            for thr, area in ((None, 0), (0.5, 0), (0.75, 0), (None, 1), (None, 2)):
                s = prec[:, :, k, area, -1] if ap else rec[:, k, area, -1]
                if thr is not None:
                    s = s[np.where(thr == thrs)[0]]
                v = s[s > -1]
                row.append(float(np.mean(v)) if v.size else -1.0)
        out.append(row)
    return out


def main() -> None:
    from xtcocotools.coco import COCO
    from xtcocotools.cocoeval import COCOeval

    scenes = json.load(sys.stdin)
    results = []
    for sc in scenes:
        with contextlib.redirect_stdout(io.StringIO()):
            gt = COCO()
            gt.dataset = sc["gt"]
            gt.createIndex()
            dt = gt.loadRes(sc["dets"])
            ev = COCOeval(gt, dt, "keypoints", sigmas=np.array(sc["sigmas"]), use_area=True)
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        results.append({"stats": [float(s) for s in ev.stats], "per_class": per_class(ev)})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
