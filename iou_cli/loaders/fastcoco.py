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

import contextlib
import os
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..matching.accumulate import sort_later
from ..workers import end_workers, fork_workers
from . import kptparts
from .fastkpt import (
    id_score_columns,
    kpt_columns,
    kpt_file_columns,
    same_kind,
    split_range,
    warm,
)
from .filesource import FileSource, SliceBuffer, names_flag
from .kptparts import list_range
from .sharedcols import (
    KeypointRoom,
    hold_pipes,
    send_raw,
    vm_read,
    widen_pipe,
)
from .sharedcols import SharedColumns as _Shared

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


def read_keypoint_results(data: bytes) -> dict[str, npt.NDArray[np.generic]] | None:
    """Columns of a COCO keypoint results list (``keypoints`` ``[x, y, score] * K``, one K
    for all rows; ``bbox`` on every row or on none), or ``None`` for anything else (then the
    validating loader says what is wrong and where): :func:`read_results`' columns plus
    ``keypoints`` (n, K, 3); ``bbox`` is NaN where the rows give none (:mod:`.fastkpt`)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return kpt_columns(data)


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

    def __init__(self, data: bytes | FileSource, jobs: int, field: str, gt_bytes: int = 0) -> None:
        if not isinstance(data, FileSource) and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        self.data, self.field = data, field
        self.procs: list[tuple[Any, Any]] = []
        self.shared: _Shared | None = None
        self.assign: list[list[int]] = []  # each worker's slices
        self.own: list[int] = []  # the slices this process decodes (in get())
        self.names_files = False  # a row has a "file_name" (a part read from the file)
        self.collected = False  # every worker's part was read (they are exiting)
        self.joined: np.ndarray | None = None  # every slice's keypoint numbers, in order
        self.release: list[int] = []  # each worker's word pipe (keypoints: sharedcols.hold_pipes)
        chunk = _CHUNK
        parallel = jobs > 1 and len(data) >= _PARALLEL_MIN
        slices: list[tuple[int, int]] | None
        if isinstance(data, FileSource):  # each process reads its own part of the file
            slices, self.assign, self.own = data.plan
        elif parallel and field == "keypoints":
            slices, self.assign, self.own = kptparts.shares(data, jobs, gt_bytes, _CHUNK)
        else:
            if parallel:
                chunk = min(_CHUNK, len(data) // jobs + 1)
            slices = None if len(data) <= chunk else _split(data, chunk)
            n = min(jobs, len(slices or ()))
            self.assign = [list(range(w, len(slices or ()), n)) for w in range(n)]
        self.slices = slices
        # keypoints: one worker pays (this process reads the ground truth meanwhile)
        if slices is None or len(self.assign) < (1 if field == "keypoints" else 2):
            self.assign, self.own = [], []
            return
        import multiprocessing  # (only to fork: one process needs none of it)

        if "fork" not in multiprocessing.get_all_start_methods():
            self.assign, self.own = [], []
            return
        # plain forked processes (workers.fork_workers): a worker that dies only makes the
        # file declined, and the validating reader reads it
        # boxes and keypoints come back through shared memory (no pickle); masks pickled
        try:
            self.shared = _Shared(slices, field, _MIN_RECORD) if field in _SHARED_FIELDS else None
        except (OSError, ValueError, OverflowError):  # no mapping to be had: pickled
            self.shared = None
        # keypoints: each worker holds its numbers until this process has read them from
        # its memory, and waits for the word on a pipe of its own (sharedcols.vm_read)
        hold = hold_pipes(len(self.assign)) if field == "keypoints" and self.shared else None
        # the workers are forked here, with it
        _DATA[:] = [(data, field, slices, self.shared, self.assign, hold, os.getpid())]
        try:
            self.procs = fork_workers(_decode_share, [(w,) for w in range(len(self.assign))])
        except OSError:  # no process to be had (EAGAIN, ENOMEM): decoded here, in get()
            self.procs, self.shared = [], None
        finally:
            _DATA.clear()
            if hold is not None:  # (the workers' ends)
                for r, _ in hold:
                    os.close(r)
                self.release = [w for _, w in hold]

    def get(self) -> dict[str, Any] | None:
        data, field, slices = self.data, self.field, self.slices
        if slices is None:
            assert not isinstance(data, FileSource)
            return _columns(data, field)
        if not slices:
            return None
        if self.procs:
            parts = self._collect()
            if parts is None:
                return None
        else:
            parts = []
            buf = SliceBuffer()
            for a, b in slices:  # one slice at a time; stop at the first invalid one
                named = names_flag(field)
                parts.append(_slice_columns(buf, data, a, b, field, named=named))
                if parts[-1] is None:
                    break
                self.names_files |= bool(named and named[0])
        done = [p for p in parts if p is not None]
        if len(done) != len(parts):
            return None
        if field == "keypoints" and not same_kind(done):
            return None
        if "segm" in done[0]:  # a list: joined, not concatenated as an array
            masks = [m for p in done for m in p.pop("segm")]
            return {**_concat(done), "segm": masks}
        shared, self.shared = self.shared, None
        if shared is not None and all(shared.holds(p) for p in done):
            return shared.compact([int(p["score"].shape[0]) for p in done])
        joined, self.joined = self.joined, None
        if joined is not None:  # the keypoints are in place already: one view of them
            rest = _concat([{k: v for k, v in p.items() if k != "keypoints"} for p in done])
            sort_later(rest["score"])  # (the evaluation's score order, on an idle core)
            k = done[0]["keypoints"].shape[1]
            return {**rest, "keypoints": joined.reshape(-1, k, 3)}
        return _concat(done)  # copies (the shared mapping goes with its last view)

    def _collect(self) -> list[dict[str, Any] | None] | None:
        """Every slice's columns: this process's own slices decoded here (while the workers
        decode theirs), then each worker's; ``None`` when a slice is invalid or a worker
        died. The workers are ended in any case. Keypoints go straight to their place in
        one array (:class:`.sharedcols.KeypointRoom`)."""
        data, field, slices = self.data, self.field, self.slices
        assert slices is not None
        got: list[dict[str, Any] | None] = [None] * len(slices)
        room = KeypointRoom.make(slices, self.assign, self.own) if field == "keypoints" else None
        try:
            buf = SliceBuffer()
            for k in self.own:
                alloc = room.own_alloc if room is not None else None
                named = names_flag(field)
                got[k] = part = _slice_columns(buf, data, *slices[k], field, alloc, named)
                if part is None:
                    return None
                if room is not None:
                    room.own_done(part["keypoints"])
                self.names_files |= bool(named and named[0])
            del buf
            shares: list[list[Any]] = []
            held: list[Any] = []
            for _, recv in self.procs:
                try:
                    share, names_files, where = recv.recv()
                except (EOFError, OSError):  # the worker died: decline the file
                    return None
                self.names_files |= names_files
                shares.append(share)
                held.append(where)
            if room is not None and not room.place_workers(shares):
                room = None  # (cannot happen) each part read apart, then concatenated
            for w, ((_, recv), share) in enumerate(zip(self.procs, shares, strict=True)):
                outs = room.worker_places(share) if room is not None else [None] * len(share)
                held_outs = [o for o, c in zip(outs, share, strict=True) if isinstance(c, tuple)]
                filled = self._read_held(w, held[w], held_outs)
                # (zip: a short share was declined)
                for k, cols, out in zip(self.assign[w], share, outs, strict=False):
                    if isinstance(cols, (int, tuple)):  # written to the shared columns
                        assert self.shared is not None
                        cols = self.shared.view(k, cols, recv.fileno(), out, filled)
                        if cols is None:  # its keypoint numbers ended early: it died
                            return None
                    elif out is not None and cols is not None:  # pickled: copied in place
                        KeypointRoom.copy_in(cols, out)
                    got[k] = cols
            self.collected = True
        finally:
            self.cancel()
        self.joined = room.joined() if room is not None else None
        return got

    def _read_held(self, w: int, where: Any, outs: list[Any]) -> bool:
        """Worker ``w``'s keypoint numbers read from its memory into ``outs`` (``where``:
        its pid and each array's address and size, None when it does not hold them), and
        the worker told it may go; False (and the worker told to send them through its
        pipe) when they could not be read so."""
        if where is None or w >= len(self.release):
            return False
        pid, spans = where
        done = bool(outs) and all(o is not None for o in outs) and vm_read(pid, spans, outs)
        with contextlib.suppress(OSError):  # (the worker died: its pipe says so)
            os.write(self.release[w], b"d" if done else b"p")
        return done

    @property
    def pool(self) -> list[tuple[Any, Any]] | None:
        """The running workers (``None`` when none were started or they have ended)."""
        return self.procs or None

    def cancel(self) -> None:
        """End the workers: after every share was read they are exiting (a moment's
        wait); otherwise (the ground truth failed, a slice was invalid) they are killed at
        once: a worker may be writing keypoint numbers that nobody will read."""
        procs, self.procs = self.procs, []
        end_workers(procs, self.collected)
        release, self.release = self.release, []
        for fd in release:
            os.close(fd)


def _concat(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def _split(data: bytes, chunk: int) -> list[tuple[int, int]]:
    """Slices of about ``chunk`` bytes between the list's brackets (see :class:`Pending`);
    empty when ``data`` is not one top-level list."""
    span = list_range(data)
    return [] if span is None else split_range(data, *span, chunk)


_SHARED_FIELDS = ("bbox", "obb", "keypoints")  # columns sent back in shared memory


_PARALLEL_MIN = 1 << 23  # below 8 MiB a second process costs more than it saves
_DATA: list[
    tuple[
        bytes | FileSource,
        str,
        list[tuple[int, int]],
        _Shared | None,
        list[list[int]],
        list[tuple[int, int]] | None,
        int,
    ]
] = []  # what forked decoders read (set just before the fork)


def _decode_share(w: int, send: Any) -> None:
    """Worker ``w``: decodes its slices (``Pending.assign[w]``) and sends their columns
    (``None`` for an invalid slice; the row count, with K for keypoints, when written to
    the shared columns) through its pipe."""
    from ..workers import die_with_parent, init_worker

    init_worker()
    data, field, slices, shared, assign, hold, parent = _DATA[0]
    held = die_with_parent(parent)  # (may hold its numbers for the parent to read)
    if os.getppid() != parent:  # the parent ended before that: nobody reads this part
        return
    word = -1  # where the parent's word comes (its end of every other pipe closed)
    for i, (r, wr) in enumerate(hold or ()):
        os.close(wr)
        if i == w:
            word = r
        else:
            os.close(r)
    buf = SliceBuffer()
    share: list[dict[str, Any] | int | tuple[int, int] | None] = []
    names_files = False
    raw: list[np.ndarray] = []  # keypoint numbers (contiguous) to hand back, in its order
    for k in assign[w]:
        a, b = slices[k]
        named = names_flag(field)
        cols = _slice_columns(buf, data, a, b, field, named=named)
        share.append(shared.put(k, cols) if shared is not None and cols is not None else cols)
        if cols is None:
            break  # the file is declined: the rest need not be decoded
        if isinstance(share[-1], tuple):
            raw.append(np.ascontiguousarray(cols["keypoints"]))
        names_files |= bool(named and named[0])
    del buf
    where = None
    if raw and word >= 0 and held:
        where = (os.getpid(), [(int(kp.ctypes.data), int(kp.nbytes)) for kp in raw])
    send.send((share, names_files, where))
    if where is not None:  # held until the parent has read them (or asks for the pipe)
        try:
            said = os.read(word, 1)
        except OSError:
            said = b""
        if said != b"p":
            send.close()
            return
    if raw:
        widen_pipe(send.fileno())
        for kp in raw:
            send_raw(send.fileno(), kp)
    send.close()


_CHUNK = 1 << 26  # bytes of JSON decoded at once (64 MiB: ~700k records)
_MIN_RECORD = 40  # bytes: no record of the four required keys is shorter (57 and up)


def _slice_columns(
    buf: SliceBuffer,
    data: bytes | FileSource,
    a: int,
    b: int,
    field: str,
    alloc: Any = None,
    named: list[bool] | None = None,
) -> dict[str, Any] | None:
    """The columns of the slice ``a:b`` of ``data`` (:func:`_columns`), wrapped in ``buf``;
    a file's (keypoints: the only field read in parts from the file) are decoded straight
    from it, a piece at a time."""
    if isinstance(data, FileSource):
        return kpt_file_columns(data.path, a, b, alloc, named)
    return _columns(buf.wrap(data, a, b), field, alloc, named)


def _columns(
    data: bytes | memoryview,
    field: str = "bbox",
    alloc: Any = None,
    named: list[bool] | None = None,
) -> dict[str, Any] | None:
    """A slice's columns (None: declined); keypoints: ``named[0]`` set True when a row has
    a ``file_name`` (:func:`.filesource.names_flag`)."""
    import msgspec

    if field == "keypoints":
        return kpt_columns(data, alloc, named)
    try:
        recs = _decoder(field).decode(data)
    except msgspec.DecodeError:  # also ValidationError: not JSON, or not this schema
        return None
    n = len(recs)
    if n == 0:
        return None
    if field == "segm":
        return _segm_columns(recs)
    cols = id_score_columns(recs)
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
    cols = id_score_columns(recs)
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


# (path, field) -> (its bytes, or None when read in parts; the workers; what they were
# asked for, for a keypoint file read in parts: the same request finds them at work, the
# console script's early start, iou_cli.cli.early)
_PREFETCHED: dict[tuple[str, str], tuple[bytes | None, Pending, tuple[Any, ...] | None]] = {}


def _request(path: str, jobs: int, gt_bytes: int) -> tuple[Any, ...]:
    st = os.stat(path)
    return (jobs, gt_bytes, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def prefetch(path: str, jobs: int, field: str, gt_bytes: int = 0, lead: int = 0) -> None:
    """Start decoding the results list at ``path`` in ``jobs`` forked workers, for
    :func:`read_path` to collect; the caller reads the ground truth (of ``gt_bytes``: how
    much of a keypoint list this process keeps for itself) meanwhile. Anything
    unusual (not a big regular file, not a list, unreadable) is left to the normal read,
    which says what is wrong, in its order. Workers already started for the same request
    (the same file, unchanged, processes and ground-truth size) are kept; any other
    prefetch of the file is ended first. ``lead``: see :func:`.kptparts.share_sizes`."""
    from ..errors import InputError
    from .files import note_read
    from .jsonio import read_bytes

    key = (path, field)
    if key in _PREFETCHED:
        try:
            same = _PREFETCHED[key][2] == _request(path, jobs, gt_bytes)
        except OSError:
            same = False
        if same:
            note_read(path)
            return
        _PREFETCHED.pop(key)[1].cancel()
    if jobs < 2 or field not in ("bbox", "obb", "keypoints") or not os.path.isfile(path):
        return
    size = os.path.getsize(path)
    if size < _PARALLEL_MIN:
        return
    if field == "keypoints":  # the workers read their own parts of the file
        source = kptparts.plan_file(path, size, jobs, gt_bytes, _CHUNK, lead)
        if source is not None:
            warm()
            asked = _request(path, jobs, gt_bytes)
            _PREFETCHED[key] = (None, Pending(source, jobs, field), asked)
            return
    try:
        raw = read_bytes(path)
    except InputError:
        return
    if raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
        _PREFETCHED[key] = (raw, Pending(raw, jobs, field, gt_bytes), None)


def read_path(path: str, jobs: int, field: str) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes of ``path`` and :func:`read_results`' columns (prefetched, or read now)."""
    from .jsonio import read_bytes

    got = _PREFETCHED.pop((path, field), None)
    if got is not None:
        raw, pending, _ = got
        cols = pending.get()
        if raw is None:  # read in parts: the whole file only where it is still needed
            raw = read_bytes(path) if cols is None or pending.names_files else b""
        return raw, cols

    if field == "keypoints" and jobs < 2:
        whole = _read_keypoint_file(path)
        if whole is not None:
            return whole
    raw = read_bytes(path)
    return raw, read_results(raw, jobs, field=field)


def _read_keypoint_file(path: str) -> tuple[bytes, dict[str, Any] | None] | None:
    """A big keypoint results file decoded a piece at a time straight from the file
    (:func:`.fastkpt.kpt_file_columns`); its bytes are read only where still needed (rows
    with ``file_name``, a declined file). None for anything else (read as before)."""
    from .files import note_read
    from .jsonio import read_bytes

    size = os.path.getsize(path) if os.path.isfile(path) else -1
    if size < _PARALLEL_MIN:
        return None
    try:
        with open(path, "rb") as fh:
            span = kptparts.list_span(fh.fileno(), size)
    except OSError:
        return None
    if span is None:
        return None
    note_read(path)
    named = [False]  # (set by the decoder)
    cols = kpt_file_columns(path, *span, named=named)
    if cols is None or named[0]:
        return read_bytes(path), cols
    return b"", cols


def cancel_prefetch() -> None:
    """End the workers of a prefetch nobody collected (another format was detected, or
    the ground truth failed)."""
    while _PREFETCHED:
        _, (_, pending, _) = _PREFETCHED.popitem()
        pending.cancel()
