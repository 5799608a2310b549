"""Error types: one place for what goes wrong and how it is said.

The library raises these; only the CLI (``iou_cli/cli/``) turns them into exit codes and the contract's
``iou-eval: error: <file>[:<where>]: <what>`` line.
"""

from __future__ import annotations


class IouEvalError(Exception):
    """Base class of every error iou-eval raises on purpose (exit code 2 in the CLI)."""

    def message(self) -> str:
        return str(self)


class UsageError(IouEvalError):
    """The command line or an API call is wrong (bad option value, missing argument...)."""


class InputError(IouEvalError):
    """An input file cannot be evaluated.

    ``path`` is the file (or folder) as the user named it, ``where`` points at the record
    (a JSON path such as ``annotations[17].bbox`` or a line number), ``reason`` says what is
    wrong, stating what was expected and what came.
    """

    def __init__(self, path: str | None, where: str | int | None, reason: str) -> None:
        self.path = path
        self.where = None if where is None or where == "" else str(where)
        self.reason = reason
        super().__init__(self.message())

    def __reduce__(self) -> tuple[type[InputError], tuple[str | None, str | None, str]]:
        # picklable as itself (a worker process's error reaches the parent unchanged)
        return (type(self), (self.path, self.where, self.reason))

    def message(self) -> str:
        parts = [p for p in (self.path, self.where) if p]
        head = ":".join(parts)
        return f"{head}: {self.reason}" if head else self.reason


class OutputError(IouEvalError):
    """An output file cannot be written (or would overwrite an input)."""


class ResourceError(IouEvalError):
    """The machine cannot do it (out of memory): said with the sizes that asked for it."""


def kind_of(value: object) -> str:
    """How a message names a JSON value that came where another was expected."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string ({value[:20]!r})"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return repr(value)
