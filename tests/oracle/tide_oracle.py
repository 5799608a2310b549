"""Run the tidecv harness (tests/oracle/tide_harness.py) in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / ".venv" / "tidecv-oracle"
HARNESS = Path(__file__).with_name("tide_harness.py")


def run_tidecv(scenes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not (ORACLE / "tidecv").is_dir():
        raise RuntimeError(f"tidecv oracle missing at {ORACLE}: run `make tidecv-oracle`")
    env = dict(os.environ, PYTHONPATH=str(ORACLE))
    proc = subprocess.run(
        [sys.executable, str(HARNESS)],
        input=json.dumps(scenes),
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"tidecv harness failed:\n{proc.stderr}")
    out: list[dict[str, Any]] = json.loads(proc.stdout)
    return out
