"""Rotated boxes at DOTA-v1.0-val size: iou-eval's DOTA protocol against a devkit-style
straight loop, and COCO on OBB against hotcoco's OBB evaluation.

The set is generated (458 images, about 28k ground truths of 15 classes with DOTA's skew,
about 300k predictions: jittered hits and background boxes), written once as DOTA labelTxt +
Task1 files and as COCO JSON with ``obb`` fields. Every job runs in a fresh process, timed
from its start with the peak RSS the kernel reports (``os.wait4``), reading its own files.

* ``dota``: iou-eval, ``--protocol dota`` (library call: loaders + protocol).
* ``devkit-loop``: the devkit's ``voc_eval`` loop (per class, per detection: the +1 pixel
  axis-aligned pre-filter, then polygon IoU of the kept ground truths), with shapely 2's
  vectorised intersection standing in for the compiled ``polyiou``.
* ``coco-obb``: iou-eval, ``--iou-type obb`` (COCO protocol); ``coco-obb-j2``: the same with
  ``--jobs 2`` (an extra row: hotcoco runs 2 threads); ``hotcoco``: its OBB ``COCOeval``
  (evaluate, accumulate, summarize).

    python bench/obb_bench.py            # `make bench`
    python bench/obb_bench.py --images 60 --runs 1   # a quick look
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

CLASSES = [
    "plane", "baseball-diamond", "bridge", "ground-track-field", "small-vehicle",
    "large-vehicle", "ship", "tennis-court", "basketball-court", "storage-tank",
    "soccer-ball-field", "roundabout", "harbor", "swimming-pool", "helicopter",
]  # fmt: skip
# DOTA-v1.0 val's class skew, roughly (small vehicles and ships dominate)
WEIGHTS = np.array([8, 1, 2, 1, 40, 20, 18, 3, 1, 5, 1, 1, 6, 3, 1], dtype=float)


def generate(out: str, n_images: int, seed: int = 0) -> dict[str, int]:
    from iou_cli.geometry.obb import corners_to_xywhr, xywhr_to_corners

    rng = np.random.default_rng(seed)
    p = WEIGHTS / WEIGHTS.sum()
    counts = np.minimum(rng.lognormal(3.6, 1.0, n_images).astype(int) + 1, 1500)
    counts = np.maximum((counts * (28_000 * n_images / 458) / counts.sum()).astype(int), 1)
    os.makedirs(os.path.join(out, "labelTxt"), exist_ok=True)
    os.makedirs(os.path.join(out, "task1"), exist_ok=True)
    images, anns, res = [], [], []
    task1: dict[str, list[str]] = {c: [] for c in CLASSES}
    n_fp_total = int(258_000 * n_images / 458)
    fp_share = (counts + 20) / (counts + 20).sum()

    def boxes_in(size: float, n: int, margin: float = 40.0) -> np.ndarray:
        return np.column_stack(
            [
                rng.uniform(margin, size - margin, n),
                rng.uniform(margin, size - margin, n),
                rng.lognormal(3.0, 0.6, n) + 4,
                rng.lognormal(2.6, 0.6, n) + 4,
                rng.uniform(-math.pi / 2, math.pi / 2, n),
            ]
        )

    for i, n in enumerate(counts):
        name = f"P{i:04d}"
        size = float(rng.choice([1024, 2048, 4000]))
        images.append({"id": i + 1, "file_name": f"{name}.png", "width": size, "height": size})
        cls = rng.choice(len(CLASSES), size=n, p=p)
        boxes = boxes_in(size, n)
        diff = (rng.random(n) < 0.1).astype(int)
        q = np.round(xywhr_to_corners(boxes), 1)
        lines = ["imagesource:GoogleEarth", "gsd:0.146"] + [
            " ".join(f"{v:.1f}" for v in row) + f" {CLASSES[c]} {d}"
            for row, c, d in zip(q, cls, diff, strict=True)
        ]
        with open(os.path.join(out, "labelTxt", f"{name}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        for b, c in zip(boxes, cls, strict=True):
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i + 1,
                    "category_id": int(c) + 1,
                    "obb": [float(v) for v in b],
                    "area": float(b[2] * b[3]),
                    "iscrowd": 0,
                }
            )
        # predictions: jittered hits (Poisson 1.5 per object) and background boxes
        k = rng.poisson(1.5, n)
        src = np.repeat(np.arange(n), k)
        hit = boxes[src] + rng.normal(0, 1, (src.size, 5)) * np.column_stack(
            [boxes[src, 2] / 10, boxes[src, 3] / 10, boxes[src, 2] / 10, boxes[src, 3] / 10,
             np.full(src.size, 0.1)]
        )  # fmt: skip
        hit[:, 2:4] = np.abs(hit[:, 2:4]) + 1
        n_fp = int(n_fp_total * fp_share[i])
        pred = np.concatenate([hit, boxes_in(size, n_fp, 0.0)])
        pcls = np.concatenate([cls[src], rng.choice(len(CLASSES), size=n_fp, p=p)])
        score = np.round(np.concatenate([rng.random(src.size), rng.random(n_fp) * 0.6]), 3)
        pq = np.round(xywhr_to_corners(pred), 1)  # Task1 files and the JSON: the same quads
        back = corners_to_xywhr(pq)
        for row, xywhr, c, s in zip(pq, back, pcls, score, strict=True):
            task1[CLASSES[c]].append(f"{name} {s} " + " ".join(f"{v:.1f}" for v in row))
            res.append(
                {
                    "image_id": i + 1,
                    "category_id": int(c) + 1,
                    "obb": [float(v) for v in xywhr],
                    "score": float(s),
                }
            )
    for c, lines in task1.items():
        with open(os.path.join(out, "task1", f"Task1_{c}.txt"), "w") as f:
            f.write("\n".join(lines) + ("\n" if lines else ""))
    cats = [{"id": k + 1, "name": c} for k, c in enumerate(CLASSES)]
    with open(os.path.join(out, "gt.json"), "w") as f:
        json.dump({"images": images, "annotations": anns, "categories": cats}, f)
    with open(os.path.join(out, "res.json"), "w") as f:
        json.dump(res, f)
    return {"images": n_images, "gt": len(anns), "pred": len(res)}


# ---------------------------------------------------------------- jobs (one per process)


def job_dota(data: str) -> dict[str, Any]:
    from iou_cli.data import align, order_images
    from iou_cli.loaders.dota import load_dota_gt, load_dota_task1
    from iou_cli.protocols.dota import run_dota

    gt = load_dota_gt(os.path.join(data, "labelTxt"))
    pr = load_dota_task1(os.path.join(data, "task1"))
    t0 = time.process_time()
    res = run_dota(align(pr, order_images(gt)), matches=False).result()
    return {
        "mAP": res.summary["mAP"],
        "AP": {r["name"]: r["AP"] for r in res.per_class},
        "eval_cpu": time.process_time() - t0,
    }


def _devkit_ap(rec: np.ndarray, prec: np.ndarray) -> float:
    ap = 0.0
    for t in np.arange(0.0, 1.1, 0.1):
        p = 0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
        ap = ap + p / 11.0
    return float(ap)


def job_devkit_loop(data: str) -> dict[str, Any]:
    import shapely

    label = os.path.join(data, "labelTxt")
    names = sorted(n[:-4] for n in os.listdir(label) if n.endswith(".txt"))
    recs = {}
    for im in names:
        objs = []
        with open(os.path.join(label, im + ".txt")) as f:
            for line in f:
                sp = line.strip().split(" ")
                if len(sp) < 9:
                    continue
                objs.append((sp[8], int(sp[9]) if len(sp) == 10 else 0, [float(v) for v in sp[:8]]))
        recs[im] = objs
    aps = {}
    eval_cpu = 0.0
    for cname in CLASSES:
        class_recs = {}
        npos = 0
        for im in names:
            r = [o for o in recs[im] if o[0] == cname]
            bbox = np.array([o[2] for o in r])
            difficult = np.array([o[1] for o in r]).astype(bool)
            npos += int(sum(~difficult))
            class_recs[im] = {"bbox": bbox, "difficult": difficult, "det": [False] * len(r)}
        with open(os.path.join(data, "task1", f"Task1_{cname}.txt")) as f:
            split = [x.strip().split(" ") for x in f.readlines()]
        image_ids = [x[0] for x in split]
        confidence = np.array([float(x[1]) for x in split])
        bb_all = np.array([[float(z) for z in x[2:]] for x in split]).reshape(-1, 8)
        t0 = time.process_time()  # the files are parsed: the evaluation proper starts
        order = np.argsort(-confidence)
        bb_all = bb_all[order]
        image_ids = [image_ids[x] for x in order]
        nd = len(image_ids)
        tp, fp = np.zeros(nd), np.zeros(nd)
        gpolys = {
            im: shapely.polygons(r["bbox"].reshape(-1, 4, 2)) if r["bbox"].size else None
            for im, r in class_recs.items()
        }
        for d in range(nd):
            r = class_recs[image_ids[d]]
            bb = bb_all[d]
            ovmax, jmax = -np.inf, -1
            g = r["bbox"]
            if g.size > 0:
                gx0, gy0 = g[:, 0::2].min(1), g[:, 1::2].min(1)
                gx1, gy1 = g[:, 0::2].max(1), g[:, 1::2].max(1)
                bx0, by0, bx1, by1 = bb[0::2].min(), bb[1::2].min(), bb[0::2].max(), bb[1::2].max()
                iw = np.maximum(np.minimum(gx1, bx1) - np.maximum(gx0, bx0) + 1.0, 0.0)
                ih = np.maximum(np.minimum(gy1, by1) - np.maximum(gy0, by0) + 1.0, 0.0)
                inters = iw * ih
                uni = (
                    (bx1 - bx0 + 1.0) * (by1 - by0 + 1.0)
                    + (gx1 - gx0 + 1.0) * (gy1 - gy0 + 1.0)
                    - inters
                )
                keep = np.where(inters / uni > 0)[0]
                if len(keep):
                    p = shapely.polygons(bb.reshape(4, 2)).convex_hull
                    kept = shapely.convex_hull(gpolys[image_ids[d]][keep])
                    inter = shapely.area(shapely.intersection(kept, p))
                    union = shapely.area(kept) + p.area - inter
                    ov = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
                    ovmax = float(np.max(ov))
                    jmax = int(keep[int(np.argmax(ov))])
            if ovmax > 0.5:
                if not r["difficult"][jmax]:
                    if not r["det"][jmax]:
                        tp[d] = 1.0
                        r["det"][jmax] = True
                    else:
                        fp[d] = 1.0
            else:
                fp[d] = 1.0
        fp, tp = np.cumsum(fp), np.cumsum(tp)
        rec = tp / float(npos)
        prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
        aps[cname] = _devkit_ap(rec, prec)
        eval_cpu += time.process_time() - t0
    return {"mAP": sum(aps.values()) / len(aps), "AP": aps, "eval_cpu": eval_cpu}


def job_coco_obb(data: str) -> dict[str, Any]:
    from iou_cli import evaluate

    s = evaluate(
        os.path.join(data, "res.json"), os.path.join(data, "gt.json"), iou_type="obb", matches=False
    ).summary
    return {"stats": [s[k] for k in ("AP", "AP50", "AP75", "APs", "APm", "APl")]}


def job_coco_obb_jobs2(data: str) -> dict[str, Any]:
    from iou_cli import evaluate

    s = evaluate(
        os.path.join(data, "res.json"),
        os.path.join(data, "gt.json"),
        iou_type="obb",
        matches=False,
        jobs=2,
    ).summary
    return {"stats": [s[k] for k in ("AP", "AP50", "AP75", "APs", "APm", "APl")]}


def job_hotcoco(data: str) -> dict[str, Any]:
    import contextlib
    import io

    import hotcoco

    g = hotcoco.COCO(os.path.join(data, "gt.json"))
    d = g.load_res(os.path.join(data, "res.json"))
    e = hotcoco.COCOeval(g, d, "obb")
    with contextlib.redirect_stdout(io.StringIO()):
        e.evaluate()
        e.accumulate()
        e.summarize()
    return {"stats": [float(v) for v in e.stats[:6]]}


JOBS = {
    "dota": job_dota,
    "devkit-loop": job_devkit_loop,
    "coco-obb": job_coco_obb,
    "coco-obb-j2": job_coco_obb_jobs2,  # an extra row: --jobs 2, as hotcoco uses 2 threads
    "hotcoco": job_hotcoco,
}


def run_job(name: str, data: str) -> tuple[float, float, int, dict[str, Any]]:
    cmd = [sys.executable, os.path.abspath(__file__), "--job", name, "--data", data]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"{name} failed:\n{err}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, int(usage.ru_maxrss), json.loads(out.strip().splitlines()[-1])


def _generated(tmp: str, n_images: int) -> dict[str, int]:
    """The set's sizes, generated into ``tmp`` unless a previous run with the same
    ``--images`` left it there (``--keep``)."""
    stamp = os.path.join(tmp, "sizes.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            sizes: dict[str, int] = json.load(f)
        if sizes["images"] == n_images:
            return sizes
    # generated in a child: a job's peak RSS (ru_maxrss) starts from this process's size
    # at fork, so a parent holding the generated set would set every job's figure
    gen = [sys.executable, os.path.abspath(__file__), "--generate", tmp]
    gen += ["--images", str(n_images)]
    done = subprocess.run(gen, check=True, capture_output=True, text=True)
    sizes = json.loads(done.stdout.strip().splitlines()[-1])
    with open(stamp, "w") as f:
        json.dump(sizes, f)
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=458)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--job")
    ap.add_argument("--generate", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)  # a job's data folder
    ap.add_argument(
        "--keep",
        metavar="DIR",
        help="generate the set into DIR once and reuse it on later runs (default: a temp dir)",
    )
    ap.add_argument(
        "--only", help="comma-separated jobs to run (default: all); ratios need their pairs"
    )
    args = ap.parse_args()
    if args.job:
        print(json.dumps(JOBS[args.job](args.data)))
        return
    if args.generate:
        print(json.dumps(generate(args.generate, args.images)))
        return
    with contextlib.ExitStack() as stack:
        tmp = args.keep or stack.enter_context(tempfile.TemporaryDirectory(prefix="iou-eval-obb-"))
        sizes = _generated(tmp, args.images)
        print(
            f"OBB bench: {sizes['images']} images, {sizes['gt']} ground truths, {sizes['pred']} predictions"
        )
        results: dict[str, tuple[float, float, int, dict[str, Any]]] = {}
        for name in args.only.split(",") if args.only else JOBS:
            runs = [run_job(name, tmp) for _ in range(args.runs)]
            walls = sorted(r[0] for r in runs)
            cpus = sorted(r[1] for r in runs)
            results[name] = (
                walls[len(walls) // 2],
                cpus[len(cpus) // 2],
                max(r[2] for r in runs),
                runs[0][3],
            )
        for name, (wall, cpu, rss, _) in results.items():
            print(
                f"  {name:12s} {wall:8.2f} s wall {cpu:8.2f} s CPU  peak RSS {rss / 1024:6.0f} MiB"
            )

        def ratio(a: str, b: str) -> str:
            return (
                f"{results[a][0] / results[b][0]:.2f}x wall, "
                f"{results[a][1] / results[b][1]:.2f}x CPU"
            )

        if "dota" in results and "devkit-loop" in results:
            ours_ap, loop_ap = results["dota"][3]["AP"], results["devkit-loop"][3]["AP"]
            d_map = max(
                [abs(results["dota"][3]["mAP"] - results["devkit-loop"][3]["mAP"])]
                + [abs(ours_ap[c] - loop_ap[c]) for c in loop_ap if ours_ap.get(c) is not None]
            )
            e_loop = results["devkit-loop"][3]["eval_cpu"]
            e_ours = results["dota"][3]["eval_cpu"]
            print(
                f"  DOTA protocol: the devkit-style loop takes {ratio('devkit-loop', 'dota')} "
                f"iou-eval's time, files read included (goal >= 20x); matching and AP alone "
                f"{e_loop:.2f} s vs {e_ours:.2f} s CPU = {e_loop / e_ours:.1f}x; "
                f"max |AP or mAP delta| {d_map:.1e}"
            )
        cocos = [o for o in ("coco-obb", "coco-obb-j2") if o in results]
        if cocos and "hotcoco" in results:
            d_stats = max(
                abs((-1.0 if a is None else a) - b)  # undefined: null here, -1 in hotcoco
                for ours in cocos
                for a, b in zip(
                    results[ours][3]["stats"], results["hotcoco"][3]["stats"], strict=True
                )
            )
            print(
                "  COCO on OBB: "
                + "; ".join(f"{o} takes {ratio(o, 'hotcoco')} hotcoco's time" for o in cocos)
                + f" (goal <= 1.5x for coco-obb); max |AP delta| {d_stats:.1e}"
            )
        print("  (a shared machine: figures are noisy; CPU seconds are steadier than wall)")


if __name__ == "__main__":
    main()
