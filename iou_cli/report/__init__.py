"""Reporters: typed results -> text (tables, CSV, JSON, markdown), HTML pages and figures.

``result`` (a Result, the ``iou`` verb's matrix), ``compare`` (a Comparison), ``explain`` (an Explanation), ``analyses``
(the analysis sections), ``html`` (self-contained pages), ``plots`` (matplotlib, imported
only there) and ``outputs`` (atomic writes that never go over an input)."""
