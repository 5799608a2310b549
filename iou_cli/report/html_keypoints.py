"""The ``--per-keypoint`` section of the HTML report: which joints fail, one row per keypoint
(names from the categories or data.yaml, escaped by the table renderer it is given)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..text import html_text as esc

COLUMNS = (
    "name",
    "n_labelled",
    "within",
    "mean_error",
    "mean_similarity",
    "visible_not_labelled",
    "labelled_not_visible",
    "oks_lost",
    "share_of_loss",
)


def keypoint_section(
    extra: dict[str, Any], rows_table: Callable[[Sequence[dict[str, Any]], Sequence[str]], str]
) -> str:
    """The section ("" without ``extra["per_keypoint"]``); ``rows_table`` renders the rows."""
    kp = extra.get("per_keypoint")
    if not isinstance(kp, dict) or not kp.get("keypoints"):
        return ""
    head = (
        f"Per keypoint: {kp.get('n_pairs')} true-positive pairs at OKS &ge; "
        f"{esc(kp.get('oks_thr'))}"
    )
    note = (
        "within: share of labelled keypoints whose own similarity reaches that OKS; "
        "mean_error: distance over sqrt(area); oks_lost: the keypoint's part of 1 - OKS "
        f"(share_of_loss: of all of it). Predicted visible: third value &ge; "
        f"{esc(kp.get('visible_thr'))}. Sigmas: {esc(kp.get('sigmas'))}."
    )
    table = rows_table(kp["keypoints"], COLUMNS)
    return f'<section><h2>{head}</h2>{table}<p class="note">{note}</p></section>'
