"""A fast reader of COCO *results* JSON straight to NumPy columns.

A results file is a list of ``{"image_id", "category_id", "bbox", "score"}`` objects. Parsing
it with :func:`json.loads` builds a dict, a list and ~7 number objects per record; msgspec
decodes it against a typed schema instead (one small struct per record, numbers parsed once,
types checked while parsing), about 3x faster and with a third of the memory.

msgspec's float parsing is correctly rounded, so every value is bit-identical to
``json.loads`` + ``float()`` (``tests/unit/test_fastcoco.py`` checks this with random
spellings; ``-0`` is the integer 0 there as here). The semantics are json.loads': a later
duplicate key wins, unknown keys are ignored (as the validating loader ignores them), the key
order is free. Anything the schema does not describe (a string or ``null`` for a number,
``NaN``, a missing key, a 3-number box, a non-integer id, a negative width...) returns
``None``, and the validating loader in :mod:`.coco` runs and says exactly what is wrong and
where.
"""

from __future__ import annotations

import os
import re
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..workers import end_workers, fork_workers

__all__ = ["read_results", "read_keypoint_results"]

_MAX_SIDE = 2**31  # an RLE side beyond this is no image: the validating loader says so


@cache
def _decoder(field: str = "bbox") -> Any:
    import msgspec

    class Result(msgspec.Struct, gc=False):
        image_id: int
        category_id: int
        bbox: tuple[float, float, float, float]
        score: float

    class ObbResult(msgspec.Struct, gc=False):
        image_id: int
        category_id: int
        obb: tuple[float, float, float, float, float]
        score: float

    if field == "segm":  # compressed RLE masks (defstruct: a nested type by value)
        rle = msgspec.defstruct("Rle", [("size", tuple[int, int]), ("counts", str)], gc=False)
        segm_result = msgspec.defstruct(
            "SegmResult",
            [
                ("image_id", int),
                ("category_id", int),
                ("segmentation", rle),
                ("score", float),
                ("bbox", tuple[float, float, float, float] | None, None),
            ],
            gc=False,
        )
        return msgspec.json.Decoder(list[segm_result])  # type: ignore[valid-type]
    return msgspec.json.Decoder(list[ObbResult] if field == "obb" else list[Result])


@cache
def _kpt_decoder() -> Any:
    import msgspec

    # keypoints stay raw JSON here: they are parsed below, all rows at once
    kpt_result = msgspec.defstruct(
        "KptResult",
        [
            ("image_id", int),
            ("category_id", int),
            ("keypoints", msgspec.Raw),
            ("score", float),
            ("bbox", tuple[float, float, float, float] | None, None),
        ],
        gc=False,
    )
    return msgspec.json.Decoder(list[kpt_result])  # type: ignore[valid-type]


def read_keypoint_results(data: bytes) -> dict[str, npt.NDArray[np.generic]] | None:
    """Columns of a COCO keypoint results list (``keypoints`` ``[x, y, score] * K``, one K
    for all rows; ``bbox`` on every row or on none), or ``None`` for anything else (then the
    validating loader says what is wrong and where). Adds ``keypoints`` (n, K, 3) to
    :func:`read_results`' columns; ``bbox`` is NaN where the rows give none.

    The rows' ``keypoints`` are kept as raw JSON and decoded a slice of rows at a time as one
    flat list of numbers (one typed decode instead of one list per row); a row that is not a
    flat list of numbers makes that decode fail, and each row's count must be the first's."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return _kpt_columns(data)


def _kpt_columns(data: bytes | memoryview) -> dict[str, npt.NDArray[np.generic]] | None:
    """:func:`read_keypoint_results` of a list without a BOM (also a slice of a bigger one)."""
    import msgspec

    try:
        recs = _kpt_decoder().decode(data)
    except msgspec.DecodeError:
        return None
    n = len(recs)
    if n == 0:
        return None
    kp_flat = _keypoint_numbers(list(map(attrgetter("keypoints"), recs)))
    if kp_flat is None:
        return None
    m = kp_flat.shape[0] // n
    cols = _id_score_columns(recs)
    if cols is None:
        return None
    image_id, category_id, score = cols
    kp = kp_flat.reshape(n, m // 3, 3)
    boxes = list(map(attrgetter("bbox"), recs))
    has = [b is not None for b in boxes]
    if any(has) and not all(has):
        return None
    if all(has):
        bbox = np.fromiter(chain.from_iterable(boxes), np.float64, 4 * n).reshape(n, 4)
        if not np.isfinite(bbox).all() or (bbox[:, 2:] < 0).any():
            return None
    else:
        bbox = np.full((n, 4), np.nan)
    if not (np.isfinite(kp).all() and np.isfinite(score).all()):
        return None
    return {
        "image_id": image_id,
        "category_id": category_id,
        "bbox": bbox,
        "score": score,
        "keypoints": kp,
    }


_KPT_ROWS = 256  # rows decoded at once: their floats stay in the allocator's warm arenas


def _keypoint_numbers(raws: list[Any]) -> npt.NDArray[np.float64] | None:
    """The numbers of every row's raw ``[x, y, v, ...]`` list, flat, or ``None`` unless every
    row is a flat list of the same count (a multiple of 3) of numbers.

    Rows are decoded a slice at a time (one typed decode of the slice's lists joined into
    one list of lists), each slice's floats copied into the array and freed before the next:
    the peak is one slice's Python floats, not all of them (~50 numbers a row)."""
    import msgspec

    n = len(raws)
    out: npt.NDArray[np.float64] | None = None
    m = 0
    dec = msgspec.json.Decoder(list[list[float]])
    for a in range(0, n, _KPT_ROWS):
        try:  # a Raw is a buffer: joined without a copy of each row
            rows = dec.decode(b"[" + b",".join(raws[a : a + _KPT_ROWS]) + b"]")
        except msgspec.DecodeError:
            return None
        if out is None:
            m = len(rows[0])
            if m == 0 or m % 3:
                return None
            out = np.empty(n * m, dtype=np.float64)
        if set(map(len, rows)) != {m}:
            return None
        out[a * m : (a + len(rows)) * m] = np.fromiter(
            chain.from_iterable(rows), np.float64, m * len(rows)
        )
    return out


def read_results(data: bytes, jobs: int = 1, *, field: str = "bbox") -> dict[str, Any] | None:
    """Columns of a COCO results list, or ``None`` when ``data`` is anything else.

    Returns ``image_id`` and ``category_id`` (int64), ``bbox`` (n, 4 float64, ``[x, y, w, h]``)
    and ``score`` (float64), row ``i`` being the list's record ``i``. ``field="obb"`` reads
    rotated boxes instead: ``obb`` (n, 5 float64, ``[cx, cy, w, h, angle]``); ``field="segm"``
    compressed RLE masks (:func:`_segm_columns`). ``jobs`` > 1: the slices are decoded by that
    many forked processes (the same columns).
    """
    if field == "keypoints" and jobs < 2:
        return read_keypoint_results(data)
    return Pending(data, jobs, field).get()


class Pending:
    """A results list being decoded: by forked workers from construction on (``jobs`` > 1 and
    a big file), else here, in :meth:`get`.

    A big file is decoded a slice of records at a time, so that at most one slice's record
    objects live at once (in each process). A slice boundary is a ``},{`` (white space
    allowed) between two records; the first slice starts at the real ``[`` and every slice
    must decode as a complete list of records, so a boundary found inside a string or a
    nested value makes a slice invalid: then the whole file is declined (``None``) and the
    validating loader reads it, with its located errors.
    """

    def __init__(self, data: bytes, jobs: int, field: str) -> None:
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        self.data, self.field = data, field
        self.procs: list[tuple[Any, Any]] = []
        self.shared: _Shared | None = None
        chunk = _CHUNK
        if jobs > 1 and len(data) >= _PARALLEL_MIN:
            chunk = min(_CHUNK, len(data) // jobs + 1)
        slices = None if len(data) <= chunk else _split(data, chunk)
        self.slices = slices
        n = min(jobs, len(slices or ()))
        if slices is None or n < 2:
            return
        import multiprocessing  # (only to fork: one process needs none of it)

        if "fork" not in multiprocessing.get_all_start_methods():
            return
        # plain forked processes (workers.fork_workers): a worker that dies only makes the
        # file declined, and the validating reader reads it
        # boxes come back through shared memory (no pickle of ~56 bytes a row); masks pickled
        self.shared = _Shared(slices, field) if field in ("bbox", "obb") else None
        _DATA[:] = [(data, field, slices, self.shared)]  # the workers are forked here, with it
        try:
            self.procs = fork_workers(_decode_share, [(w, n) for w in range(n)])
        finally:
            _DATA.clear()

    def get(self) -> dict[str, Any] | None:
        data, field, slices = self.data, self.field, self.slices
        if slices is None:
            return _columns(data, field)
        if not slices:
            return None
        if self.procs:
            n = len(self.procs)
            got: list[dict[str, Any] | None] = [None] * len(slices)
            try:
                for w, (_, recv) in enumerate(self.procs):
                    try:
                        share = recv.recv()
                    except (EOFError, OSError):  # the worker died: decline the file
                        return None
                    for k, cols in zip(
                        range(w, len(slices), n), share, strict=False
                    ):  # short: declined
                        if isinstance(cols, int):  # written to the shared columns
                            assert self.shared is not None
                            cols = self.shared.view(k, cols)
                        got[k] = cols
            finally:
                self.cancel()
            parts = got
        else:
            parts = []
            buf = _Buffer()
            for a, b in slices:  # one slice at a time; stop at the first invalid one
                parts.append(_columns(buf.wrap(data, a, b), field))
                if parts[-1] is None:
                    break
        done = [p for p in parts if p is not None]
        if len(done) != len(parts):
            return None
        if field == "keypoints" and not _same_kind(done):
            return None
        if "segm" in done[0]:  # a list: joined, not concatenated as an array
            masks = [m for p in done for m in p.pop("segm")]
            return {**_concat(done), "segm": masks}
        shared, self.shared = self.shared, None
        if shared is not None and all(shared.holds(p) for p in done):
            return shared.compact([int(p["score"].shape[0]) for p in done])
        return _concat(done)  # copies (the shared mapping goes with its last view)

    @property
    def pool(self) -> list[tuple[Any, Any]] | None:
        """The running workers (``None`` when none were started or they have ended)."""
        return self.procs or None

    def cancel(self) -> None:
        """End the workers: those that sent their share are exiting (a moment's wait);
        any other is killed (SIGKILL: no handler, no lock, nothing to wait for)."""
        procs, self.procs = self.procs, []
        end_workers(procs)


def _same_kind(parts: list[dict[str, Any]]) -> bool:
    """Keypoint slices agree: one K in all, and a ``bbox`` on every row or on none (a slice
    without one has NaN boxes); otherwise the validating loader reads the file and says
    which row differs."""
    k = {p["keypoints"].shape[1] for p in parts}
    boxed = {bool(np.isnan(p["bbox"][:1]).all()) for p in parts}
    return len(k) == 1 and len(boxed) == 1


def _concat(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def _split(data: bytes, chunk: int) -> list[tuple[int, int]]:
    """Slices of about ``chunk`` bytes between the list's brackets (see :class:`Pending`);
    empty when ``data`` is not one top-level list."""
    start = data.find(b"[")
    end = data.rfind(b"]")
    if start < 0 or end < start or data[:start].strip() or data[end + 1 :].strip():
        return []
    slices: list[tuple[int, int]] = []
    pos = start + 1
    while True:
        m = _BOUNDARY.search(data, pos + chunk, end) if end - pos > chunk else None
        stop = m.start() + 1 if m is not None else end
        slices.append((pos, stop))
        if m is None:
            return slices
        pos = m.end() - 1  # at the next record's "{"


_PARALLEL_MIN = 1 << 23  # below 8 MiB a second process costs more than it saves
_DATA: list[
    tuple[bytes, str, list[tuple[int, int]], _Shared | None]
] = []  # what forked decoders read (set just before the fork)


class _Buffer:
    """One buffer for every slice, ``[`` + slice + ``]``: a fresh 64 MiB copy per slice
    costs its page faults again each time (~0.5 s of system time at 400 MiB)."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def wrap(self, data: bytes, a: int, b: int) -> memoryview:
        n = b - a + 2
        if len(self.buf) < n:
            self.buf = bytearray(n)
        buf = self.buf
        buf[0] = 0x5B  # [
        buf[1 : n - 1] = memoryview(data)[a:b]
        buf[n - 1] = 0x5D  # ]
        return memoryview(buf)[:n]


def _decode_share(w: int, n: int, send: Any) -> None:
    """Worker ``w`` of ``n``: decodes slices ``w``, ``w + n``, ... and sends their columns
    (``None`` for an invalid slice; the row count when written to the shared columns)
    through its pipe."""
    from ..workers import init_worker

    init_worker()
    data, field, slices, shared = _DATA[0]
    buf = _Buffer()
    share: list[dict[str, Any] | int | None] = []
    for k in range(w, len(slices), n):
        a, b = slices[k]
        cols = _columns(buf.wrap(data, a, b), field)
        share.append(shared.put(k, cols) if shared is not None and cols is not None else cols)
        if cols is None:
            break  # the file is declined: the rest need not be decoded
    send.send(share)
    send.close()


_CHUNK = 1 << 26  # bytes of JSON decoded at once (64 MiB: ~700k records)
_MIN_RECORD = 40  # bytes: no record of the four required keys is shorter (57 and up)


class _Shared:
    """Every slice's box columns in one shared anonymous mapping made before the fork, each
    slice at its own place (room for ``len // _MIN_RECORD + 1`` rows: only the pages written
    take memory): a worker writes its rows there and sends their count, and the parent reads
    them without a pickle. A slice with more rows than its room is pickled instead."""

    def __init__(self, slices: list[tuple[int, int]], field: str) -> None:
        import mmap

        width = 5 if field == "obb" else 4
        room = [(b - a) // _MIN_RECORD + 1 for a, b in slices]
        self.starts = np.cumsum([0, *room]).tolist()
        total = int(self.starts[-1])
        mm = mmap.mmap(-1, 8 * total * (3 + width))
        self.cols: dict[str, Any] = {
            "image_id": np.frombuffer(mm, np.int64, total, 0),
            "category_id": np.frombuffer(mm, np.int64, total, 8 * total),
            field: np.frombuffer(mm, np.float64, total * width, 16 * total).reshape(-1, width),
            "score": np.frombuffer(mm, np.float64, total, 8 * total * (2 + width)),
        }

    def put(self, k: int, cols: dict[str, Any]) -> dict[str, Any] | int:
        """Slice ``k``'s columns written to the mapping: their row count (else ``cols``)."""
        a, n = self.starts[k], int(cols["score"].shape[0])
        if set(cols) != set(self.cols) or a + n > self.starts[k + 1]:
            return cols
        for key, col in self.cols.items():
            col[a : a + n] = cols[key]
        return n

    def view(self, k: int, n: int) -> dict[str, Any]:
        a = self.starts[k]
        return {key: col[a : a + n] for key, col in self.cols.items()}

    def holds(self, cols: dict[str, Any]) -> bool:
        """Whether ``cols`` is a view of this mapping (a slice not pickled)."""
        return cols["score"].base is self.cols["score"]

    def compact(self, counts: list[int]) -> dict[str, Any]:
        """Every slice's rows (``counts``, in slice order) moved to the front of their
        column in place (no fresh memory: its page faults cost more than the copy), as views;
        ``score``, which a dataset keeps, is copied (the mapping is unmapped once the other
        views are read into the dataset's own columns)."""
        total = sum(counts)
        for col in self.cols.values():
            pos = 0
            for a, n in zip(self.starts, counts, strict=False):
                _move_left(col, a, pos, n)
                pos += n
        out = {key: col[:total] for key, col in self.cols.items()}
        out["score"] = out["score"].copy()
        return out


def _move_left(col: np.ndarray, src: int, dst: int, n: int) -> None:
    """``col[dst:dst + n] = col[src:src + n]`` for ``dst <= src`` in pieces that do not
    overlap (NumPy would copy an overlapping source to fresh memory first)."""
    step = src - dst
    if step == 0 or n == 0:
        return
    if step < n // 64:  # a tiny shift: the temporary copy is cheaper than many pieces
        col[dst : dst + n] = col[src : src + n].copy()
        return
    for i in range(0, n, step):
        m = min(step, n - i)
        col[dst + i : dst + i + m] = col[src + i : src + i + m]


_BOUNDARY = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")


def _id_score_columns(
    recs: list[Any],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
    """``image_id``, ``category_id`` (int64) and ``score`` (float64) of decoded records;
    ``None`` for ids beyond 64 bits (the validating loader judges them)."""
    n = len(recs)
    try:
        image_id = np.fromiter(map(attrgetter("image_id"), recs), np.int64, n)
        category_id = np.fromiter(map(attrgetter("category_id"), recs), np.int64, n)
    except OverflowError:
        return None
    return image_id, category_id, np.fromiter(map(attrgetter("score"), recs), np.float64, n)


def _columns(data: bytes | memoryview, field: str = "bbox") -> dict[str, Any] | None:
    import msgspec

    if field == "keypoints":
        return _kpt_columns(data)
    try:
        recs = _decoder(field).decode(data)
    except msgspec.DecodeError:  # also ValidationError: not JSON, or not this schema
        return None
    n = len(recs)
    if n == 0:
        return None
    if field == "segm":
        return _segm_columns(recs)
    cols = _id_score_columns(recs)
    if cols is None:
        return None
    image_id, category_id, score = cols
    width = 5 if field == "obb" else 4
    geom = np.fromiter(
        chain.from_iterable(map(attrgetter(field), recs)), np.float64, width * n
    ).reshape(n, width)
    if not (np.isfinite(geom).all() and np.isfinite(score).all()) or (geom[:, 2:4] < 0).any():
        return None
    return {"image_id": image_id, "category_id": category_id, field: geom, "score": score}


def _segm_columns(recs: list[Any]) -> dict[str, Any] | None:
    """Columns of segm results whose every ``segmentation`` is a compressed RLE
    (``{"size": [h, w], "counts": "..."}``), else ``None`` (polygons, uncompressed RLE: the
    validating loader). ``segm`` holds one ``{"size": (h, w), "counts": bytes}`` per row (the
    form :func:`iou_cli.geometry.masks.prepare_masks` checks and passes on without a copy);
    ``bbox`` is NaN when no row has one (on some rows only: ``None``)."""
    n = len(recs)
    cols = _id_score_columns(recs)
    if cols is None:
        return None
    image_id, category_id, score = cols
    segs = list(map(attrgetter("segmentation"), recs))
    sizes = list(map(attrgetter("size"), segs))
    hw = np.fromiter(chain.from_iterable(sizes), np.int64, 2 * n).reshape(n, 2)
    if (hw < 0).any() or (hw >= _MAX_SIDE).any() or not np.isfinite(score).all():
        return None
    boxes = list(map(attrgetter("bbox"), recs))
    has = sum(b is not None for b in boxes)
    if has == n:
        bbox = np.fromiter(chain.from_iterable(boxes), np.float64, 4 * n).reshape(n, 4)
        if not np.isfinite(bbox).all() or (bbox[:, 2:] < 0).any():
            return None
    elif has == 0:
        bbox = np.full((n, 4), np.nan)
    else:
        return None
    # the decoded (h, w) tuples are kept as the sizes (a list each cost a third of this)
    masks = [
        {"size": hw_, "counts": c.encode()}
        for hw_, c in zip(sizes, map(attrgetter("counts"), segs), strict=True)
    ]
    return {
        "image_id": image_id,
        "category_id": category_id,
        "bbox": bbox,
        "score": score,
        "segm": masks,
    }


_PREFETCHED: dict[tuple[str, str], tuple[bytes, Pending]] = {}


def prefetch(path: str, jobs: int, field: str) -> None:
    """Start decoding the results list at ``path`` in ``jobs`` forked workers, for
    :func:`read_path` to collect; the caller reads the ground truth meanwhile. Anything
    unusual (not a big regular file, not a list, unreadable) is left to the normal read,
    which says what is wrong, in its order."""
    from ..errors import InputError
    from .jsonio import read_bytes

    if jobs < 2 or field not in ("bbox", "obb", "keypoints") or not os.path.isfile(path):
        return
    if os.path.getsize(path) < _PARALLEL_MIN:
        return
    try:
        raw = read_bytes(path)
    except InputError:
        return
    if raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        _PREFETCHED[(path, field)] = (raw, Pending(raw, jobs, field))


def read_path(path: str, jobs: int, field: str) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes of ``path`` and :func:`read_results`' columns (prefetched, or read now)."""
    got = _PREFETCHED.pop((path, field), None)
    if got is not None:
        return got[0], got[1].get()
    from .jsonio import read_bytes

    raw = read_bytes(path)
    return raw, read_results(raw, jobs, field=field)


def cancel_prefetch() -> None:
    """End the workers of a prefetch nobody collected (another format was detected, or
    the ground truth failed)."""
    while _PREFETCHED:
        _, (_, pending) = _PREFETCHED.popitem()
        pending.cancel()
