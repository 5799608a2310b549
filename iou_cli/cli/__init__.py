"""The shell: command line -> library calls -> stdout/stderr/exit code (see ``app``)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (:func:`iou_cli.cli.app.main`); as the console script
    (``argv`` None), the workers of a keypoint ``--jobs`` run start before the command line
    is parsed (:mod:`.early`)."""
    if argv is None:
        from .early import start

        start(sys.argv[1:])
    from .app import main as run

    run(argv)


__all__ = ["main"]
