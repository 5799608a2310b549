"""Benchmark iou-eval against pycocotools, faster-coco-eval and hotcoco on a generated COCO set.

Every run is a fresh process timed from its start (wall clock around ``Popen`` ..
``os.wait4``), with the peak RSS and CPU time the kernel reports for it. Tools alternate
within a round (the order rotates every round) and the table shows medians. The 12 COCO
stats of each tool are checked for exact (bit-for-bit) equality with pycocotools'.

    python bench/run.py --scale 1                 # `make bench`
    python bench/run.py --scale 10                # `make bench-10x` (pycocotools not run)
    python bench/run.py --tools iou-eval,hotcoco --runs 5
    python bench/run.py --scale 1 --tools iou-eval,iou-eval+analyses   # analyses' cost

The anchors are benchmark-only dependencies (``pip install faster-coco-eval hotcoco``);
a tool that is not installed is reported as "not installed", never silently dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
import gen_kpt  # noqa: E402

BIN = os.path.dirname(os.path.abspath(sys.executable))
STAT_KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]
KPT_KEYS = ["AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75", "ARm", "ARl"]
ALL_TOOLS = ["iou-eval", "pycocotools", "faster-coco-eval", "hotcoco", "hotcoco-cli"]
# not in the default list: hotcoco's library held to one thread (its rayon pool), and iou-eval
# on all cores, so single-core and all-core figures can be set side by side in one run
EXTRA_TOOLS = ["hotcoco-1t", "iou-eval-jobs"]
# every analysis of issue 11 on top of the evaluation (not in the default tool list)
ANALYSES = ["--tide", "--confusion", "--per-image", "--calibration"]
REFERENCE = "pycocotools"
LIBRARY = "hotcoco"  # the target is stated relative to hotcoco used as a library


def _anchor(name: str) -> list[str]:
    return [sys.executable, os.path.join(HERE, "anchors", f"{name}_eval.py")]


def command(tool: str, preds: str, gt: str, iou_type: str = "bbox") -> list[str]:
    if tool == "iou-eval":
        exe = os.path.join(BIN, "iou-eval")
        exe = exe if os.path.exists(exe) else "iou-eval"
        return [exe, preds, gt, "-o", "json", "--iou-type", iou_type]
    if tool == "iou-eval-jobs":
        return command("iou-eval", preds, gt, iou_type) + ["--jobs", "0"]
    if tool == "iou-eval+analyses":
        return command("iou-eval", preds, gt, iou_type) + ANALYSES
    if tool == "pycocotools":
        return _anchor("pycocotools") + [preds, gt, iou_type]
    if tool == "faster-coco-eval":
        return _anchor("faster_coco_eval") + [preds, gt, iou_type]
    if tool == "hotcoco":
        return _anchor("hotcoco") + [preds, gt, iou_type]
    if tool == "hotcoco-1t":
        return ["env", "RAYON_NUM_THREADS=1", *command("hotcoco", preds, gt, iou_type)]
    if tool == "hotcoco-cli":
        exe = os.path.join(BIN, "coco")
        exe = exe if os.path.exists(exe) else "coco"
        return [exe, "eval", "--gt", gt, "--dt", preds, "--json", "--iou-type", iou_type]
    raise SystemExit(f"unknown tool {tool!r} (choose from {', '.join(ALL_TOOLS + EXTRA_TOOLS)})")


def installed(tool: str) -> bool:
    import importlib.util

    module = {
        "iou-eval": "iou_cli",
        "iou-eval+analyses": "iou_cli",
        "iou-eval-jobs": "iou_cli",
        "hotcoco-1t": "hotcoco",
        "pycocotools": "pycocotools",
        "faster-coco-eval": "faster_coco_eval",
        "hotcoco": "hotcoco",
        "hotcoco-cli": "hotcoco",
    }[tool]
    return importlib.util.find_spec(module) is not None


def parse_stats(tool: str, out: str) -> list[float]:
    """The 12 stats in pycocotools order; -1.0 where undefined (iou-eval says null)."""
    data = json.loads(out)
    if tool.startswith("iou-eval"):
        summary = data["summary"]
        return [-1.0 if summary[k] is None else float(summary[k]) for k in STAT_KEYS]
    if tool == "hotcoco-cli":
        metrics = data["metrics"]
        return [float(metrics[k]) for k in STAT_KEYS]
    return [float(v) for v in data][: len(STAT_KEYS)]


@dataclass
class Result:
    tool: str
    walls: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    stats: list[float] | None = None
    status: str = "ok"  # ok | failed: ... | timeout | not installed | not run


def run_once(cmd: list[str], timeout: float) -> tuple[float, int, float, str, str, int | None]:
    """(wall s, peak RSS KiB, CPU s, stdout, stderr tail, exit code or None on timeout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        deadline = t0 + timeout
        code: int | None = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                wall = time.perf_counter() - t0
                code = os.waitstatus_to_exitcode(status)
                proc.returncode = code
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                wall = time.perf_counter() - t0
                break
            time.sleep(0.002)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")[-2000:]
    return wall, int(usage.ru_maxrss), usage.ru_utime + usage.ru_stime, stdout, stderr, code


def _fmt_ratio(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}x"


# complexity: a script entry: options, tools and the result table in one place
def main() -> None:  # noqa: C901
    ap = argparse.ArgumentParser(description="iou-eval benchmark")
    ap.add_argument("--scale", type=int, default=1, help="1 (5k images) or 10 (50k images)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--runs", type=int, default=None, help="runs per tool (default 3 at 1x, 1 at 10x)"
    )
    ap.add_argument("--tools", default=",".join(ALL_TOOLS))
    ap.add_argument(
        "--tool-runs",
        default=None,
        help="per-tool run counts, e.g. 'pycocotools=1,faster-coco-eval=2'; 0 = not run "
        "(default: pycocotools=1 at 1x, pycocotools=0 at 10x)",
    )
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument(
        "--iou-type",
        choices=["bbox", "segm", "keypoints"],
        default="bbox",
        help="segm: masks derived from the box set (first 1,000 images per scale unit)",
    )
    ap.add_argument("--out", default=os.path.join(HERE, "_out"))
    args = ap.parse_args()

    if args.iou_type == "keypoints":  # pycocotools' 10 keypoint stats
        STAT_KEYS[:] = KPT_KEYS
    runs = args.runs if args.runs is not None else (3 if args.scale == 1 else 1)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for t in tools:
        command(t, "", "")  # validates the name
    per_tool = {t: runs for t in tools}
    per_tool[REFERENCE] = min(runs, 1) if args.scale == 1 else 0
    if args.tool_runs:
        for item in args.tool_runs.split(","):
            name, _, n = item.partition("=")
            per_tool[name.strip()] = int(n)

    # generate in a child process: a child's peak RSS starts from its parent's at fork, so a
    # parent that held the generated set would inflate every tool's figure
    mod, maker = "gen", "ensure_segm" if args.iou_type == "segm" else "ensure"
    if args.iou_type == "keypoints":
        mod, maker = "gen_kpt", "ensure"
    subprocess.run(
        [sys.executable, "-c", f"import {mod}; {mod}.{maker}({args.scale}, {args.seed})"],
        cwd=HERE,
        check=True,
    )
    module = gen_kpt if mod == "gen_kpt" else gen
    preds, gt = getattr(module, maker)(args.scale, args.seed)  # cached now: just the paths
    data_dir = os.path.dirname(preds)
    ref_cache = os.path.join(data_dir, "pycocotools_stats.json")

    if any(t.startswith("iou-eval") for t in tools):
        _byte_compile("iou_cli")
    results = {t: Result(t) for t in tools}
    for t in tools:
        if not installed(t):
            results[t].status = "not installed"
        elif per_tool.get(t, runs) <= 0:
            results[t].status = "not run"

    max_rounds = max((per_tool.get(t, runs) for t in tools), default=0)
    for r in range(max_rounds):
        order = tools[r % len(tools) :] + tools[: r % len(tools)]  # rotate: alternate tools
        for t in order:
            res = results[t]
            if res.status != "ok" or len(res.walls) >= per_tool.get(t, runs):
                continue
            cmd = command(t, preds, gt, args.iou_type)
            wall, rss, cpu, stdout, stderr, code = run_once(cmd, args.timeout)
            if code is None or code == -9:
                res.status = f"timeout (>{args.timeout:.0f} s)"
                print(f"  {t}: timeout", file=sys.stderr)
                continue
            if code != 0:
                res.status = f"failed (exit {code})"
                print(f"  {t}: exit {code}\n{stderr}", file=sys.stderr)
                continue
            try:
                stats = parse_stats(t, stdout)
            except (ValueError, KeyError, TypeError) as exc:
                res.status = f"failed (unreadable output: {exc})"
                print(f"  {t}: unreadable output {stdout[:300]!r}\n{stderr}", file=sys.stderr)
                continue
            res.walls.append(wall)
            res.rss_kib.append(rss)
            res.cpu.append(cpu)
            if res.stats is not None and res.stats != stats:
                res.status = "failed (stats differ between runs)"
            res.stats = stats
            print(
                f"  round {r + 1}: {t:<17} {wall:7.2f} s  {rss / 1024:7.0f} MiB  cpu {cpu:6.2f} s",
                file=sys.stderr,
            )

    # reference stats: this run's pycocotools, else the cached ones for this data set
    ref: list[float] | None = None
    if results.get(REFERENCE) and results[REFERENCE].stats is not None:
        ref = results[REFERENCE].stats
        with open(ref_cache, "w") as fh:
            json.dump(ref, fh)
    elif os.path.exists(ref_cache):
        with open(ref_cache) as fh:
            ref = json.load(fh)

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    base = results.get("iou-eval")
    base_wall = med(base.walls) if base and base.walls else None
    base_rss = med(base.rss_kib) if base and base.rss_kib else None

    rows = []
    for t in tools:
        res = results[t]
        if not res.walls:
            rows.append(f"| {t} | {res.status} | | | | | | |")
            continue
        w, m, c = med(res.walls), med(res.rss_kib), med(res.cpu)
        if ref is None:
            same = "n/a (no pycocotools stats)"
        elif res.stats == ref:
            same = "yes"
        else:
            diff = [k for k, a, b in zip(STAT_KEYS, res.stats or [], ref, strict=True) if a != b]
            dmax = max(abs(a - b) for a, b in zip(res.stats or [], ref, strict=True))
            same = f"no ({', '.join(diff)}; max |diff| {dmax:.2g})"
        rows.append(
            f"| {t} | {w:.2f} | {m / 1024:.0f} | {c:.2f} | {len(res.walls)} | "
            f"{_fmt_ratio(w / base_wall if base_wall else None)} | "
            f"{_fmt_ratio(m / base_rss if base_rss else None)} | {same} |"
        )

    n_img, n_gt, n_det = _counts(gt, preds)
    title = (
        f"Scale {args.scale}x {args.iou_type} (seed {args.seed}): {n_img:,} images, "
        f"{n_gt:,} ground truths, "
        f"{n_det:,} detections, results JSON {os.path.getsize(preds) / 2**20:.1f} MiB"
    )
    machine = _machine()
    lines = [
        f"### {title}",
        "",
        f"Machine: {machine}. Wall time from process start and peak RSS: median of the runs.",
        "",
        "| tool | wall (s) | peak RSS (MiB) | CPU (s) | runs | time / iou-eval | RSS / iou-eval "
        "| 12 stats = pycocotools |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
        *rows,
    ]
    lib = results.get(LIBRARY)
    if base_wall and base_rss and lib and lib.walls:
        tr = base_wall / med(lib.walls)
        mr = base_rss / med(lib.rss_kib)
        verdict = "meets" if tr <= 1.5 and mr <= 2.0 else "misses"
        lines += [
            "",
            f"iou-eval / hotcoco (library): time {tr:.2f}x, peak RSS {mr:.2f}x "
            f"(target: <= 1.5x and <= 2x: {verdict} it).",
        ]
    for mine, theirs, label in (
        ("iou-eval", "hotcoco-1t", "iou-eval / hotcoco on one thread (RAYON_NUM_THREADS=1)"),
        ("iou-eval-jobs", "hotcoco", "iou-eval --jobs 0 / hotcoco on all cores"),
    ):
        a, b = results.get(mine), results.get(theirs)
        if a and b and a.walls and b.walls:
            lines += [
                "",
                f"{label}: wall {med(a.walls) / med(b.walls):.2f}x, "
                f"CPU {med(a.cpu) / med(b.cpu):.2f}x.",
            ]
    text = "\n".join(lines)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tag = f"x{args.scale}" + ("" if args.iou_type == "bbox" else f"-{args.iou_type}")
    with open(os.path.join(args.out, f"bench-{tag}-{stamp}.md"), "w") as fh:
        fh.write(text + "\n")
    with open(os.path.join(args.out, f"bench-{tag}-{stamp}.json"), "w") as fh:
        json.dump(
            {
                "scale": args.scale,
                "seed": args.seed,
                "machine": machine,
                "reference_stats": ref,
                "results": {t: vars(results[t]) for t in tools},
            },
            fh,
            indent=1,
        )


def _byte_compile(package: str) -> None:
    """Write the package's bytecode once before timing it: an editable install (``make
    install``) has none, and with PYTHONDONTWRITEBYTECODE set every run would compile the
    sources again (~0.1 s); a wheel install, like the peers', compiles at install time."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return
    for where in spec.submodule_search_locations:
        subprocess.run([sys.executable, "-m", "compileall", "-q", where], check=False)


def _counts(gt: str, preds: str) -> tuple[int, int, int]:
    cache = os.path.join(os.path.dirname(preds), "counts.json")
    if os.path.exists(cache):
        with open(cache) as fh:
            c: Any = json.load(fh)
        return c[0], c[1], c[2]
    with open(gt) as fh:
        g = json.load(fh)
    with open(preds, "rb") as fh:
        n_det = fh.read().count(b'"image_id"')
    c = [len(g["images"]), len(g["annotations"]), n_det]
    with open(cache, "w") as fh:
        json.dump(c, fh)
    return c[0], c[1], c[2]


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kib = int(fh.readline().split()[1])
        mem = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    py = platform.python_version()
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()}, Python {py}"


if __name__ == "__main__":
    main()
