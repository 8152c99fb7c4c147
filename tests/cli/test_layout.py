"""The layout of the Python tools (scripts/bertl14_tools): one subpackage a pipeline stage, imports flowing one way
in the order the package's docstring writes ("Import order: ..."), no import cycle between modules, and nothing at
the top level but the CLI wiring and the shared helpers. Reads the sources with `ast` only (imports nothing), so it
sees the imports inside functions too."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "bertl14_tools"
ROOT = Path(__file__).resolve().parents[2] / "scripts" / PACKAGE
# the top level: the package (version, REPO_ROOT), the CLI wiring and the helpers every stage shares
TOP_LEVEL = {"__init__": "helpers", "errors": "helpers", "ui": "helpers", "textio": "helpers",
             "cbuild": "helpers", "cachelock": "helpers", "cli": "cli"}


def import_order() -> list[str]:
    """The stages, lowest first, from the `Import order: a < b < ...` line of the package's docstring."""
    doc = ast.get_docstring(ast.parse((ROOT / "__init__.py").read_text(encoding="utf-8"))) or ""
    line = next((x for x in doc.splitlines() if x.startswith("Import order:")), None)
    assert line, f"{ROOT / '__init__.py'}: its docstring has no 'Import order: helpers < ... < cli' line"
    return [s.strip() for s in line.split(":", 1)[1].split("<")]


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> file of every module of the package (a subpackage's __init__ is the subpackage's name)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules `name` imports, anywhere in the file (top level or inside a function)."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from .pkg import mod` imports the module pkg.mod; `from .mod import func` imports mod
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in modules and t != name}
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = module_names(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def stage_of(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 1:
        return "helpers"
    if len(parts) == 2 and parts[1] in TOP_LEVEL:
        return TOP_LEVEL[parts[1]]
    return parts[1]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}          # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def backward_imports(graph: dict[str, set[str]], order: list[str]) -> list[str]:
    """The imports of a stage from a later one."""
    rank = {stage: i for i, stage in enumerate(order)}
    return [f"{a} ({stage_of(a)}) imports {b} ({stage_of(b)})"
            for a, targets in sorted(graph.items()) for b in sorted(targets) if rank[stage_of(b)] > rank[stage_of(a)]]


def test_imports_follow_the_stage_order():
    order = import_order()
    wrong = backward_imports(import_graph(), order)
    assert not wrong, f"imports against the order {' < '.join(order)}:\n" + "\n".join(wrong)


def test_every_module_has_a_stage():
    order = import_order()
    assert order[0] == "helpers" and order[-1] == "cli", order
    top = {p.stem for p in ROOT.glob("*.py")}
    assert top <= set(TOP_LEVEL), f"modules at the top level beyond the CLI and helpers: {sorted(top - set(TOP_LEVEL))}"
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages <= set(order), f"subpackages not in the import order: {sorted(packages - set(order))}"
    assert set(order) - {"helpers", "cli"} <= packages, f"stages without a subpackage: {order}"


def test_the_checks_see_a_cycle_and_a_backward_import(tmp_path):
    """The checker itself: a cycle made by an import inside a function, and a stage importing a later one."""
    pkg = tmp_path / PACKAGE
    (pkg / "model").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model" / "__init__.py").write_text("")
    (pkg / "model" / "a.py").write_text("from . import b\n")
    (pkg / "model" / "b.py").write_text("def f():\n    from .a import g\n    from ..device import c\n")
    (pkg / "device").mkdir()
    (pkg / "device" / "__init__.py").write_text("")
    (pkg / "device" / "c.py").write_text("from ..model.b import f\n")
    graph = import_graph(pkg)
    a, b, c = (f"{PACKAGE}.{m}" for m in ("model.a", "model.b", "device.c"))
    assert graph[b] == {a, c}
    cycle = find_cycle(graph)
    assert cycle and cycle[0] == cycle[-1] and set(cycle) in ({a, b}, {b, c})
    assert find_cycle({a: {b}, b: set(), c: {b}}) is None
    assert backward_imports(graph, ["helpers", "model", "device", "cli"]) == [f"{b} (model) imports {c} (device)"]
