"""Benchmark ``iou-eval compare`` (paired bootstrap) against hotcoco's ``coco compare``.

Two cases, each a pair of models on one ground truth from ``gen.py``'s COCO-scale set:

* the first 500 images, 1000 bootstrap samples: iou-eval and hotcoco's CLI in the same run
  (goal: iou-eval in at most 0.2x hotcoco's time);
* the whole scale-1 set (5,000 images, ~430k predictions per model), 1000 samples: iou-eval
  alone (goal: under 30 s on 2 cores).

Model B is model A with every score jittered (N(0, 0.05), rounded to 3 decimals) and 3% of
the predictions dropped, so the two differ by a small, realistic amount.

    python bench/compare.py [--samples 1000] [--runs 1] [--skip-full]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
from run import BIN, _machine, run_once  # noqa: E402


def _subset(gt: dict[str, Any], dets: dict[str, Any], n_images: int | None) -> tuple[Any, Any]:
    import numpy as np

    if n_images is None:
        return gt, dets
    keep_ids = {im["id"] for im in gt["images"][:n_images]}
    gt = {
        **gt,
        "images": gt["images"][:n_images],
        "annotations": [a for a in gt["annotations"] if a["image_id"] in keep_ids],
    }
    sel = np.isin(dets["image_id"], np.fromiter(keep_ids, dtype=np.int64))
    return gt, {k: v[sel] for k, v in dets.items()}


def _model_b(dets: dict[str, Any], seed: int) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(seed + 1000)
    keep = rng.random(dets["score"].shape[0]) >= 0.03
    out = {k: v[keep] for k, v in dets.items()}
    s = out["score"] + rng.normal(0, 0.05, out["score"].shape[0])
    out["score"] = np.round(np.clip(s, 0.001, 1.0), 3)
    return out


def ensure_pair(scale: int, seed: int, n_images: int | None) -> tuple[str, str, str]:
    """(pred_a, pred_b, gt) paths, generated once."""
    tag = f"compare_{n_images}" if n_images else "compare"
    out = os.path.join(HERE, "_data", f"x{scale}_s{seed}", tag)
    paths = tuple(os.path.join(out, f) for f in ("preds_a.json", "preds_b.json", "gt.json"))
    if all(os.path.exists(p) for p in paths):
        return paths  # type: ignore[return-value]
    os.makedirs(out, exist_ok=True)
    gt, dets = gen.generate(scale, seed)
    gt, dets = _subset(gt, dets, n_images)
    gen.write_dets(paths[0], dets)
    gen.write_dets(paths[1], _model_b(dets, seed))
    with open(paths[2] + ".tmp", "w", encoding="ascii") as fh:
        json.dump(gt, fh)
    os.replace(paths[2] + ".tmp", paths[2])
    return paths  # type: ignore[return-value]


def iou_eval_cmd(a: str, b: str, gt: str, samples: int) -> list[str]:
    exe = os.path.join(BIN, "iou-eval")
    exe = exe if os.path.exists(exe) else "iou-eval"
    return [exe, "compare", a, b, gt, "--bootstrap", str(samples), "-o", "json", "-q"]


def hotcoco_cmd(a: str, b: str, gt: str, samples: int) -> list[str]:
    exe = os.path.join(BIN, "coco")
    exe = exe if os.path.exists(exe) else "coco"
    return [exe, "compare", "--gt", gt, "--dt-a", a, "--dt-b", b, "--bootstrap", str(samples)]


def _time(name: str, cmd: list[str], runs: int, timeout: float) -> tuple[float, float, int, str]:
    walls, cpus, rss = [], [], []
    status = "ok"
    for _ in range(runs):
        wall, peak, cpu, _out, err, code = run_once(cmd, timeout)
        if code != 0:
            status = f"failed (exit {code}): {err[-300:]}"
            break
        walls.append(wall)
        cpus.append(cpu)
        rss.append(peak)
        print(
            f"  {name:<28} {wall:7.2f} s  cpu {cpu:6.2f} s  {peak / 1024:6.0f} MiB", file=sys.stderr
        )
    if not walls:
        return float("nan"), float("nan"), 0, status
    return statistics.median(walls), statistics.median(cpus), int(statistics.median(rss)), status


def main() -> None:
    ap = argparse.ArgumentParser(description="iou-eval compare benchmark")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--skip-full", action="store_true", help="only the 500-image case")
    args = ap.parse_args()

    # generate in a child process (see run.py: keeps the parent's RSS out of the figures)
    for n in ("500", "None") if not args.skip_full else ("500",):
        subprocess.run(
            [sys.executable, "-c", f"import compare; compare.ensure_pair(1, {args.seed}, {n})"],
            cwd=HERE,
            check=True,
        )
    lines = [
        f"### iou-eval compare, {args.samples} bootstrap samples (seed {args.seed})",
        "",
        f"Machine: {_machine()}. Wall time from process start (median of {args.runs} run(s)); "
        "the machine may be shared, so compare the ratio measured in the same run.",
        "",
        "| case | tool | wall (s) | CPU (s) | peak RSS (MiB) | status |",
        "|---|---|---:|---:|---:|---|",
    ]
    small = ensure_pair(1, args.seed, 500)
    ours = _time(
        "iou-eval (500 images)", iou_eval_cmd(*small, args.samples), args.runs, args.timeout
    )
    hot = _time("hotcoco (500 images)", hotcoco_cmd(*small, args.samples), args.runs, args.timeout)
    for name, r in (("iou-eval", ours), ("hotcoco coco compare", hot)):
        lines.append(
            f"| 500 images | {name} | {r[0]:.2f} | {r[1]:.2f} | {r[2] / 1024:.0f} | {r[3]} |"
        )
    verdicts = []
    if ours[3] == "ok" and hot[3] == "ok":
        ratio = ours[0] / hot[0]
        verdicts.append(
            f"500 images: iou-eval / hotcoco = {ratio:.3f}x "
            f"(goal <= 0.2x: {'meets' if ratio <= 0.2 else 'misses'} it)"
        )
    if not args.skip_full:
        full = ensure_pair(1, args.seed, None)
        r = _time(
            "iou-eval (5,000 images)", iou_eval_cmd(*full, args.samples), args.runs, args.timeout
        )
        lines.append(
            f"| 5,000 images | iou-eval | {r[0]:.2f} | {r[1]:.2f} | {r[2] / 1024:.0f} | {r[3]} |"
        )
        if r[3] == "ok":
            verdicts.append(
                f"5,000 images: {r[0]:.1f} s (goal < 30 s: {'meets' if r[0] < 30 else 'misses'} it)"
            )
    print("\n".join(lines + [""] + verdicts))


if __name__ == "__main__":
    main()
