"""Distributions (issue 40): `Categorical`, `Normal` and `Bernoulli` as
torch.distributions spells them, their methods `log_prob`, `entropy`,
`sample(seed=)` and `rsample(seed=)` typed exactly (the batch shape, a
Categorical's classes as the labels' Index), `kl_divergence`; each misuse
one diagnostic with its exact range (checker/builtins/distributions.py)."""

from __future__ import annotations

import functools

from annotations import check_annotated, spanned

from quiver.checker import check_text, ide

PRELUDE = "dim K = 3\ndim J = 4\ndim D = 5\n"
check = functools.partial(check_annotated, prelude=PRELUDE, dedent=True)


def types_of(src: str, *names: str) -> list[str]:
    src = PRELUDE + src
    a = check_text(src)
    assert a.errors == [], a.errors
    out = []
    for name in names:
        h = ide.hover(a, src.index(f"    {name} = ") + 4)
        assert h is not None, name
        out.append(h.markdown.split("\n")[1])
    return out


def test_categorical_over_the_last_dim_gives_labels_of_it() -> None:
    src = """\
fn f(x: [b K] f32, y: [b] Index[K], w: [K] f64):
    d = Categorical(logits=x)
    a = d.sample(seed=1)
    lp = d.log_prob(y)
    h = d.entropy()
    p = Categorical(softmax(x, over=K))
    one = Categorical(probs=softmax(w, over=K))
    s = one.sample(seed=2)
    l1 = one.log_prob(y)
    print(a, lp, h, p, s, l1)
"""
    assert types_of(src, "d", "a", "lp", "h", "p", "one", "s", "l1") == [
        "(local) d: Categorical of [b K] f32",
        "(local) a: [b] Index[K]",
        "(local) lp: [b]",
        "(local) h: [b] NonNeg",
        "(local) p: Categorical of [b K] f32",
        "(local) one: Categorical of [K] f64",
        "(local) s: [] Index[K]",
        # a batch of none: the labels' shape (torch broadcasts them)
        "(local) l1: [b] f64",
    ]


def test_normal_broadcasts_loc_and_scale_like_torch() -> None:
    src = """\
fn f(mu: [b D] f64, lv: [D] f64, x: [b D] f64, v: [D] f32):
    q = Normal(mu, exp(0.5 * lv))
    z = q.rsample(seed=3)
    s = q.sample(seed=4)
    lp = q.log_prob(x)
    h = q.entropy()
    std = Normal(0.0, 1.0)
    e = std.log_prob(v)
    n = Normal(v, 2)
    k = kl_divergence(q, Normal(zeros([D] f64), exp(lv)))
    print(z, s, lp, h, e, n, k)
"""
    assert types_of(src, "q", "z", "s", "lp", "h", "std", "e", "n", "k") == [
        "(local) q: Normal of [b D] f64",
        "(local) z: [b D] f64",
        "(local) s: [b D] f64",
        "(local) lp: [b D] f64",
        "(local) h: [b D] f64",  # a density's entropy may be < 0
        "(local) std: Normal of [] f32",
        "(local) e: [D]",
        "(local) n: Normal of [D] f32",
        "(local) k: [b D] f64",
    ]


def test_a_normal_of_numbers_takes_the_float_type_it_meets() -> None:
    src = """\
fn f(mu: [b D] f64, s: [b D] f64, v: [D] f32):
    k = kl_divergence(Normal(mu, exp(s)), Normal(0.0, 1.0))
    k2 = kl_divergence(Normal(0, 1), Normal(mu, exp(s)))
    lp = Normal(0.0, 1.0).log_prob(mu)
    lp32 = Normal(0.0, 1.0).log_prob(v)
    z = Normal(0, 1).sample(seed=0)
    print(k, k2, lp, lp32, z)
"""
    assert types_of(src, "k", "k2", "lp", "lp32", "z") == [
        "(local) k: [b D] f64",
        "(local) k2: [b D] f64",
        "(local) lp: [b D] f64",
        "(local) lp32: [D]",
        "(local) z: []",
    ]


def test_bernoulli_of_probs_or_logits() -> None:
    src = """\
fn f(x: [b D] f32):
    d = Bernoulli(logits=x)
    s = d.sample(seed=0)
    lp = d.log_prob(s)
    h = d.entropy()
    p = Bernoulli(sigmoid(x))
    k = kl_divergence(d, p)
    print(s, lp, h, p, k)
"""
    assert types_of(src, "d", "s", "lp", "h", "p", "k") == [
        "(local) d: Bernoulli of [b D] f32",
        "(local) s: [b D] Prob",
        "(local) lp: [b D]",
        "(local) h: [b D] NonNeg",
        "(local) p: Bernoulli of [b D] f32",
        "(local) k: [b D] NonNeg",
    ]


def test_results_are_checked_against_declared_types() -> None:
    check(
        """
        fn pick(x: [b K] f32) -> [b] Index[J]:
            return Categorical(logits=x).sample(seed=0)
        #          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0305: return value: expected [b] Index[J], found [b] Index[K]
        """
    )


def test_probs_and_logits_exactly_one() -> None:
    check(
        """
        fn f(x: [b K] f32):
            a = Categorical(probs=softmax(x, over=K), logits=x)
        #                                             ^^^^^^^^ E0980: Categorical: give probs= or logits=, not both
            c = Bernoulli()
        #       ^^^^^^^^^^^ E0980: Bernoulli: give its probabilities as probs= or logits= (by name, as torch)
        """
    )


def test_probs_must_be_known_probabilities() -> None:
    check(
        """
        fn f(x: [b K] f32):
            a = Categorical(x)
        #                   ^ E0304: probs of Categorical: expected weights known to be >= 0 (NonNeg or Prob, as softmax gives; or give logits=), found [b K]
            c = Bernoulli(probs=relu(x))
        #                       ^^^^^^^ E0304: probs of Bernoulli: expected a Prob, in [0, 1] (as sigmoid gives; or give logits=), found [b K] NonNeg
        """
    )


def test_a_label_of_other_classes_names_both() -> None:
    check(
        """
        fn f(x: [b K] f32, y: [b] Index[J], z: [b] i64) -> [b] f32:
            d = Categorical(logits=x)
            a = d.log_prob(y)
        #                  ^ E0305: the labels index J, but the Categorical's classes are K: expected [b] Index[K], found [b] Index[J]
            return d.log_prob(z)
        #                     ^ E0305: the labels must be Index[K], the Categorical's classes: expected [b] Index[K], found [b] i64
        """
    )


def test_rsample_of_a_discrete_distribution() -> None:
    check(
        """
        fn f(x: [b K] f32):
            a = Categorical(logits=x).rsample(seed=0)
        #                             ^^^^^^^ E0981: Categorical.rsample: a Categorical is discrete: no gradient flows through its draws; use sample(seed=...) and log_prob (REINFORCE)
            c = Bernoulli(logits=x).rsample(seed=0)
        #                           ^^^^^^^ E0981
        """
    )


def test_scale_is_nonnegative_and_of_locs_type_and_shape() -> None:
    check(
        """
        fn f(v: [b D] f32, w: [b D] f64, s: [D] f32, u: [J] f32):
            a = Normal(v, s)
        #                 ^ E0304: scale of Normal: expected a scale known to be >= 0 (NonNeg, as exp or softplus gives), found [D]
            c = Normal(v, 0.0)
        #                 ^^^ E0304: scale of Normal: expected a number > 0, found 0.0
            e = Normal(v, exp(w))
        #                 ^^^^^^ E0302: scale of Normal (as loc): expected f32, found [b D] f64
            g = Normal(v, exp(u))
        #       ^^^^^^^^^^^^^^^^^ E0202: cannot broadcast [b D] and [J] NonNeg: D and J differ
            h = Normal(v, "a")
        #                 ^^^ E0301: scale of Normal: expected a float tensor or a number, found string
        """
    )


def test_log_prob_values_broadcast_with_the_batch() -> None:
    check(
        """
        fn f(v: [b D] f32, w: [b D] f64, u: [J] f32, y: [b] Index[K], x: [b K] f32):
            a = Normal(v, 1.0).log_prob(u)
        #                               ^ E0202: cannot broadcast [J] and [b D]: J and D differ
            c = Normal(v, 1.0).log_prob(w)
        #                               ^ E0302: value of Normal.log_prob: expected f32, found [b D] f64
            e = Bernoulli(logits=x).log_prob(y)
        #                                    ^ E0310
        """
    )


def test_kl_divergence_of_one_kind() -> None:
    check(
        """
        fn f(x: [b K] f32, v: [b D] f32, u: [J] f32):
            d = Categorical(logits=x)
            a = kl_divergence(d, Normal(v, 1.0))
        #       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0982: kl_divergence(Categorical of [b K] f32, Normal of [b D] f32): of a Categorical and a Normal: both must be of one kind (Normal, Categorical or Bernoulli)
            c = kl_divergence(d, Categorical(logits=u))
        #       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0982: kl_divergence(Categorical of [b K] f32, Categorical of [J] f32): the two Categoricals' classes differ, K and J
            e = kl_divergence(x, d)
        #                     ^ E0301: argument 'p' of kl_divergence: expected a distribution (Normal, Categorical, Bernoulli), found tensor [b K]
        """
    )


def test_methods_and_their_arguments() -> None:
    check(
        """
        fn f(x: [b K] f32, y: [b] Index[K], t: [] f32):
            d = Categorical(logits=x)
            a = d.log_probs(y)
        #         ^^^^^^^^^ E0107: distribution Categorical of [b K] f32 has no field 'log_probs'; did you mean 'log_prob'?
            c = d.sample()
        #               ^^ E0403: Categorical.sample needs the argument seed=
            e = d.entropy(1)
        #                 ^ E0401
            g = Categorical(logits=t)
        #                          ^ E0301: logits of Categorical: expected a tensor of one dim or more (its last dim is the classes), found tensor []
        """
    )


def test_one_mistake_one_diagnostic() -> None:
    # an unknown argument is reported once; the distribution it would make is unknown, quietly
    found = spanned("fn f(x: [b K] f32) -> [b] f32:\n    return Categorical(logits=zz).log_prob(x)\n", prelude=PRELUDE)
    assert [c for c, _, _ in found] == ["E0101"]
    found = spanned("fn f(x: [b K] f32) -> [b] f32:\n    d = Categorical(x)\n    return d.entropy()\n", prelude=PRELUDE)
    assert [c for c, _, _ in found] == ["E0304"]


def test_completion_and_hover_of_the_methods() -> None:
    src = PRELUDE + "fn f(x: [b K] f32) -> [b K] f32:\n    d = Normal(x, 1.0)\n    return d.entropy()\n"
    a = check_text(src)
    assert a.errors == []
    at = src.index("d.entropy") + 2
    names = [c.label for c in ide.completions(a, at)]
    assert names == ["log_prob", "entropy", "sample", "rsample", "loc", "scale", "mean", "stddev", "variance"]
    h = ide.hover(a, at + 1)
    assert h is not None and "Normal.entropy()" in h.markdown
    src = (
        src.replace("[b K] f32:", "[b] f32:")
        .replace("Normal(x, 1.0)", "Categorical(logits=x)")
        .replace("d.entropy()", "d.log_prob(d.sample(seed=0))")
    )
    a = check_text(src)
    assert a.errors == []
    names = [c.label for c in ide.completions(a, src.index("d.log_prob") + 2)]
    assert names == ["log_prob", "entropy", "sample", "probs", "logits"]


def test_fields_as_torchs_attributes() -> None:
    src = """\
fn f(x: [b K] f32, m: [b D] f64, s: [D] f64):
    d = Categorical(logits=x)
    p = d.probs
    lg = d.logits
    n = Normal(m, exp(s))
    sc = n.scale
    mu = n.mean
    v = n.variance
    e = Bernoulli(logits=x)
    ep = e.probs
    print(p, lg, sc, mu, v, ep)
"""
    assert types_of(src, "p", "lg", "sc", "mu", "v", "ep") == [
        "(local) p: [b K] Prob",
        "(local) lg: [b K]",
        "(local) sc: [b D] f64",
        "(local) mu: [b D] f64",
        "(local) v: [b D] f64",
        "(local) ep: [b K] Prob",
    ]
    check(
        """
        fn f(x: [b K] f32) -> [b K] f32:
            return Categorical(logits=x).prob
        #                                ^^^^ E0107: distribution Categorical of [b K] f32 has no field 'prob'; did you mean 'probs'?
        """
    )
