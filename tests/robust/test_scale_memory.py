"""Memory follows boxes, not images x classes (issue 16's iNaturalist-sized case).

10,000 classes, 100,000 images, one ground truth and one prediction per image: the COCO
protocol used to size arrays by images x classes (15 GB and minutes); it must now stay
under 1 GiB and finish in seconds. The numbers are checked by hand: a prediction scores a
true positive exactly when its class equals the ground truth's (the boxes overlap at IoU
0.9638 >= every threshold), so tp = number of agreeing images.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

CHILD = """
import json, resource, sys
from iou_cli.api import evaluate
r = evaluate(sys.argv[1], sys.argv[2], score_thr=0.0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"tp": r.summary["tp"], "fp": r.summary["fp"], "fn": r.summary["fn"],
                  "peak": peak}))
"""


def test_inaturalist_sized_set_runs_in_bounded_memory(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n_img, K = 100_000, 10_000
    cat = rng.integers(1, K + 1, n_img)
    gt = {
        "images": [
            {"id": i + 1, "file_name": f"{i}.jpg", "width": 500, "height": 400}
            for i in range(n_img)
        ],
        "categories": [{"id": k + 1, "name": f"species{k}"} for k in range(K)],
        "annotations": [
            {
                "id": i + 1,
                "image_id": i + 1,
                "category_id": int(cat[i]),
                "bbox": [10, 10, 200, 150],
                "area": 30000.0,
                "iscrowd": 0,
            }
            for i in range(n_img)
        ],
    }
    agree = rng.random(n_img) < 0.7
    pc = np.where(agree, cat, rng.integers(1, K + 1, n_img))
    dets = [
        {
            "image_id": i + 1,
            "category_id": int(pc[i]),
            "bbox": [12, 11, 195, 150],
            "score": float(rng.random()),
        }
        for i in range(n_img)
    ]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))

    # a 3 GiB address-space cap turns a regression into a failure, not a swapping machine
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "dt.json"), str(tmp_path / "gt.json")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap,
        check=True,
    )
    got = json.loads(out.stdout)
    n_agree = int(np.count_nonzero(pc == cat))
    # at --score-thr 0 every prediction counts: hand count from the generator
    assert (got["tp"], got["fp"], got["fn"]) == (n_agree, n_img - n_agree, n_img - n_agree)
    assert got["peak"] < 2**30, f"peak RSS {got['peak'] / 2**20:.0f} MiB"
