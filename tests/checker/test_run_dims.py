"""Issue 25: named dims known only at run time — bound by a reader's shape,
a cast that names them or an Int used as a size; consistent with themselves,
accepted where they meet a static dim (and checked there at run time), an
error where two bound apart meet. Exact codes, ranges and messages
(tests/annotations.py); the run-time halves are in tests/test_run_dims_run.py."""

from __future__ import annotations

import textwrap
from functools import partial

from annotations import check_annotated
from test_ported_programs import local_type

from quiver.checker import check_text, ide

check = partial(check_annotated, dedent=True)


def checks_of(src: str, fn: str) -> dict[str, list[tuple[str, str, tuple]]]:
    text = textwrap.dedent(src).lstrip("\n")
    a = check_text(text)
    assert not a.internal_errors and not [d for d in a.diagnostics if d.code != "W0101"], a.diagnostics
    (item,) = [i for i in a.bodies if i.name.text == fn]
    base = a.slot_of_item[item].start
    out: dict[str, list[tuple[str, str, tuple]]] = {}
    for node, checks in a.bodies[item].dim_checks.items():
        written = text[base + node.span.start : base + node.span.end]
        out[written] = [(c.what, c.declared, tuple(str(d) for d in (c.count or c.dims))) for c in checks]
    return out


LOADS = """
dim D = 64
dim C = 10

fn main():
    x = load_npz("data/digits.npz", "x", [n D])
    y = load_npz("data/digits.npz", "y", [n] Index[C])
    print(x, y)
"""


def test_a_reader_binds_a_new_name_and_a_second_reader_of_that_name_is_checked() -> None:
    check(LOADS)
    assert local_type(LOADS, "main", "x") == "[n D]"
    assert local_type(LOADS, "main", "y") == "[n] Index[C]"
    assert checks_of(LOADS, "main") == {
        'load_npz("data/digits.npz", "y", [n] Index[C])': [("load_npz(): value", "[n] Index[C]", ("n",))]
    }


def test_two_sizes_bound_apart_do_not_line_up_and_the_message_says_how_to_state_they_agree() -> None:
    check(
        """
        dim D = 64

        fn main():
            x = load_npz("a.npz", "x", [n D])
            z = load_npz("b.npz", "x", [m D])
            print(x + z)
        #         ^^^^^ E0202: cannot broadcast [n D] + [m D]: n and m differ (m and n are sizes known only at run time, bound apart; if they agree, say so with a cast, `... as [.. n ..]`, checked at run time)
        """
    )


def test_a_cast_that_names_the_size_states_two_sizes_agree() -> None:
    src = """
    dim D = 64

    fn main():
        x = load_npz("a.npz", "x", [n D])
        z = load_npz("b.npz", "x", [m D]) as [n D]
        print(x + z)
    """
    check(src)
    assert checks_of(src, "main") == {
        'load_npz("b.npz", "x", [m D]) as [n D]': [("cast: value", "[n D]", ("n", "None"))]
    }


def test_a_run_time_dim_meets_a_constant_at_a_call_and_is_checked_there() -> None:
    src = """
    dim D = 64
    dim B = 32

    fn first(x: [B D]) -> [D]:
        return x[0]

    fn main():
        x = load_npz("a.npz", "x", [n D])
        print(first(x))
    """
    check(src)
    assert checks_of(src, "main") == {"x": [("first(): argument 'x'", "[B D]", ("B", "None"))]}


def test_generic_dims_bind_to_a_run_time_dim_and_the_result_keeps_it() -> None:
    src = """
    dim D = 64
    dim C = 10

    fn logits(x: [b D], w: [D C]) -> [b C]:
        return x @ w

    fn main():
        x = load_npz("a.npz", "x", [n D])
        y = load_npz("a.npz", "y", [n] Index[C])
        out = logits(x, zeros([D C]))
        print(cross_entropy(out, y, over=C))
    """
    check(src)
    assert local_type(src, "main", "out") == "[n C]"


def test_an_int_is_a_size_and_shapes_made_from_one_value_line_up() -> None:
    src = """
    dim D = 3

    fn main():
        n = 5
        a = zeros([n D])
        b = ones([n D])
        c = a + b
        t = tril(ones([n n]))
        i = arange(n)
        p = randperm(n, seed=0)
        print(c, t, i, p, eye(n))
    """
    check(src)
    assert local_type(src, "main", "c") == "[n D]"
    assert local_type(src, "main", "t") == "[n n]"
    assert local_type(src, "main", "i") == "[n] Index[n]"
    assert local_type(src, "main", "p") == "[n] Index[n]"


def test_an_int_reassigned_gives_another_size() -> None:
    check(
        """
        dim D = 3

        fn main():
            n = 5
            a = zeros([n D])
            n = n + 1
            b = zeros([n D])
            print(a + b)
        #         ^^^^^ E0202: cannot broadcast [n D] + [n D]: n and n differ (two sizes known only at run time, both named n but bound apart; if they agree, say so with a cast, `... as [.. n ..]`, checked at run time)
        """
    )


def test_an_unknown_capitalised_name_in_a_cast_is_still_an_unknown_dim() -> None:
    check(
        """
        fn f(x: [b 4], i: Int, j: Int) -> Int:
            print(x[i:j] as [Kk 4])
        #                    ^^ E0109: unknown dim 'Kk'
            return 0
        """
    )


def test_a_run_time_dim_on_one_path_only_is_unknown_after_the_join() -> None:
    src = """
    dim D = 4

    fn f(c: Bool) -> Int:
        if c:
            x = load_npy("a.npy", [n D])
        else:
            x = load_npy("b.npy", [m D])
        y = x
        print(y)
        return 0
    """
    check(src)
    assert local_type(src, "f", "y") == "[? D]"


def test_hover_says_where_a_run_time_dim_comes_from() -> None:
    text = textwrap.dedent(LOADS).lstrip("\n")
    offset = text.index("print(x") + len("print(")
    h = ide.hover(check_text(text), offset)
    assert h is not None
    assert h.markdown == (
        "```quiver\n(local) x: [n D]\n```\n\n`n`: a size known only at run time, from load_npz (line 5)"
    )


def test_load_chars_gives_ids_and_a_vocabulary_that_decodes_them() -> None:
    src = """
    dim V = 80

    fn main():
        ids, vocab = load_chars("tiny.txt", [n] Index[V])
        s = decode(vocab, ids[:10])
        p = encode(vocab, "ROMEO")
        print(s, p)
    """
    check(src)
    assert local_type(src, "main", "vocab") == "Vocab[V]"
    assert local_type(src, "main", "s") == "Str"
    assert local_type(src, "main", "p") == "[?] Index[V]"


def test_a_reader_checks_its_arguments() -> None:
    check(
        """
        dim D = 4

        fn main():
            print(load_npy(3, [n D]))
        #                  ^ E0301: path of load_npy: expected Str, found number Int
            print(load_csv("t.csv", [n D E] , header=True))
        #                                ^ E0109: unknown dim 'E'
        """
    )


def test_an_int_parameter_sizes_the_types_and_each_call_binds_it() -> None:
    src = """
    dim D = 4

    fn causal_mask(size: Int) -> [size size] Bool:
        return tril(ones([size size] Bool))

    fn main():
        t = 3
        a = causal_mask(t)
        b = causal_mask(5)
        c = causal_mask(D)
        s = randn([t t], seed=0)
        print(where(a, s, 0.0), b, c)
    """
    check(src)
    assert local_type(src, "main", "a") == "[t t] Bool"
    assert local_type(src, "main", "b") == "[5 5] Bool"
    assert local_type(src, "main", "c") == "[D D] Bool"


def test_a_size_from_an_expression_is_a_run_time_dim_of_the_call() -> None:
    src = """
    fn causal_mask(size: Int) -> [size size] Bool:
        return tril(ones([size size] Bool))

    fn main():
        t = 3
        a = causal_mask(t + 1)
        b = causal_mask(t + 1)
        print(a, b)
    """
    check(src)
    assert local_type(src, "main", "a") == "[size size] Bool"
    check(
        """
        fn causal_mask(size: Int) -> [size size] Bool:
            return tril(ones([size size] Bool))

        fn main():
            t = 3
            print(causal_mask(t + 1) == causal_mask(t + 1))
        #         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0202: cannot broadcast [size size] Bool == [size size] Bool: size and size differ (two sizes known only at run time, both named size but bound apart; if they agree, say so with a cast, `... as [.. size ..]`, checked at run time)
        """
    )


def test_an_extern_fn_may_return_sizes_of_its_own_one_per_call() -> None:
    src = """
    dim D = 3

    extern fn rows(k: Int) -> [n D] from "loader:rows"

    fn main():
        a = rows(4)
        print(sum(a, over=D))
    """
    check(src)
    assert local_type(src, "main", "a") == "[n D]"
    check(
        """
        dim D = 3

        extern fn rows(k: Int) -> [n D] from "loader:rows"

        fn main():
            print(rows(4) + rows(5))
        #         ^^^^^^^^^^^^^^^^^ E0202: cannot broadcast [n D] + [n D]: n and n differ (two sizes known only at run time, both named n but bound apart; if they agree, say so with a cast, `... as [.. n ..]`, checked at run time)
        """
    )


def test_a_run_time_dim_is_its_size_as_a_number() -> None:
    src = """
    dim D = 64

    fn main():
        x = load_npz("data/digits.npz", "x", [n D])
        p = randperm(n, seed=0)
        shuffled = x[p]
        print(n, arange(n), shuffled)
    """
    check(src)
    assert local_type(src, "main", "p") == "[n] Index[n]"
    assert local_type(src, "main", "shuffled") == "[n D]"
    text = textwrap.dedent(src).lstrip("\n")
    h = ide.hover(check_text(text), text.index("randperm(n") + len("randperm("))
    assert h is not None and h.markdown == (
        "```quiver\n(size) n: Int\n```\n\n`n`: a size known only at run time, from load_npz (line 4)"
    )


def test_topk_takes_an_int_k_as_a_size_known_at_run_time() -> None:
    src = """
    dim V = 8

    fn largest(x: [b V], k: Int) -> [b k]:
        v, i = topk(x, k, over=V)
        return v

    fn main():
        k = 3
        v, i = topk(randn([2 V], seed=0), k, over=V)
        print(v, i, largest(randn([2 V], seed=0), 2))
    """
    check(src)
    assert local_type(src, "main", "v") == "[2 k]"
    assert local_type(src, "main", "i") == "[2 k] Index[V]"


def test_vocab_is_a_type_of_parameters() -> None:
    check(
        """
        dim V = 64

        fn show(vocab: Vocab[V], ids: [n] Index[V]) -> Str:
            return decode(vocab, ids)

        fn bad(vocab: Vocab) -> Int:
        #             ^^^^^ E0309: element type Vocab: Vocab needs the dim its ids index, as in Vocab[V]
            return 0
        """
    )


def test_a_fixed_count_cut_from_a_run_time_size_is_not_known() -> None:
    src = """
    dim D = 4
    dim K = 3

    fn main():
        x = load_npy("a.npy", [n D])
        a = x[-K:]
        b = x[:-K]
        c = x[::2]
        print(a, b, c)
    """
    check(src)
    # torch keeps fewer than K rows when n < K: `?`, checked where it meets a known dim
    assert local_type(src, "main", "a") == "[? D]"
    assert local_type(src, "main", "b") == "[(n-3) D]"
    assert local_type(src, "main", "c") == "[((n+1)/2) D]"
