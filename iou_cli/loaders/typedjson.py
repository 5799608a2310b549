"""What the typed JSON readers (:mod:`.panoptic_json`, :mod:`.coco_typed`) share: the decode
that gives nothing where msgspec refuses, the top-level parts kept as raw text and read by
the generic reader, and the count of the keys written in the text (msgspec's structs keep
the last of a key written twice, so a reader counts the keys its structs hold and compares).
"""

from __future__ import annotations

import re
from typing import Any

MAX_SAFE_INT = 2**53  # jsonio's rule: an integer beyond it is refused
RAW_KEYS = ("images", "categories", "info", "licenses")
_KEY_WS = re.compile(rb'"[ \t\r\n]+:')


def keys_written(data: bytes) -> int:
    """The keys written in ``data`` (each key's closing quote, optional white space, ``:``),
    plus any string content that looks like one (only ever more)."""
    n = data.count(b'":')
    if data.count(b":") != n:  # a colon not right after a quote: maybe white space first
        n += len(_KEY_WS.findall(data))
    return n


def document_decoder(name: str, annotation: Any) -> Any:
    """The decoder of a document of ``annotations`` (a list of the struct ``annotation``)
    and otherwise only the :data:`RAW_KEYS` parts, kept as raw text."""
    import msgspec
    from msgspec import UNSET, Raw, UnsetType

    fields: list[Any] = [("annotations", list[annotation])]
    fields += [(key, Raw | UnsetType, UNSET) for key in RAW_KEYS]
    document = msgspec.defstruct(name, fields, forbid_unknown_fields=True, gc=False)
    return msgspec.json.Decoder(document)


def decode(decoder: Any, data: bytes) -> tuple[Any, bytes] | None:
    """``(document, the text without a BOM)``; None where msgspec refuses the text or its
    layout (the generic reader then judges it)."""
    import msgspec

    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return decoder.decode(data), data
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def raw_parts(path: str, doc: Any, data: bytes, unset: Any, keys: int) -> dict[str, Any] | None:
    """The document's raw top-level parts (:data:`RAW_KEYS`) read by the generic reader (their
    own duplicate keys, numbers, depth), or None when a part is refused (the generic reader
    then locates the error in the whole file) or when the keys written in ``data`` outside
    them are not ``keys`` (the keys the structs hold) plus the parts' own names: a key was
    written twice.

    Every key written is followed by a colon, so where the colons outside the parts are
    exactly that many, so are the keys (one count of a byte, ~2 ms for 5 MB); otherwise the
    keys are counted by their closing quote (:func:`keys_written`, ~7 ms)."""
    from ..errors import InputError
    from .jsonio import parse_json

    rest: dict[str, Any] = {}
    parts: list[bytes] = []
    for name in RAW_KEYS:
        raw = getattr(doc, name)
        if raw is unset:
            continue
        part = bytes(raw)
        parts.append(part)
        try:
            rest[name] = parse_json(path, part)
        except InputError:
            return None
    want = keys + len(parts)
    if data.count(b":") - sum(p.count(b":") for p in parts) == want:
        return rest
    written = keys_written(data) - sum(map(keys_written, parts))
    return rest if written == want else None
