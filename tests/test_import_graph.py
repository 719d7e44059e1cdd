"""No import circle among lsokl's modules (issue 24 item 6): config parses and validates, the runner
runs, the step-size search is a runner step, and nothing low imports anything high.

The graph is built with ``ast`` over every module of lsokl/, counting imports inside functions too
(a function-level import hides a circle from Python's import machinery, not from the design)."""
from __future__ import annotations

import ast
from pathlib import Path

import lsokl

ROOT = Path(lsokl.__file__).parent

# Circles another change removes; each entry is the exact set of modules of one circle.
KNOWN: set[frozenset] = set()


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the lsokl modules it imports (anywhere in its body), by dotted name."""
    mods = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_pkg) in mods.items():
        package = name.split(".") if is_pkg else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                # `from .pkg import mod` imports the module pkg.mod; `from .mod import name` the module mod
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in mods else src for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name and t.split(".")[0] == "lsokl":
                    graph[name].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def test_the_finder_sees_a_circle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "lsokl"
    (pkg / "runner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "config.py").write_text("def f():\n    from .runner import run\n")
    (pkg / "runner" / "__init__.py").write_text("")
    (pkg / "runner" / "run.py").write_text("from ..config import f\n")
    (pkg / "search.py").write_text("import lsokl.config\n")
    assert circles(module_graph(pkg)) == [frozenset({"lsokl.config", "lsokl.runner.run"})]


def test_lsokl_has_no_import_circle():
    found = [c for c in circles(module_graph()) if c not in KNOWN]
    assert not found, "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


def test_config_imports_neither_the_runner_nor_the_search():
    graph = module_graph()
    seen, todo = set(), ["lsokl.config"]
    while todo:  # everything config reaches
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    high = sorted(m for m in seen if m.startswith(("lsokl.runner", "lsokl.search", "lsokl.cli", "lsokl.report")))
    assert not high, f"lsokl.config reaches {high}"


def test_shared_reporting_imports_no_paper():
    """A paper's folder (lsokl/papers/<paper>/) may use lsokl.report; lsokl.report never reaches a paper."""
    graph = module_graph()
    seen, todo = set(), [m for m in graph if m == "lsokl.report" or m.startswith("lsokl.report.")]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    assert not sorted(m for m in seen if m.startswith("lsokl.papers")), "lsokl.report reaches the paper layer"
