"""One output path for the verbs: info and warning lines, the report in the chosen format,
the gates' exit status; titles and the JSON ``meta``."""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import __version__
from ..errors import UsageError
from .stdio import PROG, StdoutFailed, stderr_line, stdout_is_unicode, warn, write_stdout


def resolve_output(output: str | None) -> str:
    from ..report.result import OUTPUTS

    if output is None:
        return "table" if sys.stdout.isatty() else "csv"
    if output not in OUTPUTS:
        raise UsageError(f"-o/--output: expected one of {', '.join(OUTPUTS)}, got {output!r}")
    return output


def print_result(result: Any, output: str, per_class: bool, title: Any = PROG) -> None:
    from ..report import result as report

    extra = getattr(result, "extra", None) or {}
    if output == "json":
        write_stdout(report.to_json(result, ascii_only=not stdout_is_unicode()))
    elif output == "csv":
        chosen = analysis_csv(extra)
        write_stdout(chosen if chosen is not None else report.to_csv(result, per_class=per_class))
    elif output == "markdown":
        text = report.to_markdown(result, per_class=per_class)
        if extra:
            from ..report.analyses import to_markdown

            text += to_markdown(extra)
        write_stdout(text)
    else:
        try:  # a closed pipe or a full disk: one line and a defined exit (main())
            print_table(result, per_class, title)
        except OSError as exc:
            raise StdoutFailed(exc) from None
        write_stdout("")


def print_table(result: Any, per_class: bool, title: Any, *, stderr: bool = False) -> None:
    """The rich table (and the analyses' tables) at the terminal's width; piped, at the
    table's full width."""
    from rich.console import Console

    from ..report import result as report

    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not stream.isatty():
        width = report.full_width(result, per_class=per_class, title=title)
    if width is None:  # COLUMNS=0 would make rich print nothing (limits.console_width)
        from ..limits import console_width

        width = console_width(os.environ.get("COLUMNS"))
    console = Console(highlight=False, stderr=stderr, width=width)
    console.print(
        report.render_table(result, per_class=per_class, title=title, width=console.width)
    )
    extra = getattr(result, "extra", None) or {}
    if extra:
        from ..report.analyses import renderables

        for part in renderables(extra):
            console.print(part)


def analysis_csv(extra: dict[str, Any]) -> str | None:
    """Issue 11: with -o csv, the table of the one analysis asked for (else None)."""
    if not extra:
        return None
    from ..report.analyses import SECTIONS, csv_table

    for name, _flag in SECTIONS:
        if name in extra:
            return csv_table(name, extra[name])
    return None


def emit(
    result: Any,
    *,
    output: str | None,
    per_class: bool,
    gates: list[Any],
    quiet: bool = False,
    title: Any = PROG,
) -> int:
    """Print the info lines (unless quiet), warnings, the report (``output`` None: none) and
    return the gates' exit status (1 when one failed)."""
    from ..gates import failures
    from ..text import term

    # info and warning lines name files, images and classes from the inputs: one line each
    if not quiet:
        for line in result.info:
            stderr_line(f"{PROG}: {term(line)}")
    for w in result.warnings:
        warn(term(w))
    if output is not None:
        print_result(result, output, per_class, title=title)
    failed = failures(gates, result.summary)
    for line in failed:
        stderr_line(f"{PROG}: {line}")
    return 1 if failed else 0


def stdout_report(out: str | None, output: str | None, report: str | None) -> str | None:
    """The report's format once ``--report -`` (or ``/dev/stdout``) is known: the HTML page
    then owns stdout, so no table goes there and ``-o`` is refused (never a mix)."""
    from ..outguard import is_stdout

    if report is None or not is_stdout(report):
        return out
    if output is not None:
        raise UsageError(
            f"--report {report} writes the HTML page to stdout, so the -o {output} report "
            "would be mixed into it: write the page to a file, or drop -o"
        )
    return None


def report_output(output: str | None, matches: str | None) -> str | None:
    """The report's format; None when ``--matches -`` owns stdout (one stream, one table)."""
    if matches == "-":
        if output is not None:
            raise UsageError(
                f"--matches - writes the matches CSV to stdout, so the -o {output} report would "
                "be mixed into it: write the matches to a file (--matches matches.csv), or drop "
                "-o to get only the matches on stdout"
            )
        return None
    return resolve_output(output)


def title_of(predictions: str, ground_truth: str) -> str:
    """The table title: both file names (the reporter hands it to rich as plain text, never
    markup; see report.render_table)."""
    return f"{PROG}: {shown(predictions)} vs {shown(ground_truth)}"


def shown(path: str) -> str:
    """A short name for the title: the file or folder's own name (``<stdin>`` for ``-``)."""
    if path == "-":
        return "<stdin>"
    return os.path.basename(os.path.normpath(path)) or path


def add_meta(
    result: Any, predictions: str, ground_truth: str, protocol: str, seconds: float
) -> None:
    """JSON ``meta``: what produced this report (warnings name their first offenders)."""
    result.meta = {
        "version": __version__,
        "predictions": predictions,
        "ground_truth": ground_truth,
        "protocol": protocol,
        "seconds": round(seconds, 3),
        "warnings": list(result.warnings),
    }
    fp = getattr(result, "gt_fingerprint", None)
    ds = getattr(getattr(result, "evaluation", None), "dataset", None)
    if fp is None and ds is not None:
        from ..data import fingerprint

        fp = fingerprint(ds)
    if fp is not None:  # compare warns when two reports' ground truths differ
        result.meta["gt_fingerprint"] = fp


def clock() -> float:
    import time

    return time.perf_counter()


def finish(
    result: Any, predictions: str, ground_truth: str, task: str, started: float, verbose: bool
) -> None:
    """JSON meta and, with -v, the run's time on stderr."""
    seconds = clock() - started
    if verbose:
        result.info.append(f"time: total {seconds:.3f} s")
    add_meta(result, predictions, ground_truth, task, seconds)
