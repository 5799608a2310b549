"""Render an HTML file in headless chromium and judge the screenshot (``make report-check``).

``python -m tests.browser REPORT.html SHOT.png`` renders and exits 1 when the screenshot is
blank or its figures did not render; the pytest test in tests/cli/test_report_html.py uses
the same functions and skips when no chromium is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html: Path, png: Path, *, width: int = 1280, height: int = 2000) -> None:
    exe = find_chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="iou-eval-chromium-") as profile:
        cmd = [
            exe,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={width},{height}",
            html.resolve().as_uri(),
        ]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot {png}")


def dump_dom(html: Path) -> str:
    """The page's DOM after its scripts ran (chromium --dump-dom)."""
    exe = find_chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="iou-eval-chromium-") as profile:
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", html.resolve().as_uri()]
        p = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)
    return p.stdout


def judge(png: Path) -> list[str]:
    """Problems with a screenshot of a report: blank page, no text, figures not drawn."""
    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(png).convert("RGB"), dtype=np.int32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    problems = []
    colours = np.unique(rgb.reshape(-1, 3)[::7], axis=0).shape[0]
    if colours < 50:
        problems.append(f"screenshot is (nearly) blank: {colours} colours")
    dark = float(np.mean((r * 299 + g * 587 + b * 114) < 128_000))  # text and curve ink
    if dark < 0.003:
        problems.append(f"almost no dark pixels ({dark:.4%}): no text rendered")
    # the figures' blue (#2563eb) must be there: data: URI images decoded and drawn
    blue = float(np.mean((abs(r - 37) < 40) & (abs(g - 99) < 40) & (b > 200)))
    if blue < 0.0005:
        problems.append(f"no figure colour on the page ({blue:.4%}): figures did not render")
    return problems


def main(argv: list[str]) -> int:
    html, png = Path(argv[0]), Path(argv[1])
    height = int(argv[2]) if len(argv) > 2 else 2000
    screenshot(html, png, height=height)
    problems = judge(png)
    for p in problems:
        print(f"report-check: {p}", file=sys.stderr)
    if not problems:
        print(f"report-check: {png} rendered ({os.path.getsize(png)} bytes), not blank")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
