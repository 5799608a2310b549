"""The partial file: a :class:`PartialState` as bytes (docs/partial-format.md).

Layout (all integers little-endian)::

    magic      8 bytes  b"IOUPART\\n"
    version    uint32   FORMAT_VERSION
    header_len uint32   length of the JSON header
    header     JSON     protocol, params, fingerprint, categories, layout, counts, extra,
                        and "arrays": [{name, dtype, shape, offset, nbytes}, ...]
    payload    the arrays' raw bytes, at their offsets (from the payload's start)
    checksum   32 bytes SHA-256 of everything before it

Prediction rows are grouped by class (``class_ptr``: class k's rows are
``class_ptr[k]:class_ptr[k + 1]``), so a reader (or a cluster's shuffle) takes one class at
a time.
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .partial import PartialState

MAGIC = b"IOUPART\n"
FORMAT_VERSION = 2  # the newest this reads and writes
# version 2 added id-keyed states (targets given per batch: header "images_by": "id", array
# "image_keys"); a state of a ground-truth file is still written as version 1, byte for byte
# what earlier releases wrote, so they keep reading it
ID_KEYED_VERSION = 2
_HEAD = struct.Struct("<8sII")
_SUM = 32


def _uint(values: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
    """``values`` (non-negative) in the smallest unsigned dtype that holds them."""
    top = int(values.max()) if values.size else 0
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if top <= np.iinfo(dt).max:
            return values.astype(dt)
    raise ValueError("value too large")  # pragma: no cover


def to_bytes(state: PartialState) -> bytes:
    """The partial file's bytes (see the module docstring)."""
    K = len(state.header["categories"]["names"])
    order = np.argsort(state.category, kind="stable")
    flags_bits = state.bits[order]
    iou_flag = int(state.header["layout"]["iou_flag"])
    has_iou = np.unpackbits(state.bits, axis=1, count=state.n_flags)[:, iou_flag].astype(bool)
    iou_dense = np.zeros(len(state), dtype=np.float64)
    iou_dense[has_iou] = state.iou
    iou = iou_dense[order][has_iou[order]]
    ptr = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(np.bincount(state.category, minlength=K), out=ptr[1:])
    arrays: dict[str, npt.NDArray[Any]] = {
        "images": _uint(state.images),
        "class_ptr": ptr,
        "score": state.score[order].astype("<f8"),
        "image": _uint(state.image[order]),
        "rank": _uint(state.rank[order]),
        "bits": np.ascontiguousarray(flags_bits),
        "iou": iou.astype("<f8"),
    }
    if state.header["layout"]["kind"] == "voc":
        del arrays["image"]  # the devkit's order needs only the file-order key
    version = 1
    if state.by_id:
        keys = state.image_keys if state.image_keys is not None else np.zeros(0, np.int64)
        arrays["image_keys"] = keys.astype("<i8")
        version = ID_KEYED_VERSION
    for k, v in state.counts.items():
        arrays["count_" + k] = v.astype("<i8")
    specs = []
    offset = 0
    blobs = []
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
        raw = arr.astype(dt).tobytes()
        specs.append(
            {
                "name": name,
                "dtype": dt.str,
                "shape": list(arr.shape),
                "offset": offset,
                "nbytes": len(raw),
            }
        )
        blobs.append(raw)
        offset += len(raw)
    header = dict(state.header)
    header["extra"] = dict(state.extra)
    header["n_predictions"] = len(state)
    header["arrays"] = specs
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    body = _HEAD.pack(MAGIC, version, len(head)) + head + b"".join(blobs)
    return body + hashlib.sha256(body).digest()


def from_bytes(data: bytes, source: str = "") -> PartialState:
    """Read a partial file's bytes; a wrong magic, a newer version, a truncated or corrupt
    file is an :class:`InputError` located at ``source``."""
    src = source or "<partial>"
    if len(data) < _HEAD.size or data[:8] != MAGIC:
        raise InputError(src, None, "not an iou-eval partial file (no IOUPART magic at the start)")
    _, version, head_len = _HEAD.unpack_from(data)
    if version > FORMAT_VERSION:
        raise InputError(
            src,
            "version",
            f"partial format version {version} is newer than this iou-eval reads "
            f"({FORMAT_VERSION}): merge with a newer iou-eval",
        )
    if len(data) < _HEAD.size + head_len + _SUM:
        raise InputError(src, None, f"truncated: {len(data)} bytes, shorter than its header says")
    try:
        header = json.loads(data[_HEAD.size : _HEAD.size + head_len])
        specs = header.pop("arrays")
        payload_len = sum(int(s["nbytes"]) for s in specs)
    except (ValueError, KeyError, TypeError):
        raise InputError(src, "header", "corrupt: the JSON header cannot be read") from None
    expected = _HEAD.size + head_len + payload_len + _SUM
    if len(data) != expected:
        what = "truncated" if len(data) < expected else "corrupt"
        raise InputError(src, None, f"{what}: {len(data)} bytes, the header says {expected}")
    body = data[:-_SUM]
    if hashlib.sha256(body).digest() != data[-_SUM:]:
        raise InputError(
            src, "checksum", "corrupt: the SHA-256 checksum does not match the content"
        )
    base = _HEAD.size + head_len
    arrays: dict[str, npt.NDArray[Any]] = {}
    for s in specs:
        start = base + int(s["offset"])
        arrays[s["name"]] = np.frombuffer(
            data,
            dtype=np.dtype(s["dtype"]),
            count=int(np.prod(s["shape"], dtype=np.int64)),
            offset=start,
        ).reshape(s["shape"])
    if header.get("images_by") == "id" and "image_keys" not in arrays:
        raise InputError(src, "header", "corrupt: images by id, but no image_keys array")
    extra = {k: int(v) for k, v in header.pop("extra", {}).items()}
    header.pop("n_predictions", None)
    ptr = arrays["class_ptr"].astype(np.int64)
    n = int(ptr[-1])
    category = np.repeat(np.arange(ptr.shape[0] - 1, dtype=np.int64), np.diff(ptr))
    image = arrays["image"].astype(np.int64) if "image" in arrays else np.zeros(n, dtype=np.int64)
    counts = {k[6:]: v.astype(np.int64) for k, v in arrays.items() if k.startswith("count_")}
    return PartialState(
        header=header,
        images=arrays["images"].astype(np.int64),
        category=category,
        score=arrays["score"].astype(np.float64),
        image=image,
        rank=arrays["rank"].astype(np.int64),
        bits=np.array(arrays["bits"], dtype=np.uint8),
        iou=arrays["iou"].astype(np.float64),
        counts=counts,
        extra=extra,
        source=source,
        image_keys=arrays["image_keys"].astype(np.int64) if "image_keys" in arrays else None,
    )
