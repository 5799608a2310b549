"""The tests' one helper module: run the CLI in-process and check its channels and the error
contract; watch the keypoint OKS split between threads."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from typing import Any

import pytest

from iou_cli.cli import main

ERROR_LINE = re.compile(r"^iou-eval: error: \S.*$")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``iou-eval ARGS`` (main always ends in sys.exit)."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 0), out, err


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``iou-eval ARGS``; any exception but SystemExit
    propagates (that is a bug: the CLI must answer every input with an exit code)."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = None
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        # a NumPy RuntimeWarning would reach a user's stderr as a Python warning: a failure
        warnings.simplefilter("error", RuntimeWarning)
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code
    assert code is not None, "main() returned without sys.exit"
    return (code if isinstance(code, int) else 1), out.getvalue(), err.getvalue()


def assert_one_error_line(code: int, out: str, err: str) -> str:
    """Exit 2, nothing on stdout, exactly one ``iou-eval: error:`` line on stderr."""
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert out == "", out
    assert len(lines) == 1 and ERROR_LINE.match(lines[0]), err
    assert "Traceback" not in err
    return lines[0]


def spy_oks_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread counts ``matching.pairs.pair_oks`` splits its pairs between, one entry per
    split, as they happen (the split itself still runs)."""
    from iou_cli.matching import pairs

    seen: list[int] = []
    split = pairs._split_pair_oks

    def spy(*args: Any) -> Any:
        seen.append(args[5])  # (ds, d_rows, g_rows, sigmas, bound, jobs, order)
        return split(*args)

    monkeypatch.setattr(pairs, "_split_pair_oks", spy)
    return seen


def kpt_script_runs(
    tmp_path: Any, script: str, jobs: tuple[str, ...], seed: int
) -> dict[str, tuple[Any, str]]:
    """For each ``--jobs`` value: ``python -c script`` run as the console script on a random
    keypoint scene (``-o json -q``) in ``tmp_path``, its status asserted 0; its report
    (``meta.seconds`` dropped) and its stderr."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(seed)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "p.json").write_text(json.dumps(dets))
    root = Path(__file__).resolve().parents[1]
    args = ["p.json", "gt.json", "--iou-type", "keypoints", "-o", "json", "-q"]
    out: dict[str, tuple[Any, str]] = {}
    for j in jobs:
        p = subprocess.run(
            [sys.executable, "-c", script, *args, "--jobs", j],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(root)),
        )
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        doc["meta"].pop("seconds")
        out[j] = (doc, p.stderr)
    return out
