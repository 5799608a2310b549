"""The shell: command line -> library calls -> stdout/stderr/exit code (see ``app``)."""

from .app import main

__all__ = ["main"]
