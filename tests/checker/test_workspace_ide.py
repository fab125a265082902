"""Editor queries across the files of a Workspace (checker/ide/workspace_nav.py),
and how little an edit in one file re-checks in the others.

Files live in a MemoryHost; `$0` marks the cursor.
"""

from __future__ import annotations

import pytest

from quiver.checker.ast import Span
from quiver.checker.ide import workspace_nav as nav
from quiver.checker.workspace import MemoryHost, Workspace

LAYERS = """\
dim H = 4

model Mlp:
    param w1: [H H] = zeros

fn forward(m: Mlp, x: [H]) -> [H]:
    return x @ m.w1

fn other(m: Mlp) -> [H]:
    return m.w1[0]
"""

TRAIN = """\
import layers
from layers import Mlp, forward as fwd

fn step(m: layers.Mlp, x: [layers.H]) -> [layers.H]:
    y = layers.forward(m, x)
    return fwd(m, y) + m.w1[0]

fn unrelated(x: [layers.H]) -> [layers.H]:
    return x * 2.0

fn main():
    m = Mlp.init(seed=1)
    print(step(m, zeros([4])), unrelated(zeros([4])))
"""

ROOT = "/p"


def workspace(**files: str) -> Workspace:
    host = MemoryHost({f"{ROOT}/{name.replace('__', '/')}.qv": text for name, text in files.items()})
    return Workspace(host, [ROOT])


def P(name: str) -> str:
    return f"{ROOT}/{name}.qv"


def at(text: str, needle: str, k: int = 0) -> int:
    return text.index(needle) + k


def spans(text: str, needle: str, count: int) -> list[Span]:
    out, i = [], -1
    for _ in range(count):
        i = text.index(needle, i + 1)
        out.append(Span(i, i + len(needle)))
    return out


def test_definition_of_imported_names_goes_to_their_file() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    for needle, k, name in [
        ("Mlp, forward", 0, "Mlp"),
        ("forward as", 0, "forward"),
        ("fwd\n", 1, "forward"),
        ("fwd(m", 0, "forward"),
        ("forward(m, x)", 3, "forward"),
        ("Mlp, x", 1, "Mlp"),
        ("w1[0]", 0, "w1"),
        ("H]) ->", 0, "H"),
    ]:
        (t,) = nav.definition(ws, P("train"), at(TRAIN, needle, k))
        assert t.path == P("layers"), needle
        assert t.target.focus == spans(LAYERS, name, 1)[0], needle


def test_definition_of_a_local_stays_in_its_file() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    (t,) = nav.definition(ws, P("train"), at(TRAIN, "y)"))
    assert t.path == P("train") and t.target.focus == Span(TRAIN.index("y = "), TRAIN.index("y = ") + 1)


def test_references_include_every_importer() -> None:
    user = "import layers\n\nfn f(m: layers.Mlp) -> [layers.H]:\n    return layers.other(m)\n"
    ws = workspace(layers=LAYERS, train=TRAIN, user=user)
    files = [P("layers"), P("train"), P("user")]
    refs = nav.references(ws, P("layers"), at(LAYERS, "Mlp"), files)
    assert [(r.path, r.span, r.is_def) for r in refs] == [
        (P("layers"), spans(LAYERS, "Mlp", 3)[0], True),
        (P("layers"), spans(LAYERS, "Mlp", 3)[1], False),
        (P("layers"), spans(LAYERS, "Mlp", 3)[2], False),
        (P("train"), spans(TRAIN, "Mlp", 1)[0], False),
        (P("train"), spans(TRAIN, "layers.Mlp", 1)[0], False),
        (P("train"), Span(TRAIN.index("Mlp.init"), TRAIN.index("Mlp.init") + 3), False),
        (P("user"), spans(user, "layers.Mlp", 1)[0], False),
    ]
    without = nav.references(ws, P("layers"), at(LAYERS, "Mlp"), files, include_declaration=False)
    assert len(without) == len(refs) - 1


def test_rename_edits_the_last_part_of_qualified_names_and_keeps_aliases() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    files = [P("layers"), P("train")]
    edits = nav.rename(ws, P("train"), at(TRAIN, "fwd(m"), "g", files)
    assert edits is not None
    assert {p: [s for s, _ in e] for p, e in edits.items()} == {P("train"): spans(TRAIN, "fwd", 2)}
    edits = nav.rename(ws, P("layers"), at(LAYERS, "forward"), "apply", files)
    assert edits is not None
    assert {p: [s for s, _ in e] for p, e in edits.items()} == {
        P("layers"): spans(LAYERS, "forward", 1),
        P("train"): spans(TRAIN, "forward", 2),
    }


def test_rename_through_a_package_and_a_member_seen_through_a_third_file() -> None:
    layers = "model Mlp:\n    param w: [2] = zeros\n\nfn make() -> Mlp:\n    return Mlp.init(seed=0)\n"
    mid = "import nn.layers\n\nfn build() -> nn.layers.Mlp:\n    return nn.layers.make()\n"
    top = "import mid\n\nfn main():\n    m = mid.build()\n    print(m.w)\n"
    ws = workspace(nn__layers=layers, mid=mid, top=top)
    files = [P("nn/layers"), P("mid"), P("top")]
    assert [str(d) for p in files for d in ws.analyze(p).diagnostics] == []  # type: ignore[union-attr]
    edits = nav.rename(ws, P("top"), at(top, "m.w", 2), "weight", files)
    assert edits is not None
    assert {p: [s for s, _ in e] for p, e in edits.items()} == {
        P("nn/layers"): [Span(layers.index("w:"), layers.index("w:") + 1)],
        P("top"): [Span(top.index("m.w") + 2, top.index("m.w") + 3)],
    }
    edits = nav.rename(ws, P("mid"), at(mid, "make"), "create", files)
    assert edits is not None
    assert {p: [s for s, _ in e] for p, e in edits.items()} == {
        P("nn/layers"): spans(layers, "make", 1),
        P("mid"): spans(mid, "make", 1),
    }


@pytest.mark.parametrize(
    "needle, new, message",
    [
        ("layers\n", "nn", "cannot rename the module 'layers'"),
        ("zeros", "z", "cannot rename 'zeros': it is built in"),
        ("init", "make", "cannot rename 'init': it is built in"),
        ("step(m, z", "not a name", "'not a name' is not a name"),
        ("step(m, z", "return", "'return' is not a name"),
        ("w1[0]", "init", "'init' is reserved for models"),
        ("forward(m, x)", "_hidden", "'_hidden' would be private to its module"),
        ("forward(m, x)", "other", "'other' is already a name in layers"),
        ("forward(m, x)", "H", "'H' is already a name in layers"),
        ("Mlp, forward", "step", "'step' is already a name in train"),  # `from layers import Mlp` binds it here
        ("fwd(m", "step", "'step' is already a name in train"),  # an alias
        ("y = ", "x", "'x' is already a name in step"),
        ("y = ", "z", None),  # free
        ("forward(m, x)", "forward", None),  # the same name: nothing changes
    ],
)
def test_rename_refusals(needle: str, new: str, message: str | None) -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    if message is None:
        assert nav.rename(ws, P("train"), at(TRAIN, needle, 1), new, [P("layers"), P("train")])
        return
    with pytest.raises(nav.RenameError, match=message):
        nav.rename(ws, P("train"), at(TRAIN, needle, 1), new, [P("layers"), P("train")])


def test_rename_of_a_field_to_an_existing_field_is_refused() -> None:
    layers = LAYERS.replace("    param w1: [H H] = zeros\n", "    param w1: [H H] = zeros\n    param w2: [H] = zeros\n")
    ws = workspace(layers=layers, train=TRAIN)
    with pytest.raises(nav.RenameError, match="model Mlp already has a field 'w2'"):
        nav.rename(ws, P("train"), at(TRAIN, "w1[0]"), "w2", [P("layers"), P("train")])


def test_prepare_rename() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    assert nav.prepare_rename(ws, P("train"), at(TRAIN, "forward(m", 2)) == (spans(TRAIN, "forward", 2)[1], "forward")
    assert nav.prepare_rename(ws, P("train"), at(TRAIN, "Mlp, x", 1)) == (
        Span(TRAIN.index("Mlp, x"), TRAIN.index("Mlp, x") + 3),
        "Mlp",
    )
    assert nav.prepare_rename(ws, P("train"), at(TRAIN, "\n\nfn step", 1)) is None
    with pytest.raises(nav.RenameError):
        nav.prepare_rename(ws, P("train"), at(TRAIN, "print"))


def test_workspace_symbols() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    found = nav.workspace_symbols(ws, [P("layers"), P("train")], "fw")
    assert [(s.container, s.symbol.name) for s in found] == [("layers", "forward")]
    everything = nav.workspace_symbols(ws, [P("layers"), P("train")], "")
    assert [(s.container, s.symbol.name) for s in everything] == [
        ("layers", "H"),
        ("layers", "Mlp"),
        ("layers", "forward"),
        ("layers", "other"),
        ("train", "step"),
        ("train", "unrelated"),
        ("train", "main"),
    ]


def test_broken_and_cyclic_files_answer_without_raising() -> None:
    a = "import b\nfrom b import nothing\n\nfn f(x: [b.H]) -> [b.H]:\n    return b.g(x)\n"
    b = "import a\n\ndim H = 2\n\nfn g(x: [H]) -> [H]:\n    return a.f(x\n"
    ws = workspace(a=a, b=b)
    files = [P("a"), P("b")]
    for path, text in ((P("a"), a), (P("b"), b)):
        for offset in range(len(text) + 1):
            nav.definition(ws, path, offset)
            nav.references(ws, path, offset, files)
            try:
                nav.prepare_rename(ws, path, offset)
                nav.rename(ws, path, offset, "renamed", files)
            except nav.RenameError:
                pass
    assert nav.definition(ws, P("missing"), 0) == []


def test_exports_follow_a_new_qualified_name_when_the_roots_change() -> None:
    ws = workspace(nn__layers=LAYERS)
    path = P("nn/layers")
    assert ws.exports(path).qual == "nn.layers"  # type: ignore[union-attr]
    ws.set_roots([f"{ROOT}/nn"])
    assert ws.exports(path).qual == "layers"  # type: ignore[union-attr]
    assert "layers.forward" in ws.exports(path).fns  # type: ignore[union-attr]


# ---------------------------------------------------------------- incremental


def checked(ws: Workspace, path: str, before) -> list[str]:
    """The bodies the last analysis of `path` checked, [] when the workspace
    reused its analysis (no update ran since `before`)."""
    stats = ws._files[path].analyzer.stats
    return [] if stats is before else list(stats.bodies_checked)


def stats(ws: Workspace) -> dict:
    return {p: f.analyzer.stats for p, f in ws._files.items()}


def edit(ws: Workspace, path: str, old: str, new: str) -> None:
    text = ws.text(path)
    assert text is not None and old in text
    ws.set_overlay(path, text.replace(old, new, 1))


def test_an_edit_inside_an_imported_function_rechecks_no_importer() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    ws.analyze(P("train"))
    before = stats(ws)
    edit(ws, P("layers"), "return x @ m.w1", "return (x @ m.w1) * 2.0")
    analysis = ws.analyze(P("train"))
    assert analysis is not None and analysis.diagnostics == []
    assert checked(ws, P("layers"), before[P("layers")]) == ["forward"]
    assert checked(ws, P("train"), before[P("train")]) == []


def test_a_signature_change_rechecks_only_the_importers_functions_that_use_it() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    ws.analyze(P("train"))
    before = stats(ws)
    edit(
        ws,
        P("layers"),
        "fn forward(m: Mlp, x: [H]) -> [H]:\n    return x @ m.w1",
        "fn forward(m: Mlp, x: [H]) -> []:\n    return sum(x @ m.w1)",
    )
    analysis = ws.analyze(P("train"))
    assert analysis is not None
    assert checked(ws, P("layers"), before[P("layers")]) == ["forward"]
    assert checked(ws, P("train"), before[P("train")]) == ["step"]
    assert [d.code for d in analysis.diagnostics] != []  # step passes a scalar on


def test_a_new_unrelated_definition_rechecks_nothing_in_importers() -> None:
    ws = workspace(layers=LAYERS, train=TRAIN)
    ws.analyze(P("train"))
    before = stats(ws)
    edit(ws, P("layers"), "fn other", "fn extra() -> []:\n    return 1.0\n\nfn other")
    ws.analyze(P("train"))
    assert checked(ws, P("layers"), before[P("layers")]) == ["extra"]
    # train imports `layers` whole: its names changed, but no body looked up `layers.extra`
    assert checked(ws, P("train"), before[P("train")]) == []


def test_dims_of_a_module_whose_declarations_swap_complete_as_a_fresh_analysis_does() -> None:
    # The module's names stay the same when two of its dims swap lines, so
    # its table is reused with the old order: the completions must not show it
    from quiver.checker.ide.completion import completions

    layers = "dim C = 3\ndim Head = 8\n"
    main = "import layers\n\nfn f(x: [b layers.C]) -> [b layers.C]:\n    return x\n"
    offset = main.index("[b ") + 3

    def labels(ws: Workspace) -> list[str]:
        a = ws.analyze(P("main"))
        assert a is not None
        return [c.label for c in completions(a, offset)]

    ws = workspace(layers=layers, main=main)
    before = labels(ws)
    swapped = "dim Head = 8\ndim C = 3\n"
    ws.set_overlay(P("layers"), swapped)
    assert labels(ws) == labels(workspace(layers=swapped, main=main)) == before
    assert [x for x in before if x.startswith("layers.")] == ["layers.C", "layers.Head"]
