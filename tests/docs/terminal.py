"""Run a shell command with stdout on a pseudo-terminal of a fixed size (stderr on a pipe)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_in_terminal(
    cmd: str, *, cwd: Path, env: dict[str, str], columns: int = 80, timeout: float = 120
) -> tuple[str, str]:
    """(stdout as the terminal showed it, colours removed; stderr)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = dict(env, TERM="xterm")
    with subprocess.Popen(
        ["bash", "-c", cmd],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
    ) as p:
        os.close(slave)
        chunks: list[bytes] = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        assert p.stderr is not None
        err = p.stderr.read().decode("utf-8", "replace")
        p.wait(timeout=timeout)
    out = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return _ANSI.sub("", out), err
