from __future__ import annotations

import os
from pathlib import Path

from hypothesis import settings

DATA = Path(__file__).parent / "data"

# `make fuzz` raises the example count; the suite runs a short campaign.
settings.register_profile(
    "fuzz", max_examples=int(os.environ.get("IOU_EVAL_FUZZ_EXAMPLES", "2000")), deadline=None
)
settings.register_profile("default", max_examples=100, deadline=None)
settings.load_profile("fuzz" if os.environ.get("IOU_EVAL_FUZZ_EXAMPLES") else "default")
