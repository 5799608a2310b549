"""The console script's early start of keypoint ``--jobs`` workers (:mod:`iou_cli.cli.early`):
the guess reads the arguments as click does, the parsed command adopts the workers only for
the same request, and the report is one process's either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from iou_cli.cli import early
from iou_cli.loaders import fastcoco
from tests.unit.test_fastkpt import KEYS, _kpt_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.chdir(tmp_path)
    Path("p.json").write_text("[]")
    Path("gt.json").write_text("{}")
    return "p.json", "gt.json"


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        ("p.json gt.json --iou-type keypoints --jobs 0", ("p.json", "gt.json", 0)),
        ("evaluate p.json gt.json --iou-type=keypoints -j 4", ("p.json", "gt.json", 4)),
        (
            "--jobs=2 -o json p.json --per-class gt.json --iou-type keypoints -q",
            ("p.json", "gt.json", 2),
        ),  # fmt: skip
        (
            "p.json gt.json --matches m.csv --sigmas 0.1,0.2 --iou-type keypoints -j 2",
            ("p.json", "gt.json", 2),
        ),  # fmt: skip
        ("p.json gt.json --iou-type keypoints", None),  # one process
        ("p.json gt.json --iou-type keypoints --jobs 1", None),
        ("p.json gt.json --iou-type bbox --jobs 0", None),
        ("p.json gt.json --jobs 0", None),  # detected, not given
        ("p.json gt.json --iou-type keypoints --jobs x", None),
        ("p.json gt.json --iou-type keypoints --jobs -2", None),
        ("p.json gt.json --iou-type keypoints --jobs", None),
        ("p.json --iou-type keypoints --jobs 0", None),  # one file
        ("p.json gt.json x.json --iou-type keypoints --jobs 0", None),
        ("p.json gt.json --iou-type keypoints --jobs 0 --pred-format coco", None),
        ("p.json gt.json --iou-type keypoints --jobs 0 --images imgs", None),
        ("p.json gt.json --iou-type keypoints --jobs 0 --shard 1/2", None),
        ("p.json gt.json --iou-type keypoints --jobs 0 -qv", None),  # bundled flags
        ("p.json gt.json --iou-type keypoints --jobs 0 --", None),
        ("p.json gt.json --iou-type keypoints --jobs 0 --help", None),
        ("compare p.json gt.json --iou-type keypoints --jobs 0", None),  # another verb
        ("- gt.json --iou-type keypoints --jobs 0", None),  # stdin
        ("missing.json gt.json --iou-type keypoints --jobs 0", None),
    ],
)
def test_the_guess(files: tuple[str, str], argv: str, want: tuple[str, str, int] | None) -> None:
    assert early.guess(argv.split()) == want


def test_the_options_a_guess_reads_past_are_the_commands_own() -> None:
    """Each option the guess knows takes a value exactly where click's evaluate option
    does (a wrong one would make it read an option's value as a file)."""
    from iou_cli.cli.app import click_command

    group = click_command("evaluate")
    command = group.commands["evaluate"] if hasattr(group, "commands") else group
    takes: dict[str, bool] = {}
    for param in command.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("-"):
                takes[opt] = not getattr(param, "is_flag", False)
    for opt in early.VALUES:
        assert takes.get(opt) is True, opt
    for opt in early.FLAGS:
        assert takes.get(opt) is False, opt


def _serial(data: bytes) -> dict[str, Any]:
    cols = fastcoco.read_results(data, 1, field="keypoints")
    assert cols is not None
    return cols


def test_the_same_request_finds_its_workers_and_another_ends_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    data = _kpt_file(300, seed=21)
    path = str(tmp_path / "p.json")
    Path(path).write_bytes(data)
    fastcoco.prefetch(path, 2, "keypoints", 1000, lead=4000)
    first = fastcoco._PREFETCHED[(path, "keypoints")][1]
    assert first.pool is not None
    fastcoco.prefetch(path, 2, "keypoints", 1000)  # the parsed command: the same request
    assert fastcoco._PREFETCHED[(path, "keypoints")][1] is first
    raw, cols = fastcoco.read_path(path, 2, "keypoints")
    assert raw == b"" and cols is not None
    for key in KEYS:
        assert cols[key].tobytes() == _serial(data)[key].tobytes(), key
    for other in ((3, 1000), (2, 999)):  # other processes, another ground truth
        fastcoco.prefetch(path, 2, "keypoints", 1000, lead=4000)
        early_one = fastcoco._PREFETCHED[(path, "keypoints")][1]
        procs = [p for p, _ in early_one.procs]
        fastcoco.prefetch(path, other[0], "keypoints", other[1])
        assert fastcoco._PREFETCHED[(path, "keypoints")][1] is not early_one
        assert early_one.procs == [] and all(p.exitcode is not None for p in procs)
        raw, cols = fastcoco.read_path(path, other[0], "keypoints")
        assert cols is not None and cols["score"].tobytes() == _serial(data)["score"].tobytes()
    fastcoco.prefetch(path, 2, "keypoints", 1000, lead=4000)
    Path(path).write_bytes(data + b" ")  # the file changed after the early start
    fastcoco.prefetch(path, 2, "keypoints", 1000)
    assert fastcoco._PREFETCHED[(path, "keypoints")][1].pool is not None
    fastcoco.cancel_prefetch()
    assert fastcoco._PREFETCHED == {}


_SCRIPT = """
import json, sys
from iou_cli.loaders import fastcoco
fastcoco._PARALLEL_MIN = 0
made = []
real = fastcoco.Pending.__init__
def spy(self, *args, **kw):
    made.append([args[1], "typer" in sys.modules])  # (typer: the command line parsed)
    real(self, *args, **kw)
fastcoco.Pending.__init__ = spy
import atexit
atexit.register(lambda: sys.stderr.write("pendings %s\\n" % json.dumps(made)))
from iou_cli.cli import main
main()
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_console_script_starts_early_and_reports_as_one_process(
    tmp_path: Path, jobs: str
) -> None:
    """``--jobs 2``: one set of workers, started before the command line was parsed (typer
    not imported yet) and adopted by it; the report equals ``--jobs 1``'s."""
    from tests.helpers import kpt_script_runs

    runs = kpt_script_runs(tmp_path, _SCRIPT, ("1", jobs), 4)
    for j, (_, err) in runs.items():
        line = [x for x in err.splitlines() if x.startswith("pendings")]
        # (the atexit line: the normal exit, since the spy registered a handler)
        assert json.loads(line[0].split(" ", 1)[1]) == ([] if j == "1" else [[2, False]])
    assert runs["1"][0] == runs[jobs][0]
