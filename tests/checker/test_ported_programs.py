"""Issue 22: what porting real PyTorch programs found, each as the smallest
program, with exact codes, ranges and messages (tests/annotations.py).

The run-time halves (values against torch, the checks of dims known only at
run time) are in tests/test_ported_programs_run.py."""

from __future__ import annotations

import textwrap
from functools import partial

from annotations import check_annotated

from quiver.checker import check_text
from quiver.checker.catalog import CODES

check = partial(check_annotated, dedent=True)


def local_type(src: str, fn: str, name: str) -> str:
    a = check_text(textwrap.dedent(src).lstrip("\n"))
    assert not a.internal_errors
    (body,) = [b for item, b in a.bodies.items() if item.name.text == fn]
    return str(body.locals[name])


def dims_of(src: str, fn: str) -> dict[str, list[tuple[str, str, tuple]]]:
    """The run-time dim checks of a fn: the text of each checked value and
    (what, declared, dims) of each check."""
    text = textwrap.dedent(src).lstrip("\n")
    a = check_text(text)
    assert not a.internal_errors and not a.diagnostics, a.diagnostics
    (item,) = [i for i in a.bodies if i.name.text == fn]
    base = a.slot_of_item[item].start
    out: dict[str, list[tuple[str, str, tuple]]] = {}
    for node, checks in a.bodies[item].dim_checks.items():
        written = text[base + node.span.start : base + node.span.end]
        out[written] = [(c.what, c.declared, tuple(str(d) for d in (c.count or c.dims))) for c in checks]
    return out


# ------------------------------------------------------------------ 2. dims known only at run time

WIN = """
dim T = 8
dim S = 20
fn win(seq: [S b], n: Int) -> [T b]:
    return seq[n - T:n + 1]
fn main():
    print(win(randn([S 2], seed=0), 12))
"""


def test_a_run_time_slice_returned_as_a_known_dim_is_clean_and_checked_at_the_return() -> None:
    check(WIN)
    assert dims_of(WIN, "win") == {"seq[n - T:n + 1]": [("win(): result", "[T b]", ("T", "None"))]}


def test_permute_names_the_one_run_time_dim() -> None:
    src = """
    dim T = 8
    dim S = 20
    fn f(seq: [S b], a: Int) -> [b T]:
        return permute(seq[a:a + 8], [b T])
    """
    check(src)
    assert dims_of(src, "f") == {"seq[a:a + 8]": [("permute(): argument 'x'", "[T b]", ("T", "None"))]}


def test_permute_cannot_tell_two_run_time_dims_apart() -> None:
    check("""
    dim T = 8
    dim U = 3
    fn f(x: [20 b], a: Int) -> Int:
        y = x[a:a + 8]
        z = permute(concat(y, y, over=b), [T U])
    #                                        ^ E0214: permute: U is not a dim of [? (b+b)]; name its dims known only at run time (?) with a cast first, `... as [..]`
        return 0
    """)


def test_every_path_where_a_run_time_dim_meets_a_known_one() -> None:
    src = """
    dim T = 8
    dim S = 20
    dim D = 2
    model M:
        param w: [T D]
    fn take(x: [T D]) -> [T D]:
        return x
    fn pair(x: [n D], y: [n D]) -> [n D]:
        return x + y
    fn paths(mut m: M, seq: [S D], k: Int) -> [T D]:
        a = take(seq[k:k + 8])
        b = pair(seq[k:k + 20], seq)
        c = reshape(seq[k:k + 8], [T 2 1])
        d = seq[k:k + 8] as [T D]
        e = sum(seq[k:k + 8], over=T)
        m.w = seq[k:k + 8]
        l = mse(seq[k:k + 8], ones([T D]))
        print(a, b, c, d, e, l)
        return seq[k:k + 8]
    """
    check(src)
    got = sorted(check for checks in _all_checks(src, "paths") for check in checks)
    T, S, D = "T", "S", "None"
    assert [
        (what, declared, tuple(map(str, dims)), count and tuple(map(str, count))) for what, declared, dims, count in got
    ] == [
        ("cast: value", "[T D]", (T, D), None),
        ("field M.w: value", "[T D]", (T, D), None),
        ("mse(): argument 'pred'", "[T D]", (T, D), None),
        ("pair(): argument 'x'", "[S D]", (S, D), None),
        ("paths(): result", "[T D]", (T, D), None),
        ("reshape(): argument 'x'", "[T 2 1]", (), ("T", "2", "1")),
        ("sum(over=T): argument 'x'", "[T D]", (T, D), None),
        ("take(): argument 'x'", "[T D]", (T, D), None),
    ]


def _all_checks(src: str, fn: str):
    a = check_text(textwrap.dedent(src).lstrip("\n"))
    (item,) = [i for i in a.bodies if i.name.text == fn]
    return [[(c.what, c.declared, c.dims, c.count) for c in checks] for checks in a.bodies[item].dim_checks.values()]


def test_a_generic_dim_bound_to_a_run_time_dim_takes_the_known_one() -> None:
    src = """
    dim D = 2
    dim S = 20
    fn pair(x: [n D], y: [n D]) -> [n D]:
        return x + y
    fn f(seq: [S D], k: Int) -> Int:
        r = pair(seq[k:k + 3], seq)
        q = pair(seq, seq[k:k + 3])
        u = pair(seq[k:k + 3], seq[k:k + 3])
        print(r, q, u)
        return 0
    """
    check(src)
    assert local_type(src, "f", "r") == "[S D]"
    assert local_type(src, "f", "q") == "[S D]"
    assert local_type(src, "f", "u") == "[? D]"
    checks = _all_checks(src, "f")
    assert sorted(c[0][0] for c in checks) == ["pair(): argument 'x'", "pair(): argument 'y'"]


def test_a_join_of_a_known_and_a_run_time_dim_is_not_known() -> None:
    src = """
    dim T = 8
    fn f(x: [20 2], k: Int) -> [T 2]:
        h = zeros([T 2])
        if k > 0:
            h = x[k:k + 8]
        return h
    """
    check(src)
    assert local_type(src, "f", "h") == "[? 2]"
    assert dims_of(src, "f") == {"h": [("f(): result", "[T 2]", ("T", "None"))]}


def test_a_tensor_that_grows_in_a_loop_has_a_run_time_dim() -> None:
    # ys = concat(ys, y): [1 b H] before the loop, [2 b H] after a round; the
    # rounds meet with the grown dim known only at run time, checked at the return
    src = """
    dim H = 3
    dim T = 4
    fn acc(xs: [T b H]) -> [T b H]:
        ys = reshape(xs[0], [1 b H])
        for t in range(T - 1):
            ys = concat(ys, reshape(xs[t + 1], [1 b H]), over=0)
        return ys
    """
    check(src)
    assert local_type(src, "acc", "ys") == "[? b H]"
    assert dims_of(src, "acc") == {"ys": [("acc(): result", "[T b H]", ("T", "None", "None"))]}


def test_a_loop_that_changes_a_rank_or_an_if_that_changes_a_size_is_still_e0311() -> None:
    check("""
    dim H = 3
    fn shrink(xs: [b H]) -> [b H]:
        ys = xs
        for t in range(2):
            ys = sum(ys, over=H)  # [b] on one round, [b H] on the other
           #^^ E0311
        print(ys)
        return xs
    fn pick(xs: [4 H], k: Int) -> [4 H]:
        ys = xs[0:2]
        if k > 0:
            ys = xs[0:3]
           #^^ E0311
        return ys
    """)


def test_over_names_the_one_run_time_dim() -> None:
    src = """
    dim T = 8
    dim V = 5
    fn f(x: [20 V], k: Int) -> [V] Index[T]:
        return argmax(x[k:k + 8], over=T)
    """
    check(src)
    assert dims_of(src, "f") == {"x[k:k + 8]": [("argmax(over=T): argument 'x'", "[T V]", ("T", "None"))]}
    check("""
    dim T = 8
    fn f(x: [20 30], k: Int) -> [30]:
        w = transpose(x[k:k + 8])[k:k + 2]
        return sum(w, over=T)
    #                      ^ E0204: over=T: T is not a dim of [? ?]; name its dims known only at run time (?) with a cast first, `... as [..]`
    """)


def test_slice_bounds_of_dim_constants_are_known() -> None:
    src = """
    dim T = 8
    fn f(x: [T 2]) -> [(T-1) 2]:
        y = x[:T - 1]
        z = x[T - 10:]
        print(z)
        return y
    """
    check(src)
    assert local_type(src, "f", "y") == "[7 2]"
    assert local_type(src, "f", "z") == "[2 2]"


def test_code_without_run_time_dims_has_no_checks() -> None:
    src = """
    dim T = 8
    fn f(x: [T 2], k: Int) -> [T 2]:
        y = x[1:3]
        return x + 1.0
    """
    a = check_text(textwrap.dedent(src))
    assert all(not b.dim_checks for b in a.bodies.values())


# ------------------------------------------------------------------ 3. tensor literals of names


def test_a_literal_of_names_is_typed_and_checked() -> None:
    check("""
    fn obs(x: Float, y: Float) -> [7] i64:
        return [x, y]
    #          ^^^^^^ E0201: return value: expected [7] i64, found [2] Float
    fn main():
        w = [obs, main]
    #        ^^^ E0110: 'obs' is a function, not a value
    #             ^^^^ E0110: 'main' is a function, not a value
        t = ones([3])
        print(w, [t, t])
    #            ^^^^^^ E0301: tensor literal: expected numbers, found t, tensor [3] (a list of tensors is not a value: stack(t, t) joins them along a new dim, concat(a, b, over=D) along one of theirs)
    """)


def test_torch_s_list_of_tensors_in_stack_or_concat_is_one_diagnostic() -> None:
    # torch.stack([a, b]) and torch.cat([a, b], dim=0) ported as written: the
    # list says what to write, and concat's count of arguments is not said too
    check("""
    fn main():
        t = ones([3])
        s = stack([t, t])
    #             ^^^^^^ E0301: tensor literal: expected numbers, found t, tensor [3] (a list of tensors is not a value: stack(t, t) joins them along a new dim, concat(a, b, over=D) along one of theirs)
        c = concat([t, t], over=0)
    #              ^^^^^^ E0301: tensor literal: expected numbers, found t, tensor [3] (a list of tensors is not a value: stack(t, t) joins them along a new dim, concat(a, b, over=D) along one of theirs)
        print(s, c)
    """)


def test_a_literal_of_names_uses_its_names() -> None:
    src = """
    fn main():
        x = 1.0
        y = 2
        v = [x, y]
        k = [y, y]
        print(v, k)
    """
    check(src)  # no W0101 for x and y
    assert local_type(src, "main", "v") == "[2]"
    assert local_type(src, "main", "k") == "[2] i64"


# ------------------------------------------------------------------ 4. one mistake, one diagnostic


def test_a_failed_binding_gives_the_call_what_was_bound() -> None:
    check("""
    dim C = 4
    dim K = 3
    fn up(x: [b c h], g: [c]) -> [b c (2*h)]:
        return concat(x, x, over=-1)
    fn same(x: [b c h]) -> [b c h]:
        return x
    fn f(x: [2 C 5]) -> [2 C 10]:
        return same(up(x, zeros([K])))
    #                     ^^^^^^^^^^ E0205: argument 'g' of up: expected [C], found [K] (C from argument 'x', not K)
    """)


def test_a_call_never_gives_the_callees_generic_names() -> None:
    src = """
    dim C = 4
    dim K = 3
    fn up(x: [b c h], g: [c]) -> [b c (2*h)]:
        return concat(x, x, over=-1)
    fn same(x: [b c h]) -> [b c h]:
        return x
    fn f(x: [2 C 5]) -> Int:
        u = up(x, zeros([K]))
        s = same(nope)
        p = nope |> same
        print(u, s, p)
        return 0
    """
    assert local_type(src, "f", "u") == "[2 C 10]"
    assert local_type(src, "f", "s") == "[? ? ?]"
    assert local_type(src, "f", "p") == "[? ? ?]"


def test_a_failed_call_inside_value_and_grad_keeps_no_generic_names() -> None:
    src = """
    dim D = 4
    dim C = 3
    model M:
        param w: [D C]
    fn loss(m: M, x: [b D], y: [b] Index[C]) -> ([] NonNeg, [b C]):
        logits = x @ m.w
        return cross_entropy(logits, y, over=C), logits
    fn f(m: M, x: [5 D], y: [6] Index[C]) -> Int:
        l, g = value_and_grad(loss, m, x, y)
        print(l, g)
        return 0
    """
    a = check_text(textwrap.dedent(src))
    assert [d.code for d in a.diagnostics] == ["E0205"]
    assert local_type(src, "f", "l") == "([] NonNeg, [5 C])"


# ------------------------------------------------------------------ 5. messages that point the right way


def test_a_model_method_that_is_no_function() -> None:
    check("""
    model M:
        param w: [3]
    fn main():
        m = M.init(seed=0)
        m.save("m.pt")
    #   ^^^^^^ E0409: m.save cannot be called: models have no methods; write save("m.pt", m)
    """)


def test_an_initializer_argument_that_is_an_expression() -> None:
    """Initializers compute their numbers from literals and dims (issue 23)."""
    check("""
    dim L = 4
    model M:
        param w: [3] = normal(0.0, 0.02 / sqrt(2 * L))
        param v: [3] = normal
    #                  ^^^^^^ E0903: invalid initializer: normal takes 2 numbers, as in normal(0.0, 0.02)
        param u: [3] = normal(0.0, x)
    #                              ^ E0903: invalid initializer: normal's std is a number, made of numbers, dims and sqrt/exp/log, found x
    """)


def test_dim_arithmetic_is_a_dim_argument() -> None:
    src = """
    dim P = 4
    dim G = 3
    fn f(x: [b 2]) -> [(P+G) (P+G)]:
        i = arange((P+G))
        o = one_hot(i, over=(P+G))
        print(eye((P*G-10)), arange(b + 1))
        return o
    """
    check(src)
    assert local_type(src, "f", "i") == "[(P+G)=7] Index[(P+G)=7]"
    check("""
    fn f(n: Float) -> Float:
        print(arange(n + 1))
    #                ^^^^^ E0301: n of arange: expected a dim (a dim constant, a generic dim, a number or dim arithmetic of them), found this expression
        return n
    """)
    # an Int is a size known only at run time (issue 25): arange(n + 1) is [(n+1)] Index[(n+1)]
    check("""
    fn f(n: Int) -> Int:
        print(arange(n + 1))
        return n
    """)


def test_a_plain_number_is_assigned_to_a_scalar_field() -> None:
    check("""
    dim C = 4
    model M:
        buffer steps: [] i64 = 0
        buffer t: [] f64 = 0.0
        buffer n: [] NonNeg = 0.0
        buffer k: [] Index[C] = 0
    fn reset(mut m: M, x: Float):
        m.steps = 0
        m.t = 0.8
        m.t = 2
        m.n = 1.5
        m.steps = 2.5
    #             ^^^ E0301: field M.steps: expected tensor [] i64, found number Float
        m.n = x
    #         ^ E0301: field M.n: expected tensor [] NonNeg, found number Float
        m.k = 1
    #         ^ E0301: field M.k: expected tensor [] Index[C], found number Int
    """)


def test_nonneg_is_f32_and_the_message_says_so() -> None:
    check("""
    fn loss(x: [4] f64, y: [4] f64) -> [] NonNeg:
        return mse(x, y)
    #          ^^^^^^^^^ E0302: return value: expected [] NonNeg, found [] f64 (NonNeg is a refinement of f32; declare an f64 value as [] f64)
    fn fine(x: [4] f64, y: [4] f64) -> [] f64:
        return mse(x, y)
    """)


def test_stepping_a_model_in_the_main_that_made_it() -> None:
    check("""
    dim D = 3
    model M:
        param w: [D]
    fn loss(m: M) -> [] NonNeg:
        return sum(m.w * m.w)
    fn main():
        m = M.init(seed=0)
        opt = SGD(m, lr=0.1)
        l, g = value_and_grad(loss, m)
        opt.step(m, g)
    #            ^ E0501: cannot assign m: 'm' is not a parameter but a model made here, and a model changes only through a mut parameter: do this in a fn that takes `mut m: M`, and call it
        print(l)
    """)
    # the fix the message gives
    check("""
    dim D = 3
    model M:
        param w: [D]
    fn loss(m: M) -> [] NonNeg:
        return sum(m.w * m.w)
    fn train_step(mut m: M, mut opt: SGD[M]) -> [] NonNeg:
        l, g = value_and_grad(loss, m)
        opt.step(m, g)
        return l
    fn main():
        m = M.init(seed=0)
        opt = SGD(m, lr=0.1)
        print(train_step(m, opt))
    """)
    explanation = CODES["E0501"].explanation
    assert "`main`" in explanation and "opt.step(m, g)" in explanation and "mut opt: Adam[Mlp]" in explanation


def test_a_shape_of_any_rank_in_a_fn() -> None:
    """`[..]` and `[.. d]` in a fn's signature (issue 23): any number of leading dims."""
    check("""
    fn f(x: [..]) -> [..]:
        return x
    fn rms(x: [.. d]) -> [.. d]:
        return x / sqrt(mean(x * x, over=d, keep=True))
    fn g(x: [.. d]) -> [.. d]:
        return transpose(x)
    #                    ^ E0214: transpose(x): [.. d] has any number of leading dims, and transpose needs to know them: name the dims in the fn's signature
    """)


def test_indexing_several_dims_at_once() -> None:
    # issue 25: subscripts on any dim, as torch's
    check("""
    dim D = 2
    fn f(a: [4 5 6]) -> [4 D 6]:
        return a[:, :D, :]
    fn g(a: [4 5 6]) -> [6]:
        return a[0, 1]
    fn k(a: [4 5 6]) -> [4 6]:
        return a[:, 5]
    #               ^ E0217: index 5 of a dim of 5: it has 5 entries, 0 to 4 (or -5 to -1)
    fn h() -> [2] i64:
        return [1, 2]
    """)


def test_a_tensor_method_names_the_built_in() -> None:
    check("""
    dim D = 4
    fn f(e: [4 D], mask: [4 D] Bool) -> [4 D]:
        return e.masked_fill(mask, 0.0)
    #            ^^^^^^^^^^^ E0107: tensor [4 D] has no field 'masked_fill'; a tensor has no methods: write where(mask, value, e)
    fn g(e: [4 D]) -> [4]:
        return e.sum(1)
    #            ^^^ E0107: tensor [4 D] has no field 'sum'; a tensor has no methods: write sum(e, ...)
    fn h(e: [4 D]) -> [4]:
        return e.frobnicate(1)
    #            ^^^^^^^^^^ E0107: tensor [4 D] has no field 'frobnicate'
    """)
