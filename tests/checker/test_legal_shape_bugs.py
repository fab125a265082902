"""Issue 24: bugs whose shapes are legal (checker/body/lints/), each rule
with its exact code, range and message, the programs it must leave alone,
its quick fix applied and checked again, and the `# quiver: ignore[...]`
comment that silences it."""

from __future__ import annotations

from functools import partial

import pytest
from annotations import check_annotated, program, spanned

from quiver.checker import Analyzer, check_text
from quiver.checker.diagnostics import Diagnostic

src = partial(program, dedent=True)
check = partial(check_annotated, dedent=True)


def codes(text: str) -> list[str]:
    return [code for code, _, _ in spanned(text, dedent=True)]


def fixed(text: str, code: str) -> str:
    """The program with the quick fix of its one `code` diagnostic applied."""
    text = src(text)
    (d,) = [d for d in check_text(text).diagnostics if d.code == code]
    assert d.fix is not None
    return apply(text, d)


def apply(text: str, d: Diagnostic) -> str:
    assert d.fix is not None
    for e in sorted(d.fix.edits, key=lambda e: e.span.start, reverse=True):
        text = text[: e.span.start] + e.new_text + text[e.span.end :]
    return text


# ------------------------------------------------------------------ W0202, W0203: softmax by position


def test_log_softmax_over_the_batch_dim_by_position() -> None:
    check("""
        dim C = 10
        fn predict(z: [n C]) -> [n C]:
            return log_softmax(z, over=0)
        #                              ^ W0202: log_softmax(over=0) is over n, the batch dim of [n C]: the values sum to 1 across the examples, not across C; did you mean over=C?
        """)


def test_the_fix_names_the_class_dim() -> None:
    prog = """
        dim C = 10
        fn predict(z: [b C]) -> [b C]:
            return softmax(z, over=0)
        """
    out = fixed(prog, "W0202")
    assert "softmax(z, over=C)" in out and check_text(out).diagnostics == []


@pytest.mark.parametrize(
    "call",
    [
        "log_softmax(z, over=C)",  # named: never reported
        "log_softmax(z, over=b)",  # the batch named explicitly: meant
        "log_softmax(z, over=-1)",  # the last dim by position
        "log_softmax(z, over=1)",
    ],
)
def test_softmax_over_a_named_or_last_dim_is_clean(call: str) -> None:
    assert codes(f"dim C = 10\nfn predict(z: [b C]) -> [b C]:\n    return {call}\n") == []


def test_cross_entropy_over_a_class_dim_by_position_is_clean() -> None:
    assert (
        codes("""
        dim C = 10
        fn loss(z: [C b], y: [b] Index[C]) -> [] NonNeg:
            return cross_entropy(z, y, over=0)
        """)
        == []
    )  # over=0 is C here: named by its place, and right
    assert (
        codes("""
        dim C = 10
        fn loss(z: [b C T], y: [b T] Index[C]) -> [] NonNeg:
            return cross_entropy(z, y, over=1)
        """)
        == []
    )


def test_attention_softmax_over_the_queries() -> None:
    check("""
        dim T = 8
        fn attend(q: [b T 16], k: [b T 16]) -> [b T T]:
            return softmax(q @ transpose(k), over=-2)
        #                                         ^^ W0203: softmax(over=-2) of [b T T] normalises over the first of two T dims; attention normalises each query's scores over the keys, the last dim: over=-1
        """)
    assert codes("dim T = 8\nfn a(s: [b 4 T T]) -> [b 4 T T]:\n    return softmax(s, over=-1)\n") == []
    # slot attention normalises over the slots on purpose: distinct dims are not reported
    assert codes("dim K = 3\ndim N = 9\nfn a(s: [b K N]) -> [b K N]:\n    return softmax(s, over=1)\n") == []


# ------------------------------------------------------------------ W0204: reshape that moves a dim

HEADS = """
    dim T = 8
    dim NH = 4
    dim HD = 16
    fn heads(x: [b T (NH*HD)]) -> [b NH T HD]:
        return reshape(x, [b NH T HD])
"""


def test_heads_reshaped_without_the_permute() -> None:
    check(
        HEADS + "    #          ^^^^^^^^^^^^^^^^^^^^^^^ W0204: reshape of [b T (NH*HD)=64] to [b NH T HD] moves NH: "
        "reshape keeps the order b T NH HD of the data, it does not transpose it; permute to the new order\n"
    )


def test_the_heads_fix_splits_then_permutes() -> None:
    out = fixed(HEADS, "W0204")
    assert "return permute(reshape(x, [b T NH HD]), [b NH T HD])" in out
    assert check_text(out).diagnostics == []


def test_a_reshape_used_as_a_transpose_is_fixed_to_a_permute() -> None:
    prog = """
        dim S = 5
        dim B = 4
        fn batchify(x: [S B]) -> [B S]:
            return reshape(x, [B S])
        """
    assert codes(prog) == ["W0204"]
    out = fixed(prog, "W0204")
    assert "return permute(x, [B S])" in out and check_text(out).diagnostics == []


def test_flattening_after_the_wrong_permute() -> None:
    """A pixel shuffle whose permute interleaves the wrong dims: the final
    reshape names the order the data should have had."""
    prog = """
        dim C = 3
        dim RH = 2
        dim RW = 2
        dim H = 4
        dim W = 4
        fn shuffle(x: [b C RH RW H W]) -> [b C (H*RH) (W*RW)]:
            return reshape(permute(x, [b C RH H RW W]), [b C (H*RH) (W*RW)])
        """
    assert codes(prog) == ["W0204"]
    right = prog.replace("[b C RH H RW W]", "[b C H RH W RW]")
    assert codes(right) == []


@pytest.mark.parametrize(
    "sig, body",
    [
        ("x: [b T (NH*HD)]) -> [b NH T HD]", "permute(reshape(x, [b T NH HD]), [b NH T HD])"),
        ("x: [b NH T HD]) -> [b T (NH*HD)]", "reshape(permute(x, [b T NH HD]), [b T (NH*HD)])"),
        ("x: [b 784]) -> [b 28 28]", "reshape(x, [b 28 28])"),
        ("x: [b T NH HD]) -> [b T (NH*HD)]", "reshape(x, [b T (NH*HD)])"),
        ("x: [(T*b) HD]) -> [T b HD]", "reshape(x, [T b HD])"),
    ],
)
def test_reshapes_that_keep_the_order_are_clean(sig: str, body: str) -> None:
    assert codes(f"dim T = 8\ndim NH = 4\ndim HD = 16\nfn f({sig}:\n    return {body}\n") == []


# Issue 36: a product of dims keeps the order it was written in, through a
# model's fields and a call's bindings; W0204 reads that order.

GAT_LAYER = """
    dim F = 16
    model Layer[I, Heads, Hd]:
        param W: [I (Heads*Hd)] = xavier

        fn forward(self, h: [n I]) -> [n Heads Hd]:
            return reshape(h @ self.W, [n Heads Hd])
"""


def test_gat_heads_split_in_the_written_order_is_clean() -> None:
    """pytorch/examples' GAT: `h_transformed.view(n, n_heads, n_hidden)` of
    `h @ W` with W of n_heads*n_hidden columns splits in the right order."""
    assert codes(GAT_LAYER) == []


def test_a_weight_s_product_is_a_size_not_a_layout() -> None:
    """pytorch/examples' GAT writes `W = Parameter(empty(in, n_hidden * n_heads))`
    and `.view(n, n_heads, n_hidden)`: a param's product holds no data laid out
    before, so splitting it in any order is no reorder (issue 36)."""
    gat = GAT_LAYER.replace("(Heads*Hd)", "(Hd*Heads)")
    assert codes(gat) == []
    # through a local, and split the other way
    via_local = gat.replace(
        "return reshape(h @ self.W, [n Heads Hd])", "wh = h @ self.W\n            return reshape(wh, [n Heads Hd])"
    )
    assert codes(via_local) == []
    # data laid out by the caller's type is a layout: reordering its factors still warns
    data = """
    dim NH = 4
    dim HD = 8

    fn heads(x: [n (HD*NH)]) -> [n NH HD]:
        return reshape(x, [n NH HD])
    """
    (d,) = check_text(src(data)).diagnostics
    assert (d.code, d.message) == (
        "W0204",
        "reshape of [n (HD*NH)=32] to [n NH HD] moves NH: reshape keeps the order n HD NH of the data, "
        "it does not transpose it; permute to the new order",
    )
    # and so is a weight's product once the program merged data into it in another order
    merged = """
    dim NH = 4
    dim HD = 8

    fn heads(x: [n NH HD]) -> [n HD NH]:
        flat = reshape(x, [n (NH*HD)])
        return reshape(flat, [n HD NH])
    """
    assert codes(merged) == ["W0204"]


def test_a_field_of_an_instance_keeps_the_order_of_its_product() -> None:
    prog = GAT_LAYER + "    fn weights(l: Layer[i, nh, hd]) -> [i nh]:\n        return l.W\n"
    (d,) = check_text(src(prog)).diagnostics
    assert (d.code, d.message) == ("E0201", "return value: expected [i nh], found [i (nh*hd)]")


def test_an_instance_of_dim_constants_keeps_their_names_in_order() -> None:
    """`Layer[F, NH, HD]`'s W is `[F (NH*HD)=32]` where the instance is used:
    its factors keep their names (a weight, so split in any order)."""
    prog = GAT_LAYER + (
        "    dim NH = 4\n    dim HD = 8\n    model Net:\n        param l: Layer[F, NH, HD]\n"
        "    fn w(m: Net) -> [F NH]:\n        return m.l.W\n"
    )
    (d,) = check_text(src(prog)).diagnostics
    assert (d.code, d.message) == ("E0201", "return value: expected [F NH=4], found [F (NH*HD)=32]")
    prog = prog.replace("-> [F NH]:\n        return m.l.W", "-> [F HD NH]:\n        return reshape(m.l.W, [F HD NH])")
    assert codes(prog) == []


def test_patches_flattened_in_another_order_than_laid_out() -> None:
    """SimpleViT's patches laid out [.. C PH PW] and flattened as (PH*PW*C)."""
    prog = """
        model Patches[C, H, W, PH, PW]:
            fn forward(self, x: [b C H W]) -> [b ((H/PH)*(W/PW)) (PH*PW*C)]:
                y = permute(reshape(x, [b C (H/PH) PH (W/PW) PW]), [b (H/PH) (W/PW) C PH PW])
                return reshape(y, [b ((H/PH)*(W/PW)) (PH*PW*C)])
        """
    (d,) = check_text(src(prog)).diagnostics
    assert (d.code, d.message) == (
        "W0204",
        "reshape of [b (H/PH) (W/PW) C PH PW] to [b ((H/PH)*(W/PW)) (PH*PW*C)] moves PH: reshape keeps the order "
        "b (H/PH) (W/PW) C PH PW of the data, it does not transpose it; permute to the new order",
    )
    out = apply(src(prog), d)
    assert check_text(out).diagnostics == []
    right = prog.replace("[b (H/PH) (W/PW) C PH PW]", "[b (H/PH) (W/PW) PH PW C]")
    assert codes(right) == []


# ------------------------------------------------------------------ W0302, W0303: probabilities


def test_a_double_softmax_and_its_fix() -> None:
    prog = """
        dim C = 10
        fn loss(z: [b C], y: [b] Index[C]) -> [] NonNeg:
            p = softmax(z, over=C)
            return cross_entropy(p, y, over=C)
        """
    a = check_text(src(prog))
    (d,) = a.diagnostics
    assert (d.code, d.message) == (
        "W0302",
        "cross_entropy expects logits (it applies log_softmax itself) as 'logits'; this is [b C] Prob, "
        "already probabilities",
    )
    (rel,) = d.related
    assert src(prog)[rel.span.start : rel.span.end] == "softmax(z, over=C)"
    direct = "dim C = 10\nfn loss(z: [b C], y: [b] Index[C]) -> [] NonNeg:\n    return cross_entropy(softmax(z, over=C), y, over=C)\n"
    out = fixed(direct, "W0302")
    assert "return cross_entropy(z, y, over=C)" in out and check_text(out).diagnostics == []


def test_sigmoid_into_the_logits_loss() -> None:
    check("""
        fn loss(z: [b], y: [b]) -> [] NonNeg:
            return binary_cross_entropy_with_logits(sigmoid(z), y)
        #                                           ^^^^^^^^^^ W0302: binary_cross_entropy_with_logits expects logits (it applies sigmoid itself) as 'z'; this is [b] Prob, already probabilities
        """)
    # probabilities as the target are what it takes
    assert (
        codes("fn l(z: [b], t: [b]) -> [] NonNeg:\n    return binary_cross_entropy_with_logits(z, sigmoid(t))\n") == []
    )


def test_nll_of_probabilities_is_fixed_to_log_softmax() -> None:
    prog = "dim C = 3\nfn l(z: [b C], y: [b] Index[C]) -> [] NonNeg:\n    return nll(softmax(z, over=C), y, over=C)\n"
    assert codes(prog) == ["W0302"]
    out = fixed(prog, "W0302")
    assert "nll(log_softmax(z, over=C), y, over=C)" in out and check_text(out).diagnostics == []


def test_log_of_softmax() -> None:
    prog = "dim C = 3\nfn l(z: [b C]) -> [b C]:\n    return log(softmax(z, over=C))\n"
    assert codes(prog) == ["W0303"]
    out = fixed(prog, "W0303")
    assert "return log_softmax(z, over=C)\n" in out and check_text(out).diagnostics == []
    # log of a sigmoid, or of probabilities held in a local, is left alone
    assert codes("fn l(z: [b]) -> [b]:\n    return log(sigmoid(z))\n") == []


# ------------------------------------------------------------------ W0401: swapped arguments

VAE = """
    fn reparameterize(mu: [b 8], logvar: [b 8]) -> [b 8]:
        return mu + exp(0.5 * logvar)
    fn encode(mu: [b 8], logvar: [b 8]) -> [b 8]:
        return {call}
"""


def test_swapped_arguments_and_the_fix() -> None:
    prog = VAE.format(call="reparameterize(logvar, mu)")
    check(
        prog + "    #                         ^^^^^^^^^^ W0401: logvar and mu are passed as reparameterize's 'mu' and "
        "'logvar': swapped?\n"
    )
    out = fixed(prog, "W0401")
    assert "reparameterize(mu, logvar)" in out and check_text(out).diagnostics == []


@pytest.mark.parametrize(
    "call",
    [
        "reparameterize(mu, logvar)",
        "reparameterize(mu=logvar, logvar=mu)",  # keywords say the order is meant
        "reparameterize(logvar, logvar)",
        "reparameterize(exp(logvar), mu)",
    ],
)
def test_arguments_in_order_or_by_keyword_are_clean(call: str) -> None:
    assert codes(VAE.format(call=call)) == []


def test_one_letter_names_are_not_taken_for_a_swap() -> None:
    prog = (
        "fn kl(p: [b], q: [b]) -> []:\n    return sum(p - q)\nfn reverse(p: [b], q: [b]) -> []:\n    return kl(q, p)\n"
    )
    assert codes(prog) == []


def test_prefixed_names_match_and_builtins_are_checked() -> None:
    prog = """
        fn reparameterize(mu: [b 8], logvar: [b 8]) -> [b 8]:
            return mu + exp(0.5 * logvar)
        fn encode(z_mu: [b 8], z_logvar: [b 8]) -> [b 8]:
            return reparameterize(z_logvar, z_mu)
        """
    assert codes(prog) == ["W0401"]
    # mse is symmetric: its arguments in either order are the same loss
    assert codes("fn l(pred: [b], target: [b]) -> [] NonNeg:\n    return mse(target, pred)\n") == []
    prog = "fn l(input: [b], target: [b]) -> [] NonNeg:\n    return smooth_l1(target, input)\n"
    assert codes(prog) == ["W0401"]


# ------------------------------------------------------------------ W0402, W1104: modes


def test_evaluation_in_train_mode() -> None:
    check("""
        fn forward(x: [b 4], mode: Mode) -> [b 4]:
            return dropout(x, 0.5, mode)
        fn test_accuracy(x: [b 4]) -> []:
            return mean(forward(x, Train(seed=0)))
        #                          ^^^^^^^^^^^^^ W0402: test_accuracy runs with Train while evaluating: dropout drops values and batch norm updates its running statistics; pass Eval
        """)
    assert (
        codes("""
        fn forward(x: [b 4], mode: Mode) -> [b 4]:
            return dropout(x, 0.5, mode)
        fn evaluate(x: [b 4]) -> []:
            return mean(forward(x, Eval))
        fn train(x: [b 4]) -> []:
            return mean(forward(x, Train(seed=1)))
        """)
        == []
    )


MODE_LOSS = """
    model Lin:
        param w: [4] = normal(0.0, 0.1)
    fn forward(m: Lin, x: [b 4], mode: Mode) -> [b]:
        return dropout(x, 0.5, mode) @ m.w
    fn loss(m: Lin, x: [b 4]) -> []:
        return mean(forward(m, x, Eval))
"""


def test_a_loss_that_runs_in_eval_mode_when_differentiated() -> None:
    site = "fn step(m: Lin, x: [b 4]) -> Grad[Lin]:\n    l, g = value_and_grad(loss, m, x)\n    return g\n"
    assert codes(MODE_LOSS) == []  # not differentiated: an evaluation loss
    assert codes(src(MODE_LOSS) + site) == ["W1104"]


# ------------------------------------------------------------------ W1102, W1103: gradients through targets

CRITIC = """
    dim S = 4
    model Critic:
        param w: [S] = normal(0.0, 0.1)
    fn value(m: Critic, s: [b S]) -> [b]:
        return s @ m.w
    fn loss(m: Critic, t: Critic, s: [b S], r: [b], s2: [b S]) -> [] NonNeg:
        return mse(value(m, s), {target})
    fn step(m: Critic, t: Critic, s: [b S], r: [b], s2: [b S]) -> Grad[Critic]:
        l, g = value_and_grad(loss, m, t, s, r, s2)
        return g
"""


def test_a_td_target_through_the_model_and_its_fix() -> None:
    prog = CRITIC.format(target="r + 0.99 * value(m, s2)")
    a = check_text(src(prog))
    (d,) = a.diagnostics
    assert d.code == "W1102"
    assert src(prog)[d.span.start : d.span.end] == "r + 0.99 * value(m, s2)"
    assert d.message == (
        "the target of mse reads m, the model being differentiated: the loss also trains the target; "
        "wrap it in stop_grad(...)"
    )
    (rel,) = d.related
    assert src(prog)[rel.span.start : rel.span.end] == "m"
    out = apply(src(prog), d)
    assert "mse(value(m, s), stop_grad(r + 0.99 * value(m, s2)))" in out and check_text(out).diagnostics == []


@pytest.mark.parametrize(
    "target",
    [
        "stop_grad(r + 0.99 * value(m, s2))",
        "r + 0.99 * stop_grad(value(m, s2))",
        "r + 0.99 * value(t, s2)",  # a target network: another model
        "r",
    ],
)
def test_detached_targets_are_clean(target: str) -> None:
    assert codes(CRITIC.format(target=target)) == []


def test_the_target_warning_is_only_for_differentiated_functions() -> None:
    prog = src(CRITIC.format(target="r + 0.99 * value(m, s2)"))
    without_site = prog[: prog.index("fn step")]
    assert codes(without_site) == []


AC = """
    dim S = 4
    dim A = 2
    model AC:
        param pi: [S A] = normal(0.0, 0.1)
        param v: [S] = normal(0.0, 0.1)
    fn loss(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> []:
        logp = log_softmax(s @ m.pi, over=A)
        chosen = sum(logp * one_hot(a, over=A), over=A)
        adv = {adv}
        p = softmax(s @ m.pi, over=A)
        entropy = -sum(p * logp)
        return -mean(adv * chosen) + mse(s @ m.v, r) - 0.01 * entropy
    fn step(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> Grad[AC]:
        l, g = value_and_grad(loss, m, s, a, r)
        return g
"""


def test_an_advantage_that_trains_the_critic() -> None:
    prog = src(AC.format(adv="r - s @ m.v"))
    (d,) = check_text(prog).diagnostics
    assert d.code == "W1103" and prog[d.span.start : d.span.end] == "r - s @ m.v"  # where adv is made
    assert codes(AC.format(adv="stop_grad(r - s @ m.v)")) == []  # the entropy term is not reported either
    assert codes(AC.format(adv="r - mean(r)")) == []


def test_nll_weighted_by_an_advantage() -> None:
    prog = """
        dim S = 4
        dim A = 2
        model AC:
            param pi: [S A] = normal(0.0, 0.1)
            param v: [S] = normal(0.0, 0.1)
        fn loss(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> []:
            nlp = cross_entropy(s @ m.pi, a, over=A, reduction="none")
            return mean(nlp * (r - s @ m.v))
        fn step(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> Grad[AC]:
            l, g = value_and_grad(loss, m, s, a, r)
            return g
        """
    assert codes(prog) == ["W1103"]


# ------------------------------------------------------------------ W0205: causal masks


@pytest.mark.parametrize(
    "mask, use, warned",
    [
        ("tril(ones([T T]))", "where(mask == 1, s, -inf)", False),
        ("tril(ones([T T]))", "where(mask == 0, -inf, s)", False),
        ("tril(ones([T T] Bool))", "where(mask, s, -1e9)", False),
        ("triu(ones([T T] Bool), diagonal=1)", "where(mask, -inf, s)", False),
        ("triu(ones([T T]), diagonal=1)", "where(mask == 0.0, s, -inf)", False),
        ("triu(ones([T T]), diagonal=1)", "where(1 - mask == 1, s, -inf)", False),
        ("triu(ones([T T]))", "where(mask == 1, s, -inf)", True),
        ("tril(ones([T T] Bool))", "where(mask, -inf, s)", True),
        ("triu(ones([T T] Bool), diagonal=1)", "where(mask, s, -inf)", True),
        ("tril(ones([T T]), diagonal=1)", "where(mask == 1, s, -inf)", True),
        ("tril(ones([T T]), diagonal=-1)", "where(mask == 1, s, -inf)", True),
        ("tril(ones([T T]))", "where(mask == 1, s, 0.0)", False),  # not a mask fill
    ],
)
def test_causal_masks(mask: str, use: str, warned: bool) -> None:
    prog = f"dim T = 8\nfn attend(s: [b T T]) -> [b T T]:\n    mask = {mask}\n    return {use}\n"
    assert codes(prog) == (["W0205"] if warned else [])


def test_the_mask_warning_says_which_way_and_points_at_the_mask() -> None:
    prog = "dim T = 8\nfn attend(s: [b T T]) -> [b T T]:\n    mask = tril(ones([T T] Bool))\n    return where(mask, -inf, s)\n"
    (d,) = check_text(prog).diagnostics
    assert d.message == (
        "this mask blocks the positions of tril(...), which lets each position attend to the positions after it "
        "(the future)"
    )
    assert prog[d.span.start : d.span.end] == "mask"
    (rel,) = d.related
    assert prog[rel.span.start : rel.span.end] == "tril(ones([T T] Bool))"


# ------------------------------------------------------------------ silencing


def test_a_comment_silences_one_code_on_its_line() -> None:
    base = "dim C = 10\nfn p(z: [b C]) -> [b C]:\n    return softmax(z, over=0)"
    assert codes(base + "\n") == ["W0202"]
    assert codes(base + "  # quiver: ignore[W0202]\n") == []
    assert codes(base + "  # quiver: ignore[W0101, W0202]\n") == ["W0105"]  # W0101 silences nothing
    assert codes(base + "  # quiver: ignore\n") == []
    assert codes(base + "  # quiver: ignore[W0203]\n") == ["W0202", "W0105"]  # another code
    # errors are never silenced
    assert codes("fn p(z: [b]) -> [b]:\n    return q  # quiver: ignore\n") == ["E0101", "W0105"]


def test_incremental_equals_fresh_when_the_site_comes_and_goes() -> None:
    prog = src(CRITIC.format(target="r + 0.99 * value(m, s2)"))
    without_site = prog[: prog.index("fn step")]
    an = Analyzer()
    ignored = prog.replace("value(m, s2))\n", "value(m, s2))  # quiver: ignore[W1102]\n")
    assert ignored != prog and codes(ignored) == []
    for text in (without_site, prog, without_site, ignored, prog, ignored):
        got = [(d.code, d.span) for d in an.update(text).diagnostics]
        assert got == [(d.code, d.span) for d in check_text(text).diagnostics]


def test_the_editor_offers_to_ignore_a_warning_on_its_line() -> None:
    from quiver.checker import ide

    text = "dim C = 10\nfn p(z: [b C]) -> [b C]:\n    return softmax(z, over=0)\n"
    analysis = check_text(text)
    (d,) = analysis.diagnostics
    titles = [a.title for a in ide.code_actions(analysis, d.span)]
    assert titles == ["Change to over=C", "Ignore W0202 on this line"]
    (ignore,) = [a for a in ide.code_actions(analysis, d.span) if a.title.startswith("Ignore")]
    (edit,) = ignore.edits
    out = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
    assert out.endswith("return softmax(z, over=0)  # qlint: ignore[W0202]\n")
    assert check_text(out).diagnostics == []
    # a line that already ignores another code gets this one added
    text2 = text.replace("over=0)\n", "over=0)  # quiver: ignore[W0203]\n")
    a2 = check_text(text2)
    (ignore2,) = [a for a in ide.code_actions(a2, a2.diagnostics[0].span) if a.title.startswith("Ignore")]
    (edit,) = ignore2.edits
    assert text2[: edit.span.start] + edit.new_text + text2[edit.span.end :] == text2.replace(
        "[W0203]", "[W0203, W0202]"
    )


NANOGPT = """
    dim T = 8
    dim NH = 4
    dim HD = 16
    dim E = 64
    fn heads(q: [b T E]) -> [b NH T HD]:
        return reshape(q, [b NH T HD])
"""


def test_heads_split_from_an_embedding_dim_by_value() -> None:
    """nanoGPT's `.view(B, nh, T, hs)` of a `[b T E]`: T has b elements
    before it in the source and b*NH in the target."""
    a = check_text(src(NANOGPT))
    (d,) = a.diagnostics
    assert (d.code, d.message) == (
        "W0204",
        "reshape of [b T E] to [b NH T HD] moves T: reshape keeps the order b T E of the data, it does not "
        "transpose it; permute to the new order",
    )
    out = apply(src(NANOGPT), d)
    assert "return permute(reshape(q, [b T NH HD]), [b NH T HD])" in out
    assert check_text(out).diagnostics == []


def test_heads_merged_back_without_the_permute() -> None:
    prog = "dim T = 8\ndim NH = 4\ndim HD = 16\ndim E = 64\nfn merge(y: [b NH T HD]) -> [b T E]:\n    return reshape(y, [b T E])\n"
    (d,) = check_text(prog).diagnostics
    assert d.code == "W0204"
    out = apply(prog, d)
    assert "return reshape(permute(y, [b T NH HD]), [b T E])" in out and check_text(out).diagnostics == []
    right = "dim T = 8\ndim NH = 4\ndim HD = 16\ndim E = 64\nfn split(q: [b T E]) -> [b T NH HD]:\n    return reshape(q, [b T NH HD])\n"
    assert codes(right) == []


def test_gat_heads_reshaped_across_the_nodes() -> None:
    prog = "dim NH = 4\ndim HID = 8\ndim F = 32\nfn heads(h: [n F]) -> [NH n HID]:\n    return reshape(h, [NH n HID])\n"
    assert codes(prog) == ["W0204"]
    assert fixed(prog, "W0204").endswith("return permute(reshape(h, [n NH HID]), [NH n HID])\n")


def test_a_batch_dim_constant_counts_as_the_batch() -> None:
    prog = "dim B = 64\ndim C = 10\nfn p(z: [B C]) -> [B C]:\n    return log_softmax(z, over=0)\n"
    assert codes(prog) == ["W0202"]
    # a constant of another name at position 0 (a sequence, say) is not guessed at
    assert codes("dim T = 5\ndim C = 10\nfn p(z: [T C]) -> [T C]:\n    return softmax(z, over=0)\n") == []
