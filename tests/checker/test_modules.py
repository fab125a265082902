"""Programs of several files: imports, qualified names, module exports and
the workspace that analyses files in import order (checker/modules.py,
checker/workspace.py). Every diagnostic about imports is checked here with
its exact range and message (they need several files, so they have no
single-file fixture)."""

from __future__ import annotations

import random

import pytest
from annotations import spanned_in

from quiver.checker import check_text
from quiver.checker.workspace import MemoryHost, Workspace

LAYERS = """\
dim H = 8
dim C = 3

model Mlp:
    param w1: [4 H] = normal(0, 0.1)
    param b1: [H] = zeros
    param w2: [H C] = normal(0, 0.1)

fn forward(m: Mlp, x: [b 4]) -> [b C]:
    h = relu(x @ m.w1 + m.b1)
    return h @ m.w2

fn loss(m: Mlp, x: [b 4], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(forward(m, x), y, over=C)

fn head_only(m: Mlp, x: [b 4]) -> [] NonNeg:
    return mean(abs(m.w2))

fn _scale(x: [4]) -> [4]:
    return 2.0 * x
"""


def workspace(files: dict[str, str]) -> Workspace:
    return Workspace(MemoryHost({f"/p/{k}": v for k, v in files.items()}), ["/p"])


def diags(ws: Workspace, name: str) -> list[tuple[str, str, str]]:
    a = ws.analyze(f"/p/{name}")
    assert a is not None
    return spanned_in(a)


def check(main: str, **others: str) -> list[tuple[str, str, str]]:
    return diags(workspace({"main.qv": main, "layers.qv": LAYERS, **others}), "main.qv")


def test_both_forms_of_import_check_clean_and_share_types() -> None:
    src = """\
import layers
from layers import Mlp, forward as fwd, H, C

fn main():
    m = Mlp.init(seed=0)
    x = randn([16 4], seed=1)
    y = fwd(m, x) |> argmax(over=C)
    l, g = value_and_grad(layers.loss, m, x, y)
    n = layers.Mlp.init(seed=2)
    z = layers.forward(n, x)
    print(l, g.w1, sum(z, over=layers.C), zeros([4 layers.H]), H)

fn twice(m: layers.Mlp, g: Grad[Mlp]) -> [layers.H]:
    return m.b1 + g.b1
"""
    assert check(src) == []


def test_module_attribute_types_are_qualified_in_messages() -> None:
    src = """\
import layers

model Mlp:
    param w: [4] = zeros

fn main():
    m = Mlp.init(seed=0)
    print(layers.forward(m, zeros([2 4])))
"""
    assert check(src) == [("E0904", "argument 'm' of layers.forward: expected layers.Mlp, found model Mlp", "m")]


def test_an_alias_is_the_same_model() -> None:
    src = """\
from layers import Mlp as Net, forward

fn run(m: Net, x: [b 4]) -> [b 3]:
    return forward(m, x)
"""
    assert check(src) == []


def test_an_imported_model_is_one_type_under_every_name_in_gradients_and_optimizers() -> None:
    # issue 36: zeros(Grad[Mlp]) held the name as written, so `acc + g` (g of
    # layers.Mlp) was E0904, and zeros(Grad[layers.Mlp]) was not read at all
    src = """\
import layers
from layers import Mlp, Mlp as Net, loss

model Lin[I, O]:
    param w: [I O] = zeros

fn accumulate(m: Mlp, xs: [2 b 4], ys: [2 b] Index[layers.C]) -> Grad[Net]:
    acc = zeros(Grad[Mlp])
    other = randn(Grad[layers.Mlp], seed=0)
    for i in range(2):
        l, g = value_and_grad(loss, m, xs[i], ys[i])
        acc = acc + g
        other = other - g
    return acc + other + zeros(Grad[Net])

fn step(mut m: layers.Mlp, mut opt: SGD[Mlp], g: Grad[layers.Mlp]):
    opt.step(m, 0.5 * g + zeros(Grad[layers.Mlp]))
    m -= 0.1 * zeros(Grad[Net])

fn wrong():
    a = zeros(Grad[Lin])
    b = zeros(Grad[layers.H])
    print(a, b)
"""
    assert check(src) == [
        ("E0910", "Lin takes 2 dims (I, O): write Grad[Lin[I, O]] with the dims of the instance", "Lin"),
        ("E0303", "Grad[layers.H]: layers.H is not a model", "Grad[layers.H]"),
    ]
    ws = workspace({"main.qv": src, "layers.qv": LAYERS})
    a = ws.analyze("/p/main.qv")
    assert a is not None
    from quiver.checker import ide

    for at in ("acc = zeros", "other = randn"):
        h = ide.hover(a, src.index(at) + 1)
        assert h is not None and "Grad[layers.Mlp]" in h.markdown, h.markdown


def test_an_imported_dim_is_the_same_dim_under_any_name() -> None:
    src = """\
import layers
from layers import H

fn f(x: [H]) -> [layers.H]:
    return x

dim D = H * 2

fn g(x: [D]) -> [16]:
    return x
"""
    assert check(src) == []


def test_a_local_dim_of_the_same_value_is_another_dim() -> None:
    src = """\
import layers

dim H = 8

fn f(x: [H]) -> [layers.H]:
    return x
"""
    [(code, message, text)] = check(src)
    assert code == "E0201" and "layers.H" in message and text == "x"


def test_e0113_names_the_folders_searched_and_suggests() -> None:
    src = "import layers\nimport layerz\n\nfn main():\n    print(layers.H)\n"
    assert check(src) == [("E0113", "no module 'layerz' (no layerz.qv in /p); did you mean 'layers'?", "layerz")]


def test_e0113_without_a_workspace() -> None:
    a = check_text("from layers import Mlp\n")
    assert [(d.code, d.message, (d.span.start, d.span.end)) for d in a.diagnostics] == [
        ("E0113", "no module 'layers'", (5, 11))
    ]


def test_e0114_is_reported_in_every_file_of_the_cycle_whichever_is_analysed_first() -> None:
    files = {"a.qv": "import b\ndim D = b.E\n", "b.qv": "import a\ndim E = 4\n"}
    for first in ("a.qv", "b.qv"):
        ws = workspace(files)
        ws.analyze(f"/p/{first}")
        assert diags(ws, "a.qv") == [("E0114", "import cycle: a -> b -> a", "b")]
        assert diags(ws, "b.qv") == [("E0114", "import cycle: b -> a -> b", "a")]


def test_e0115_and_e0116_in_from_imports_types_and_expressions() -> None:
    src = """\
import layers
from layers import forwrd, _scale

fn f(x: [4]) -> [4]:
    return layers._scale(x)

fn g(m: layers._Hidden) -> [4]:
    return layers.nothing
"""
    assert check(src) == [
        ("E0115", "module 'layers' has no 'forwrd'; did you mean 'forward'?", "forwrd"),
        ("E0116", "'_scale' is private to module 'layers'", "_scale"),
        ("E0116", "'_scale' is private to module 'layers'", "_scale"),
        ("E0102", "unknown type 'layers._Hidden'", "layers._Hidden"),
        ("E0115", "module 'layers' has no 'nothing'", "nothing"),
    ]


def test_e0117_clashes_are_reported_at_the_import() -> None:
    src = """\
from layers import Mlp, forward
from layers import forward

model Mlp:
    param w: [4] = zeros

fn main():
    print(forward(Mlp.init(seed=0), zeros([1 4])))
"""
    found = check(src)
    assert ("E0117", "'Mlp' is already defined in this file as a model", "Mlp") in found
    assert ("E0117", "'forward' is already imported above", "forward") in found
    # and the model passed to layers.forward is the local Mlp
    assert found[-1] == (
        "E0904",
        "argument 'm' of layers.forward: expected layers.Mlp, found model Mlp",
        "Mlp.init(seed=0)",
    )
    assert len(found) == 3


def test_w0103_unused_imports() -> None:
    src = "import layers\nfrom layers import Mlp, C\n\nfn f(m: Mlp) -> Int:\n    return 1\n"
    assert check(src) == [
        ("W0103", "module 'layers' is imported but never used", "layers"),
        ("W0103", "'C' is imported but never used", "C"),
    ]


def test_a_package_path() -> None:
    files = {"main.qv": "import nn.layers\n\nfn f(m: nn.layers.Mlp) -> [nn.layers.H]:\n    return m.b1\n"}
    ws = Workspace(MemoryHost({"/p/main.qv": files["main.qv"], "/p/nn/layers.qv": LAYERS}), ["/p"])
    assert diags(ws, "main.qv") == []
    assert ws.qualified_name("/p/nn/layers.qv") == "nn.layers"


def test_a_public_signature_may_use_a_private_model() -> None:
    lib = "model _State:\n    param w: [4] = zeros\n\nfn make() -> _State:\n    return _State.init(seed=0)\n\nfn size(s: _State) -> [4]:\n    return s.w\n"
    src = "import lib\n\nfn main():\n    s = lib.make()\n    print(lib.size(s), s.w)\n"
    assert diags(workspace({"main.qv": src, "lib.qv": lib}), "main.qv") == []


def test_reads_of_imported_functions_decide_w1101() -> None:
    src = """\
import layers

fn main():
    m = layers.Mlp.init(seed=0)
    l, g = value_and_grad(layers.head_only, m, zeros([2 4]))
    print(l, g)
"""
    assert sorted(check(src)) == [
        (
            "W1101",
            f"layers.head_only never reads param {p} of layers.Mlp: its gradient is always zero",
            "layers.head_only",
        )
        for p in ("b1", "w1")
    ]


def test_modules_are_found_next_to_the_file_then_in_the_project_then_the_roots() -> None:
    host = MemoryHost(
        {
            "/ws/proj/quiver.toml": "",
            "/ws/proj/sub/main.qv": "import a\nimport b\nimport c\n\nfn f(x: [a.N], y: [b.N], z: [c.N]) -> Int:\n    return 1\n",
            "/ws/proj/sub/a.qv": "dim N = 1\n",
            "/ws/proj/b.qv": "dim N = 2\n",
            "/ws/c.qv": "dim N = 3\n",
        }
    )
    ws = Workspace(host, ["/ws"])
    a = ws.analyze("/ws/proj/sub/main.qv")
    assert a is not None and a.diagnostics == []
    assert ws.imports_of("/ws/proj/sub/main.qv") == {"a": "/ws/proj/sub/a.qv", "b": "/ws/proj/b.qv", "c": "/ws/c.qv"}
    assert ws.qualified_name("/ws/proj/sub/a.qv") == "sub.a"  # below the project folder, the deepest root


# ------------------------------------------------------------------ incremental


MAIN = """\
import layers

fn predict(m: layers.Mlp, x: [b 4]) -> [b 3]:
    return layers.forward(m, x)

fn unrelated(x: [4]) -> [4]:
    return x * 2.0

fn train(m: layers.Mlp, x: [b 4], y: [b] Index[layers.C]) -> [] NonNeg:
    l, g = value_and_grad(layers.loss, m, x, y)
    return l
"""


def test_an_edit_inside_an_imported_function_rechecks_no_importer() -> None:
    host = MemoryHost({"/p/layers.qv": LAYERS, "/p/main.qv": MAIN})
    ws = Workspace(host, ["/p"])
    first = ws.analyze("/p/main.qv")
    before = ws.exports("/p/layers.qv")
    ws.set_overlay("/p/layers.qv", LAYERS.replace("h = relu(x @ m.w1 + m.b1)", "h = relu(m.b1 + x @ m.w1)"))
    after = ws.analyze("/p/main.qv")
    assert ws.exports("/p/layers.qv") is before  # nothing an importer sees changed
    layers_analyzer = ws._files["/p/layers.qv"].analyzer
    assert layers_analyzer.stats.bodies_checked == ["forward"]
    assert after is first  # the importer's analysis is reused as it is: nothing re-checked


def test_a_signature_change_rechecks_only_the_functions_that_use_it() -> None:
    host = MemoryHost({"/p/layers.qv": LAYERS, "/p/main.qv": MAIN})
    ws = Workspace(host, ["/p"])
    ws.analyze("/p/main.qv")
    ws.set_overlay(
        "/p/layers.qv",
        LAYERS.replace("fn forward(m: Mlp, x: [b 4]) -> [b C]:", "fn forward(m: Mlp, x: [b 4]) -> [b H]:"),
    )
    a = ws.analyze("/p/main.qv")
    assert a is not None
    assert sorted(ws._files["/p/main.qv"].analyzer.stats.bodies_checked) == ["predict"]
    assert [d.code for d in a.diagnostics] == ["E0201"]


def _fresh(files: dict[str, str], path: str) -> list:
    a = Workspace(MemoryHost(files), ["/p"]).analyze(path)
    assert a is not None
    return [(d.code, d.message, d.span) for d in a.diagnostics]


EDITS = [
    ("param b1: [H] = zeros", "param b2: [H] = zeros"),
    ("fn forward(m: Mlp, x: [b 4]) -> [b C]:", "fn forward(m: Mlp, x: [b 4]) -> [b H]:"),
    ("dim C = 3", "dim C = 5"),
    ("dim C = 3", "dim _C = 3"),
    ("fn loss(", "fn _loss("),
    ("return mean(abs(m.w2))", "return mean(abs(m.w1))"),
    ("model Mlp:", "model Mlp2:"),
    ("import layers\n", "import layer\n"),
    ("layers.forward(m, x)", "layers.forward(m, x) + 1.0"),
    ("y: [b] Index[layers.C]", "y: [b] Index[3]"),
    ("fn unrelated", "fn unrelated2"),
    ("l, g = value_and_grad(layers.loss, m, x, y)", "l, g = value_and_grad(layers.head_only, m, x)"),
    ("dim H = 8\n", "dim H = 8\nimport main\n"),
]


@pytest.mark.parametrize("seed", range(4))
def test_incremental_equals_fresh_over_random_edits_of_both_files(seed: int) -> None:
    rng = random.Random(seed)
    files = {"/p/layers.qv": LAYERS, "/p/main.qv": MAIN}
    ws = Workspace(MemoryHost(dict(files)), ["/p"])
    for _ in range(40):
        path = rng.choice(sorted(files))
        old, new = rng.choice(EDITS)
        if rng.random() < 0.5:
            old, new = new, old
        if old in files[path]:
            files[path] = files[path].replace(old, new, 1)
            ws.set_overlay(path, files[path])
        for p in sorted(files):
            a = ws.analyze(p)
            assert a is not None and not a.internal_errors
            assert [(d.code, d.message, d.span) for d in a.diagnostics] == _fresh(files, p), (seed, p)


def test_e0113_suggests_a_module_file_that_is_nearby() -> None:
    ws = workspace({"main.qv": "import layer\n", "layers.qv": LAYERS})
    assert diags(ws, "main.qv") == [("E0113", "no module 'layer' (no layer.qv in /p); did you mean 'layers'?", "layer")]


# ------------------------------------------------------------------ editor queries


def test_completion_after_a_module_offers_its_public_names() -> None:
    from quiver.checker import ide

    src = "import layers\n\nfn main():\n    m = layers.Mlp.init(seed=0)\n    x = layers.\n"
    ws = workspace({"main.qv": src, "layers.qv": LAYERS})
    a = ws.analyze("/p/main.qv")
    assert a is not None
    items = ide.completions(a, src.index("layers.\n") + len("layers."))
    assert [(c.label, c.kind) for c in items] == [
        ("C", "dim"),
        ("H", "dim"),
        ("Mlp", "model"),
        ("forward", "fn"),
        ("head_only", "fn"),
        ("loss", "fn"),
    ]
    assert items[3].detail == "fn layers.forward(m: layers.Mlp, x: [b 4]) -> [b layers.C]"
    scope = {c.label for c in ide.completions(a, src.index("    m = "))}
    assert "layers" in scope and not any("." in label for label in scope)


def test_hover_on_a_module_and_on_an_imported_model() -> None:
    from quiver.checker import ide

    src = "import layers\nfrom layers import Mlp as Net\n\nfn main():\n    print(layers.forward(Net.init(seed=0), zeros([1 4])))\n"
    ws = workspace({"main.qv": src, "layers.qv": LAYERS})
    a = ws.analyze("/p/main.qv")
    assert a is not None and a.diagnostics == []
    h = ide.hover(a, src.index("layers.forward") + 1)
    assert h is not None and h.markdown == (
        "```quiver\nmodule layers\n```\n\n`/p/layers.qv`\n\ndims: C, H\n\nmodels: Mlp\n\nfns: forward, head_only, loss"
    )
    h = ide.hover(a, src.index("Net.init") + 1)
    assert h is not None and h.markdown.startswith("```quiver\nmodel layers.Mlp\n    param w1: [4 layers.H]")
