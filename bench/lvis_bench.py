"""LVIS-scale benchmark: iou-eval ``--protocol lvis`` beside hotcoco's CLI (``--lvis``),
faster-coco-eval (``lvis_style=True``) and lvis-api (the reference; minutes, cached).

The generated set has 5,000 images, 80 categories (rare / common / frequent by how many
images hold them, some rare ones without any ground truth), LVIS v1's layout (``coco_url``,
``neg_category_ids``, ``not_exhaustive_category_ids``, ``frequency``) and about 800k
detections, a third of the images carrying more than 300 (lvis-api keeps the top 300 per
image). Every run is a fresh process (wall clock and peak RSS from ``bench/run.py``'s
``run_once``); tools alternate within a round and the table shows medians. The 13 summary
values of each tool are compared with lvis-api's; lvis-api (minutes) runs once per data set
and its values and figures are kept in the data folder (``--tool-runs lvis-api=1`` runs it
again).

    python bench/lvis_bench.py                     # `make bench`
    python bench/lvis_bench.py --tool-runs lvis-api=1   # recompute the reference
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
import run  # noqa: E402

KEYS = [
    "AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
    "AR300", "ARs", "ARm", "ARl",
]  # fmt: skip
LVIS_KEYS = [
    "AP", "AP50", "AP75", "APs", "APm", "APl", "APr", "APc", "APf",
    "AR@300", "ARs@300", "ARm@300", "ARl@300",
]  # fmt: skip
TOOLS = ["iou-eval", "hotcoco-cli", "faster-coco-eval", "lvis-api"]
REFERENCE = "lvis-api"
TARGET = "hotcoco-cli"  # goal: <= 0.6x its time, < 1 GiB

N_IMAGES = 5000
N_CATS = 80


def generate(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    n_img = N_IMAGES
    cat_ids = np.sort(rng.choice(np.arange(1, 1204), size=N_CATS, replace=False)).astype(np.int64)
    # long tail: a category's share of the objects falls with its rank
    pop = 1.0 / np.arange(1, N_CATS + 1) ** 1.6
    rng.shuffle(pop)
    pop /= pop.sum()
    width = rng.choice([640, 640, 500, 480, 427], size=n_img).astype(np.float64)
    height = rng.choice([480, 427, 640, 375], size=n_img).astype(np.float64)
    n_obj = np.minimum(rng.negative_binomial(1.2, 1.2 / (1.2 + 9.0), size=n_img), 80)
    n_obj[rng.random(n_img) < 0.01] = 0
    g_img = np.repeat(np.arange(n_img), n_obj)
    ng = g_img.shape[0]
    gcat = rng.choice(N_CATS, size=ng, p=pop)
    # eight rare-by-rank categories have no ground truth at all
    no_gt = np.argsort(pop)[:8]
    gcat = np.where(np.isin(gcat, no_gt), np.argmax(pop), gcat)
    side = gen._sizes(rng, ng)
    aspect = np.exp(rng.normal(0, 0.5, ng))
    gw = np.maximum(np.round(np.minimum(side * np.sqrt(aspect), width[g_img] - 1), 2), 1.0)
    gh = np.maximum(np.round(np.minimum(side / np.sqrt(aspect), height[g_img] - 1), 2), 1.0)
    gx = np.round(rng.random(ng) * (width[g_img] - gw), 2)
    gy = np.round(rng.random(ng) * (height[g_img] - gh), 2)
    area = np.round(gw * gh * rng.uniform(0.45, 0.95, ng), 2)

    # frequency groups from the images that hold each category (LVIS: < 10 rare, < 100
    # common; here scaled to the set: the quarter least seen rare, the next third common)
    present = np.unique(g_img * N_CATS + gcat)
    img_count = np.bincount(present % N_CATS, minlength=N_CATS)
    rank = np.argsort(np.argsort(img_count, kind="stable"), kind="stable")
    freq = np.where(rank < N_CATS // 4, "r", np.where(rank < N_CATS * 7 // 12, "c", "f"))

    # federated labels: a few verified-absent categories per image; some present ones are
    # not exhaustively annotated
    neg: list[list[int]] = []
    nel: list[list[int]] = []
    starts = np.searchsorted(present // N_CATS, np.arange(n_img + 1))
    for i in range(n_img):
        here = present[starts[i] : starts[i + 1]] % N_CATS
        absent = np.setdiff1d(np.arange(N_CATS), here)
        neg.append(
            sorted(int(cat_ids[c]) for c in rng.choice(absent, int(rng.integers(2, 9)), False))
        )
        nel.append([int(cat_ids[c]) for c in here if rng.random() < 0.15])

    # detections: hits, near duplicates and class confusions of the ground truths, then
    # background ones: a third of the images get 301-450 in all, the others ~50
    parts = []

    def jitter(idx: np.ndarray, sigma: float) -> tuple[np.ndarray, ...]:
        k = idx.shape[0]
        w, h = gw[idx], gh[idx]
        return (
            gx[idx] + rng.normal(0, sigma, k) * w,
            gy[idx] + rng.normal(0, sigma, k) * h,
            w * np.exp(rng.normal(0, sigma, k)),
            h * np.exp(rng.normal(0, sigma, k)),
        )

    hit = np.flatnonzero(rng.random(ng) < 0.8)
    parts.append((g_img[hit], gcat[hit], *jitter(hit, 0.06), rng.beta(5, 2, hit.shape[0])))
    dup = np.repeat(np.arange(ng), rng.poisson(1.0, ng))
    parts.append((g_img[dup], gcat[dup], *jitter(dup, 0.15), rng.beta(2, 4, dup.shape[0])))
    conf = np.flatnonzero(rng.random(ng) < 0.5)
    wrong = rng.choice(N_CATS, size=conf.shape[0], p=pop)
    parts.append((g_img[conf], wrong, *jitter(conf, 0.08), rng.beta(2, 3, conf.shape[0])))
    per_img = np.bincount(np.concatenate([p[0] for p in parts]), minlength=n_img)
    full = rng.random(n_img) < 1 / 3
    target = np.where(full, rng.integers(301, 451, n_img), rng.poisson(50, n_img))
    n_bg = np.maximum(target - per_img, 0)
    b_img = np.repeat(np.arange(n_img), n_bg)
    nb = b_img.shape[0]
    bs = gen._sizes(rng, nb)
    ba = np.exp(rng.normal(0, 0.6, nb))
    bw = np.minimum(bs * np.sqrt(ba), width[b_img] - 1)
    bh = np.minimum(bs / np.sqrt(ba), height[b_img] - 1)
    bx = rng.random(nb) * (width[b_img] - bw)
    by = rng.random(nb) * (height[b_img] - bh)
    parts.append((b_img, rng.choice(N_CATS, nb, p=pop), bx, by, bw, bh, rng.beta(1, 6, nb)))

    d_img = np.concatenate([p[0] for p in parts])
    d_cat = np.concatenate([p[1] for p in parts])
    dx, dy, dw, dh, ds = (np.concatenate([p[i] for p in parts]) for i in range(2, 7))
    dx = np.clip(dx, 0, width[d_img] - 1)
    dy = np.clip(dy, 0, height[d_img] - 1)
    dw = np.clip(dw, 0.5, width[d_img] - dx)
    dh = np.clip(dh, 0.5, height[d_img] - dy)
    order = np.lexsort((rng.random(d_img.shape[0]), d_img))
    dets = {
        "image_id": d_img[order] + 1,
        "category_id": cat_ids[d_cat[order]],
        "x": np.round(dx[order], 2),
        "y": np.round(dy[order], 2),
        "w": np.round(dw[order], 2),
        "h": np.round(dh[order], 2),
        "score": np.round(ds[order], 3),
    }
    images = [
        {
            "id": i + 1,
            "width": int(width[i]),
            "height": int(height[i]),
            "license": 1,
            "coco_url": f"http://images.cocodataset.org/val2017/{i + 1:012d}.jpg",
            "neg_category_ids": neg[i],
            "not_exhaustive_category_ids": nel[i],
        }
        for i in range(n_img)
    ]
    annotations = [
        {
            "id": k + 1,
            "image_id": int(g_img[k]) + 1,
            "category_id": int(cat_ids[gcat[k]]),
            "bbox": [float(gx[k]), float(gy[k]), float(gw[k]), float(gh[k])],
            "area": float(area[k]),
        }
        for k in range(ng)
    ]
    categories = [
        {
            "id": int(c),
            "name": f"thing_{int(c)}",
            "synset": f"thing_{int(c)}.n.01",
            "frequency": str(freq[k]),
            "image_count": int(img_count[k]),
        }
        for k, c in enumerate(cat_ids)
    ]
    gt = {
        "info": {"description": f"iou-eval LVIS benchmark, seed {seed}"},
        "images": images,
        "annotations": annotations,
        "categories": categories,
    }
    return gt, dets


def ensure(seed: int = 0) -> tuple[str, str]:
    """Generate the set unless it exists; returns (preds_path, gt_path)."""
    out = os.path.join(HERE, "_data", f"lvis_s{seed}")
    gt_path = os.path.join(out, "gt.json")
    pred_path = os.path.join(out, "preds.json")
    if os.path.exists(gt_path) and os.path.exists(pred_path):
        return pred_path, gt_path
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    gt, dets = generate(seed)
    with open(gt_path + ".tmp", "w", encoding="ascii") as fh:
        json.dump(gt, fh)
    os.replace(gt_path + ".tmp", gt_path)
    gen.write_dets(pred_path, dets)
    per_img = np.bincount(dets["image_id"])
    print(
        f"generated {out}: {len(gt['images'])} images, {len(gt['annotations'])} ground truths, "
        f"{dets['image_id'].shape[0]} detections ({int((per_img > 300).sum())} images over 300), "
        f"preds {os.path.getsize(pred_path) / 2**20:.1f} MiB in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return pred_path, gt_path


def command(tool: str, preds: str, gt: str) -> list[str]:
    if tool == "iou-eval":
        exe = os.path.join(run.BIN, "iou-eval")
        return [exe if os.path.exists(exe) else "iou-eval", preds, gt, "--protocol", "lvis"] + [
            "-o",
            "json",
        ]
    if tool == "hotcoco-cli":
        exe = os.path.join(run.BIN, "coco")
        exe = exe if os.path.exists(exe) else "coco"
        return [exe, "eval", "--gt", gt, "--dt", preds, "--lvis", "--json"]
    if tool == "faster-coco-eval":
        return run._anchor("faster_coco_eval_lvis") + [preds, gt]
    if tool == "lvis-api":
        return run._anchor("lvis_api") + [preds, gt]
    raise SystemExit(f"unknown tool {tool!r} (choose from {', '.join(TOOLS)})")


def installed(tool: str) -> bool:
    import importlib.util

    module = {
        "iou-eval": "iou_cli",
        "hotcoco-cli": "hotcoco",
        "faster-coco-eval": "faster_coco_eval",
        "lvis-api": "lvis",
    }[tool]
    return importlib.util.find_spec(module) is not None


def parse_stats(tool: str, out: str) -> list[float]:
    """The 13 values in KEYS order; -1.0 where undefined."""
    data = json.loads(out)
    if tool == "iou-eval":
        return [-1.0 if data["summary"][k] is None else float(data["summary"][k]) for k in KEYS]
    if tool == "hotcoco-cli":
        return [float(data["metrics"][k]) for k in LVIS_KEYS]
    return [float(v) for v in data]


# complexity: a script entry: options, tools and the result table in one place
def main() -> None:  # noqa: C901
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument(
        "--tool-runs",
        default=None,
        help="e.g. 'lvis-api=1' (default: lvis-api once per data set, then its cached values)",
    )
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--out", default=os.path.join(HERE, "_out"))
    args = ap.parse_args()
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    # generate in a child process (a child's peak RSS starts from its parent's at fork)
    subprocess.run(
        [sys.executable, "-c", f"import lvis_bench; lvis_bench.ensure({args.seed})"],
        cwd=HERE,
        check=True,
    )
    preds, gt = ensure(args.seed)
    ref_cache = os.path.join(os.path.dirname(preds), "lvis_api_stats.json")
    per_tool = {t: args.runs for t in tools}
    per_tool[REFERENCE] = 0 if os.path.exists(ref_cache) else 1  # minutes: once per data set
    for item in (args.tool_runs or "").split(","):
        if item.strip():
            name, _, n = item.partition("=")
            per_tool[name.strip()] = int(n)

    results = {t: run.Result(t) for t in tools}
    for t in tools:
        if not installed(t):
            results[t].status = "not installed"
        elif per_tool.get(t, 0) <= 0:
            results[t].status = "not run"
    for r in range(max(per_tool.values(), default=0)):
        order = tools[r % len(tools) :] + tools[: r % len(tools)]
        for t in order:
            res = results[t]
            if res.status != "ok" or len(res.walls) >= per_tool[t]:
                continue
            wall, rss, cpu, stdout, stderr, code = run.run_once(command(t, preds, gt), args.timeout)
            if code != 0:
                res.status = "timeout" if code in (None, -9) else f"failed (exit {code})"
                print(f"  {t}: {res.status}\n{stderr}", file=sys.stderr)
                continue
            res.walls.append(wall)
            res.rss_kib.append(rss)
            res.cpu.append(cpu)
            res.stats = parse_stats(t, stdout)
            print(f"  round {r + 1}: {t:<17} {wall:7.2f} s  {rss / 1024:7.0f} MiB", file=sys.stderr)

    # the reference's values (and the cost of its run) are kept beside the data set
    lvis_res = results.get(REFERENCE)
    ref = lvis_res.stats if lvis_res is not None else None
    if lvis_res is not None and ref is not None:
        with open(ref_cache, "w") as fh:
            json.dump({"stats": ref, "wall": lvis_res.walls, "rss_kib": lvis_res.rss_kib,
                       "cpu": lvis_res.cpu}, fh)  # fmt: skip
    elif os.path.exists(ref_cache):
        with open(ref_cache) as fh:
            cached = json.load(fh)
        ref = cached["stats"] if isinstance(cached, dict) else cached
        if lvis_res is not None and isinstance(cached, dict) and cached.get("wall"):
            lvis_res.walls, lvis_res.rss_kib = cached["wall"], cached["rss_kib"]
            lvis_res.cpu, lvis_res.stats = cached["cpu"], ref
            lvis_res.status = "ok"

    base = results.get("iou-eval")
    base_wall = statistics.median(base.walls) if base and base.walls else None
    rows = []
    for t in tools:
        res = results[t]
        if not res.walls:
            rows.append(f"| {t} | {res.status} | | | | | |")
            continue
        w, m = statistics.median(res.walls), statistics.median(res.rss_kib)
        if ref is None:
            same = "n/a (no lvis-api stats yet)"
        else:
            d = max(abs(a - b) for a, b in zip(res.stats or [], ref, strict=True))
            same = "yes (bit-exact)" if res.stats == ref else f"max abs diff {d:.2g}"
        ratio = f"{w / base_wall:.2f}x" if base_wall else ""
        rows.append(
            f"| {t} | {w:.2f} | {m / 1024:.0f} | {statistics.median(res.cpu):.2f} | "
            f"{len(res.walls)} | {ratio} | {same} |"
        )
    with open(preds, "rb") as fh:
        n_det = fh.read().count(b'"image_id"')
    lines = [
        f"### LVIS protocol (seed {args.seed}): {N_IMAGES:,} images, {N_CATS} categories, "
        f"{n_det:,} detections",
        "",
        f"Machine: {run._machine()}. Wall time from process start and peak RSS: medians.",
        "",
        "| tool | wall (s) | peak RSS (MiB) | CPU (s) | runs | time / iou-eval "
        "| 13 values = lvis-api |",
        "|---|---:|---:|---:|---:|---:|---|",
        *rows,
    ]
    tgt = results.get(TARGET)
    if base_wall and base and tgt and tgt.walls:
        tr = base_wall / statistics.median(tgt.walls)
        mib = statistics.median(base.rss_kib) / 1024
        ok = "meets" if tr <= 0.6 and mib < 1024 else "misses"
        lines += [
            "",
            f"iou-eval / hotcoco CLI: time {tr:.2f}x, peak RSS {mib:.0f} MiB "
            f"(goal: <= 0.6x and < 1 GiB: {ok} it).",
        ]
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(args.out, f"bench-lvis-{stamp}.md"), "w") as fh:
        fh.write(text + "\n")


if __name__ == "__main__":
    main()
