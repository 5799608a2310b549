"""Did it get better? Two models on one ground truth, with paired bootstrap CIs and a gate.

Two entry points, one result (:class:`Comparison`):

* :func:`compare_predictions` evaluates predictions A and B on the same ground truth. ``a``
  and ``b`` are the single runs' values (the same code path as ``iou-eval PRED GT``, so equal
  bit for bit) and ``delta`` is ``b - a``. With ``bootstrap=N`` the images are resampled
  with replacement N times; both models are re-scored on the same sample (paired) and the
  percentile interval of the N deltas is the CI. A delta is *significant* when its CI
  excludes zero.
* :func:`compare_reports` compares two saved ``-o json`` reports (no ground truth): deltas
  without CIs.

:func:`check_gates` turns ``--fail-if-worse KEY=MARGIN`` into failures: B is worse than A by
more than MARGIN (``delta < -MARGIN`` for higher-is-better keys, ``delta > MARGIN`` for
lower-is-better keys such as fp and fn); with ``significant_only`` only when the CI also
excludes zero. The library never prints or exits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import UsageError
from .saved import fingerprint, load_report, looks_like_report

if TYPE_CHECKING:  # pragma: no cover
    from ..options import RunOptions

METHOD = "paired bootstrap over images (percentile interval)"
# a class with fewer ground truths is never called significant (its CI rests on a handful of
# objects, and resampling images rarely moves them)
MIN_GT = 10


@dataclass
class Comparison:
    """``metrics``: summary key -> ``{a, b, delta, ci_low, ci_high, significant}``;
    ``per_class``: ``{category_id, name, key, a, b, delta, ci_low, ci_high, significant,
    n_gt}`` in class order (a class with fewer than ``MIN_GT`` ground truths is never
    significant); ``params``: what was compared and how; ``gates``: checked gates."""

    metrics: dict[str, dict[str, Any]]
    per_class: list[dict[str, Any]]
    params: dict[str, Any]
    gates: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    # A and B themselves: their Results (predictions) or loaded reports, for the HTML report
    sources: tuple[Any, Any] | None = field(default=None, repr=False)


# --------------------------------------------------------------------------- key directions


def key_direction(key: str) -> str:
    """``higher``, ``lower`` or ``setting``: the gates' own reading of a summary key
    (iou_cli/gates.py); an input count (images, pixels) compares as higher-is-better."""
    from ..gates import direction

    d = str(direction(key))
    return d if d in ("higher", "lower", "setting") else "higher"


# --------------------------------------------------------------------------- gates


@dataclass(frozen=True)
class WorseGate:
    key: str
    margin: float
    text: str


def parse_gates(items: Sequence[str] | None) -> list[WorseGate]:
    """``KEY=MARGIN`` (MARGIN >= 0, in the key's own units: 0.01 AP, 50 fp)."""
    out: list[WorseGate] = []
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        try:
            if not sep or not key:
                raise ValueError
            margin = float(value)
            if not math.isfinite(margin) or margin < 0:
                raise ValueError
        except ValueError:
            raise UsageError(
                f"--fail-if-worse: expected KEY=MARGIN with MARGIN >= 0 such as AP=0.01, "
                f"got {item!r}"
            ) from None
        if key_direction(key) == "setting":
            raise UsageError(
                f"--fail-if-worse: {key} is a setting of the run, not a result; gate a metric "
                "such as AP, recall or fp"
            )
        out.append(WorseGate(key, margin, item))
    return out


def check_gate_keys(gates: Sequence[WorseGate], keys: Sequence[str]) -> None:
    for g in gates:
        if g.key not in keys:
            raise UsageError(
                f"--fail-if-worse: unknown summary key {g.key!r}; expected one of "
                f"{', '.join(k for k in keys if key_direction(k) != 'setting')}"
            )


def check_gates(
    comparison: Comparison, gates: Sequence[WorseGate], *, significant_only: bool = False
) -> list[dict[str, Any]]:
    """Evaluate the gates on ``comparison`` (also stored in ``comparison.gates``).

    Each entry: ``gate`` (as written), ``key``, ``margin``, ``direction``, ``delta``,
    ``significant``, ``failed`` and ``reason`` (one line, for stderr)."""
    check_gate_keys(gates, list(comparison.metrics))
    if significant_only and gates and not comparison.params.get("bootstrap"):
        raise UsageError(
            "--significant-only needs confidence intervals: compare predictions with a ground "
            "truth and --bootstrap N > 0 (two saved reports have no CIs)"
        )
    n_boot = comparison.params.get("bootstrap") or 0
    conf = comparison.params.get("confidence") or 0.95
    if significant_only and gates and n_boot < min_samples(conf):
        raise UsageError(
            f"--significant-only: {n_boot} bootstrap sample(s) cannot make a {conf:g} "
            f"confidence interval; use --bootstrap {min_samples(conf)} or more (1000 is usual)"
        )
    results: list[dict[str, Any]] = []
    for g in gates:
        m = comparison.metrics[g.key]
        d = key_direction(g.key)
        a, b, delta = m.get("a"), m.get("b"), m.get("delta")
        sig = m.get("significant")
        failed = False
        if a is not None and b is None:
            failed = True
            reason = f"{g.key} is undefined (null) for B, {a:.6g} for A"
        elif delta is None:
            reason = f"{g.key} is undefined for A"
        else:
            worse = -delta if d == "higher" else delta
            failed = worse > g.margin
            word = "dropped" if d == "higher" else "rose"
            reason = (
                f"{g.key} {word} by {abs(delta):.6g} (A {a:.6g} -> B {b:.6g}), allowed {g.margin:g}"
            )
            if failed and significant_only and not sig:
                failed = False
                reason += ", but the CI includes 0 (not significant)"
        results.append(
            {
                "gate": g.text,
                "key": g.key,
                "margin": g.margin,
                "direction": d,
                "delta": delta,
                "significant": sig,
                "failed": failed,
                "reason": reason,
            }
        )
    comparison.gates = results
    return results


# --------------------------------------------------------------------------- deltas and CIs


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _delta(a: Any, b: Any) -> Any:
    fa, fb = _num(a), _num(b)
    if fa is None or fb is None:
        return None
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        return b - a
    return fb - fa


def _entry(a: Any, b: Any, samples: np.ndarray | None, confidence: float) -> dict[str, Any]:
    """a, b, delta and (with bootstrap deltas ``samples``) the percentile CI."""
    e: dict[str, Any] = {"a": a, "b": b, "delta": _delta(a, b)}
    lo = hi = sig = None
    if samples is not None and e["delta"] is not None:
        s = samples[np.isfinite(samples)]
        if s.size:
            alpha = 1.0 - confidence
            lo_v, hi_v = np.percentile(s, [100 * alpha / 2, 100 * (1 - alpha / 2)])
            lo, hi = float(lo_v), float(hi_v)
            sig = bool(lo > 0 or hi < 0)
    e.update({"ci_low": lo, "ci_high": hi, "significant": sig})
    return e


def _class_label(row: dict[str, Any]) -> Any:
    return row.get("name") if row.get("name") is not None else row.get("category_id")


def _join_key(
    rows_a: Sequence[dict[str, Any]], rows_b: Sequence[dict[str, Any]]
) -> Callable[[dict[str, Any]], str]:
    """How A's and B's classes are paired: by category id when every row of both sides
    has one (two classes named ``cat`` stay apart), else by name."""
    rows = [*rows_a, *rows_b]
    if rows and all(r.get("category_id") is not None for r in rows):
        return lambda r: f"id:{r.get('category_id')}"
    return lambda r: f"name:{_class_label(r)}"


def _class_rows(
    rows_a: Sequence[dict[str, Any]],
    rows_b: Sequence[dict[str, Any]],
    key: str,
    samples: np.ndarray | None,
    confidence: float,
) -> list[dict[str, Any]]:
    """Per-class entries for ``key``, classes matched by name (then id); A's order, then
    classes only B has. ``samples``: (N, K) bootstrap deltas in A's class order, or None."""
    join = _join_key(rows_a, rows_b)
    by_b = {join(r): r for r in rows_b}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for k, ra in enumerate(rows_a):
        label = join(ra)
        seen.add(label)
        rb = by_b.get(label, {})
        s = samples[:, k] if samples is not None else None
        e = _entry(ra.get(key), rb.get(key), s, confidence)
        n_gt = ra.get("n_gt", rb.get("n_gt"))
        if e["significant"] and isinstance(n_gt, int) and n_gt < MIN_GT:
            e["significant"] = False  # a handful of objects: the interval is not trusted
        out.append(
            {
                "category_id": ra.get("category_id"),
                "name": _class_label(ra),
                "key": key,
                **e,
                "n_gt": n_gt,
            }
        )
    for rb in rows_b:
        label = join(rb)
        if label not in seen:
            out.append(
                {
                    "category_id": rb.get("category_id"),
                    "name": _class_label(rb),
                    "key": key,
                    **_entry(None, rb.get(key), None, confidence),
                    "n_gt": rb.get("n_gt"),
                }
            )
    return out


def class_key(protocol: str | None) -> str:
    """The per-class metric compared: the protocol's (AP; Ultralytics' per-class
    ``mAP50-95``)."""
    from ..protocols import get_protocol, protocol_names

    return get_protocol(protocol).class_key if protocol in protocol_names() else "AP"


# --------------------------------------------------------------------------- reports


def compare_reports(path_a: str, path_b: str) -> Comparison:
    """Deltas between two saved ``-o json`` reports (no CIs: there is no ground truth)."""
    doc_a, doc_b = load_report(path_a), load_report(path_b)
    pa, pb = doc_a.get("params", {}), doc_b.get("params", {})
    proto_a, proto_b = pa.get("protocol"), pb.get("protocol")
    if proto_a != proto_b:
        raise UsageError(
            f"the reports were made with different protocols ({proto_a} and {proto_b}); "
            "their numbers do not compare"
        )
    warnings: list[str] = []
    for k in sorted(set(pa) & set(pb)):
        if k != "score_thr" and pa[k] != pb[k]:
            warnings.append(f"the reports differ in the setting {k}: {pa[k]!r} and {pb[k]!r}")
    fa, fb = (fingerprint(d) for d in (doc_a, doc_b))
    if fa and fb and fa != fb:
        warnings.append(
            f"the reports were made against different ground truths (fingerprints {fa[:12]} "
            f"and {fb[:12]}): their numbers may not compare"
        )
    sa, sb = doc_a["summary"], doc_b["summary"]
    keys = [k for k in sa if k in sb]
    only = [k for k in list(sa) + list(sb) if (k in sa) != (k in sb)]
    if only:
        warnings.append(f"keys in only one report, not compared: {', '.join(only)}")
    metrics = {k: _entry(sa[k], sb[k], None, 0.95) for k in keys}
    ckey = class_key(proto_a)
    rows = list(doc_a["per_class"]) + list(doc_b["per_class"])
    if rows and not any(ckey in r for r in rows):  # e.g. `segment`/`labels` reports: IoU
        ckey = next((k for k in ("IoU", "mAP") if any(k in r for r in rows)), ckey)
    per_class = _class_rows(doc_a["per_class"], doc_b["per_class"], ckey, None, 0.95)
    params = {
        "mode": "reports",
        "a": path_a,
        "b": path_b,
        "protocol": proto_a,
        "bootstrap": 0,
        "class_key": ckey,
    }
    return Comparison(
        metrics=metrics,
        per_class=per_class,
        params=params,
        warnings=warnings,
        sources=(doc_a, doc_b),
    )


# --------------------------------------------------------------------------- predictions


def compare_predictions(
    pred_a: str,
    pred_b: str,
    ground_truth: str,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    load: Callable[[str, str], Any],
    evaluate: Callable[[Any], Any],
    scorer: Callable[[Any, Any], Any] | None = None,
) -> Comparison:
    """Evaluate A and B on ``ground_truth`` and compare them.

    ``load(pred, gt) -> Dataset`` and ``evaluate(ds) -> Result`` are the default verb's own
    loading and evaluation (same options), so ``a`` and ``b`` are its values bit for bit.
    ``scorer(ds, result)`` builds a bootstrap scorer (:mod:`.bootstrap`) or returns None when
    the protocol has none.
    """
    check_bootstrap_options(bootstrap, confidence)
    ds_a = load(pred_a, ground_truth)
    ds_b = load(pred_b, ground_truth)
    if len(ds_a.images) != len(ds_b.images) or len(ds_a.categories) != len(ds_b.categories):
        raise UsageError("A and B do not resolve to the same images and classes")
    res_a = evaluate(ds_a)
    res_b = evaluate(ds_b)
    samples: dict[str, np.ndarray] = {}
    class_samples: np.ndarray | None = None
    n_done = 0
    if bootstrap > 0 and scorer is not None:
        sc_a, sc_b = scorer(ds_a, res_a), scorer(ds_b, res_b)
        if sc_a is not None and sc_b is not None:
            from .scorers import paired_deltas

            samples, class_samples = paired_deltas(
                sc_a, sc_b, n_images=len(ds_a.images), n_samples=bootstrap, seed=seed
            )
            n_done = bootstrap
    sa, sb = res_a.summary, res_b.summary
    metrics = {
        k: _entry(sa.get(k), sb.get(k), samples.get(k) if n_done else None, confidence) for k in sa
    }
    protocol = res_a.params.get("protocol")
    ckey = class_key(protocol)
    per_class = _class_rows(
        res_a.per_class, res_b.per_class, ckey, class_samples if n_done else None, confidence
    )
    params = {
        "mode": "predictions",
        "a": pred_a,
        "b": pred_b,
        "ground_truth": ground_truth,
        "protocol": protocol,
        "images": len(ds_a.images),
        "bootstrap": n_done,
        "seed": seed,
        "confidence": confidence,
        "method": METHOD if n_done else None,
        "class_key": ckey,
        "min_gt": MIN_GT,
        "params_a": res_a.params,
        "params_b": res_b.params,
    }
    warnings = [f"A: {w}" for w in res_a.warnings] + [f"B: {w}" for w in res_b.warnings]
    if bootstrap > 0 and not n_done:
        warnings.append(f"no bootstrap for protocol {protocol}: deltas without CIs")
    return Comparison(
        metrics=metrics,
        per_class=per_class,
        params=params,
        warnings=warnings,
        sources=(res_a, res_b),
    )


MAX_BOOTSTRAP = 100_000  # resamples: far beyond a stable 95% CI (1,000 to 10,000)
MAX_SEED = 2**63 - 1


def min_samples(confidence: float) -> int:
    """Resamples a percentile CI at ``confidence`` needs to have both tails: 2 / (1 - c)."""
    return math.ceil(2.0 / (1.0 - confidence) - 1e-9)


def check_bootstrap_options(bootstrap: int, confidence: float, seed: int = 0) -> None:
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)):
        raise UsageError(f"--bootstrap: expected a sample count, got {bootstrap!r}")
    if bootstrap < 0 or bootstrap > MAX_BOOTSTRAP:
        raise UsageError(
            f"--bootstrap: expected a sample count from 0 to {MAX_BOOTSTRAP:,}, got {bootstrap}"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise UsageError(f"--seed: expected an integer, got {seed!r}")
    if not (0 <= seed <= MAX_SEED):
        raise UsageError(f"--seed: expected an integer from 0 to 2**63-1, got {seed}")
    if not (0.0 < confidence < 1.0):
        raise UsageError(f"--confidence: expected a level in (0, 1) such as 0.95, got {confidence}")


# --------------------------------------------------------------------------- front door


def _one_read_each(paths: Sequence[str]) -> None:
    """stdin or one pipe can be read once: given twice, B would silently be A."""
    from ..loaders.files import is_stream
    from ..outguard import identity

    seen: dict[object, str] = {}
    for p in paths:
        if not is_stream(p):
            continue
        key: object = identity("/dev/stdin" if p == "-" else p) or p
        if key in seen:
            raise UsageError(
                f"compare: {seen[key]} and {p} are one stream, which can be read only once "
                "(save it to a file to compare it with itself)"
            )
        seen[key] = p


def compare(
    paths: Sequence[str],
    options: RunOptions | None = None,
    *,
    gates: Sequence[WorseGate] = (),
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    **keywords: Any,
) -> Comparison:
    """``[PRED_A, PRED_B, GROUND_TRUTH]`` (any input format; ``options`` or keywords as
    ``api.evaluate``'s) or ``[REPORT_A, REPORT_B]`` (saved ``-o json`` reports). ``gates``
    are checked for known keys before any work (checking them is :func:`check_gates`)."""
    if len(paths) == 2:
        not_reports = [p for p in paths if not looks_like_report(p)]
        if not_reports:
            from ..text import term

            raise UsageError(
                "compare: give PRED_A PRED_B GROUND_TRUTH, or two saved -o json reports "
                f"({', '.join(term(p) for p in not_reports)} is not a report)"
            )
        comparison = compare_reports(paths[0], paths[1])
        check_gate_keys(gates, list(comparison.metrics))
        return comparison
    if len(paths) != 3:
        raise UsageError(
            "compare: expected PRED_A PRED_B GROUND_TRUTH or REPORT_A REPORT_B, got "
            f"{len(paths)} path(s)"
        )
    from ..api import evaluate_dataset, geometry_of, load_pair, run_options
    from ..protocols import get_protocol

    run = run_options(options, keywords).for_inputs()  # as the default verb: DOTA bbox = obb
    run.validate()
    check_bootstrap_options(bootstrap, confidence, seed)
    _one_read_each(paths)
    opts = run.loader_options()
    check_gate_keys(gates, run.summary_keys())  # option and key errors before the work
    spec = get_protocol(run.protocol)
    # the evaluations the bootstrap re-scores keep what it needs (COCO: every area range's
    # match table)
    if bootstrap > 0 and spec.bootstrap_options:
        run = replace(run, params=replace(run.params, **spec.bootstrap_options))

    def evaluate(ds: Any) -> Any:
        iou_type = geometry_of(ds, run.iou_type)  # rotated boxes read from DOTA txt
        return evaluate_dataset(
            ds, run if iou_type == run.iou_type else replace(run, iou_type=iou_type)
        )

    def scorer(ds: Any, result: Any) -> Any:
        from .scorers import scorer_for

        return scorer_for(spec.bootstrap, ds, result, run)

    return compare_predictions(
        paths[0],
        paths[1],
        paths[2],
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        load=lambda pred, gt: load_pair(pred, gt, opts),
        evaluate=evaluate,
        scorer=scorer,
    )
