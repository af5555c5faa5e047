"""The shape of the house: no import circles (not even under ``TYPE_CHECKING`` or inside
a function), the layers' direction, and no module reading another module's private names.

Read from the source with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
import re
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
    "temporal": {"ai", "agent", "temporal"},
    "fanout": {"ai", "agent", "fanout"},
    "agui": {"ai", "agent", "agui"},
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


# the layers built on the public API alone: from another layer they import only public
# modules (``pi_trio.ai``, ``pi_trio.agent``), never a private one
PUBLIC_API_ONLY = {"testing", "session", "mcp", "otel", "durable", "temporal", "fanout", "agui"}


def test_the_extras_use_only_the_public_api_of_the_layers_below() -> None:
    private = [
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        for t in targets
        if _layer(m) in PUBLIC_API_ONLY
        and _layer(t) != _layer(m)
        and any(part.startswith("_") for part in t.split("."))
    ]
    assert private == []


# the layers built on ai's internals reach them through one module, the seam: from ai they
# import the public modules (``pi_trio.ai``, the public provider modules) and
# ``pi_trio.ai._seam``, never another private module; ai itself does not import the seam
SEAM = "pi_trio.ai._seam"
SEAM_USERS = {"agent", "proxy", "cli"}


def _past_the_seam(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{m} -> {t}"
        for m, targets in graph.items()
        for t in targets
        if _layer(t) == "ai"
        and t != SEAM
        and any(part.startswith("_") for part in t.split("."))
        and _layer(m) in SEAM_USERS
    ] + [f"{m} -> {SEAM}" for m, targets in graph.items() if _layer(m) == "ai" and SEAM in targets]


def test_the_layers_above_ai_reach_its_internals_only_through_the_seam() -> None:
    assert _past_the_seam(GRAPH) == []


def test_the_seam_check_sees_a_private_import_and_a_seam_used_inside_ai() -> None:
    graph = {
        "pi_trio.agent._loop": {"pi_trio.ai._stream._consume", SEAM, "pi_trio.ai"},
        "pi_trio.cli._run": {"pi_trio.ai.providers.anthropic"},
        "pi_trio.ai._stream._open": {SEAM},
    }
    assert _past_the_seam(graph) == [
        "pi_trio.agent._loop -> pi_trio.ai._stream._consume",
        "pi_trio.ai._stream._open -> pi_trio.ai._seam",
    ]


def test_the_seam_only_re_exports_what_it_lists() -> None:
    """The seam is a list, not a place for code: imports from ai and ``__all__``."""
    tree = ast.parse(MODULES[SEAM].read_text())
    imported: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1, ast.unparse(node)
            imported += [alias.name for alias in node.names]
            assert all(alias.asname == alias.name for alias in node.names), ast.unparse(node)
        elif isinstance(node, ast.Assign):
            assert [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"]
        else:
            assert isinstance(node, ast.Expr), ast.unparse(node)  # the docstring
            assert node is tree.body[0], ast.unparse(node)
    exported = ast.literal_eval(next(n for n in tree.body if isinstance(n, ast.Assign)).value)
    assert sorted(imported) == sorted(exported)


# the providers: an entry module per API (``anthropic``, ``vertex``…) on shared private
# modules; no entry module imports another, and each API's private modules are named
# after it: its request builder, its wire types and its mapper
PROVIDERS = "pi_trio.ai.providers"
# the Responses dialects (OpenAI, Azure, Codex) share one input conversion
SHARED_REQUEST = {"responses": "_responses_shared"}


def _entry_modules() -> set[str]:
    prefix = PROVIDERS + "."
    return {m for m in MODULES if m.startswith(prefix) and not m[len(prefix) :].startswith("_")}


def _providers_importing_providers(graph: dict[str, set[str]]) -> list[str]:
    entries = _entry_modules()
    return [f"{m} -> {t}" for m in sorted(entries) for t in sorted(graph[m] & entries)]


def test_no_provider_imports_another() -> None:
    assert _providers_importing_providers(GRAPH) == []


def test_the_provider_check_sees_one_provider_importing_another() -> None:
    graph = {m: set(GRAPH[m]) for m in GRAPH}
    graph[f"{PROVIDERS}.vertex"].add(f"{PROVIDERS}.google")
    assert _providers_importing_providers(graph) == [f"{PROVIDERS}.vertex -> {PROVIDERS}.google"]


def test_each_api_has_its_request_builder_wire_types_and_mapper() -> None:
    stems = {m.rpartition(".")[2] for m in MODULES if m.startswith(PROVIDERS + "._")}
    apis = {s[1:].removesuffix("_events") for s in stems if s.endswith("_events")}
    missing = [
        f"{PROVIDERS}.{name}"
        for api in sorted(apis)
        for name in (SHARED_REQUEST.get(api, f"_{api}_request"), f"_{api}_wire")
        if name not in stems
    ]
    assert apis >= {"anthropic", "completions", "google", "mistral", "responses"}
    assert missing == []


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
            # ``self._x`` counts too when the module does not define ``_x``: a private
            # member inherited from a class of another module
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
        GRAPH["pi_trio.ai._types"] = {*GRAPH["pi_trio.ai._types"], "pi_trio.ai._json._codec"}
        assert any("pi_trio.ai._types" in c for c in _cycles())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
    tree = ast.parse("import x\nx.value._hidden\n")
    assert "_hidden" not in _defined_names(tree)
    inherited = ast.parse("class S(x.Base):\n    def f(self):\n        return self._base_slot\n")
    assert "_base_slot" not in _defined_names(inherited)


# --------------------------------------------------------------------------- the page

ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
# names the page uses that are not pi_trio's own: a ruff rule set, typing, anyio, a data
# file, a dunder method, and the ``signal`` argument of a hook
OUTSIDE_NAMES = {
    "ASYNC",
    "TYPE_CHECKING",
    "__aenter__",
    "_catalog.bin",
    "anyio.lowlevel.checkpoint_if_cancelled",
    "signal.on_abort",
}


def _index() -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """Per module path (``agent/_loop``), its top-level names; per class, its members;
    and every name or string constant defined anywhere."""
    top: dict[str, set[str]] = {}
    members: dict[str, set[str]] = {}
    anywhere: set[str] = set()
    for path in MODULES.values():
        tree = ast.parse(path.read_text())
        rel = path.relative_to(PACKAGE).with_suffix("").as_posix().removesuffix("/__init__")
        top[rel] = {
            t.id
            for node in tree.body
            for t in (
                [ast.Name(id=node.name)]
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                else node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            if isinstance(t, ast.Name)
        }
        anywhere |= _defined_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                anywhere.add(node.value)  # event types, tool names
            elif isinstance(node, ast.ClassDef):
                members.setdefault(node.name, set()).update(_defined_names(node))
    return top, members, anywhere


def _unknown_names(text: str) -> list[str]:
    top, members, anywhere = _index()

    def modules(path: str) -> list[str]:
        return [m for m in top if m == path or m.endswith("/" + path)]

    def resolves(dotted: list[str], where: list[str] | None) -> bool:
        first, rest = dotted[0], dotted[1:]
        if where is not None and not any(first in top[m] for m in where):
            return False
        if where is None and first not in members and first not in anywhere:
            return False
        for name in rest:
            if name not in members.get(first, ()):
                return False
            first = name
        return True

    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    tokens = set(re.findall(r"``([^`]+)``", text))
    tokens |= set(re.findall(r"`([^`\n]+)`", re.sub(r"``[^`]+``", "", text)))
    unknown = []
    for token in sorted(tokens - OUTSIDE_NAMES):
        file = re.fullmatch(r"([\w/]+)\.py(?::\s*([\w.]+))?", token)
        folder = re.fullmatch(r"([\w/]+)/", token)
        if folder:
            ok = any((PACKAGE / m / "__init__.py").is_file() for m in modules(folder[1]))
        elif file:
            if file[1].startswith(("tests/", "benchmarks/")):
                ok = (PACKAGE.parent / f"{file[1]}.py").exists()
            else:
                where = modules(file[1])
                ok = bool(where) and (file[2] is None or resolves(file[2].split("."), where))
        elif re.fullmatch(r"[\w/]+(\.\w+)*", token) and re.search(r"[_./]|^[A-Z]", token):
            if token.startswith("pi_trio"):
                ok = token == "pi_trio" or bool(modules(token[len("pi_trio.") :].replace(".", "/")))
            else:
                head, *rest = token.split(".")
                if "/" in head or modules(head):
                    where = modules(head)
                    ok = bool(where) and (not rest or resolves(rest, where))
                else:
                    ok = resolves([head, *rest], None)
        else:
            continue  # prose, an expression, a pattern
        if not ok:
            unknown.append(token)
    return unknown


def test_every_file_and_name_the_architecture_page_mentions_exists() -> None:
    assert _unknown_names(ARCHITECTURE.read_text()) == []


def test_the_page_check_sees_a_missing_name() -> None:
    text = (
        "`_loop.LoopRun.check` `LoopRun.gone` `agent/_nowhere.py` `_dispatch.absent` "
        "`ai/_validation/` `ai/_nowhere/` `_loop/`"
    )
    assert _unknown_names(text) == [
        "LoopRun.gone",
        "_dispatch.absent",
        "_loop/",
        "agent/_nowhere.py",
        "ai/_nowhere/",
    ]


def test_the_page_names_every_module_of_the_core_layers() -> None:
    text = re.sub(r"```.*?```", "", ARCHITECTURE.read_text(), flags=re.DOTALL)
    named = set(re.findall(r"`+([^`\n]+)`+", text))
    patterns = [
        re.compile(re.escape(n).replace(r"<api>", r"[a-z]+(_[a-z]+)?").replace(r"\*", r"\w*"))
        for n in named
        if "<api>" in n or n.endswith("*")
    ]
    missing = [
        name
        for name, path in MODULES.items()
        if _layer(name) in ("ai", "agent", "proxy", "cli")
        and path.stem != "__init__"
        and path.stem not in named
        and f"{path.stem}.py" not in {n.rpartition("/")[2] for n in named}
        and not any(p.fullmatch(path.stem) for p in patterns)
    ]
    assert missing == []
