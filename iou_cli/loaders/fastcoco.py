"""A fast reader of COCO *results* JSON straight to NumPy columns.

A results file is a list of ``{"image_id", "category_id", "bbox", "score"}`` objects. Parsing it
with :func:`json.loads` builds ~3 Python objects per number and a dict per record; this reader
never does. It works on the raw bytes, record chunk by record chunk:

1. whitespace is deleted (``bytes.translate``); deleting it must not join two tokens, which is
   checked by counting adjacent "word" bytes before and after;
2. every record must have the same key order as the first one, so the structural characters
   (``{}[],:``) of a chunk must be exactly the first record's pattern repeated; the byte
   fields between them are then known: keys (checked by length and by counting the quoted key
   names), numbers, or nothing;
3. every number field is run through a vectorised DFA for the JSON number grammar while its
   digits are accumulated, and converted exactly: ``m * 10**e`` or ``m / 10**-e`` when the
   mantissa ``m < 2**53`` and ``|e| <= 22`` (one correctly rounded IEEE operation on exact
   operands, Clinger's fast path), NumPy's string-to-float (CPython's correctly rounded
   ``PyOS_string_to_double``) for the rest.

Values are bit-identical to ``json.loads`` + ``float()``: an integer token becomes
``float(int(token))`` (so ``-0`` is ``0.0``, and ``-0.0`` is ``-0.0``). Anything that is not
exactly that simple shape (extra or missing keys, mixed key orders, strings, ``null``,
``NaN``, non-finite values, ids that are not integers, negative widths, escapes, non-ASCII...)
returns ``None`` and the validating loader in :mod:`.coco` runs and says what is wrong.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import numpy.typing as npt

__all__ = ["read_results"]

_WS = b" \t\n\r"
_STRUCT = b"{}[],:"
_KEYS = ("image_id", "category_id", "bbox", "score")
_CHUNK = 1 << 22  # bytes of input per chunk: bounds the temporaries (~30 bytes per input byte)
_BOUNDARY = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")

_IS_STRUCT = np.zeros(256, dtype=bool)
_IS_STRUCT[list(_STRUCT)] = True
_IS_WORD = ~_IS_STRUCT.copy()  # neither structural nor whitespace
_IS_WORD[list(_WS)] = False

# JSON number DFA. Classes: 0 '0', 1 '1'-'9', 2 '-', 3 '+', 4 '.', 5 'e'/'E', 6 other.
_CLS = np.full(256, 6, dtype=np.uint8)
_CLS[ord("0")] = 0
_CLS[[ord(d) for d in "123456789"]] = 1
_CLS[ord("-")] = 2
_CLS[ord("+")] = 3
_CLS[ord(".")] = 4
_CLS[[ord("e"), ord("E")]] = 5
# states: 0 start, 1 after '-', 2 leading 0, 3 int digits, 4 after '.', 5 frac digits,
#         6 after e, 7 after exp sign, 8 exp digits, 9 dead
_DEAD = 9
_T = np.full((10, 7), _DEAD, dtype=np.uint8)
_T[0, [0, 1, 2]] = [2, 3, 1]
_T[1, [0, 1]] = [2, 3]
_T[2, [4, 5]] = [4, 6]
_T[3, [0, 1, 4, 5]] = [3, 3, 4, 6]
_T[4, [0, 1]] = [5, 5]
_T[5, [0, 1, 5]] = [5, 5, 6]
_T[6, [0, 1, 2, 3]] = [8, 8, 7, 7]
_T[7, [0, 1]] = [8, 8]
_T[8, [0, 1]] = [8, 8]
_ACCEPT = np.zeros(10, dtype=bool)
_ACCEPT[[2, 3, 5, 8]] = True
_INT_STATES = np.zeros(10, dtype=bool)
_INT_STATES[[2, 3]] = True
_MANTISSA_STATES = np.zeros(10, dtype=bool)  # a digit read in these states joins the mantissa
_MANTISSA_STATES[[2, 3, 5]] = True
_FRAC_STATES = np.zeros(10, dtype=bool)
_FRAC_STATES[5] = True
_EXP_STATES = np.zeros(10, dtype=bool)
_EXP_STATES[8] = True
_POW10 = np.array([10.0**k for k in range(23)])  # all exact in float64
_TWO53 = 1 << 53
_MAX_WIDTH = 64  # longest number token read here; longer ones go to the validating loader


class _Reject(Exception):
    """Not the simple shape: let the validating loader handle the file."""


def read_results(data: bytes) -> dict[str, npt.NDArray[np.generic]] | None:
    """Columns of a COCO results list, or ``None`` when ``data`` is anything else.

    Returns ``image_id`` and ``category_id`` (int64), ``bbox`` (n, 4 float64, ``[x, y, w, h]``)
    and ``score`` (float64), row ``i`` being the list's record ``i``.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    compact = _read_compact(data)
    if compact is not None:
        return compact
    try:
        return _read(data)
    except _Reject:
        return None


# ---------------------------------------------------------------- the common case, in bulk
#
# Most results files have one key order and no exponents. Then a handful of whole-buffer
# byte operations suffice: the "skeleton" (the text without digits . + - and whitespace)
# must be the first record's skeleton repeated, which proves the structure and the exact
# key names and that no number has an exponent (an 'e' would break the repetition or the
# record pattern); the numbers, everything else blanked, go through NumPy's correctly
# rounded string-to-float in one call. A few vectorised checks keep JSON's number grammar
# strict (no leading zeros, no bare dots, '-' only in front). Anything else: None, and the
# general reader below (or the validating loader) takes over.

_BLANK_ALL_BUT_NUMBERS = bytes(b if b in b"0123456789.-" else 32 for b in range(256))
# letters -> 'a', whitespace -> ' ', anything else -> '.': a letter next to whitespace can
# only be inside a string (a key such as "image_id " that the skeleton would not show)
_LETTER_WS = bytes(
    97 if (65 <= b <= 90 or 97 <= b <= 122 or b == 95) else 32 if b in _WS else 46
    for b in range(256)
)
_IS_DIGIT = np.zeros(256, dtype=bool)
_IS_DIGIT[48:58] = True
_TWO53F = float(2**53)


def _record_order(rec: bytes) -> list[str] | None:
    """Key order of a record skeleton such as ``{"image_id":,"bbox":[,,,],...}``."""
    if not (rec.startswith(b"{") and rec.endswith(b"}")):
        return None
    parts = rec[1:-1].split(b",")
    order: list[str] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        if part == b'"bbox":[':
            if parts[i + 1 : i + 4] != [b"", b"", b"]"]:
                return None
            order.append("bbox")
            i += 4
            continue
        if not (part.startswith(b'"') and part.endswith(b'":')):
            return None
        order.append(part[1:-2].decode("ascii", "replace"))
        i += 1
    return order if sorted(order) == sorted(_KEYS) and len(order) == 4 else None


def _compact_chunk(data: bytes, rec: bytes, order: list[str]) -> npt.NDArray[np.float64] | None:
    """Values (k, 7) of ``data``: k records in ``order`` joined by commas, or None."""
    skel = data.translate(None, b"0123456789.+-" + _WS)
    n, rest = divmod(len(skel) + 1, len(rec) + 1)
    if rest or skel != b",".join([rec] * n):
        return None
    del skel
    shape = data.translate(_LETTER_WS)
    if b"a " in shape or b" a" in shape:
        return None
    del shape
    if b"+" in data:  # no exponent anywhere (proved above), so a '+' is never valid
        return None
    text = data.translate(_BLANK_ALL_BUT_NUMBERS)
    a = np.frombuffer(text, dtype=np.uint8)
    # JSON number grammar: '-' starts a token and precedes a digit; '.' sits between digits;
    # a token starting with 0 (after an optional '-') is just 0 or 0.<digits>; "-0" (an
    # integer minus zero) is 0 to json.loads but -0.0 to strtod: leave it to the others
    minus = np.flatnonzero(a == 45)
    if minus.size and (
        minus[-1] + 2 >= a.size
        or (a[minus - 1] != 32).any()
        or not _IS_DIGIT[a[minus + 1]].all()
        or ((a[minus + 1] == 48) & ~_IS_DIGIT[a[minus + 2]] & (a[minus + 2] != 46)).any()
    ):
        return None
    dots = np.flatnonzero(a == 46)
    if dots.size and (
        dots[0] == 0
        or dots[-1] + 1 >= a.size
        or not (_IS_DIGIT[a[dots - 1]].all() and _IS_DIGIT[a[dots + 1]].all())
    ):
        return None
    zeros = np.flatnonzero(a == 48)
    if zeros.size:
        prev = a[zeros - 1]
        starts_token = (prev == 32) | (prev == 45)
        if zeros[-1] + 1 < a.size and (starts_token & _IS_DIGIT[a[zeros + 1]]).any():
            return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            vals = np.fromstring(text, dtype=np.float64, sep=" ")
    except (ValueError, DeprecationWarning):
        return None
    width = 7
    if vals.size != width * n or not np.isfinite(vals).all():
        return None
    vals = vals.reshape(n, width)
    col = _columns_of(order)
    if dots.size:
        # an id written with a fraction ("7.0") is a float to json.loads: not an id
        token_start = np.flatnonzero((a[1:] != 32) & (a[:-1] == 32)) + 1
        if a[0] != 32:
            token_start = np.r_[0, token_start]
        field = (np.searchsorted(token_start, dots, side="right") - 1) % width
        if np.isin(field, [col["image_id"], col["category_id"]]).any():
            return None
    return vals


def _columns_of(order: list[str]) -> dict[str, int]:
    col: dict[str, int] = {}
    j = 0
    for key in order:
        col[key] = j
        j += 4 if key == "bbox" else 1
    return col


_COMPACT_CHUNK = 1 << 23  # 8 MiB of input per chunk: bounds the temporaries (~6x)


def _read_compact(data: bytes) -> dict[str, npt.NDArray[np.generic]] | None:
    start = _skip_ws(data, 0)
    end = len(data)
    while end > start and data[end - 1] in _WS:
        end -= 1
    if end - start < 4 or data[start] != ord("[") or data[end - 1] != ord("]"):
        return None
    body_start = _skip_ws(data, start + 1)
    body_end = end - 1
    while body_end > body_start and data[body_end - 1] in _WS:
        body_end -= 1
    close = data.find(b"}", body_start, body_end)
    if close < 0 or data[body_start] != ord("{"):
        return None
    rec = data[body_start : close + 1].translate(None, b"0123456789.+-" + _WS)
    order = _record_order(rec)
    if order is None:
        return None
    parts: list[npt.NDArray[np.float64]] = []
    pos = body_start
    while pos < body_end:
        stop = body_end
        if body_end - pos > _COMPACT_CHUNK:
            m = _BOUNDARY.search(data, pos + _COMPACT_CHUNK)
            if m is not None and m.start() < body_end:
                stop = m.start() + 1  # just after the '}'
        vals = _compact_chunk(data[pos:stop], rec, order)
        if vals is None:
            return None
        parts.append(vals)
        if stop == body_end:
            break
        pos = _skip_ws(data, stop)
        if pos >= body_end or data[pos] != ord(","):
            return None
        pos = _skip_ws(data, pos + 1)
    vals = np.concatenate(parts) if len(parts) > 1 else parts[0]
    col = _columns_of(order)
    ids = vals[:, [col["image_id"], col["category_id"]]]
    if (np.abs(ids) > _TWO53F).any() or (ids != np.floor(ids)).any():
        return None
    b = col["bbox"]
    bbox = np.ascontiguousarray(vals[:, b : b + 4])
    if (bbox[:, 2:] < 0).any():
        return None
    return {
        "image_id": ids[:, 0].astype(np.int64),
        "category_id": ids[:, 1].astype(np.int64),
        "bbox": bbox,
        "score": np.ascontiguousarray(vals[:, col["score"]]),
    }


def _read(data: bytes) -> dict[str, npt.NDArray[np.generic]]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    start = _skip_ws(data, 0)
    end = len(data)
    while end > start and data[end - 1] in _WS:
        end -= 1
    if end - start < 2 or data[start] != ord("[") or data[end - 1] != ord("]"):
        raise _Reject
    body_start = _skip_ws(data, start + 1)
    body_end = end - 1
    while body_end > body_start and data[body_end - 1] in _WS:
        body_end -= 1
    if body_end <= body_start or data[body_start] != ord("{"):
        raise _Reject
    layout = _Layout(_first_record(data, body_start, body_end))

    ids: list[npt.NDArray[np.int64]] = []
    cats: list[npt.NDArray[np.int64]] = []
    boxes: list[npt.NDArray[np.float64]] = []
    scores: list[npt.NDArray[np.float64]] = []
    pos = body_start
    while pos < body_end:
        stop = body_end
        if body_end - pos > _CHUNK:
            m = _BOUNDARY.search(data, pos + _CHUNK)
            if m is not None and m.start() < body_end:
                stop = m.start() + 1  # just after the '}'
        cols = layout.parse(data[pos:stop])
        ids.append(cols[0])
        cats.append(cols[1])
        boxes.append(cols[2])
        scores.append(cols[3])
        if stop == body_end:
            break
        # skip ws ',' ws to the next '{'
        pos = _skip_ws(data, stop)
        if pos >= body_end or data[pos] != ord(","):
            raise _Reject
        pos = _skip_ws(data, pos + 1)
    bbox = np.concatenate(boxes) if len(boxes) > 1 else boxes[0]
    score = np.concatenate(scores) if len(scores) > 1 else scores[0]
    if not (np.isfinite(bbox).all() and np.isfinite(score).all()):
        raise _Reject
    if (bbox[:, 2:] < 0).any():
        raise _Reject
    return {
        "image_id": np.concatenate(ids) if len(ids) > 1 else ids[0],
        "category_id": np.concatenate(cats) if len(cats) > 1 else cats[0],
        "bbox": bbox,
        "score": score,
    }


def _skip_ws(data: bytes, i: int) -> int:
    n = len(data)
    while i < n and data[i] in _WS:
        i += 1
    return i


def _first_record(data: bytes, start: int, end: int) -> list[str]:
    """Key order of the first record, which must be exactly the four results keys."""
    close = data.find(b"}", start, end)
    if close < 0:
        raise _Reject
    try:
        rec = json.loads(data[start : close + 1])
    except ValueError:
        raise _Reject from None
    if not isinstance(rec, dict) or sorted(rec) != sorted(_KEYS):
        raise _Reject
    return list(rec)


class _Layout:
    """Where the structural characters and fields of one record are, for one key order."""

    def __init__(self, order: list[str]) -> None:
        # the field before each structural character, in order
        struct: list[str] = ["{"]
        roles: list[tuple[str, str, int]] = [("empty", "", 0)]
        for k, key in enumerate(order):
            struct.append(":")
            roles.append(("key", key, 0))
            if key == "bbox":
                struct += ["[", ",", ",", ",", "]"]
                roles += [("empty", "", 0)] + [("num", "bbox", j) for j in range(4)]
                last: tuple[str, str, int] = ("empty", "", 0)
            else:
                last = ("num", key, 0)
            struct.append("," if k < len(order) - 1 else "}")
            roles.append(last)
        struct.append(",")  # the separator after the record (appended to the last one)
        roles.append(("empty", "", 0))
        self.struct = np.frombuffer("".join(struct).encode(), dtype=np.uint8)
        self.width = len(struct)  # 16
        self.roles = roles
        self.key_len = {key: len(key) + 2 for key in _KEYS}

    def parse(
        self, chunk: bytes
    ) -> tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.float64],
        npt.NDArray[np.float64],
    ]:
        c = chunk.translate(None, _WS)
        if len(c) != len(chunk) and not _spaces_ok(chunk):
            raise _Reject
        if b"\x00" in c:
            raise _Reject  # NUL would pass for padding in the field matrices
        c = c + b"," + bytes(_MAX_WIDTH)  # zero padding: field matrices never index past it
        a = np.frombuffer(c, dtype=np.uint8)
        flat = np.flatnonzero(_IS_STRUCT.take(a))
        w = self.width
        if len(flat) % w:
            raise _Reject
        n = len(flat) // w
        pos = flat.reshape(n, w)
        del flat
        if not (a[pos] == self.struct).all():
            raise _Reject
        # field j of a record spans (pos[:, j-1] + 1, pos[:, j]); field 0 starts after the
        # previous record's separator
        prev = np.empty_like(pos)
        prev[:, 1:] = pos[:, :-1] + 1
        prev[0, 0] = 0
        prev[1:, 0] = pos[:-1, -1] + 1
        length = pos - prev
        del pos
        # Key slots have exact, distinct lengths (10, 13, 6, 7) and number slots hold no
        # quote, so n occurrences of each quoted key can only be the n key slots themselves.
        for key in _KEYS:
            if c.count(b'"' + key.encode() + b'"') != n:
                raise _Reject
        out_int: dict[str, npt.NDArray[np.int64]] = {}
        bbox = np.empty((n, 4), dtype=np.float64)
        score = np.empty(0)
        for j, (role, key, sub) in enumerate(self.roles):
            lj = length[:, j]
            if role == "empty":
                if lj.any():
                    raise _Reject
            elif role == "key":
                if (lj != self.key_len[key]).any():
                    raise _Reject
            elif key in ("image_id", "category_id"):
                out_int[key] = _parse_ints(a, prev[:, j], lj)
            elif key == "bbox":
                bbox[:, sub] = _parse_floats(a, prev[:, j], lj)
            else:
                score = _parse_floats(a, prev[:, j], lj)
        return out_int["image_id"], out_int["category_id"], bbox, score


def _spaces_ok(chunk: bytes) -> bool:
    """Deleting the whitespace of ``chunk`` joins no two tokens ("1 2", '"ima ge_id"')."""
    if (
        b"\n" not in chunk
        and b"\t" not in chunk
        and b"\r" not in chunk
        and chunk.count(b" ") == chunk.count(b", ") + chunk.count(b": ")
    ):
        return True  # json.dump's style: every space follows a ',' or ':'
    raw = np.frombuffer(chunk, dtype=np.uint8)
    word = _IS_WORD.take(raw)
    before = np.count_nonzero(word[:-1] & word[1:])
    del word, raw
    cw = _IS_WORD.take(np.frombuffer(chunk.translate(None, _WS), dtype=np.uint8))
    return bool(np.count_nonzero(cw[:-1] & cw[1:]) == before)


def _matrix(
    a: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint8], int]:
    """Fields as rows of a (n, width) byte matrix, zero-padded."""
    if len(length) == 0:
        return np.zeros((0, 1), dtype=np.uint8), 1
    width = int(length.max())
    if width == 0 or int(length.min()) == 0:
        raise _Reject
    if width > _MAX_WIDTH:
        raise _Reject
    cols = np.arange(width, dtype=np.int64)
    m = a.take(start[:, None] + cols)
    m[cols >= length[:, None]] = 0
    return m, width


def _scan(
    m: npt.NDArray[np.uint8], width: int
) -> tuple[
    npt.NDArray[np.uint8],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
]:
    """Run the number DFA over every row; accumulate mantissa, digits, fraction and exponent."""
    n = m.shape[0]
    state = np.zeros(n, dtype=np.uint8)
    mant = np.zeros(n, dtype=np.int64)
    ndig = np.zeros(n, dtype=np.int64)  # significant mantissa digits (after leading zeros)
    frac = np.zeros(n, dtype=np.int64)
    expo = np.zeros(n, dtype=np.int64)
    neg = m[:, 0] == ord("-")
    eneg = np.zeros(n, dtype=bool)
    big = np.zeros(n, dtype=bool)  # too many digits for the exact fast path
    for j in range(width):
        col = m[:, j]
        live = col != 0
        new = np.where(live, _T[state, _CLS[col]], state)
        digit = (col.astype(np.int64) - ord("0")) * (_CLS[col] <= 1)
        in_mant = live & _MANTISSA_STATES[new] & (_CLS[col] <= 1)
        if in_mant.any():
            sig = in_mant & ((ndig > 0) | (digit > 0))
            big |= sig & (ndig >= 18)
            ok = sig & ~big
            mant = np.where(ok, mant * 10 + digit, mant)
            ndig += sig
            frac += in_mant & _FRAC_STATES[new]
        in_exp = live & _EXP_STATES[new] & (_CLS[col] <= 1)
        if in_exp.any():
            big |= in_exp & (expo >= 10_000)
            expo = np.where(in_exp & ~big, expo * 10 + digit, expo)
        eneg |= live & (new == 7) & (col == ord("-"))
        state = new
    if not _ACCEPT[state].all():
        raise _Reject
    e10 = np.where(eneg, -expo, expo) - frac
    return state, mant, ndig, e10, neg, big, _INT_STATES[state]


_POW10_INT = np.array([10**k for k in range(19)], dtype=np.int64)


def _plain(
    m: npt.NDArray[np.uint8], length: npt.NDArray[np.int64]
) -> (
    tuple[
        npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]
    ]
    | None
):
    """Rows spelled ``-?digits(.digits)?`` (the usual case): (mantissa, fraction digits,
    negative, integer token), or None when any row needs the full DFA (exponents, '+', a
    '-' inside, too many digits). Raises _Reject on a row that is not a JSON number."""
    n, width = m.shape
    neg = m[:, 0] == ord("-")
    dig = (m - np.uint8(ord("0"))) < 10
    dot = m == ord(".")
    if width > 1:
        body = dig | dot
        body[:, 0] |= neg
        body |= m == 0
        if not body.all():
            return None  # 'e', '+', an inner '-', ...: the DFA decides
    elif not (dig[:, 0]).all():
        raise _Reject
    ndot = np.count_nonzero(dot, axis=1)
    has_dot = ndot == 1
    first = neg.astype(np.int64)
    if (ndot > 1).any() or (length <= first).any():
        raise _Reject
    p = np.argmax(dot, axis=1)
    if (has_dot & ((p <= first) | (p >= length - 1))).any():
        raise _Reject  # ".5", "-.5", "5."
    rows = np.arange(n)
    lead0 = m[rows, first] == ord("0")
    nxt = np.minimum(first + 1, width - 1)
    if (lead0 & (length > first + 1) & (m[rows, nxt] != ord("."))).any():
        raise _Reject  # "01", "-012.5"
    ndig = length - first - has_dot
    if (ndig > 18).any():
        return None
    cols = np.arange(width, dtype=np.int64)
    power = (length[:, None] - 1 - cols) - (has_dot[:, None] & (cols < p[:, None]))
    np.clip(power, 0, 18, out=power)
    digits = np.where(dig, m - np.uint8(ord("0")), np.uint8(0)).astype(np.int64)
    mant = (digits * _POW10_INT[power]).sum(axis=1)
    frac = np.where(has_dot, length - 1 - p, 0)
    return mant, frac, neg, ~has_dot


def _parse_ints(
    a: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    m, width = _matrix(a, start, length)
    plain = _plain(m, length)
    if plain is not None:
        mant, frac, neg, is_int = plain
        if not is_int.all():
            raise _Reject  # a float id ("1.0"): the slow path says so
        return np.where(neg, -mant, mant)
    _state, mant, ndig, _e10, neg, big, is_int = _scan(m, width)
    if not is_int.all() or big.any() or (ndig > 18).any():
        raise _Reject  # a float id ("1.0") or one that may not fit int64: the slow path decides
    return np.where(neg, -mant, mant)


def _parse_floats(
    a: npt.NDArray[np.uint8],
    start: npt.NDArray[np.int64],
    length: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    m, width = _matrix(a, start, length)
    plain = _plain(m, length)
    if plain is not None:
        mant, frac, neg, is_int = plain
        e10 = -frac
        big = np.zeros(len(mant), dtype=bool)
    else:
        _state, mant, _ndig, e10, neg, big, is_int = _scan(m, width)
    if (is_int & big).any():
        raise _Reject  # integers of 19+ digits: json gives exact ints; the slow path decides
    fast = ~big & (mant < _TWO53) & (e10 >= -22) & (e10 <= 22)
    mf = mant.astype(np.float64)
    k = np.clip(np.abs(e10), 0, 22)
    val = np.where(e10 >= 0, mf * _POW10[k], mf / _POW10[k])
    val = np.where(neg, -val, val)
    # json.loads reads an integer token as int, then float(int): exactly the int64 -> float64
    # conversion (round half to even), and "-0" is 0.0, not -0.0
    val[is_int] = np.where(neg, -mant, mant)[is_int].astype(np.float64)
    slow = np.flatnonzero(~fast & ~is_int)
    if len(slow):
        rows = np.ascontiguousarray(m[slow])
        strings = rows.view(f"S{width}").reshape(-1)
        with np.errstate(over="ignore"):
            val[slow] = strings.astype(np.float64)  # CPython's correctly rounded strtod
    return val
