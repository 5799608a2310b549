"""Light start-up: what each common command imports (``python -X importtime``, in a fresh
process). Heavy or unrelated modules are imported where they are used, so a plain run pays
only for what it needs; a new top-level import of one of these fails here with its name.

* ``--version`` and ``--help``: no NumPy, no JSON decoder, nothing of the library's
  evaluation;
* a plain bbox or keypoint evaluation (``-o json``): no pandas, matplotlib, torch, rich,
  no ``multiprocessing`` (one process), no ``numpy.ma`` (``np.unique`` imports it), no
  analyses, HTML report, partial states, and a bbox run no keypoint geometry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"

# never in any plain command
HEAVY = {"pandas", "matplotlib", "torch", "scipy", "PIL", "cv2", "sklearn", "shapely"}
# not for a single-process evaluation that writes JSON
EVALUATION = HEAVY | {
    "rich",
    "multiprocessing",
    "numpy.ma",
    "html",
    "iou_cli.analysis",
    "iou_cli.report.html",
    "iou_cli.report.plots",
    "iou_cli.state",
    "iou_cli.distributed",
    "iou_cli.streaming",
}
BBOX = [str(SAMPLE / "coco" / "preds.json"), str(SAMPLE / "coco" / "gt.json")]
KPT = [str(SAMPLE / "keypoints" / "coco" / "preds.json"), str(SAMPLE / "keypoints" / "coco" / "gt.json")]  # fmt: skip

CASES = {
    "--version": (["--version"], HEAVY | {"numpy", "msgspec", "iou_cli.api", "iou_cli.loaders.coco"}),
    "--help": (["--help"], HEAVY | {"numpy", "msgspec", "iou_cli.api", "multiprocessing"}),
    "bbox": ([*BBOX, "-o", "json"], EVALUATION | {"iou_cli.geometry.oks"}),
    "keypoints": ([*KPT, "--iou-type", "keypoints", "-o", "json"], EVALUATION),
}  # fmt: skip


def imported(args: list[str]) -> set[str]:
    """The modules ``iou-eval ARGS`` imports (and every parent package of each)."""
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    names = {
        line.split("|")[-1].strip()
        for line in p.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    names.discard("imported package")  # the header line
    return {".".join(n.split(".")[: i + 1]) for n in names for i in range(n.count(".") + 1)}


@pytest.mark.parametrize("case", list(CASES))
def test_light_start_up(case: str) -> None:
    args, forbidden = CASES[case]
    mods = imported(args)
    assert "iou_cli.cli.app" in mods  # the profile really lists the imports
    assert ("numpy" in mods) == (case in ("bbox", "keypoints"))
    assert sorted(mods & forbidden) == []


def test_the_check_sees_a_lazy_import_made_eager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the check itself: a module imported at start-up (here through sitecustomize) is seen
    (tmp_path / "sitecustomize.py").write_text("import difflib\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    assert "difflib" in imported(["--version"])


def _param(p: Any) -> tuple[Any, ...]:
    return (
        p.name,
        p.opts,
        p.secondary_opts,
        p.required,
        p.default,
        p.nargs,
        str(p.type),
        getattr(p, "help", None),
    )


def test_a_verbs_own_command_is_the_one_of_the_whole_group() -> None:
    # a run builds only its verb's click command: the same parameters, help and epilog as
    # the verb has in the group of all verbs (which --install-completion and the docs use)
    from iou_cli.cli.app import VERBS, click_command

    full = click_command(None)
    assert set(full.commands) == VERBS
    for verb in VERBS:
        group = click_command(verb)
        assert list(group.commands) == [verb]
        one, ref = group.commands[verb], full.commands[verb]
        assert [_param(p) for p in one.params] == [_param(p) for p in ref.params]
        assert (one.help, one.epilog) == (ref.help, ref.epilog)
        assert [p.name for p in group.params] == [p.name for p in full.params]
    # --version needs the root callback only (eager: it prints and exits before any verb)
    assert click_command("--version").commands == {}


@pytest.mark.parametrize("preset", [None, "4"])
def test_console_script_holds_openblas_to_one_thread_unless_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], preset: str | None
) -> None:
    # set before NumPy is imported: the CLI's modules do not import it (a fresh process)
    p = subprocess.run(
        [sys.executable, "-c", "import sys, iou_cli.cli.app; print('numpy' in sys.modules)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.stdout.strip() == "False", p.stderr
    from iou_cli.cli.app import main

    if preset is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", preset)
    monkeypatch.setattr(sys, "argv", ["iou-eval", "--version"])
    monkeypatch.setattr("gc.freeze", lambda: None)  # (not this test process's heap)
    monkeypatch.setattr("gc.set_threshold", lambda *a: None)
    with pytest.raises(SystemExit):
        main()
    assert os.environ["OPENBLAS_NUM_THREADS"] == (preset or "1")
    assert "iou-eval" in capsys.readouterr().out


@pytest.mark.parametrize("mp", [False, True])
@pytest.mark.parametrize("busy", [None, "handler", "thread"])
def test_console_script_leaves_without_teardown_only_when_nothing_waits(
    monkeypatch: pytest.MonkeyPatch, busy: str | None, mp: bool
) -> None:
    """``leave``: the streams flushed, then ``os._exit(status)``, unless an exit handler is
    registered or another thread runs (then the normal exit runs them). Multiprocessing's
    own handler (registered when it is imported: ``--jobs``) does not hold it: its workers
    were read to their end or killed; those that have exited are reaped first."""
    import atexit
    import multiprocessing
    import multiprocessing.util
    import threading

    from iou_cli.cli import app

    left: list[int] = []
    reaped: list[bool] = []
    monkeypatch.setattr(app.os, "_exit", left.append)
    monkeypatch.setattr(atexit, "_ncallbacks", lambda: int(busy == "handler") + int(mp))
    monkeypatch.setattr(threading, "active_count", lambda: 1 + (busy == "thread"))
    monkeypatch.setattr(multiprocessing, "active_children", lambda: reaped.append(True))
    if mp:
        monkeypatch.setitem(sys.modules, "multiprocessing.util", multiprocessing.util)
    else:
        monkeypatch.delitem(sys.modules, "multiprocessing.util", raising=False)
    app.leave(3)
    assert left == ([] if busy else [3])
    assert reaped == ([True] if mp and not busy else [])


def test_console_script_with_workers_leaves_early_with_the_whole_report(tmp_path: Path) -> None:
    """``--jobs 2`` on keypoint results read by a forked worker: the console script still
    leaves early (multiprocessing imported), with the report of one process, status 0."""
    from tests.helpers import kpt_script_runs

    script = (
        "import os, sys\n"
        "from iou_cli.loaders import fastcoco\n"
        "fastcoco._PARALLEL_MIN = 0\n"
        "real = os._exit\n"
        "def early(code):\n"
        "    sys.stderr.write('left early\\n')\n"
        "    sys.stderr.flush()\n"
        "    real(code)\n"
        "os._exit = early\n"
        "from iou_cli.cli import app\n"
        "app.main()\n"
    )
    runs = kpt_script_runs(tmp_path, script, ("1", "2"), 2)
    for _, err in runs.values():
        assert err.splitlines()[-1:] == ["left early"]
    assert runs["1"][0] == runs["2"][0]


@pytest.mark.parametrize("gate", [None, "AP=0.99"])
def test_console_script_output_and_status_in_a_fresh_process(
    tmp_path: Path, gate: str | None
) -> None:
    """The console script (``python -m iou_cli``) leaves early: its whole report is on
    stdout, its status is the command's (a failed gate: 1)."""
    sample = ROOT / "sample_data" / "coco"
    args = [str(sample / "preds.json"), str(sample / "gt.json"), "-o", "json", "-q"]
    args += ["--fail-under", gate] if gate else []
    p = subprocess.run(
        [sys.executable, "-m", "iou_cli", *args], capture_output=True, text=True, cwd=tmp_path
    )
    assert p.returncode == (1 if gate else 0), p.stderr
    assert json.loads(p.stdout)["summary"]["AP"] > 0
