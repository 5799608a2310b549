"""The engine-neutral halves of a cluster evaluation: the map of one bucket of prediction
rows (on a worker) and the driver's combination of the per-class rows into a Result.

The map keeps the one-shot run's tie order: rows are matched in the order of their ``order``
column (their position in the predictions' file), so ranks inside an (image, class) group and
VOC's file-order keys are the one-shot run's; ground-truth image ordinals are global (the
worker joins against the whole ground truth).
"""

from __future__ import annotations

import hashlib
import json
import re
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, IouEvalError, UsageError
from ..result import Result
from ..state.partial import PartialState
from . import rows

ORDER = "_iou_eval_order"
BUCKET = "_iou_eval_bucket"
RECORD_FIELDS = ("image_id", "category_id", "bbox", "segmentation", "obb", "score", "area", "id")
SHAPES = ("bbox", "segmentation", "obb")  # a prediction row's geometry column


@dataclass(frozen=True)
class Job:
    """What every worker needs: the ground truth (a path or a COCO dict), the protocol and
    its options, and the predictions' name for messages."""

    gt: Any
    protocol: str
    options: Mapping[str, Any]
    source: str = "<predictions>"
    token: str = ""  # cache key of the ground truth loaded on a worker

    def key(self) -> str:
        return (
            self.token
            or hashlib.sha256(
                json.dumps([self.gt, self.protocol, dict(self.options)], default=str).encode()
            ).hexdigest()
        )


_CONTEXTS: dict[str, Any] = {}  # one loaded ground truth per job and worker process


def context(job: Job, gt: Any = None) -> Any:
    """The job's :class:`~iou_cli.Evaluator` (its ground truth loaded once per process;
    ``gt``: the ground truth when the job names it by token, such as a broadcast dict)."""
    from ..streaming import Evaluator

    k = job.key()
    ev = _CONTEXTS.get(k)
    if ev is None:
        ev = Evaluator(job.gt if gt is None else gt, job.protocol, **dict(job.options))
        _CONTEXTS.clear()  # one job at a time per worker
        _CONTEXTS[k] = ev
    return ev


def check_protocol(protocol: str) -> None:
    from ..state.build import MERGEABLE

    if protocol not in MERGEABLE:
        raise UsageError(
            f"protocol {protocol!r} has no mergeable state (one of {', '.join(MERGEABLE)})"
        )


def check_columns(names: Any, source: str, order: str | None) -> None:
    """Refuse (on the driver, before any task) a table without the COCO result columns."""
    have = set(names)
    need = ["image_id", "category_id", "score"] + ([order] if order else [])
    missing = [c for c in need if c not in have]
    if not (set(SHAPES) & have):
        missing.append("bbox (or segmentation, obb)")
    if missing:
        raise InputError(
            source,
            "columns",
            f"expected COCO result rows, missing column(s) {', '.join(missing)} "
            f"(columns: {', '.join(sorted(map(str, have))) or 'none'})",
        )


def _plain(value: Any) -> Any:
    """A value from a DataFrame cell as plain Python (arrays as lists, NumPy scalars)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()] if value.dtype == object else value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if hasattr(value, "asDict"):  # a Spark Row
        return _plain(value.asDict(recursive=True))
    if isinstance(value, np.generic):
        return value.item()
    return value


def _missing(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, float) and value != value


def records(frame: Any) -> tuple[list[dict[str, Any]], np.ndarray]:
    """COCO result records of a pandas frame's rows in ``order``, and their order keys."""
    frame = frame.sort_values(ORDER, kind="stable")
    cols = [c for c in RECORD_FIELDS if c in frame.columns]
    out: list[dict[str, Any]] = []
    values = {c: frame[c].tolist() for c in cols}
    for i in range(len(frame)):
        rec = {}
        for c in cols:
            v = values[c][i]
            if not _missing(v):
                rec[c] = _plain(v)
        out.append(rec)
    return out, frame[ORDER].to_numpy().astype(np.int64)


def _where(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return "worker"
    f = tb[-1]
    return f"worker, in {f.name} ({f.filename.rsplit('/', 1)[-1]}:{f.lineno})"


def error_row(job: Job, exc: BaseException, order: np.ndarray | None) -> tuple[int, bytes]:
    """A worker's error as a row (file, where, what): located at the first prediction row
    of its bucket when the error is an input's."""
    if isinstance(exc, InputError):
        where = exc.where or ""
        m = re.match(r"\[(\d+)\]", where)
        if m and order is not None and int(m.group(1)) < order.size:
            # the record's index in its bucket -> its row in the predictions
            where = f"[{int(order[int(m.group(1))])}]{where[m.end() :]}"
        path = exc.path if exc.path and exc.path != "<predictions>" else job.source
        info = {"path": path, "where": where or "worker", "what": exc.reason}
    elif isinstance(exc, IouEvalError):
        info = {"path": job.source, "where": _where(exc), "what": str(exc)}
    else:
        info = {"path": job.source, "where": _where(exc), "what": f"{type(exc).__name__}: {exc}"}
    return rows.ERROR, rows.pack({}, info)


def raise_error(payload: bytes) -> None:
    _, info = rows.unpack(payload)
    raise InputError(info["path"], info["where"], info["what"])


def _digest(header: Mapping[str, Any]) -> str:
    h = {k: v for k, v in header.items() if k not in ("shard",)}
    return hashlib.sha256(json.dumps(h, sort_keys=True, default=str).encode()).hexdigest()


def _small(values: np.ndarray) -> np.ndarray:
    """Integers in the smallest unsigned dtype that holds them (int64 if any is negative)."""
    if values.size and int(values.min()) < 0:
        return values.astype(np.int64)
    top = int(values.max()) if values.size else 0
    for dt in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dt).max:
            return values.astype(dt)
    return values.astype(np.uint64)


def state_rows(state: PartialState) -> list[tuple[int, bytes]]:
    """A state cut into per-class rows and one META row."""
    out: list[tuple[int, bytes]] = []
    flags_op = state.flags()[:, int(state.header["layout"]["iou_flag"])]
    iou = np.full(len(state), np.nan)
    iou[flags_op] = state.iou
    has = np.zeros(len(state.header["categories"]["names"]), dtype=bool)
    if len(state):
        has[np.unique(state.category)] = True
    for arr in state.counts.values():
        has |= (arr.reshape(-1, arr.shape[-1]) != 0).any(axis=0)
    order = np.argsort(state.category, kind="stable")
    cats = state.category[order]
    for k in np.flatnonzero(has):
        lo, hi = np.searchsorted(cats, k), np.searchsorted(cats, k, side="right")
        sel = order[lo:hi]
        arrays: dict[str, np.ndarray] = {
            "score": state.score[sel],
            "image": _small(state.image[sel]),
            "rank": _small(state.rank[sel]),
            "bits": state.bits[sel],
            "iou": iou[sel][flags_op[sel]],
        }
        for name, arr in state.counts.items():
            arrays["count:" + name] = np.ascontiguousarray(arr[..., k])
        out.append((int(k), rows.pack(arrays)))
    meta = {"extra": dict(state.extra), "digests": [_digest(state.header)]}
    out.append((rows.META, rows.pack({"images": state.images}, meta)))
    return out


def map_bucket(job: Job, frame: Any, gt: Any = None) -> list[tuple[int, bytes]]:
    """One bucket of prediction rows (a pandas frame; whole images) -> per-class rows; any
    error -> one ERROR row (the driver raises it)."""
    order = None
    try:
        from ..state.build import build_state, restrict

        ev = context(job, gt)
        recs, order = records(frame)
        ds = ev._join(recs)  # the Evaluator's join against its ground truth
        if len(ds.pred) != len(recs):
            raise UsageError("distributed evaluation needs unknown='error' (rows were dropped)")
        covered = np.zeros(len(ds.images), dtype=bool)
        covered[ds.pred.image] = True
        ds, rows_taken = restrict(ds, covered)
        if job.options.get("iou_type") == "segm":
            from ..geometry.masks import prepare_masks

            ds = prepare_masks(ds)
        state = build_state(
            ds,
            job.protocol,
            ev._options,
            covered=np.flatnonzero(covered),
            pred_keys=order[rows_taken],
            fp=ev._fp,
        )
        return state_rows(state)
    except Exception as exc:  # reported on the driver, located
        return [error_row(job, exc, order)]


_GT_STATES: dict[str, PartialState] = {}  # the whole ground truth's counts, per job


def gt_state(job: Job, gt: Any = None) -> PartialState:
    """The state of the job's whole ground truth without predictions (its header, and its
    counts per class over every image), once per job and worker process."""
    from ..state.build import build_state

    k = job.key()
    st = _GT_STATES.get(k)
    if st is None:
        ev = context(job, gt)
        every = np.ones(len(ev._gt_ds.images), dtype=bool)
        st = build_state(ev._gt_ds, job.protocol, ev._options, image_mask=every, fp=ev._fp)
        _GT_STATES.clear()
        _GT_STATES[k] = st
    return st


def reduce_rows(job: Job, category: int, payloads: list[bytes], gt: Any = None) -> bytes:
    """The cluster's reduce of one group of rows with the same ``category``: a class's
    records from every bucket -> its per-class result (COCO, LVIS, VOC, VOC2007); META and
    ERROR rows are combined."""
    if category < 0:
        return rows.reduce_group(category, payloads)
    try:
        full = gt_state(job, gt)
        recs = rows.unpack(rows.concat_class(payloads))[0]
        if full.header["layout"]["kind"] in ("voc", "dota"):
            from ..state.classes_voc import voc_class_result

            n_gt = int(full.counts["n_gt"][category])
            out = voc_class_result(full.header, category, recs, n_gt)
            out["mapped"] = np.asarray(recs["count:n_gt"], dtype=np.int64).reshape(1)
            return rows.pack(out, {"class_result": True})
        from ..state.classes import class_result

        mapped = recs["count:n_pos"].astype(np.int64)
        n_pos = full.counts["n_pos"][:, category]
        out = class_result(full.header, category, recs, n_pos, int(recs["count:n_det"].sum()))
        out["mapped"] = mapped
        return rows.pack(out, {"class_result": True})
    except Exception as exc:  # reported on the driver, located
        return rows.pack({}, {"error": error_row(job, exc, None)[1].hex()})


def combine(job: Job, reduced: Iterable[tuple[int, bytes]]) -> Result:
    """The driver's step: per-class rows (one per class after the cluster's reduce) -> the
    Result of the union, with the ground truths of the images that had no prediction counted
    here."""
    from ..state.build import build_state

    ev = context(job)
    by_cat: dict[int, list[bytes]] = {}
    for cat, payload in reduced:
        by_cat.setdefault(int(cat), []).append(bytes(payload))
    if rows.ERROR in by_cat:
        raise_error(rows.first_error(by_cat[rows.ERROR]))
    n_img = len(ev._gt_ds.images)
    covered = np.zeros(n_img, dtype=bool)
    extra: dict[str, int] = {}
    digests: list[str] = []
    if rows.META in by_cat:
        arrs, info = rows.unpack(rows.concat_meta(by_cat.pop(rows.META)))
        imgs = arrs["images"].astype(np.int64)
        uniq, n = np.unique(imgs, return_counts=True)
        if (n > 1).any():
            key = ev._gt_ds.images.keys[int(uniq[n > 1][0])]
            raise InputError(
                job.source, "image_id", f"image {key!r} was matched in two buckets (a bug)"
            )
        covered[imgs] = True
        extra, digests = info["extra"], info["digests"]
    rest = build_state(ev._gt_ds, job.protocol, ev._options, image_mask=~covered, fp=ev._fp)
    if any(d != _digest(rest.header) for d in digests):
        raise UsageError(
            "distributed evaluation: the workers' ground truth or options differ from the "
            "driver's (same ground-truth file and iou-eval version everywhere?)"
        )
    return _combine_classes(rest, by_cat, extra)


def _combine_classes(rest: PartialState, by_cat: dict[int, list[bytes]], extra: dict) -> Result:
    from ..state.classes import combine as combine_classes
    from ..state.classes_voc import combine_voc

    parts: dict[int, dict[str, np.ndarray]] = {}
    for k in sorted(by_cat):
        payloads = by_cat.pop(k)
        arrs, info = rows.unpack(payloads[0])
        if "error" in info:
            raise_error(bytes.fromhex(info["error"]))
        if len(payloads) != 1 or not info.get("class_result"):
            raise UsageError(f"distributed evaluation: class {k} was not reduced on the cluster")
        parts[k] = dict(arrs)
    if rest.header["layout"]["kind"] in ("voc", "dota"):
        return combine_voc(rest, parts)
    return combine_classes(rest, parts, extra)


def _from_classes(
    rest: PartialState, by_cat: Mapping[int, list[bytes]], images: np.ndarray, extra: dict
) -> PartialState:
    """Every class's raw records as one state (the former driver's step, every record on
    the driver: ``bench/driver_memory.py --old`` measures it)."""
    cats = sorted(by_cat)
    parts = [rows.unpack(rows.concat_class(by_cat[k]))[0] for k in cats]
    counts = {name: np.zeros_like(arr) for name, arr in rest.counts.items()}
    for k, p in zip(cats, parts, strict=True):
        for name in counts:
            counts[name][..., k] = p["count:" + name]
    n = [p["score"].shape[0] for p in parts]
    nb = rest.bits.shape[1]
    empty = PartialState(  # the shapes of a union without predictions
        header=rest.header,
        images=images,
        category=np.zeros(0, np.int64),
        score=np.zeros(0),
        image=np.zeros(0, np.int64),
        rank=np.zeros(0, np.int64),
        bits=np.zeros((0, nb), np.uint8),
        iou=np.zeros(0),
    )

    def cat(name: str, default: np.ndarray) -> np.ndarray:
        return np.concatenate([p[name] for p in parts]) if parts else default

    score = cat("score", empty.score)
    flags_iou = cat("iou", empty.iou)
    bits = cat("bits", empty.bits)
    # the state's iou column follows row order over the operating point's true positives
    return PartialState(
        header=rest.header,
        images=images.astype(np.int64),
        category=np.repeat(np.asarray(cats, dtype=np.int64), n),
        score=score.astype(np.float64),
        image=cat("image", empty.image).astype(np.int64),
        rank=cat("rank", empty.rank).astype(np.int64),
        bits=bits.astype(np.uint8),
        iou=flags_iou.astype(np.float64),
        counts=counts,
        extra={k: int(v) for k, v in extra.items()},
        source=rest.source,
    )
