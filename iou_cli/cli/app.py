"""The shell: command line -> library calls -> stdout/stderr/exit code. The only module that exits.

Exit codes: 0 evaluated, 1 a ``--fail-under`` gate failed (report still printed), 2 usage
error or input that cannot be evaluated (also a stdout that cannot be written: closed, disk
full), 130 interrupted, 141 the reader of stdout went away (``| head -1``; quiet, as a shell
reports any tool that SIGPIPE ends). Errors are one line on stderr:
``iou-eval: error: <file>[:<where>]: <what>`` (``--debug`` shows the traceback instead).
"""

from __future__ import annotations

import contextlib
import copy
import errno
import os
import sys
from typing import Annotated, Any

import typer

from .. import __version__
from ..errors import InputError, IouEvalError, UsageError
from . import compare, evaluate, explain, iou, merge, panoptic, tasks
from .stdio import (
    EXIT_PIPE,
    PROG,
    StdoutFailed,
    setup_streams,
    silence_stdout,
    stderr_line,
    write_stdout,
)

app = typer.Typer(
    name=PROG,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
    no_args_is_help=True,
    rich_markup_mode="rich",  # help panels; help texts hold no [markup]
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=(
        "Score detection and segmentation predictions against ground truth by IoU.\n\n"
        "iou-eval PREDICTIONS GROUND_TRUTH [OPTIONS] evaluates (the default verb)."
    ),
)


def _version(value: bool) -> None:
    if value:
        write_stdout(f"{PROG} {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_version
        ),
    ] = False,
) -> None:
    """Score detection and segmentation predictions against ground truth by IoU."""


# the verbs, in the order --help lists them (one module per verb group; each command maps its
# options, makes one library call and prints through output.emit)
app.command("evaluate", help=evaluate.EVALUATE_HELP, epilog=evaluate.EVALUATE_EXAMPLES)(
    evaluate.evaluate_cmd
)
app.command("iou", epilog=iou.IOU_EXAMPLES)(iou.iou_cmd)
app.command("segment", epilog=tasks.SEGMENT_EXAMPLES)(tasks.segment_cmd)
app.command("labels", epilog=tasks.LABELS_EXAMPLES)(tasks.labels_cmd)
app.command("panoptic", epilog=panoptic.PANOPTIC_EXAMPLES)(panoptic.panoptic_cmd)
app.command("compare", epilog=compare.COMPARE_EXAMPLES)(compare.compare_cmd)
app.command("explain", epilog=explain.EXPLAIN_EXAMPLES)(explain.explain_cmd)
app.command("merge", epilog=merge.MERGE_EXAMPLES)(merge.merge_cmd)
VERBS = frozenset(c.name for c in app.registered_commands if c.name)


# --------------------------------------------------------------------------- entry point


ROOT_OPTIONS = ("--version", "--install-completion", "--show-completion")


def click_command(verb: str | None) -> Any:
    """The click group that runs ``verb``: with that verb's command only (building a
    command reads its whole signature: the 8 verbs took ~25 ms of every run), or every
    verb's for anything else (the root options, completion)."""
    if verb not in VERBS and verb != "--version":
        return typer.main.get_command(app)
    one = copy.copy(app)  # (--version: the root callback alone, it exits first)
    one.registered_commands = [c for c in app.registered_commands if c.name == verb]
    return typer.main.get_command(one)


def _dispatch_args(argv: list[str], command: Any = None) -> list[str]:
    """``iou-eval PRED GT ...`` means ``iou-eval evaluate PRED GT ...``.

    * ``iou-eval`` and ``iou-eval --help`` show the default verb's help (it lists the verbs);
    * a first argument that names an existing file or folder is the predictions, even when it
      is also a verb's name (``iou-eval labels gt/`` in a folder holding Ultralytics'
      ``labels/``): a note on stderr says so;
    * a first argument that is neither a path nor a verb but looks like a mistyped verb is a
      usage error that names the verb;
    * a negative box such as ``iou-eval iou -5,0,5,5 0,0,5,5`` is an argument, not an option
      (``command``: the click group, to know which options take a value).
    """
    if not argv or argv[0] in ("-h", "--help"):
        return ["evaluate", "--help"]
    first = argv[0]
    if first.startswith(ROOT_OPTIONS):
        return argv
    if first in VERBS:
        if first != "evaluate" and os.path.exists(first) and len(argv) > 1:
            from ..text import term

            kind = "folder" if os.path.isdir(first) else "file"
            stderr_line(
                f"{PROG}: note: {term(first)!r} is a {kind} here, so it is read as the "
                f"predictions of the default verb, not as the '{first}' verb (to run that "
                f"verb, start iou-eval from another folder)"
            )
            return ["evaluate", *argv]
        if first == "iou" and command is not None:
            return [first, *_numbers_as_arguments(argv[1:], command.commands[first])]
        return argv
    if not first.startswith("-") and not os.path.exists(first):
        import difflib

        close = difflib.get_close_matches(first, sorted(VERBS), n=1, cutoff=0.6)
        if close and not any(c in first for c in "./\\"):
            raise UsageError(
                f"unknown verb {first!r} (did you mean '{close[0]}'?); "
                f"the verbs are {', '.join(sorted(VERBS))}"
            )
    return ["evaluate", *argv]


def _is_number_list(token: str) -> bool:
    """``-5,0,5,5`` (or ``-1e3;2;3;4``, ``-5``): numbers, so never an option name."""
    try:
        for part in token.replace(";", ",").split(","):
            float(part)
    except ValueError:
        return False
    return True


def _numbers_as_arguments(args: list[str], command: Any) -> list[str]:
    """Options first, then ``--``, then the arguments, when an argument starts with ``-``
    and is a list of numbers (click would take it for an option). Unchanged otherwise."""
    end = args.index("--") if "--" in args else len(args)
    if not any(t.startswith("-") and _is_number_list(t) for t in args[:end]):
        return args
    takes_value = {
        name
        for p in command.params
        if p.param_type_name == "option" and not p.is_flag and not p.count
        for name in p.opts
    }
    options: list[str] = []
    arguments: list[str] = []
    i = 0
    while i < end:
        token = args[i]
        if token.startswith("-") and len(token) > 1 and not _is_number_list(token):
            options.append(token)
            if token in takes_value and i + 1 < end:
                i += 1
                options.append(args[i])
        else:
            arguments.append(token)
        i += 1
    return [*options, "--", *arguments, *args[end + 1 :]]


# complexity: the exit-code contract in one place (one except clause per kind of ending)
def main(argv: list[str] | None = None) -> None:  # noqa: C901
    """Console-script entry point; always ends with ``sys.exit``."""
    try:  # typer >= 0.27 vendors click; older releases depend on it
        from typer._click import exceptions as click_exc
    except ImportError:  # pragma: no cover
        from click import exceptions as click_exc  # type: ignore[no-redef]

    from ..loaders.files import reading

    if argv is None:  # the console script: one command, then the process ends
        from .early import console_process

        console_process()
    setup_streams()
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw  # every command's --debug: a traceback instead of one line
    old_term = _on_sigterm()
    try:
        args = _dispatch_args(raw)
        command = click_command(args[0] if args else None)
        if args and args[0] == "iou":
            args = ["iou", *_numbers_as_arguments(args[1:], command.commands["iou"])]
        # one read-set for the whole command: every file any loader reads is recorded, and
        # no output is written over it (outguard); pipe bytes live for this command only
        with reading():
            code = command.main(args=args, prog_name=PROG, standalone_mode=False)
    except Terminated:
        # SIGTERM as Ctrl-C: temporary files are gone (their writers clean up on any
        # exception), the status a shell reports for a TERM-ended tool (128 + 15)
        stderr_line(f"{PROG}: terminated")
        sys.exit(EXIT_TERM)
    except StdoutFailed as exc:
        silence_stdout()
        if exc.errno == errno.EPIPE:
            # the reader went away (`| head -1`): quiet, and the status a shell reports for
            # a tool that SIGPIPE ends (128 + 13), never the gate's 1 nor success
            sys.exit(EXIT_PIPE)
        stderr_line(f"{PROG}: error: cannot write to stdout: {exc}")
        sys.exit(2)
    except IouEvalError as exc:
        if debug:
            raise
        if isinstance(exc, InputError) and exc.path == "-":
            exc.path = "<stdin>"
        stderr_line(f"{PROG}: error: {exc.message()}")
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        stderr_line(f"{PROG}: interrupted")
        sys.exit(130)
    except KeyboardInterrupt:
        stderr_line(f"{PROG}: interrupted")
        sys.exit(130)
    except click_exc.ClickException as exc:
        if debug:
            raise
        stderr_line(f"{PROG}: error: {_click_message(exc, click_exc)}")
        sys.exit(2)
    except BrokenPipeError:
        # a write to stdout outside write_stdout() (should not happen): same answer
        silence_stdout()
        sys.exit(EXIT_PIPE)
    except MemoryError:
        stderr_line(f"{PROG}: error: out of memory")
        sys.exit(2)
    finally:
        _restore_sigterm(old_term)
    if code == 130:  # typer turns KeyboardInterrupt into Exit(130) and returns it
        stderr_line(f"{PROG}: interrupted")
    status = code if isinstance(code, int) else 0
    if argv is None:  # the console script: the process ends here
        leave(status)
    sys.exit(status)


def leave(status: int) -> None:
    """End the process with ``status`` now, without the interpreter's teardown (every module
    and object freed one by one: ~15 ms after a keypoint run), when nothing waits on that
    teardown: no exit handler registered (``atexit``: logging's, a profiler's) but
    multiprocessing's, no other thread running, both streams flushed. Otherwise returns
    (the caller exits normally).

    Multiprocessing's handler would end and wait for children and run its finalizers: by
    now every pool was closed by its ``with`` and every worker of ``workers.fork_workers``
    was read to its end or killed (``end_workers``), so it has nothing to wait on but
    workers exiting by themselves (~4-7 ms while the kernel frees their memory)."""
    import atexit
    import threading

    handlers = getattr(atexit, "_ncallbacks", None)  # (CPython's; elsewhere: never leave)
    if handlers is None or threading.active_count() > 1:
        return
    # (multiprocessing.util registers its one handler when it is imported)
    mp = sys.modules.get("multiprocessing") if "multiprocessing.util" in sys.modules else None
    if handlers() > (0 if mp is None else 1):
        return
    if mp is not None:  # workers that have ended are reaped (their CPU time counted as ours)
        mp.active_children()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # the normal exit says what went wrong
        return
    os._exit(status)


EXIT_TERM = 143  # 128 + SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt (every ``finally`` and cleanup runs)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


def _on_sigterm() -> Any:
    import signal

    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except (ValueError, OSError):  # not the main thread (an embedding app): leave it
        return None


def _restore_sigterm(old: Any) -> None:
    import signal

    if old is not None:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGTERM, old)


# options users of other tools reach for, and what iou-eval calls them
_OPTION_HINTS = {
    "--json": "-o json",
    "--csv": "-o csv",
    "--markdown": "-o markdown",
    "--md": "-o markdown",
    "--table": "-o table",
    "--format": "-o table|csv|json|markdown",
    "--conf": "--score-thr",
    "--iou": "--tp-iou",
    "--threshold": "--score-thr or --tp-iou",
    "--iou-threshold": "--tp-iou",
}


def _click_message(exc: Any, click_exc: Any) -> str:
    """click's message, with the option a user of another tool meant."""
    message = str(exc.format_message())
    if isinstance(exc, click_exc.NoSuchOption):
        hint = _OPTION_HINTS.get(exc.option_name)
        if hint:
            return f"no such option: {exc.option_name} (use {hint})"
    return message
