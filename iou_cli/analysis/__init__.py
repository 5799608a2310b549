"""Why a model fails: analyses read an evaluation (its match table and AP), never re-match.

One module per analysis: :mod:`.subset` (class-agnostic, class and image subsets, applied to
the dataset before evaluation), :mod:`.tide` (TIDE error breakdown), :mod:`.confusion`,
:mod:`.per_image` (per-image view and label-error candidates), :mod:`.calibration`.
"""
