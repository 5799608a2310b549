"""Run the CLI in-process and capture its three channels."""

from __future__ import annotations

import pytest

from iou_cli.cli import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``iou-eval ARGS`` (main always ends in sys.exit)."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 0), out, err
