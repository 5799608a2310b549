"""Boxes for the ``iou`` verb: a literal box ``x1,y1,x2,y2`` or a CSV file of boxes.

A CSV file holds one box per line, four numbers in the chosen ``--box-format``; a first line
that is not numbers is a header; blank lines are skipped (a spreadsheet's trailing empty
rows and cells included). Every problem is located at the file and line (``boxes.csv:3``):
the wrong number of cells, a cell that is not a number, a non-finite value, an inverted box.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError
from ..geometry.boxes import check_format, inverted, inverted_what
from .files import read_input

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass
class BoxList:
    """Boxes (N, 4) in the user's box format, and where each came from.

    ``path`` is the CSV file (None for a box given on the command line); ``lines`` holds
    each row's line number in that file.
    """

    boxes: FloatArray
    path: str | None
    lines: IntArray

    def __len__(self) -> int:
        return int(self.boxes.shape[0])


def read_box_arg(text: str, what: str, *, box_format: str = "xyxy") -> BoxList:
    """``text`` names an existing path: read it as a CSV file of boxes; otherwise parse it
    as one box ``x1,y1,x2,y2`` (``;`` also separates). ``what`` names the argument in
    messages (``BOX_A``). Raises :class:`UsageError` (a bad literal box) or
    :class:`InputError` located at ``file:line``."""
    check_format(box_format)
    if os.path.exists(text):
        if _looks_like_box(text):  # never the file silently: say it is ambiguous
            raise UsageError(
                f"{what}: {text!r} is both a box and an existing file; write "
                f"{os.path.join('.', text)!r} for the file"
            )
        return read_box_csv(text, box_format=box_format)
    return parse_box(text, what, box_format=box_format)


def _looks_like_box(text: str) -> bool:
    parts = text.replace(";", ",").split(",")
    try:
        return len([float(p) for p in parts]) == 4
    except ValueError:
        return False


def parse_box(text: str, what: str, *, box_format: str = "xyxy") -> BoxList:
    """One box from the command line: four numbers separated by ``,`` or ``;``."""
    parts = text.replace(";", ",").split(",")
    try:
        nums = [float(p) for p in parts]
    except ValueError:
        raise UsageError(
            f"{what}: expected a box 'x1,y1,x2,y2' or a CSV file of boxes, got {text!r}"
        ) from None
    if len(nums) != 4:
        raise UsageError(f"{what}: expected 4 numbers, got {len(nums)} in {text!r}")
    problem = _box_problem(nums, box_format)
    if problem is not None:
        raise UsageError(f"{what}: {problem}")
    return BoxList(np.asarray([nums], dtype=np.float64), None, np.zeros(1, dtype=np.int64))


def read_box_csv(path: str, *, box_format: str = "xyxy") -> BoxList:
    """Every box of a CSV file (see the module's docstring), validated row by row."""
    if os.path.isdir(path):
        raise InputError(path, None, "is a folder, expected a CSV file of boxes")
    boxes: list[list[float]] = []
    lines: list[int] = []
    first = True
    try:
        # a regular file or a pipe, bounded (files.py): /dev/zero is refused, not read forever
        data = read_input(path, expected="a CSV file of boxes").decode("utf-8-sig")
        with io.StringIO(data, newline="") as fh:
            reader = csv.reader(fh)
            for row in reader:
                lineno = reader.line_num  # the physical line where the record ends
                cells = [c.strip() for c in row if c.strip() != ""]
                if not cells:
                    continue
                header, first = first, False
                try:
                    nums = [float(c) for c in cells]
                except ValueError:
                    if header:  # the first non-blank line may name the columns
                        continue
                    raise InputError(
                        path, lineno, f"expected 4 numbers, got {_shown(row)}"
                    ) from None
                if len(nums) != 4:
                    raise InputError(path, lineno, f"expected 4 numbers, got {len(nums)}")
                problem = _box_problem(nums, box_format)
                if problem is not None:
                    raise InputError(path, lineno, problem)
                boxes.append(nums)
                lines.append(lineno)
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text (expected a CSV file of boxes)") from None
    except csv.Error as exc:
        raise InputError(path, None, f"not a CSV file of boxes ({exc})") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return BoxList(
        np.asarray(boxes, dtype=np.float64).reshape(-1, 4), path, np.asarray(lines, dtype=np.int64)
    )


def _box_problem(nums: list[float], box_format: str) -> str | None:
    """Why four numbers are not a box in ``box_format`` (None when they are)."""
    if not all(math.isfinite(v) for v in nums):
        return f"expected finite numbers, got {_shown_nums(nums)}"
    if bool(inverted(np.asarray(nums, dtype=np.float64), box_format)):
        return f"inverted box ({inverted_what(box_format)}): {_shown_nums(nums)}"
    return None


def _shown_nums(nums: list[float]) -> str:
    return str(nums)  # [5.0, 0.0, 1.0, 1.0]: every digit, no markup


def _shown(row: list[str]) -> str:
    text = ",".join(row)
    return repr(text if len(text) <= 60 else text[:57] + "...")
