"""The checker's import layers, read from the source (ast, nothing imported).

The checker is built in layers; a module imports only modules of its own
layer or of lower ones, so a lower layer never depends, not even for its
types, on what is built on it:

    core < syntax < declarations < body data < body interfaces
         < features (body.features, the built-in families, the lints)
         < body engine < analysis < compile < ide < the package

The features see the engine only through its interface (`RuleContext`); the
engine imports them to run them, as pyright's evaluator imports its feature
modules, which see only its `TypeEvaluator` interface.

`LAYERS` below is the map of every module (ARCHITECTURE.md's module map says
what each holds). Three rules are checked over the graph of module-level
imports, those under `if TYPE_CHECKING:` included:

- a module imports nothing of a higher layer;
- no module imports inside a function (a lazy import hides an upward
  dependency from the module's header), except the loads on first use in
  `LOAD_ON_FIRST_USE`, which only reach down and exist for start-up time;
- no import cycle, except the ones in `ALLOWED_CYCLES`, each inside one layer.

`KNOWN_EXCEPTIONS` lists allowed violations (none). Each entry must still be
a violation: the test fails when one is fixed, so the list only shrinks.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

CHECKER = pathlib.Path(__file__).resolve().parents[2] / "checker"

# Each layer: its modules (dotted, below `checker`) and, for packages whose
# modules are still being added, prefixes ("body.lints." is every module of
# the package).
LAYERS: list[tuple[str, list[str]]] = [
    # what every part speaks: the tree, positions, the codes, types as values
    (
        "core",
        [
            "ast",
            "source",
            "deep",
            "diagnostics",
            "dimexpr",
            "einpattern",
            "optim_tables",
            "types",
            "optim_fields",
            "type_pairs",
            "shapes",
            "show",
            "legend",
            "catalog_code",
            "catalog",
            "catalog_args",
            "catalog_buffers",
            "catalog_lists",
            "catalog_presence",
            "catalog_traits",
            "catalog_model_params",
            "catalog_walks",
            "catalog_tuples",
            "catalog_aliases",
            "catalog_reset",
            "catalog_ops40",
            "catalog_layers40",
            "catalog_sizes",
            "catalog_rearrange",
            "catalog_sequences40",
            "catalog_distributions",
            "catalog_weights41",
            "catalog_docs",
        ],
    ),
    # text to trees: both parsers, items, suppression comments, the formatter
    (
        "syntax",
        [
            "lexical",
            "fast_lexer",
            "fast_types",
            "fast_expressions",
            "fstrings",
            "fast_parser",
            "tree_builder",
            "parser",
            "syntax_messages",
            "items",
            "formatter",
            "suppressions",
        ],
    ),
    # the global scope: names, written types, declared signatures and models,
    # the initializers, what a built-in is and the table the families fill, a
    # body's result as data
    (
        "declarations",
        [
            "names",
            "member_conditions",
            "consts",
            "typectx",
            "infos",
            "initializers",
            "type_params",
            "ties",
            "fn_decl",
            "model_lists",
            "model_params",
            "model_decl",
            "buffer_exprs",
            "traits",
            "aliases",
            "declarations",
            "results",
            "builtins.spec",
            "builtins.registry",
        ],
    ),
    # what the interface of a body speaks of: its environment, text, the
    # convolution size hints
    ("body data", ["body", "body.env", "body.text", "body.size_hints", "body.fstring_rules"]),
    # the one interface of everything outside the engine (`RuleContext`), and
    # the engine's own (`engine_api.Engine`, what its parts see of each other)
    ("body interfaces", ["body.context", "body.engine_api"]),
    # language features, the built-in families (spec beside rule) and the
    # lints: functions of the interfaces, none of which imports the engine
    (
        "features",
        ["body.features", "body.features.", "builtins", "builtins.", "body.lints", "body.lints."],
    ),
    # the engine: one class over a few files (`body.core.BodyChecker`); it
    # runs the rules, features and lints it imports, as pyright's evaluator
    # imports its feature modules while they see only its interface
    ("body engine", ["body."]),
    # a document, a program: the analysis and its caches, modules' exports,
    # the param-read analysis, the workspace; the docs generated from the specs
    ("analysis", ["reads", "modules", "analysis", "workspace", "builtin_docs"]),
    ("compile", ["compile_names", "compile_body", "compiler"]),
    ("ide", ["ide", "ide."]),
    # the package's entry points (loaded on first use)
    ("package", [""]),
]

# Imports inside a function that load a module on first use, for start-up
# time; each reaches down (or within its layer). (module, function, imported)
LOAD_ON_FIRST_USE = {
    # `import quiver.checker.legend` (the server's token legend) loads no
    # parser and no analysis
    ("", "__getattr__", "analysis"),
    ("", "__getattr__", "diagnostics"),
    # qlint's warm path (a cache hit) imports no analysis
    ("workspace", "_analysis", "analysis"),
    ("workspace", "exports", "modules"),
    ("workspace", "_environment", "modules"),
}

# Cycles inside one layer, each as its set of modules.
ALLOWED_CYCLES = [
    # a module's exports hold the analysis they stand for (types only)
    {"analysis", "modules"},
    # the compiler hands its body compiler itself (types only)
    {"compile_body", "compiler"},
]

# Violations allowed for now, (importer, imported, why): none. Each entry
# must still be a violation (the list only shrinks).
KNOWN_EXCEPTIONS: set[tuple[str, str, str]] = set()


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(CHECKER).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(CHECKER.rglob("*.py"))}


MODULES = _modules()


def _target(module: str, is_package: bool, node: ast.ImportFrom, name: str) -> str | None:
    """The checker module an import names (a submodule when `name` is one)."""
    if node.level == 0:
        head = (node.module or "").split(".")
        if head[:2] != ["quiver", "checker"]:
            return None
        base = head[2:]
    else:
        base = module.split(".") if module else []
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        base = base + (node.module.split(".") if node.module else [])
    target = ".".join(base)
    sub = f"{target}.{name}" if target else name
    return sub if sub in MODULES else target


class _Imports(ast.NodeVisitor):
    """A module's imports of checker modules: at module level (TYPE_CHECKING
    blocks included), and those inside a function, with the function."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.top: set[str] = set()
        self.lazy: set[tuple[str, str]] = set()
        self.function: list[str] = []

    def _add(self, target: str | None) -> None:
        if target is None or target == self.module:
            return
        if self.function:
            self.lazy.add((self.function[-1], target))
        else:
            self.top.add(target)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self._add(_target(self.module, self.is_package, node, alias.name))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[:2] == ["quiver", "checker"]:
                self._add(".".join(parts[2:]))
            elif self.function:  # any import inside a function counts
                self.lazy.add((self.function[-1], alias.name))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.function.append(getattr(node, "name", "<lambda>"))
        self.generic_visit(node)
        self.function.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function


def _scan() -> dict[str, _Imports]:
    out = {}
    for module, path in MODULES.items():
        v = _Imports(module, path.name == "__init__.py")
        v.visit(ast.parse(path.read_text(), str(path)))
        out[module] = v
    return out


IMPORTS = _scan()


def _layer(module: str) -> int:
    """The layer of a module: an exact name wins over a prefix, a longer
    prefix over a shorter one."""
    best: tuple[int, int] | None = None  # (specificity, layer)
    for rank, (_, names) in enumerate(LAYERS):
        for name in names:
            if name == module:
                found = (10_000, rank)
            elif name.endswith(".") and module.startswith(name):
                found = (len(name), rank)
            else:
                continue
            if best is None or found > best:
                best = found
    if best is None:
        raise KeyError(module)
    return best[1]


def _edges() -> set[tuple[str, str]]:
    return {(m, t) for m, v in IMPORTS.items() for t in v.top if t in MODULES}


def _reaches(edges: set[tuple[str, str]], start: str, goal: str) -> bool:
    succ: dict[str, set[str]] = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    seen, todo = {start}, [start]
    while todo:
        m = todo.pop()
        if m == goal:
            return True
        for n in succ.get(m, ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return False


def _cycles(edges: set[tuple[str, str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    succ: dict[str, list[str]] = {m: [] for m in MODULES}
    for a, b in sorted(edges):
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for m in sorted(MODULES):
        if m not in index:
            visit(m)
    return out


def _violations() -> set[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    edges = _edges()
    for a, b in edges:
        if _layer(b) > _layer(a):
            out.add((a, b, "up"))
    # an import on a cycle: among the imports not listed as exceptions, one
    # inside a cycle that is not allowed; a listed one while it still closes
    # a cycle
    known = {(a, b) for a, b, _ in KNOWN_EXCEPTIONS}
    for c in _cycles(edges - known):
        if c not in ALLOWED_CYCLES:
            out.update((a, b, "cycle") for a, b in edges - known if a in c and b in c)
    listed = {(a, b) for a, b, why in KNOWN_EXCEPTIONS if why == "cycle"}
    out.update((a, b, "cycle") for a, b in listed & edges if _reaches(edges, b, a))
    for m, v in IMPORTS.items():
        for fn, target in v.lazy:
            if (m, fn, target) not in LOAD_ON_FIRST_USE:
                out.add((m, target, "function"))
    return out


def test_every_module_has_a_layer() -> None:
    missing = []
    for m in MODULES:
        try:
            _layer(m)
        except KeyError:
            missing.append(m)
    assert not missing, f"add these modules to LAYERS: {missing}"


def test_layers_cycles_and_lazy_imports() -> None:
    found = _violations()
    new = sorted(found - KNOWN_EXCEPTIONS)
    gone = sorted(KNOWN_EXCEPTIONS - found)
    assert not new, "imports that break the layers (see this module's docstring):\n" + "\n".join(map(str, new))
    assert not gone, "fixed: remove these from KNOWN_EXCEPTIONS:\n" + "\n".join(map(str, gone))


def test_allowed_cycles_are_exact_and_inside_one_layer() -> None:
    edges = _edges()
    cycles = _cycles(edges - {(a, b) for a, b, _ in KNOWN_EXCEPTIONS})
    for c in cycles:
        assert c in ALLOWED_CYCLES, f"an import cycle: {sorted(c)}"
    for c in ALLOWED_CYCLES:
        assert c in cycles, f"no longer a cycle: remove {sorted(c)} from ALLOWED_CYCLES"
        assert len({_layer(m) for m in c}) == 1, f"a cycle across layers: {sorted(c)}"


@pytest.mark.parametrize("entry", sorted(LOAD_ON_FIRST_USE))
def test_loads_on_first_use_reach_down(entry: tuple[str, str, str]) -> None:
    module, fn, target = entry
    assert (fn, target) in IMPORTS[module].lazy, f"no longer there: remove {entry} from LOAD_ON_FIRST_USE"
    assert _layer(target) <= _layer(module)
