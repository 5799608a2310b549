"""Where a keypoint results list is cut between processes (``--jobs``, :mod:`.fastcoco`):
this process reads the ground truth first, so its part of the list is the last and the
smaller one (:func:`share_sizes`); the cuts fall between records, found in the text in
memory (:func:`shares`) or in a window of the file around each planned cut
(:func:`plan_file`: each process then reads only its own part)."""

from __future__ import annotations

import os

from .fastkpt import BOUNDARY, split_range
from .filesource import FileSource


def list_range(data: bytes) -> tuple[int, int] | None:
    """Where the records lie (after the ``[``, at the ``]``); None when ``data`` is not
    one top-level list."""
    start = data.find(b"[")
    end = data.rfind(b"]")
    if start < 0 or end < start or data[:start].strip() or data[end + 1 :].strip():
        return None
    return start + 1, end


GT_COST = 2.2  # a ground-truth byte takes ~2.2x the CPU of a keypoint result byte (typed read)


def share_sizes(total: int, jobs: int, gt_bytes: int, lead: int = 0) -> tuple[int, list[float]]:
    """``(own, sizes)``: this process's part of ``total`` bytes of keypoint records (the last
    one, 0 when the ground truth alone takes as long as a worker's part) and every part's
    size, the ``jobs - 1`` workers' first. ``lead``: what this process does before the
    ground truth once the workers have started, in result bytes' worth (:data:`EARLY_LEAD`)."""
    own = int(max(0, total - (jobs - 1) * (GT_COST * gt_bytes + lead)) // jobs)
    return own, [(total - own) / (jobs - 1)] * (jobs - 1) + ([own] if own else [])


def shares(
    data: bytes, jobs: int, gt_bytes: int, chunk: int
) -> tuple[list[tuple[int, int]], list[list[int]], list[int]]:
    """Keypoint results for ``jobs`` processes: ``(slices, each worker's slices, this
    process's slices)``. This process reads the ground truth (``gt_bytes``) first, so it
    takes the last part of the list, made as big as leaves it done when the ``jobs - 1``
    workers are done with theirs (none when the ground truth alone takes that long);
    the workers split the rest evenly. Keypoint rows are costly (~50 numbers a row), so
    the one extra process of this split pays at sizes where the box split's would not.
    ``chunk``: the most bytes of one slice."""
    span = list_range(data)
    if span is None:
        return [], [], []
    pos, end = span
    total = end - pos
    own, sizes = share_sizes(total, jobs, gt_bytes)
    regions: list[tuple[int, int]] = []
    at = float(pos)
    for size in sizes[:-1]:
        at += size
        m = BOUNDARY.search(data, max(int(at), pos), end)
        if m is None:
            break
        regions.append((pos, m.start() + 1))
        pos = m.end() - 1  # at the next record's "{"
    regions.append((pos, end))
    slices: list[tuple[int, int]] = []
    parts: list[list[int]] = []
    for a, b in regions:
        got = split_range(data, a, b, chunk)
        parts.append(list(range(len(slices), len(slices) + len(got))))
        slices += got
    if own and len(regions) == len(sizes):
        return slices, parts[:-1], parts[-1]
    return slices, parts, []  # (a short list: no room for this process's part)


WINDOW = 1 << 20  # bytes read around a planned cut to find the record boundary there


# the console script's early start (iou_cli.cli.early): the workers begin ~50 ms before
# this process has parsed its command line and reaches the ground truth; about this many
# result bytes' worth of decoding
EARLY_LEAD = 5 << 20


def plan_file(
    path: str, size: int, jobs: int, gt_bytes: int, chunk: int, lead: int = 0
) -> FileSource | None:
    """:func:`shares` planned from the file's head, tail and a window at each cut, without
    reading the rest (each process reads its own part); None for anything unusual (gzip,
    no list, no boundary near a cut, a part bigger than ``chunk``, unreadable): then the
    whole file is read and split as before."""
    from .files import note_read

    try:
        with open(path, "rb") as fh:
            fd = fh.fileno()
            span = list_span(fd, size)
            if span is None:
                return None
            pos, end = span
            total = end - pos
            own, sizes = share_sizes(total, jobs, gt_bytes, lead)
            regions: list[tuple[int, int]] = []
            at = float(pos)
            for part in sizes[:-1]:
                at += part
                cut = max(int(at), pos)
                m = BOUNDARY.search(os.pread(fd, WINDOW, cut))
                if m is None or cut + m.end() > end:
                    return None
                regions.append((pos, cut + m.start() + 1))
                pos = cut + m.end() - 1  # at the next record's "{"
            regions.append((pos, end))
    except OSError:
        return None
    if any(b - a > chunk for a, b in regions):
        return None
    note_read(path)
    k = len(regions) - 1 if own else len(regions)
    return FileSource(path, size, (regions, [[w] for w in range(k)], [k] if own else []))


def list_span(fd: int, size: int) -> tuple[int, int] | None:
    """Where the records of the list in the file ``fd`` (``size`` bytes) lie, read from
    its head and tail only: just after the ``[`` (a BOM and white space before it) and at
    the ``]`` (white space after it); None for anything else (gzip, not a list)."""
    from .files import GZIP_MAGIC

    head = os.pread(fd, 1 << 16, 0)
    tail_at = max(0, size - (1 << 16))
    tail = os.pread(fd, 1 << 16, tail_at)
    lead = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    start = head.find(b"[", lead)
    t = tail.rstrip()
    if head[:2] == GZIP_MAGIC or start < 0 or head[lead:start].strip():
        return None
    if not t.endswith(b"]") or tail_at + len(t) - 1 <= start:
        return None
    return start + 1, tail_at + len(t) - 1
