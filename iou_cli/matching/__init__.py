"""Matching: candidate pairs, the greedy rank loop, and the match table analyses read.

``pairs`` finds every (prediction, ground truth) pair that could match; ``greedy`` runs
pycocotools' matching over them; ``table`` keeps the outcome (:class:`MatchTable`) and turns
it into ``--matches`` rows. Nothing here knows a protocol's summary.
"""

from .pairs import Pairs, candidate_pairs
from .table import MatchTable, matches_rows

__all__ = ["MatchTable", "Pairs", "candidate_pairs", "matches_rows"]
