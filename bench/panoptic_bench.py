"""Panoptic benchmark: ``iou-eval panoptic`` beside hotcoco's panoptic evaluation
(``coco panoptic eval``, the Rust CLI) on a COCO-val-panoptic-sized generated set.

The set (generated once into ``bench/_data/panoptic-<n>-<seed>/``, about two minutes): ``n``
images of 640 x 480 (5,000 by default, COCO val2017 panoptic's count), 133 categories (80
things, 53 stuff, as COCO panoptic), about 20 ground-truth segments per image (stuff bands
and thing rectangles/ellipses, VOID gaps, some crowd regions) and a prediction drawn from it
(jittered shapes with new 24-bit ids, some relabelled, missed or spurious). Every run is a
fresh process (wall clock and peak RSS from ``bench/run.py``'s ``run_once``); tools alternate
within a round and the table shows medians. hotcoco runs on one thread
(``RAYON_NUM_THREADS=1``) and on all cores; iou-eval with ``--jobs 1`` and ``--jobs`` all
cores. PQ, SQ, RQ (All, Things, Stuff) of every tool are compared with iou-eval's. With the
``jit`` extra, runs of 1,000 image pairs or more use the compiled pixel-pair counter (numba's
start, about 0.5 s, is in every timed run; its one-time compile is done before timing).

    python bench/panoptic_bench.py                 # `make bench`
    python bench/panoptic_bench.py --images 1000   # a quicker subset
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402

H, W = 480, 640
N_THINGS, N_STUFF = 80, 53


def categories() -> list[dict[str, Any]]:
    cats = [{"id": i + 1, "name": f"thing{i + 1}", "isthing": 1} for i in range(N_THINGS)]
    cats += [{"id": 100 + i, "name": f"stuff{i}", "isthing": 0} for i in range(N_STUFF)]
    return cats


def _shape(canvas: np.ndarray, rng: np.random.Generator, value: int, box: tuple) -> None:
    y0, x0, y1, x1 = (int(v) for v in box)
    y0, x0 = max(y0, 0), max(x0, 0)
    y1, x1 = min(max(y1, y0 + 2), H), min(max(x1, x0 + 2), W)
    if y1 <= y0 or x1 <= x0:
        return
    if rng.random() < 0.5:
        canvas[y0:y1, x0:x1] = value
        return
    yy, xx = np.ogrid[y0:y1, x0:x1]
    cy, cx, ry, rx = (y0 + y1) / 2, (x0 + x1) / 2, (y1 - y0) / 2, (x1 - x0) / 2
    win = canvas[y0:y1, x0:x1]
    win[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1] = value


def _rgb(ids: np.ndarray) -> np.ndarray:
    return np.stack([ids & 255, (ids >> 8) & 255, (ids >> 16) & 255], axis=-1).astype(np.uint8)


def _segments(ids: np.ndarray, cat: dict[int, int], crowd: set[int]) -> list[dict[str, Any]]:
    vals, counts = np.unique(ids, return_counts=True)
    out = []
    for v, n in zip(vals.tolist(), counts.tolist(), strict=True):
        if v:
            out.append(
                {
                    "id": v,
                    "category_id": cat[v],
                    "area": n,
                    "bbox": [0, 0, 1, 1],
                    "iscrowd": int(v in crowd),
                }
            )
    return out


def _image(rng: np.random.Generator) -> tuple[Any, ...]:
    things = np.arange(1, N_THINGS + 1)
    stuff = np.arange(100, 100 + N_STUFF)
    gt = np.zeros((H, W), dtype=np.uint32)
    pred = np.zeros((H, W), dtype=np.uint32)
    gcat: dict[int, int] = {}
    pcat: dict[int, int] = {}
    crowd: set[int] = set()
    nxt = [int(rng.integers(1, 1 << 20))]

    def new_id(used: dict[int, int]) -> int:
        v = int(rng.integers(1, 1 << 24))
        while v in used:
            v = int(rng.integers(1, 1 << 24))
        return v

    # 4 to 6 stuff bands (one segment per stuff category), a VOID line between some
    n_bands = int(rng.integers(4, 7))
    edges = np.sort(rng.choice(np.arange(20, H - 20), size=n_bands - 1, replace=False))
    edges = [0, *edges.tolist(), H]
    cats = rng.choice(stuff, size=n_bands, replace=False)
    for b in range(n_bands):
        gid = nxt[0] + b
        gt[edges[b] : edges[b + 1] - (2 if rng.random() < 0.5 else 0), :] = gid
        gcat[gid] = int(cats[b])
        if rng.random() < 0.9:
            pid = new_id(pcat)
            j0, j1 = (int(v) for v in rng.integers(-25, 26, size=2))
            pred[max(edges[b] + j0, 0) : max(edges[b + 1] + j1, 0), :] = pid
            pcat[pid] = int(cats[b]) if rng.random() < 0.85 else int(rng.choice(stuff))
    n_things = int(rng.integers(11, 19))
    for t in range(n_things):
        gid = nxt[0] + 100 + t
        h, w = int(rng.integers(15, 160)), int(rng.integers(15, 200))
        y0, x0 = int(rng.integers(0, H - h)), int(rng.integers(0, W - w))
        _shape(gt, rng, gid, (y0, x0, y0 + h, x0 + w))
        gcat[gid] = int(rng.choice(things))
        if rng.random() < 0.05:
            crowd.add(gid)
        if rng.random() < 0.85:
            pid = new_id(pcat)
            j = rng.normal(0, 0.15, size=4) * np.array([h, w, h, w])
            _shape(pred, rng, pid, (y0 + j[0], x0 + j[1], y0 + h + j[2], x0 + w + j[3]))
            pcat[pid] = gcat[gid] if rng.random() < 0.85 else int(rng.choice(things))
    for _ in range(int(rng.integers(0, 4))):
        pid = new_id(pcat)
        h, w = int(rng.integers(10, 80)), int(rng.integers(10, 80))
        y0, x0 = int(rng.integers(0, H - h)), int(rng.integers(0, W - w))
        _shape(pred, rng, pid, (y0, x0, y0 + h, x0 + w))
        pcat[pid] = int(rng.choice(things))
    return gt, _segments(gt, gcat, crowd), pred, _segments(pred, pcat, set())


def generate(root: str, n: int, seed: int) -> tuple[str, str]:
    """Write ``root/gt.json`` + ``root/gt/`` and ``root/pred.json`` + ``root/pred/`` once."""
    from PIL import Image

    gt_json, pred_json = os.path.join(root, "gt.json"), os.path.join(root, "pred.json")
    if os.path.exists(gt_json) and os.path.exists(pred_json):
        return pred_json, gt_json
    os.makedirs(os.path.join(root, "gt"), exist_ok=True)
    os.makedirs(os.path.join(root, "pred"), exist_ok=True)
    rng = np.random.default_rng(seed)
    images, g_anns, p_anns = [], [], []
    t0 = time.perf_counter()
    for i in range(n):
        gt, gsegs, pred, psegs = _image(rng)
        name = f"{i + 1:012d}.png"
        Image.fromarray(_rgb(gt), mode="RGB").save(os.path.join(root, "gt", name))
        Image.fromarray(_rgb(pred), mode="RGB").save(os.path.join(root, "pred", name))
        images.append({"id": i + 1, "file_name": f"{i + 1:012d}.jpg", "width": W, "height": H})
        g_anns.append({"image_id": i + 1, "file_name": name, "segments_info": gsegs})
        p_anns.append({"image_id": i + 1, "file_name": name, "segments_info": psegs})
        if (i + 1) % 500 == 0:
            print(f"  generated {i + 1}/{n} images ({time.perf_counter() - t0:.0f} s)", flush=True)
    cats = categories()
    for path, anns in ((pred_json, p_anns), (gt_json, g_anns)):
        doc = {"images": images, "annotations": anns, "categories": cats}
        with open(path + ".tmp", "w") as fh:
            json.dump(doc, fh)
        os.replace(path + ".tmp", path)
    return pred_json, gt_json


KEYS = ("PQ", "SQ", "RQ", "PQ_th", "SQ_th", "RQ_th", "PQ_st", "SQ_st", "RQ_st")


def _ours(stdout: str) -> dict[str, float]:
    s = json.loads(stdout)["summary"]
    return {k: s[k] for k in KEYS}


def _hotcoco(stdout: str) -> dict[str, float]:
    doc = json.loads(stdout)
    m = doc.get("metrics", doc)
    out = {}
    for name, suffix in (("All", ""), ("Things", "_th"), ("Stuff", "_st")):
        part = m.get(name) or doc.get(name) or {}
        for k in ("pq", "sq", "rq"):
            v = part.get(k, part.get(k.upper()))
            if v is not None:
                out[f"{k.upper()}{suffix}"] = float(v)  # fractions, as ours
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args()
    root = os.path.join(HERE, "_data", f"panoptic-{args.images}-{args.seed}")
    from iou_cli.loaders.png import decoder_name

    print(f"panoptic bench: {args.images} images of {W} x {H} in {root}")
    print(f"iou-eval reads the PNGs with {decoder_name()} (the fast-png extra: zlib-ng+pyspng)")
    try:  # the jit extra: compile (or load) the counter once, so no timed run compiles it
        from iou_cli.tasks import panoptic_jit

        panoptic_jit.warm()
        print("iou-eval counts pixel pairs with the compiled counter (numba, the jit extra)")
    except ImportError:
        print("iou-eval counts pixel pairs with NumPy (numba, the jit extra, not installed)")
    pred, gt = generate(root, args.images, args.seed)
    bindir = os.path.dirname(sys.executable)
    cores = os.cpu_count() or 1
    ours = [os.path.join(bindir, "iou-eval"), "panoptic", pred, gt, "-o", "json", "-q"]
    coco = os.path.join(bindir, "coco")
    hot = [coco, "panoptic", "eval", "--gt", gt, "--pred", pred, "--json"]
    tools: dict[str, tuple[list[str], dict[str, str]]] = {
        "iou-eval --jobs 1": ([*ours, "--jobs", "1"], {}),
        "hotcoco 1 thread": (hot, {"RAYON_NUM_THREADS": "1"}),
        f"iou-eval --jobs {cores}": ([*ours, "--jobs", str(cores)], {}),
        f"hotcoco {cores} threads": (hot, {}),
    }
    times: dict[str, list[float]] = {t: [] for t in tools}
    rss: dict[str, list[int]] = {t: [] for t in tools}
    values: dict[str, dict[str, float]] = {}
    for r in range(args.runs):
        for name, (cmd, env) in tools.items():
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                wall, peak, _cpu, out, err, code = run.run_once(cmd, args.timeout)
            finally:
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            if code != 0:
                print(f"  {name}: exit {code}: {err.strip()[-400:]}")
                continue
            times[name].append(wall)
            rss[name].append(peak)
            if r == 0:
                try:
                    values[name] = (_ours if name.startswith("iou-eval") else _hotcoco)(out)
                except (ValueError, KeyError, AttributeError) as exc:
                    print(f"  {name}: could not read its output ({exc})")
    base = statistics.median(times["hotcoco 1 thread"]) if times["hotcoco 1 thread"] else None
    print(f"\n{'tool':<24}{'median s':>10}{'vs hotcoco 1 thr':>18}{'peak MiB':>10}")
    for name in tools:
        if not times[name]:
            print(f"{name:<24}{'failed':>10}")
            continue
        t = statistics.median(times[name])
        ratio = f"{t / base:.2f}x" if base else ""
        print(f"{name:<24}{t:>10.2f}{ratio:>18}{max(rss[name]) / 1024:>10.0f}")
    ref = values.get("iou-eval --jobs 1", {})
    for name, vals in values.items():
        if name == "iou-eval --jobs 1" or not vals:
            continue
        worst = max((abs(vals[k] - ref[k]) for k in vals if k in ref), default=float("nan"))
        print(f"max |delta| PQ/SQ/RQ, {name} vs iou-eval: {worst:.3g}")
    print("(shared machine: figures are noisy)")


if __name__ == "__main__":
    main()
