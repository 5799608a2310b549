"""House rules of the layout, checked on the source: no import circles (every import counts,
lazy and ``TYPE_CHECKING`` ones included: the rule is about which layer may know which),
no module over 600 lines, no file of the CLI package over 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "iou_cli"
MAX_MODULE_LINES = 600
MAX_CLI_LINES = 400
# modules still over the limit, with the size they may not grow past (to be split)
LONG_FOR_NOW = {
    "iou_cli/analysis/bootstrap.py": 837,
    "iou_cli/protocols/coco.py": 684,
    "iou_cli/report/html.py": 626,
    "iou_cli/report/plots.py": 662,
}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        if is_init:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_init)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its body (a ``from pkg import
    name`` where ``pkg.name`` is a module counts as that module)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_init) in mods.items():
        base = name.split(".") if is_init else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    kept = base[: len(base) - (node.level - 1)]
                    target = ".".join(kept + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in mods else target)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {m for m in found if m in mods and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_sees_relative_and_lazy_imports() -> None:
    graph = import_graph()
    assert "iou_cli.errors" in graph["iou_cli.api"]
    assert "iou_cli.loaders.coco" in graph["iou_cli.loaders"]  # a lazy import in a function


def test_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_no_module_over_600_lines() -> None:
    sizes = {
        str(p.relative_to(PACKAGE.parent)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    over = {
        k: n
        for k, n in sizes.items()
        if n > LONG_FOR_NOW.get(k.replace("\\", "/"), MAX_MODULE_LINES)
    }
    assert over == {}


def test_no_cli_file_over_400_lines() -> None:
    sizes = {
        p.name: len(p.read_text(encoding="utf-8").splitlines())
        for p in (PACKAGE / "cli").glob("*.py")
    }
    assert {k: n for k, n in sizes.items() if n > MAX_CLI_LINES} == {}
