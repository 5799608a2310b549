"""mkdocs hook: `::: iou_cli.NAME` for a public name resolves to the module that defines it.

The public API (`from iou_cli import evaluate`) is imported lazily through `iou_cli._LAZY`, which
mkdocstrings cannot follow; the hook writes the defining module's path in, so the Python API page
keeps working when a function moves to another module.
"""

from __future__ import annotations

import re
from typing import Any

_DIRECTIVE = re.compile(r"^::: iou_cli\.(\w+)\s*$", re.M)


def on_page_markdown(markdown: str, **_: Any) -> str:
    import iou_cli

    lazy: dict[str, tuple[str, str]] = iou_cli._LAZY

    def resolve(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in lazy:
            return m.group(0)
        module, attr = lazy[name]
        return f"::: iou_cli.{module}.{attr}"

    return _DIRECTIVE.sub(resolve, markdown)
