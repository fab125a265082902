"""Incremental analysis: the same answers as from scratch, for less work."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.checker import Analyzer, check_text, ide
from quiver.checker import ast as A

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.qv"))
PROGRAMS = [p.read_text() for p in EXAMPLES]

SNIPPETS = [
    "",
    "x",
    "1",
    " ",
    "\n",
    "\n    ",
    "    ",
    ":",
    "(",
    ")",
    "[",
    "]",
    ",",
    "m.",
    "w1",
    "fn ",
    "dim E = 3\n",
    "return ",
    "relu(",
    " + ",
    " @ ",
    "#",
    '"',
    "b",
    "D",
    "over=C",
    "\n\n",
    "pass\n",
    "mut ",
    "Grad[",
]


def structure(analysis):
    return [
        (slot.start, A.dump(slot.item) if slot.item is not None else None, slot.parse.diagnostics)
        for slot in analysis.parsed.slots
    ]


def diagnostics(analysis):
    return [(d.code, d.message, d.span, d.related, d.fix, d.unnecessary) for d in analysis.diagnostics]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_match_a_fresh_analysis(data) -> None:
    src = data.draw(st.sampled_from(PROGRAMS))
    analyzer = Analyzer()
    analyzer.update(src)
    for _ in range(data.draw(st.integers(1, 12))):
        start = data.draw(st.integers(0, len(src)))
        end = data.draw(st.integers(start, min(len(src), start + 20)))
        src = src[:start] + data.draw(st.sampled_from(SNIPPETS)) + src[end:]
        incremental = analyzer.update(src)
        fresh = check_text(src)
        assert structure(incremental) == structure(fresh)
        assert diagnostics(incremental) == diagnostics(fresh)
        assert not incremental.internal_errors


def _mlp() -> str:
    return (ROOT / "examples" / "mlp.qv").read_text()


def test_an_unchanged_text_does_no_work() -> None:
    analyzer = Analyzer()
    src = _mlp()
    analyzer.update(src)
    analyzer.update(src)
    assert analyzer.stats.parsed == 0
    assert analyzer.stats.bodies_checked == [] and analyzer.stats.sites_checked == []


def test_editing_inside_a_body_rechecks_only_that_function() -> None:
    analyzer = Analyzer()
    src = _mlp()
    analyzer.update(src)
    edited = src.replace("h = dropout(h, 0.1, mode)", "h = dropout(h, 0.25, mode)")
    analyzer.update(edited)
    assert analyzer.stats.parsed == 1
    assert analyzer.stats.bodies_checked == ["forward"]
    assert analyzer.stats.sites_checked == [], "forward still reads the same params"


def test_moving_a_function_down_reuses_every_result() -> None:
    analyzer = Analyzer()
    src = _mlp()
    analyzer.update(src)
    a = analyzer.update("# a comment that shifts everything\n\n" + src)
    assert analyzer.stats.parsed == 1  # only the new comment-only chunk
    assert analyzer.stats.bodies_checked == []
    assert a.diagnostics == []


def test_a_change_of_reads_rechecks_the_functions_that_differentiate() -> None:
    analyzer = Analyzer()
    src = _mlp()
    analyzer.update(src)
    edited = src.replace("return h @ m.w2 + m.b2", "return h @ m.w2")
    a = analyzer.update(edited)
    assert analyzer.stats.bodies_checked == ["forward"]
    assert analyzer.stats.sites_checked == ["train_step"], "the value_and_grad site in train_step"
    assert [d.code for d in a.diagnostics] == ["W1101"]
    analyzer.update(src)
    assert analyzer.stats.sites_checked == ["train_step"]


def test_a_signature_change_rechecks_its_callers() -> None:
    analyzer = Analyzer()
    src = _mlp()
    analyzer.update(src)
    edited = src.replace(
        "fn forward(m: Mlp, x: [b D], mode: Mode) -> [b C]:", "fn forward(m: Mlp, x: [b D], mode: Mode) -> [b H]:"
    )
    a = analyzer.update(edited)
    assert sorted(analyzer.stats.bodies_checked) == ["forward", "loss"]
    # forward's body no longer matches its signature, and loss's use of it
    # no longer has the class dim: both sides of the contract are checked.
    assert sorted(d.code for d in a.diagnostics) == ["E0201", "E0204"]


def test_a_new_function_rechecks_only_bodies_that_missed_its_name() -> None:
    analyzer = Analyzer()
    src = _mlp() + "\nfn extra() -> Int:\n    return helper()\n"
    first = analyzer.update(src)
    assert [d.code for d in first.diagnostics] == ["E0101"]
    second = analyzer.update(src + "\nfn helper() -> Int:\n    return 1\n")
    assert sorted(analyzer.stats.bodies_checked) == ["extra", "helper"]
    assert second.diagnostics == []


def test_older_analyses_stay_valid_after_updates() -> None:
    analyzer = Analyzer()
    src = _mlp()
    old = analyzer.update(src)
    old_reads = old.reads.summary("loss", "m").reads.keys()
    analyzer.update(src.replace("return h @ m.w2 + m.b2", "return h @ m.w2"))
    assert set(old.reads.summary("loss", "m").reads) == set(old_reads) == {"w1", "b1", "w2", "b2"}


def test_types_written_in_bodies_depend_on_the_names_they_use() -> None:
    # A cast or shape in a body names dims and models too: renaming the dim
    # must re-check the body (a cached result would miss E0109).
    analyzer = Analyzer()
    analyzer.update("dim K = 3\nfn f(x: [3]) -> [3] f64:\n    return x as [K] f64\n")
    renamed = "dim J = 3\nfn f(x: [3]) -> [3] f64:\n    return x as [K] f64\n"
    result = analyzer.update(renamed)
    assert analyzer.stats.bodies_checked == ["f"]
    assert [d.code for d in result.diagnostics] == [d.code for d in check_text(renamed).diagnostics] == ["E0109"]


# --- found by the differential fuzz (tests/stress/incremental_fuzz.py) -----------------


def _same_as_fresh(history: list[str]) -> list:
    """Runs the texts through one analyzer; the last result, compared with a
    fresh check of the same text."""
    analyzer = Analyzer()
    for text in history:
        result = analyzer.update(text)
    fresh = check_text(history[-1])
    assert diagnostics(result) == diagnostics(fresh)
    return diagnostics(result)


def test_a_name_that_changes_kind_redeclares_its_users() -> None:
    # `dim C` edited into a broken `fn C` header keeps the name C: the model
    # that uses C as a dim must learn that C is now a function.
    dim = "dim C = 3\nmodel M:\n    param b: [C] = zeros\n"
    broken = dim.replace("dim C = 3", "fn C = 3")
    got = _same_as_fresh([dim, broken])
    assert [(code, message) for code, message, *_ in got if code != "E0003"] == [
        ("E0211", "'C' is a function, not a dim")
    ]


def test_a_message_does_not_depend_on_the_edit_history() -> None:
    # A type naming a function is E0110; once the function is renamed, it is
    # an unknown type (E0102), not the function error remembered from before.
    with_fn = "fn bad_assign(x: Int) -> Int:\n    return x\nfn f(y: bad_assign) -> Int:\n    return 1\n"
    renamed = with_fn.replace("fn bad_assign(", "fn other(")
    assert [c for c, *_ in _same_as_fresh([with_fn])] == ["E0110"]
    assert [c for c, *_ in _same_as_fresh([with_fn, renamed])] == ["E0102"]
    # A broken item of another kind under the same name changes the message.
    broken_dim = "dim C = \nmodel M:\n    param b: [C] = zeros\n"
    broken_fn = broken_dim.replace("dim C =", "fn C =")
    assert [c for c, *_ in _same_as_fresh([broken_dim, broken_fn]) if c != "E0003"] == ["E0211"]


def test_two_items_with_the_same_text_are_two_items() -> None:
    # A pasted copy of a function shares its text; each copy has its own
    # results, and hovers inside the second copy are the same as from scratch.
    fn = "fn g(x: [b D]) -> [b D]:\n    return x\n"
    one = "dim D = 2\n" + fn
    two = one + fn
    analyzer = Analyzer()
    analyzer.update(one)
    result = analyzer.update(two)
    fresh = check_text(two)
    items = [s.item for s in result.parsed.slots]
    assert items[1] is not items[2] and len({id(s.item) for s in fresh.parsed.slots}) == 3
    for offset in range(len(two)):
        assert ide.hover(result, offset) == ide.hover(fresh, offset), offset


def test_ide_answers_follow_which_item_is_first_of_its_name() -> None:
    # The second `fn g` is a duplicate: its generic dims are not hovered as
    # g's. Deleting the first makes it g, and the cached index must notice.
    fn2 = "fn g(x: [b D]) -> [b D]:\n    return x\n"
    two = "dim D = 2\nfn g(y: Int) -> Int:\n    return y\n" + fn2
    one = "dim D = 2\n" + fn2
    analyzer = Analyzer()
    analyzer.update(one)
    before = analyzer.update(two)
    offset = two.rindex("[b D]:") + 1
    assert ide.hover(before, offset) == ide.hover(check_text(two), offset)
    after = analyzer.update(one)
    offset = one.rindex("[b D]:") + 1
    assert ide.hover(after, offset) == ide.hover(check_text(one), offset) is not None


def test_a_new_param_of_a_sub_model_reaches_the_gradient_sites_of_its_holder() -> None:
    """W1101 names the leaf params of sub-models: editing only the sub-model
    (the holder's declaration unchanged) must update the holder's sites."""
    before = """dim D = 4

model Enc:
    param w: [D D] = zeros

model Net:
    param enc: Enc

fn loss(m: Net, x: [b D]) -> [] Float:
    return sum(x @ m.enc.w)

fn g(m: Net, x: [b D]) -> Grad[Net]:
    return grad(loss, m, x)
"""
    after = before.replace("    param w: [D D] = zeros\n", "    param w: [D D] = zeros\n    param v: [D] = zeros\n")
    analyzer = Analyzer()
    assert [d.code for d in analyzer.update(before).diagnostics] == []
    incremental = analyzer.update(after)
    fresh = check_text(after)
    assert [(d.code, d.message) for d in incremental.diagnostics] == [(d.code, d.message) for d in fresh.diagnostics]
    assert [d.message for d in fresh.diagnostics] == [
        "loss never reads param enc.v of Net: its gradient is always zero"
    ]


def test_reads_under_stop_grad_through_a_call_follow_an_edit_of_the_callee() -> None:
    """`stop_grad(inner(m, x))`: what inner reads is read only under stop_grad
    by the caller; editing inner alone must update the caller's W1101."""
    before = """dim D = 4

model Lin:
    param w: [D] = zeros
    param b: [D] = zeros
    param c: [D] = zeros

fn inner(m: Lin, x: [b D]) -> [] Float:
    return sum(x * m.w)

fn loss(m: Lin, x: [b D]) -> [] Float:
    return sum(x * m.c) + stop_grad(inner(m, x))

fn g(m: Lin, x: [b D]) -> Grad[Lin]:
    return grad(loss, m, x)
"""
    after = before.replace("return sum(x * m.w)", "return sum(x * m.w) + sum(x * m.b)")
    analyzer = Analyzer()
    analyzer.update(before)
    incremental = analyzer.update(after)
    fresh = check_text(after)
    assert [d.message for d in incremental.diagnostics] == [d.message for d in fresh.diagnostics]
    assert [d.message for d in fresh.diagnostics] == [
        "loss reads param b of Lin only under stop_grad: its gradient is always zero",
        "loss reads param w of Lin only under stop_grad: its gradient is always zero",
    ]
