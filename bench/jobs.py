"""Evaluation in parts (issue 24): ``--jobs 2`` vs ``--jobs 1``, partial bytes per prediction,
``merge`` of 100 shards.

* time and peak memory of a run and all its worker processes: the sum of their proportional
  set sizes (PSS: a page shared by fork counts once over the processes that share it), sampled
  every 20 ms from /proc; each run's JSON (bar ``meta.seconds``) must equal ``--jobs 1``'s;
* the partial file of the whole set: bytes per evaluated prediction;
* 100 shard files written by the library (one load), then ``iou-eval merge`` of all of them
  timed as a process, its JSON equal to the one-shot run's.

    python bench/jobs.py --scale 10     # `make bench` (generates the 10x set once)
    python bench/jobs.py --scale 1 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402

BIN = os.path.dirname(os.path.abspath(sys.executable))
EXE = os.path.join(BIN, "iou-eval")


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(root: int) -> list[int]:
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            parent[int(name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(c for c, pp in parent.items() if pp == p)
    return out


def run_tree(cmd: list[str]) -> tuple[float, float, float, str]:
    """(wall s, peak summed PSS MiB of the process tree, CPU s of the tree, stdout)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, sum(_pss_kib(p) for p in _tree(proc.pid)))
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        out.seek(0)
        text = out.read().decode()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {code}")
    # the rusage of a reaped child includes the children it reaped (the workers)
    return wall, peak / 1024, usage.ru_utime + usage.ru_stime, text


def _same(a: str, b: str) -> bool:
    da, db = json.loads(a), json.loads(b)
    for d in (da, db):
        d["meta"].pop("seconds", None)
    return da == db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--shards", type=int, default=100)
    args = ap.parse_args()
    preds, gt = gen.ensure(args.scale, args.seed)
    base = [EXE, preds, gt, "-o", "json", "-q"]
    res: dict[int, list[tuple[float, float, float]]] = {1: [], 2: []}
    ref = None
    for _ in range(args.runs):
        for jobs in (1, 2):
            wall, mem, cpu, out = run_tree([*base, "--jobs", str(jobs)])
            if ref is None:
                ref = out
            elif not _same(ref, out):
                raise SystemExit(f"--jobs {jobs}: the report differs from --jobs 1")
            res[jobs].append((wall, mem, cpu))

    def med(jobs: int, i: int) -> float:
        return statistics.median(x[i] for x in res[jobs])

    t1, t2, m1, m2 = med(1, 0), med(2, 0), med(1, 1), med(2, 1)
    c1, c2 = med(1, 2), med(2, 2)
    load = os.getloadavg()[0]
    print(
        f"Scale {args.scale}x, --jobs 2 vs --jobs 1 ({args.runs} run(s), median; reports equal): "
        f"time {t2:.2f} s vs {t1:.2f} s = {t2 / t1:.3f}x (goal <= 0.65x); CPU {c2:.1f} s vs "
        f"{c1:.1f} s = {c2 / c1:.2f}x; peak memory of all processes (PSS) {m2:.0f} MiB vs "
        f"{m1:.0f} MiB = {m2 / m1:.2f}x (goal <= 1.5x); load average {load:.1f} on "
        f"{os.cpu_count()} cores (wall times need an idle machine)"
    )

    # partial bytes per prediction, and merge of N shards (written by the library: one load)
    from iou_cli.api import load_pair, run_options
    from iou_cli.state.build import build_state, fingerprint
    from iou_cli.state.codec import to_bytes
    from iou_cli.state.jobs import shard_mask

    opts = run_options(None, {}).for_inputs().loader_options()
    ds = load_pair(preds, gt, opts)
    options: dict[str, Any] = {"iou_type": "bbox", "iou_thr": 0.5, "score_thr": None}
    fp = fingerprint(ds)
    with tempfile.TemporaryDirectory() as tmp:
        paths, total, n_rows = [], 0, 0
        for k in range(args.shards):
            state = build_state(
                ds, "coco", options, image_mask=shard_mask(len(ds.images), k, args.shards), fp=fp
            )
            state.header["inputs"] = {"predictions": preds, "ground_truth": gt}
            data = to_bytes(state)
            path = os.path.join(tmp, f"part{k:03d}.iou")
            with open(path, "wb") as fh:
                fh.write(data)
            paths.append(path)
            total += len(data)
            n_rows += len(state)
        whole = to_bytes(build_state(ds, "coco", options, fp=fp))
        n_all = n_rows
        wall, mem, _, out = run_tree([EXE, "merge", *paths, "-o", "json", "-q"])
        ok = ref is not None and _same(ref, out)
    del ds
    print(
        f"Partial file: {len(whole) / n_all:.1f} bytes per evaluated prediction "
        f"({len(whole) / 2**20:.1f} MiB for {n_all:,}; {args.shards} shards: "
        f"{total / n_all:.1f} bytes each incl. headers)"
    )
    print(
        f"merge of {args.shards} shards: {wall:.1f} s, peak {mem:.0f} MiB, report "
        f"{'equal to' if ok else 'DIFFERENT from'} the one-shot run's"
    )
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
