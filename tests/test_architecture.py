"""The shape of the house: no import circles (not even under ``TYPE_CHECKING`` or inside
a function), the layers' direction, and no module reading another module's private names.

Read from the source with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pi_trio"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def _imports(module: str) -> set[str]:
    """Every pi_trio module ``module`` imports, wherever the import statement stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            # ``from . import _x`` names a submodule, not the package
            submodules = [f"{target}.{a.name}" for a in node.names]
            targets = [t for t in submodules if t in MODULES]
            if len(targets) < len(submodules):
                targets.append(target)
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != module)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _cycles() -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for name in sorted(GRAPH):
        if name not in index:
            visit(name)
    return result


def test_no_module_imports_itself_through_others() -> None:
    assert _cycles() == []


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


# who may import whom: cli -> agent -> ai; proxy, testing, session and mcp sit on the
# public layers
ALLOWED = {
    "ai": {"ai"},
    "agent": {"ai", "agent", "proxy"},
    "proxy": {"ai", "proxy"},
    "testing": {"ai", "agent", "testing"},
    "session": {"ai", "agent", "session"},
    "mcp": {"ai", "agent", "mcp"},
    "otel": {"ai", "agent", "otel"},
    "durable": {"ai", "agent", "durable"},
    "fanout": {"ai", "agent", "fanout"},
    "cli": {"ai", "agent", "proxy", "testing", "cli"},
}


def test_layers_import_only_downwards() -> None:
    wrong = [
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        for t in targets
        if _layer(m) in ALLOWED and _layer(t) not in ALLOWED[_layer(m)] | {""}
    ]
    assert wrong == []


def _defined_names(tree: ast.AST) -> set[str]:
    """Names a module defines or binds itself (functions, classes, attributes it assigns,
    parameters, ``__slots__`` entries)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("_")
            and node.value.isidentifier()
        ):
            names.add(node.value)
    return names


def _private_reads(module: str) -> list[str]:
    tree = ast.parse(MODULES[module].read_text())
    own = _defined_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                name = alias.name
                submodule = f"{target}.{name}" in MODULES
                if name.startswith("_") and not name.startswith("__") and not submodule:
                    found.append(f"{module}:{node.lineno} imports {name} from {target}")
        elif isinstance(node, ast.Attribute):
            name = node.attr
            if not name.startswith("_") or name.startswith("__"):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if name not in own:
                found.append(f"{module}:{node.lineno} reads .{name}")
    return found


def test_no_module_reads_another_modules_private_names() -> None:
    found = [line for module in sorted(MODULES) for line in _private_reads(module)]
    assert found == []


def test_the_checks_see_a_circle_and_a_private_read() -> None:
    # the checks themselves: a circle through a function-level import, a private read
    saved = dict(GRAPH)
    try:
        GRAPH["pi_trio.ai._types"] = {*GRAPH["pi_trio.ai._types"], "pi_trio.ai._json"}
        assert any("pi_trio.ai._types" in c for c in _cycles())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
    tree = ast.parse("import x\nx.value._hidden\n")
    assert "_hidden" not in _defined_names(tree)
