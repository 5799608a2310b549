"""Run the Ultralytics harness (tests/oracle/ultralytics_harness.py) in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / ".venv" / "ultralytics-oracle"
HARNESS = Path(__file__).with_name("ultralytics_harness.py")
WHEEL_DIR = Path("/opt/wheels")


def missing() -> str | None:
    """Why the oracle cannot run here (None: it can)."""
    if (ORACLE / "ultralytics").is_dir() and (ORACLE / "torch").is_dir():
        return None
    if not any(WHEEL_DIR.glob("torch-*+cpu-*.whl")):
        return (
            "no CPU torch wheel in /opt/wheels (PyPI's torch pulls CUDA), so the Ultralytics "
            "oracle cannot be installed here"
        )
    return f"Ultralytics oracle missing at {ORACLE}: run `make ultralytics-oracle`"


def run_ultralytics(scenes: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
        raise RuntimeError(f"ultralytics harness failed:\n{proc.stderr}")
    out: list[dict[str, Any]] = json.loads(proc.stdout)
    return out
