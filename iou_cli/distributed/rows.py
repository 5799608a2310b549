"""Per-class partial rows: the records a cluster's map emits and its reduce concatenates.

A row is ``(category, payload)``: ``category`` >= 0 holds that class's match records of some
images (a :class:`~iou_cli.state.partial.PartialState` cut to one class, without header);
``META`` holds the image ordinals a bucket covered, its additive scalars and a digest of its
header; ``ERROR`` holds a worker's error (file, where, what). A payload is a JSON head (the
arrays' names, dtypes and shapes, and scalars) and the arrays' raw bytes, little-endian.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

META = -1
ERROR = -2
_LEN = struct.Struct("<I")


def pack(arrays: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> bytes:
    """Arrays (and JSON scalars) as one payload."""
    head: dict[str, Any] = {"info": dict(info or {}), "arrays": []}
    bufs = []
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        head["arrays"].append([name, a.dtype.str, list(a.shape)])
        bufs.append(a.tobytes())
    hb = json.dumps(head, separators=(",", ":")).encode()
    return b"".join([_LEN.pack(len(hb)), hb, *bufs])


def unpack(payload: bytes) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and scalars of :func:`pack`'s payload."""
    (n,) = _LEN.unpack_from(payload, 0)
    head = json.loads(payload[4 : 4 + n])
    pos = 4 + n
    out: dict[str, np.ndarray] = {}
    for name, dt, shape in head["arrays"]:
        dtype = np.dtype(dt)
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        out[name] = np.frombuffer(payload, dtype=dtype, count=size // dtype.itemsize, offset=pos)
        out[name] = out[name].reshape(shape)
        pos += size
    return out, head["info"]


def concat_class(payloads: Iterable[bytes]) -> bytes:
    """One class's rows from several buckets as one payload (records concatenated, counts
    summed; any order: the driver's reduce sorts by the tie key)."""
    parts = [unpack(p)[0] for p in payloads]
    first = parts[0]
    out: dict[str, np.ndarray] = {}
    for name in first:
        if name.startswith("count:"):
            out[name] = np.sum([p[name] for p in parts], axis=0).astype(np.int64)
        else:
            out[name] = np.concatenate([p[name] for p in parts], axis=0)
    return pack(out)


def concat_meta(payloads: Iterable[bytes]) -> bytes:
    """The buckets' covered images concatenated, scalars added (``max_*``: the maximum),
    header digests kept when they agree (a list of the distinct ones otherwise)."""
    images = []
    extra: dict[str, int] = {}
    digests: set[str] = set()
    for p in payloads:
        arrs, info = unpack(p)
        images.append(arrs["images"])
        digests.update(info["digests"])
        for k, v in info["extra"].items():
            extra[k] = max(extra.get(k, v), v) if k.startswith("max_") else extra.get(k, 0) + v
    return pack({"images": np.concatenate(images)}, {"extra": extra, "digests": sorted(digests)})


def first_error(payloads: Iterable[bytes]) -> bytes:
    """Of several workers' errors, the one a rerun reports too (the smallest)."""
    return min(payloads)


def reduce_group(category: int, payloads: list[bytes]) -> bytes:
    """The cluster's reduce of one group of rows with the same ``category``."""
    if category == META:
        return concat_meta(payloads)
    if category == ERROR:
        return first_error(payloads)
    return concat_class(payloads)
