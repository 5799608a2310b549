"""Why a model fails, and whether it got better: analyses read an evaluation (its match table
and AP), never re-match.

One module per analysis: :mod:`.subset` (class-agnostic, class and image subsets, applied to
the dataset before evaluation), :mod:`.tide` (TIDE error breakdown), :mod:`.confusion`,
:mod:`.per_image` (per-image view and label-error candidates), :mod:`.calibration`,
:mod:`.compare` (two models: deltas, paired bootstrap CIs, the regression gate) with
:mod:`.bootstrap` (the accumulation under image weights).
"""
