"""The pycocotools drop-in (``iou_cli.cocoapi``): ``evaluate()`` + ``accumulate()`` timed
in-process beside pycocotools' ``COCOeval`` and faster-coco-eval's ``COCOeval_faster``, on
the COCO-scale bench set (``bench/gen.py``, 1x: 5,000 images, 424k detections).

Each tool runs in its own fresh process; loading the JSON (``COCO``, ``loadRes``) is not
timed, only the two calls a training loop's evaluation makes. The 12 stats of each tool are
compared with pycocotools'. pycocotools runs once (about a minute), the others ``--runs``
times (median).

    python bench/dropin_bench.py            # `make bench`
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TOOLS = ["iou-eval cocoapi", "pycocotools", "faster-coco-eval"]


def child(tool: str, preds: str, gt_path: str, iou_type: str) -> None:
    with contextlib.redirect_stdout(sys.stderr):
        if tool == "iou-eval cocoapi":
            from iou_cli.cocoapi import COCO, COCOeval
        elif tool == "pycocotools":
            from pycocotools.coco import COCO
            from pycocotools.cocoeval import COCOeval
        else:
            from faster_coco_eval import COCO
            from faster_coco_eval import COCOeval_faster as COCOeval
        gt = COCO(gt_path)
        dt = gt.loadRes(preds)
        ev = COCOeval(gt, dt, iou_type)
        t0 = time.perf_counter()
        ev.evaluate()
        ev.accumulate()
        seconds = time.perf_counter() - t0
        ev.summarize()
    print(json.dumps({"seconds": seconds, "stats": [float(s) for s in ev.stats[:12]]}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", nargs=4, metavar=("TOOL", "PREDS", "GT", "IOU_TYPE"))
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    import gen

    subprocess.run(
        [sys.executable, "-c", f"import gen; gen.ensure(1, {args.seed})"], cwd=HERE, check=True
    )
    preds, gt = gen.ensure(1, args.seed)
    times: dict[str, list[float]] = {t: [] for t in TOOLS}
    stats: dict[str, list[float]] = {}
    for r in range(args.runs):
        for tool in TOOLS:
            if tool == "pycocotools" and r > 0:
                continue
            cmd = [sys.executable, __file__, "--child", tool, preds, gt, "bbox"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"  {tool}: exit {proc.returncode}\n{proc.stderr[-1500:]}", file=sys.stderr)
                continue
            out = json.loads(proc.stdout)
            times[tool].append(out["seconds"])
            stats[tool] = out["stats"]
            print(f"  round {r + 1}: {tool:<17} {out['seconds']:7.2f} s", file=sys.stderr)
    ref = stats.get("pycocotools")
    base = statistics.median(times["iou-eval cocoapi"]) if times["iou-eval cocoapi"] else None
    print("\nevaluate() + accumulate(), 1x bbox (5,000 images), median seconds:")
    print("| tool | evaluate+accumulate (s) | time / drop-in | 12 stats = pycocotools |")
    print("|---|---:|---:|---|")
    for tool in TOOLS:
        if not times[tool]:
            print(f"| {tool} | - | - | not run |")
            continue
        med = statistics.median(times[tool])
        same = "reference" if tool == "pycocotools" else ("yes" if stats[tool] == ref else "NO")
        ratio = f"{med / base:.2f}x" if base else "-"
        print(f"| {tool} | {med:.2f} | {ratio} | {same} |")


if __name__ == "__main__":
    main()
