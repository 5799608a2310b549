"""The cluster driver's peak allocation per prediction (tracemalloc), COCO bbox defaults
(or ``--protocol voc`` / ``voc07``).

Runs the cluster's plan in one process (map per image bucket, reduce per class) on a
``bench/gen.py`` set, then measures only the driver's step: the per-class rows streamed in
(fresh copies, as ``iter_rows`` / ``toLocalIterator`` deliver them) and combined into the
Result. ``--old`` measures the former driver instead (every class's records shipped to the
driver and reduced there), for comparison.

    python bench/driver_memory.py [--scale 1] [--images N] [--buckets 8] [--old]
        [--protocol coco|lvis|voc|voc07]
"""

from __future__ import annotations

import argparse
import json
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen import ensure  # noqa: E402

from iou_cli.distributed import core, rows  # noqa: E402


def _old_combine(job: core.Job, reduced: Iterator[tuple[int, bytes]]) -> Any:
    """The former driver: every class's records concatenated and reduced here."""
    from iou_cli.state.build import build_state
    from iou_cli.state.partial import merge_states
    from iou_cli.state.reduce import result

    ev = core.context(job)
    by_cat: dict[int, list[bytes]] = {}
    for c, p in reduced:
        by_cat.setdefault(c, []).append(p)
    arrs, info = rows.unpack(rows.concat_meta(by_cat.pop(rows.META)))
    covered = np.zeros(len(ev._gt_ds.images), dtype=bool)
    covered[arrs["images"].astype(np.int64)] = True
    rest = build_state(ev._gt_ds, job.protocol, ev._options, image_mask=~covered, fp=ev._fp)
    mapped = core._from_classes(rest, by_cat, np.flatnonzero(covered), info["extra"])
    return result(merge_states([rest, mapped]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--images", type=int, default=0, help="only the first N images (0: all)")
    ap.add_argument("--buckets", type=int, default=8)
    ap.add_argument("--old", action="store_true")
    ap.add_argument("--protocol", default="coco", choices=["coco", "voc", "voc07"])
    a = ap.parse_args()
    preds_path, gt_path = ensure(a.scale)
    gt = json.loads(Path(gt_path).read_text())
    dets = json.loads(Path(preds_path).read_text())
    if a.images:
        keep = {im["id"] for im in gt["images"][: a.images]}
        gt["images"] = [im for im in gt["images"] if im["id"] in keep]
        gt["annotations"] = [g for g in gt["annotations"] if g["image_id"] in keep]
        dets = [d for d in dets if d["image_id"] in keep]
    job = core.Job(gt=gt, protocol=a.protocol, options={"iou_type": "bbox"})
    df = pd.DataFrame(dets)
    df[core.ORDER] = np.arange(len(df))
    df[core.BUCKET] = df["image_id"] % a.buckets
    by_cat: dict[int, list[bytes]] = {}
    for _, part in df.groupby(core.BUCKET):
        for c, p in core.map_bucket(job, part):
            by_cat.setdefault(c, []).append(p)
    del df
    if a.old:
        reduced = [(c, rows.reduce_group(c, ps)) for c, ps in by_cat.items()]
    else:
        reduced = [(c, core.reduce_rows(job, c, ps)) for c, ps in by_cat.items()]
    n = len(dets)
    received = sum(len(p) for _, p in reduced)
    stream = ((c, bytes(bytearray(p))) for c, p in reduced)  # fresh copies, as streamed in
    tracemalloc.start()
    res = (_old_combine if a.old else core.combine)(job, stream)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    key = "AP" if a.protocol == "coco" else "mAP"
    print(
        f"{a.protocol} {'former' if a.old else 'per-class'} driver: {n:,} predictions, "
        f"{received / n:.1f} bytes/prediction received, "
        f"peak {peak / 2**20:.1f} MiB = {peak / n:.1f} bytes/prediction "
        f"({key} {res.summary[key]:.4f}, score_thr {res.summary['score_thr']})"
    )


if __name__ == "__main__":
    main()
