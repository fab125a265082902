"""The checker on models that take dims and options (issue 23): every error
of their headers, types, members and methods with its exact code, range and
message, one diagnostic per mistake; instances as types (two instances are
two types; generic dims bound from a model argument); dim defaults, dims by
name and Float options; `Grad[Linear[D, H]]`; gradients, optimizers and the
param-read analysis (E1107, W1101) on models holding instances and stacks of
them. `spanned(src)` is (code, message, the text it underlines) of each
diagnostic of src."""

from __future__ import annotations

import pytest
from annotations import spanned

from quiver.checker import Analyzer, check_text

LINEAR = """\
dim D = 4
dim H = 8
dim C = 3

model Linear[I, O, bias: Bool = True]:
    param weight: [I O] = zeros
    param bias: [O] = zeros if bias

    fn forward(self, x: [.. I]) -> [.. O]:
        y = x @ self.weight
        if bias:
            y = y + self.bias
        return y
"""


def clean(src: str) -> None:
    assert spanned(src) == []


# ====================================================================== the dims a model is given


def dims_error(model: str) -> str:
    return f"Linear takes a dim for I here (a name, a number or (dim arithmetic)), found the type {model}"


@pytest.mark.parametrize("word", ["Float", "Int", "Bool", "Mode", "f64", "NonNeg"])
def test_a_type_given_as_a_dim_is_e0910_in_every_place(word: str) -> None:
    # in a signature an unknown name is a generic dim, but a type's name is not one
    assert spanned(LINEAR + f"\nfn f(l: Linear[{word}, H]) -> [D]:\n    return zeros([D])\n") == [
        ("E0910", dims_error(word), word)
    ]
    assert spanned(LINEAR + f"\nmodel M:\n    param l: Linear[{word}, H]\n") == [("E0910", dims_error(word), word)]
    assert spanned(LINEAR + f"\nfn main():\n    l = Linear[{word}, H].init(seed=0)\n    print(l)\n") == [
        ("E0910", dims_error(word), word)
    ]


def test_a_type_with_brackets_given_as_a_dim_is_e0910() -> None:
    assert spanned(LINEAR + "\nfn f(l: Linear[[D], H]) -> [D]:\n    return zeros([D])\n") == [
        ("E0910", dims_error("[D]"), "[D]")
    ]
    assert spanned(LINEAR + "\nfn f(l: Linear[Grad[Linear[D, H]], H]) -> [D]:\n    return zeros([D])\n") == [
        ("E0910", dims_error("Grad[Linear[D, H]]"), "Grad[Linear[D, H]]")
    ]


CONV = """\
dim C = 3

model Conv[Ci, Co, K, stride = 1, padding = 0]:
    param weight: [Co Ci K K] = zeros

    fn forward(self, x: [b Ci h w]) -> [b Co ((h+2*padding-K)/stride+1) ((w+2*padding-K)/stride+1)]:
        return conv2d(x, self.weight, stride=stride, padding=padding)
"""


def test_a_dim_given_as_0_is_its_default_0() -> None:
    # the header may give a dim the default 0; writing it out is the same instance
    src = (
        CONV
        + """
fn same(c: Conv[C, 8, 3], d: Conv[C, 8, 3, stride=1, padding=0]) -> Conv[C, 8, 3, 1, 0]:
    return d

fn main():
    c = Conv[C, 8, 3, padding=0].init(seed=0)
    print(same(c, c), c(zeros([2 C 8 8])))
"""
    )
    clean(src)


def test_an_instance_shows_its_dims_as_its_type_writes_them() -> None:
    # (2*E) and (E*2) are one dim, so one type; each use still reads as written,
    # whichever was met first, and an edit elsewhere does not change that
    src = """\
dim E = 4

model Linear[I, O]:
    param weight: [I O] = zeros

fn f1(l: Linear[(2*E), E]) -> [E]:
    return l.weight

fn f2(l: Linear[(E*2), E]) -> [E]:
    return l.weight
"""
    assert spanned(src) == [
        ("E0201", "return value: expected [E], found [(2*E)=8 E]", "l.weight"),
        ("E0201", "return value: expected [E], found [(E*2)=8 E]", "l.weight"),
    ]
    analyzer = Analyzer()
    analyzer.update(src)
    edited = src.replace("fn f1(l: Linear[(2*E), E]) -> [E]:\n    return l.weight\n\n", "")
    incremental = [(d.code, d.message) for d in analyzer.update(edited).diagnostics]
    assert incremental == [(d.code, d.message) for d in check_text(edited).diagnostics]
    assert incremental == [("E0201", "return value: expected [E], found [(E*2)=8 E]")]


# ====================================================================== dim counts, options and headers


@pytest.mark.parametrize(
    "written, expected",
    [
        ("Linear[D]", ("E0910", "Linear takes 2 dims (I, O), found 1", "Linear[D]")),
        ("Linear[D, H, C]", ("E0910", "Linear takes 2 dims (I, O), found 3", "Linear[D, H, C]")),
        ("Linear", ("E0910", "Linear takes 2 dims (I, O), found 0", "Linear")),
        ("Linear[D, H, bais=False]", ("E0911", "Linear has no option 'bais'; did you mean 'bias'?", "bais")),
        ("Linear[D, H, bias=1.0]", ("E0911", "Linear takes True or False for its option bias", "bias=1.0")),
        ("Linear[D, H, bias=False, bias=True]", ("E0911", "Linear takes its option bias once", "bias=True")),
        ("Linear[D, H, I=D]", ("E0910", "Linear is given its dim I twice", "I=D")),
    ],
)
def test_a_wrong_instance_is_one_diagnostic_in_a_signature_a_model_and_a_body(written: str, expected) -> None:
    # and its uses stay silent: `l` is of no known type
    in_fn = LINEAR + f"\nfn f(l: {written}, x: [b D]) -> [b H]:\n    return l(x) + l.weight[0] + l.nothing\n"
    assert spanned(in_fn) == [expected]
    in_model = LINEAR + f"\nmodel M:\n    param l: {written}\n\nfn g(m: M) -> [H]:\n    return m.l.bias\n"
    assert spanned(in_model) == [expected]


def test_a_model_without_dims_takes_none() -> None:
    src = "dim D = 4\n\nmodel Plain:\n    param w: [D] = zeros\n\nfn f(p: Plain[D], q: Plain[bias=False]) -> [D]:\n    return p.w\n"
    assert spanned(src) == [
        ("E0910", "Plain takes no dims, found Plain[...]", "Plain[D]"),
        ("E0911", "Plain has no options, found bias=", "bias"),
    ]


def test_init_needs_the_dims() -> None:
    src = (
        LINEAR
        + "\nfn main():\n    a = Linear.init(seed=0)\n    b = Linear[D].init(seed=0)\n    print(a.weight, b.weight)\n"
    )
    assert spanned(src) == [
        (
            "E0910",
            "Linear takes 2 dims (I, O): write Linear[I, O].init(...) with the dims it is made for",
            "Linear",
        ),
        ("E0910", "Linear takes 2 dims (I, O), found 1", "Linear[D]"),
    ]


@pytest.mark.parametrize(
    "header, expected",
    [
        ("Bad[bias: Bool = True, I]", ("E0912", "dim I comes after an option: a model's dims come first", "I")),
        ("Bad[I, I]", ("E0912", "'I' is declared twice in Bad's header", "I")),
        (
            "Bad[I, k = 1.5]",
            (
                "E0912",
                "the default of dim k must be a whole number, a dim before it, a Bool option (1 when True), or "
                "+ - * // % of those, as in k = 1 or k = K // 2 (found 1.5)",
                "1.5",
            ),
        ),
        (
            "Bad[I, k = 1, J]",
            (
                "E0912",
                "dim J has no default but comes after k, which has one: the dims with defaults come last",
                "J",
            ),
        ),
        (
            "Bad[I, bias: Bool]",
            ("E0912", "option bias of Bad needs a default, True or False: bias: Bool = True", "bias: Bool"),
        ),
        (
            "Bad[I, bias: Int = 1]",
            (
                "E0912",
                "option bias of Bad must be a Bool, a Float or a DType, as in bias: Bool = True (found Int)",
                "Int",
            ),
        ),
        (
            "Bad[I, eps: Float = True]",
            ("E0912", "option eps of Bad needs a number as its default: eps: Float = 0.1", "True"),
        ),
        (
            "Bad[D, I]",
            (
                "E0912",
                "the model's dim D has the name of a dim constant: inside the model it would mean two things",
                "D",
            ),
        ),
    ],
)
def test_bad_headers_are_e0912(header: str, expected) -> None:
    src = (
        f"dim D = 4\n\nmodel {header}:\n    param w: [I] = zeros\n\nfn f(b: Bad[4, 4]) -> [4]:\n    return zeros([4])\n"
    )
    found = spanned(src)
    assert found[0] == expected
    assert all(code == "E0912" or code == "E0910" for code, _, _ in found), found


def test_a_member_using_a_dim_the_model_does_not_take_is_e0207() -> None:
    src = "model Linear[I, Oo]:\n    param weight: [I O] = zeros\n    param bias: [K] = zeros\n"
    assert spanned(src) == [
        ("E0207", "model shapes use integers and dim constants; 'O' is not a dim; did you mean 'Oo'?", "O"),
        ("E0207", "model shapes use integers and dim constants; 'K' is not a dim", "K"),
    ]


def test_member_conditions_are_e0913() -> None:
    assert spanned("model L[I, bias: Bool = True]:\n    param w: [I] = zeros if bais\n") == [
        ("E0913", "'bais' is not an option of L; did you mean 'bias'?", "bais")
    ]
    assert spanned("model L[I]:\n    param w: [I] = zeros if bia\n") == [
        ("E0913", "'bia' is not an option of L, which has none", "bia")
    ]
    assert spanned("model L[I, bias: Bool = True, act: Bool = False]:\n    param w: [I] = zeros if J\n") == [
        ("E0913", "'J' is not an option of L (its options: bias, act)", "J")
    ]


# ====================================================================== members under options


def test_a_member_under_a_float_option_is_e0913_that_says_so() -> None:
    assert spanned("model LN[E, eps: Float = 1e-5]:\n    param weight: [E] = ones if eps\n") == [
        ("E0913", "'eps' is a Float option of LN; a member's condition is a Bool option, and LN has none", "eps")
    ]
    assert spanned("model LN[E, eps: Float = 1e-5, affine: Bool = True]:\n    param weight: [E] = ones if eps\n") == [
        (
            "E0913",
            "'eps' is a Float option of LN; a member's condition is a Bool option (its Bool options: affine)",
            "eps",
        )
    ]


def test_reading_an_absent_member_is_e0914() -> None:
    src = (
        LINEAR
        + """
model M:
    param a: Linear[D, H, bias=False]

fn f(l: Linear[D, H, bias=False], m: M, x: [D]) -> [H]:
    return x @ l.weight + l.bias + m.a.bias
"""
    )
    message = "Linear[D, H, bias=False] has no field 'bias': it exists only when bias=True"
    assert spanned(src) == [("E0914", message, "bias"), ("E0914", message, "bias")]


def test_a_member_under_not_an_option() -> None:
    src = """\
dim D = 4

model Lin[I, bias: Bool = True]:
    param weight: [I I] = zeros
    param bias: [I] = zeros if bias
    param scale: [I] = ones if not bias

fn f(a: Lin[D], b: Lin[D, bias=False]) -> [D]:
    return a.bias + b.scale + a.scale
"""
    assert spanned(src) == [("E0914", "Lin[D] has no field 'scale': it exists only when bias=False", "scale")]


def test_inside_a_method_an_optional_member_is_read_under_its_option() -> None:
    ok = LINEAR
    clean(ok)
    outside = LINEAR.replace("        if bias:\n            y = y + self.bias\n", "        y = y + self.bias\n")
    wrong_branch = LINEAR.replace("        if bias:\n", "        if not bias:\n")
    message = (
        "Linear[I, O] (self, any instance) has no field 'bias': it exists only when bias=True; read it under `if bias:`"
    )
    assert spanned(outside) == [("E0914", message, "bias")]
    assert spanned(wrong_branch) == [("E0914", message, "bias")]


# ====================================================================== applying a layer


MLP = (
    LINEAR
    + """
model Mlp:
    param fc1: Linear[D, H]
    param fc2: Linear[H, C, bias=False]

    fn forward(self, x: [b D]) -> [b C]:
        return self.fc2(relu(self.fc1(x)))
"""
)


def test_a_layer_applied_to_the_wrong_size_names_both_dims() -> None:
    clean(MLP)
    # reported at the argument, in the layer's own dims; the call's result is then not known (no cascade)
    wrong = MLP.replace("self.fc2(relu(self.fc1(x)))", "self.fc2(relu(self.fc1(x @ zeros([D H]))))")
    assert spanned(wrong) == [
        ("E0201", "argument 'x' of Linear.forward: expected [b D], found [b H]", "x @ zeros([D H])")
    ]
    twice = MLP.replace("self.fc2(relu(self.fc1(x)))", "self.fc2(self.fc2(relu(self.fc1(x))))")
    assert spanned(twice) == [
        ("E0201", "argument 'x' of Linear.forward: expected [b H], found [b C]", "self.fc2(relu(self.fc1(x)))")
    ]


def test_calls_of_a_layer_and_its_methods() -> None:
    src = """\
dim D = 4

model Scale[K]:
    param s: [K] = ones

    fn forward(self, x: [K]) -> [K]:
        return x * self.s

    fn twice(self, x: [K]) -> [K]:
        return self(self.forward(x))

model Plain:
    param w: [D] = zeros

fn main():
    m = Scale[D].init(seed=0)
    p = Plain.init(seed=0)
    print(m(ones([D])), m.twice(ones([D])))
    print(m(ones([D]), 2), m(), m.forward(ones([3])), m.thrice(ones([D])), p(ones([D])))
"""
    assert spanned(src) == [
        ("E0401", "Scale.forward takes 1 positional argument, found 2", "2"),
        ("E0401", "Scale.forward takes 1 positional argument, found 0", "()"),
        ("E0201", "argument 'x' of Scale.forward: expected [D], found [3]", "ones([3])"),
        (
            "E0409",
            "m.thrice cannot be called: model Scale[D] has no method 'thrice' (its methods: forward, twice)",
            "m.thrice",
        ),
        (
            "E0409",
            "p cannot be called: model Plain has no method forward (a fn forward(self, ...) inside the model)",
            "p",
        ),
    ]


@pytest.mark.parametrize(
    "method, expected",
    [
        (
            "fn forward(x: [I]) -> [I]:\n        return x",
            (
                "E0915",
                "the first parameter of method forward is self, without a type (it is the Lin), found 'x: [I]'",
                "x: [I]",
            ),
        ),
        (
            "fn forward() -> [I]:\n        return zeros([I])",
            (
                "E0915",
                "the first parameter of method forward is self, without a type (it is the Lin), found none",
                "forward",
            ),
        ),
        (
            "fn forward(self: Lin[I], x: [I]) -> [I]:\n        return x",
            (
                "E0915",
                "the first parameter of method forward is self, without a type (it is the Lin), found 'self: Lin[I]'",
                "self: Lin[I]",
            ),
        ),
        (
            "fn forward(self, x) -> [I]:\n        return zeros([I])",
            ("E0415", "parameter 'x' needs a type, as in x: [b D]", "x"),
        ),
        (
            "fn weight(self) -> [I I]:\n        return self.weight",
            ("E0915", "Lin already has a member or method 'weight'", "weight"),
        ),
    ],
)
def test_method_problems(method: str, expected) -> None:
    src = f"dim D = 4\n\nmodel Lin[I]:\n    param weight: [I I] = zeros\n\n    {method}\n\nfn main():\n    m = Lin[D].init(seed=0)\n    print(m.weight)\n"
    assert spanned(src) == [expected]


def test_a_method_declared_twice() -> None:
    src = """\
model Lin[I]:
    param weight: [I I] = zeros

    fn forward(self, x: [I]) -> [I]:
        return x

    fn forward(self, x: [I]) -> [I]:
        return x @ self.weight
"""
    assert spanned(src) == [("E0915", "Lin already has a member or method 'forward'", "forward")]


def test_self_outside_a_model_is_e0915() -> None:
    assert spanned("fn f(self, x: [4]) -> [4]:\n    return x\n") == [
        ("E0915", "only a method (a fn inside a model) has self, as its first parameter; f is not one", "self")
    ]


# ====================================================================== methods


def test_self_written_after_another_parameter_is_one_e0915_and_calls_stay_silent() -> None:
    src = """\
dim D = 4

model Lin[I]:
    param weight: [I I] = zeros

    fn forward(x: [I], self) -> [I]:
        return x @ self.weight

fn main():
    l = Lin[D].init(seed=0)
    print(l(ones([D])), l.forward(ones([D])))
"""
    assert spanned(src) == [("E0915", "self is the first parameter of a method, and only the first", "self")]


# ====================================================================== instances as types


def test_generic_dims_bound_from_a_model_argument() -> None:
    src = (
        LINEAR
        + """
fn apply(l: Linear[i, o], x: [b i]) -> [b o]:
    return l(x)

fn shape(l: Linear[i, o]) -> [i o]:
    return l.weight

fn halve(l: Linear[(2*i), i], x: [b (2*i)]) -> [b i]:
    return l(x)

fn main():
    a = Linear[D, H].init(seed=0)
    e = Linear[(2*D), D].init(seed=1)
    y = apply(a, ones([2 D])) + shape(a)[0] + zeros([2 H])
    z = halve(e, ones([3 8])) + zeros([3 D])
    print(y, z, apply(a, ones([2 H])))
"""
    )
    assert spanned(src) == [
        ("E0205", "argument 'x' of apply: expected [2 D], found [2 H] (D from argument 'l', not H)", "ones([2 H])")
    ]


def test_two_instances_are_two_types() -> None:
    src = (
        LINEAR
        + """
fn f(a: Linear[D, H], b: Linear[H, D], c: Linear[D, H, bias=False]) -> Linear[D, H]:
    return b

fn g(a: Linear[D, H], c: Linear[D, H, bias=False]) -> Linear[D, H]:
    return c

fn same(a: Linear[D, H, bias=True], b: Linear[4, 8]) -> Linear[D, H]:
    return a

fn generic(l: Linear[i, o]) -> [i o]:
    return l.weight

fn main():
    print(generic(Linear[D, H, bias=False].init(seed=0)))
"""
    )
    assert spanned(src) == [
        ("E0904", "return value: expected Linear[D, H], found model Linear[H, D]", "b"),
        ("E0904", "return value: expected Linear[D, H], found model Linear[D, H, bias=False]", "c"),
        # the options are part of the type: Linear[i, o] is an instance with a bias
        (
            "E0904",
            "argument 'l' of generic: expected Linear[i, o], found model Linear[D, H, bias=False]",
            "Linear[D, H, bias=False].init(seed=0)",
        ),
    ]


def test_shapes_of_any_rank_in_user_functions() -> None:
    src = """\
dim D = 4

fn rms(x: [.. d], gain: [d]) -> [.. d]:
    return x / sqrt(mean(x * x, over=d, keep=True) + 1e-6) * gain

fn both(x: [.. d], y: [.. d]) -> [.. d]:
    return x + y

fn main():
    a = rms(ones([2 3 D]), ones([D])) + zeros([2 3 D])
    b = rms(ones([D]), ones([D])) + zeros([D])
    print(a, b, rms(ones([2 D]), ones([3])), both(ones([2 D]), ones([3 D])), both(ones([2 D]), ones([2 D])))
"""
    assert spanned(src) == [
        ("E0205", "argument 'gain' of rms: expected [D], found [3] (D from argument 'x', not 3)", "ones([3])"),
        ("E0201", "argument 'y' of both: expected [2 D], found [3 D]", "ones([3 D])"),
    ]
    in_body = "fn g(x: [.. d]) -> [.. d]:\n    y = zeros([.. d])\n    return y\n"
    assert spanned(in_body) == [("E0216", "[.. d] is for a fn's parameters and result, not a fn's body", "[.. d]")]
    in_model = "model M:\n    param w: [.. 4] = zeros\n"
    assert spanned(in_model) == [("E0216", "[.. 4] is for a fn's parameters and result, not a model's field", "[.. 4]")]


def test_dims_with_defaults_and_by_name() -> None:
    src = (
        CONV
        + """
fn positional(c: Conv[C, 8, 3, stride=2]) -> Conv[C, 8, 3, 2, 0]:
    return c

fn by_name(c: Conv[C, 8, 3, padding=1, stride=2]) -> Conv[C, 8, 3, 2, 1]:
    return c

fn shapes(c: Conv[C, 8, 3, stride=2, padding=1], x: [2 C 8 8]) -> [2 8 4 4]:
    return c(x)

fn wrong(c: Conv[C, 8, 3, stride=2]) -> Conv[C, 8, 3]:
    return c

fn bad(p: Conv[C, 8], q: Conv[C, 8, stride=2], r: Conv[C, 8, 3, 2, stride=2], s: Conv[C, 8, 3, 2, 1, 5]):
    print(p, q, r, s)

fn named(t: Conv[C, 8, 3, strid=2], u: Conv[C, 8, 3, stride=True], v: Conv[C, 8, 3, stride=Float]):
    print(t, u, v)
"""
    )
    assert spanned(src) == [
        ("E0904", "return value: expected Conv[C, 8, 3, 1, 0], found model Conv[C, 8, 3, 2, 0]", "c"),
        ("E0910", "Conv takes 3 to 5 dims (Ci, Co, K, stride, padding), found 2", "Conv[C, 8]"),
        ("E0910", "Conv needs its dim K", "Conv[C, 8, stride=2]"),
        ("E0910", "Conv is given its dim stride twice", "stride=2"),
        ("E0910", "Conv takes 3 to 5 dims (Ci, Co, K, stride, padding), found 6", "Conv[C, 8, 3, 2, 1, 5]"),
        ("E0911", "Conv has no option 'strid'; did you mean 'stride'?", "strid"),
        ("E0910", "Conv takes a dim for stride (a name, a number or (dim arithmetic))", "stride=True"),
        (
            "E0910",
            "Conv takes a dim for stride here (a name, a number or (dim arithmetic)), found the type Float",
            "Float",
        ),
    ]


def test_float_options() -> None:
    src = """\
dim D = 4

model Norm[E, eps: Float = 1e-5, affine: Bool = True]:
    param weight: [E] = ones if affine

    fn forward(self, x: [.. E]) -> [.. E]:
        y = x / sqrt(mean(x * x, over=E, keep=True) + eps)
        if affine:
            y = y * self.weight
        return y

fn a(l: Norm[D, eps=1e-6], x: [2 D]) -> [2 D]:
    return l(x)

fn same(l: Norm[D, eps=1e-5]) -> Norm[D]:
    return l

fn whole(l: Norm[D, eps=2]) -> Norm[D, eps=2.0]:
    return l

fn differ(l: Norm[D, eps=1e-6]) -> Norm[D]:
    return l

fn bad(p: Norm[D, eps=True], q: Norm[D, affine=1.0], r: Norm[D, eps=1e-6, eps=1e-5]):
    print(p, q, r)
"""
    assert spanned(src) == [
        ("E0904", "return value: expected Norm[D], found model Norm[D, eps=1e-06]", "l"),
        ("E0911", "Norm takes a number for its option eps", "eps=True"),
        ("E0911", "Norm takes True or False for its option affine", "affine=1.0"),
        ("E0911", "Norm takes its option eps once", "eps=1e-5"),
    ]


# ====================================================================== binding generic dims from a model


def test_an_argument_that_does_not_fit_binds_nothing_for_those_after_it() -> None:
    src = (
        LINEAR
        + """
fn halve(l: Linear[(2*i), i], x: [b (2*i)]) -> [b i]:
    return l(x)

fn square(x: [i i], y: [i]) -> [i]:
    return y

fn main():
    c = Linear[H, 3].init(seed=0)
    print(halve(c, ones([2 H])), square(ones([2 3]), ones([3])))
"""
    )
    assert spanned(src) == [
        ("E0904", "argument 'l' of halve: expected Linear[(2*i), i], found model Linear[H, 3]", "c"),
        ("E0205", "argument 'x' of square: expected [2 2], found [2 3] (2 from argument 'x', not 3)", "ones([2 3])"),
    ]


# ====================================================================== loops


def test_an_error_in_a_loop_that_changes_its_variable_is_reported() -> None:
    # the error makes x unknown at the end of the body; the pass that is kept
    # still starts from the type the loop is entered with
    src = """\
dim D = 4
dim H = 8

model Lin[I, O]:
    param weight: [I O] = zeros

    fn forward(self, x: [.. I]) -> [.. O]:
        return x @ self.weight

fn plain(x: [b 4]) -> [b 4]:
    for i in range(3):
        x = x @ zeros([5 4])
    return x

fn layer(l: Lin[H, H], x: [b D]) -> [b H]:
    for i in range(3):
        x = l(x)
    return x
"""
    assert spanned(src) == [
        ("E0203", "matmul [b 4] @ [5 4]: inner dims 4 and 5 differ", "x @ zeros([5 4])"),
        ("E0201", "argument 'x' of Lin.forward: expected [b H], found [b D]", "x"),
    ]


def test_a_stack_of_instances_and_loops_over_it() -> None:
    src = (
        LINEAR
        + """
dim L = 3

model Deep:
    param blocks: [L] Linear[H, H]

fn run(m: Deep, x: [b H]) -> [b H]:
    h = x
    for blk in m.blocks:
        h = blk(h)
    for i in range(L):
        h = m.blocks[i](h)
    return h + m.blocks[0].bias

fn wrong(m: Deep, x: [b D]) -> [b H]:
    for blk in m.blocks:
        x = blk(x)
    return m.blocks(x)
"""
    )
    assert spanned(src) == [
        ("E0201", "argument 'x' of Linear.forward: expected [b H], found [b D]", "x"),
        (
            "E0409",
            "m.blocks cannot be called: it is a stack, [L] Linear[H, H]; call one of them, as in m.blocks[i](...)",
            "m.blocks",
        ),
    ]


# ====================================================================== gradients of instances


def test_the_gradient_of_an_instance_has_its_params() -> None:
    src = (
        LINEAR
        + """
fn f(g: Grad[Linear[D, H, bias=False]], h: Grad[Linear[D, H]]) -> [H]:
    w = h.weight @ zeros([H D])
    return h.bias + g.bias + w[0] @ zeros([D H]) + g.nothing
"""
    )
    assert spanned(src) == [
        ("E0914", "Grad[Linear[D, H, bias=False]] has no field 'bias': it exists only when bias=True", "bias"),
        ("E0107", "Grad[Linear[D, H, bias=False]] has no field 'nothing'", "nothing"),
    ]


# ====================================================================== training


def test_changing_an_instance_made_here_says_the_type_to_take() -> None:
    src = (
        LINEAR
        + """
fn main():
    fc = Linear[D, H].init(seed=0)
    fc.weight = zeros([D H])
"""
    )
    assert spanned(src) == [
        (
            "E0501",
            "cannot assign fc.weight: 'fc' is not a parameter but a model made here, and a model changes only"
            " through a mut parameter: do this in a fn that takes `mut fc: Linear[D, H]`, and call it",
            "fc.weight",
        )
    ]


NET = (
    LINEAR
    + """
dim L = 2

model Net:
    param fc: Linear[D, H]
    param blocks: [L] Linear[H, H, bias=False]
    param head: Linear[H, C]

    fn forward(self, x: [.. D]) -> [.. C]:
        h = relu(self.fc(x))
        for blk in self.blocks:
            h = h + relu(blk(h))
        return self.head(h)

fn loss(m: Net, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=C)

fn one(m: Net, x: [D], y: [] Index[C]) -> [] NonNeg:
    return cross_entropy(m(x), y, over=C)

fn head_only(m: Net, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    return cross_entropy(m.head(stop_grad(m.fc(x))), y, over=C)
"""
)


def test_training_a_model_of_instances_and_stacks() -> None:
    src = (
        NET
        + """
fn train(mut m: Net, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    l, g = value_and_grad(loss, m, x, y)
    gw = g.fc.weight + zeros([D H])
    gb = g.blocks[0].weight + zeros([H H])
    gh = g.head.bias + zeros([C])
    g2 = grad(loss, m, x, y)
    l3, g3 = value_and_grad(head_only, m, x, y, wrt=[head])
    l4, dl = jvp(loss, m, g, x, y)
    opt = Adam(m, lr=0.01)
    opt.step(m, g)
    m -= 0.1 * g2
    m.blocks[0].weight -= 0.1 * g.blocks[0].weight
    m.fc = Linear[D, H].init(seed=3)
    return l + l3 + relu(l4 + dl) + mean(relu(gw)) + mean(relu(gb)) + mean(relu(gh)) + mean(relu(g3.head.weight))

fn per_example(m: Net, x: [b D], y: [b] Index[C]) -> [b] NonNeg:
    ls, gs = value_and_grad(one, m, x, y, batch=b)
    return norm(gs)

fn sgd(mut m: Net, x: [b D], y: [b] Index[C], mut opt: SGD[Net]):
    opt.step(m, grad(loss, m, x, y))
"""
    )
    clean(src)


def test_gradient_mistakes_on_a_model_of_instances() -> None:
    src = (
        NET
        + """
fn partial(m: Net, x: [b D], y: [b] Index[C]) -> [] NonNeg:
    h = relu(x @ m.fc.weight)
    return cross_entropy(m.head(h), y, over=C)

fn bad(m: Net, x: [b D], y: [b] Index[C], l: Linear[D, H]) -> Grad[Net]:
    l1, g1 = value_and_grad(loss, l, x, y)
    g2 = grad(loss, m, x, y, wrt=[fc.bias])
    g3 = grad(loss, m, x, y, wrt=[nothing])
    g4 = grad(partial, m, x, y)
    print(l1, g1, g2, g3)
    return g4 + grad(loss, m, x, y)
"""
    )
    assert spanned(src) == [
        ("E0904", "the model of loss's first parameter: expected Net, found model Linear[D, H]", "l"),
        ("E1109", "wrt: Net has no param 'fc.bias'", "fc.bias"),
        ("E1109", "wrt: Net has no param 'nothing'", "nothing"),
        # the read analysis counts the params of each instance inside, by path
        ("W1101", "partial never reads param blocks.weight of Net: its gradient is always zero", "partial"),
        ("W1101", "partial never reads param fc.bias of Net: its gradient is always zero", "partial"),
    ]


# ====================================================================== the param-read analysis


def test_w1101_and_e1107_are_per_instance_and_name_it() -> None:
    src = (
        LINEAR
        + """
fn weight_only(l: Linear[D, H], x: [b D]) -> [] NonNeg:
    return mean(relu(x @ l.weight))

fn plain(l: Linear[D, H, bias=False], x: [b D]) -> [] NonNeg:
    return mean(relu(x @ l.weight))

fn nothing(l: Linear[D, H], x: [b D]) -> [] NonNeg:
    return mean(relu(x))

fn generic(l: Linear[i, o], x: [b i]) -> [] NonNeg:
    return mean(relu(x @ l.weight))

fn main():
    a = Linear[D, H].init(seed=0)
    n = Linear[D, H, bias=False].init(seed=0)
    x = ones([2 D])
    l1, g1 = value_and_grad(weight_only, a, x)
    l2, g2 = value_and_grad(plain, n, x)
    l3, g3 = value_and_grad(nothing, a, x)
    l4, g4 = value_and_grad(generic, a, x)
    print(l1, g1, l2, g2, l3, g3, l4, g4)
"""
    )
    assert spanned(src) == [
        ("W1101", "weight_only never reads param bias of Linear[D, H]: its gradient is always zero", "weight_only"),
        # the instance without a bias has nothing left unread
        ("E1107", "nothing reads no param of Linear[D, H]: its gradient would always be zero", "nothing"),
        # a generic fn, differentiated for the instance it is given
        ("W1101", "generic never reads param bias of Linear[D, H]: its gradient is always zero", "generic"),
    ]


# ====================================================================== incremental


def incremental_equals_fresh(*texts: str) -> list[tuple[str, str]]:
    """Each text analysed in turn by one Analyzer; the last one's diagnostics,
    which must be a fresh check's."""
    analyzer = Analyzer()
    for text in texts:
        got = [(d.code, d.message) for d in analyzer.update(text).diagnostics]
        assert got == [(d.code, d.message) for d in check_text(text).diagnostics], text
    return got


def test_a_layer_call_depends_on_the_layers_model() -> None:
    # Head's fields are the same when Lin loses its forward: the body that
    # calls self.fc(x) is checked again all the same
    src = """\
model Lin[I]:
    param w: [I I] = zeros

    fn forward(self, x: [b I]) -> [b I]:
        return x @ self.w

model Head:
    param fc: Lin[4]

    fn forward(self, x: [b 4]) -> [b 4]:
        return self.fc(x)

fn apply(l: Lin[4], x: [b 4]) -> [b 4]:
    return l(x)
"""
    without = src.replace("    fn forward(self, x: [b I]) -> [b I]:\n        return x @ self.w\n", "")
    message = "{} cannot be called: model Lin[4] has no method forward (a fn forward(self, ...) inside the model)"
    assert incremental_equals_fresh(src, without) == [
        ("E0409", message.format("self.fc")),
        ("E0409", message.format("l")),
    ]
    assert incremental_equals_fresh(src, without, src) == []


def test_a_header_dim_that_becomes_a_dim_constants_name() -> None:
    src = "model Lin[E, O]:\n    param w: [E O] = zeros\n"
    with_dim = "dim E = 4\n\n" + src
    message = "the model's dim E has the name of a dim constant: inside the model it would mean two things"
    assert incremental_equals_fresh(src, with_dim) == [("E0912", message)]
    assert incremental_equals_fresh(with_dim, src) == []


def test_renaming_a_method_is_a_change_of_its_model() -> None:
    src = """\
model Scale:
    param s: [4] = ones

    fn forward(self, x: [4]) -> [4]:
        return x * self.s

fn main():
    m = Scale.init(seed=0)
    print(m(ones([4])))
"""
    renamed = src.replace("fn forward(", "fn apply(")
    message = "m cannot be called: model Scale has no method forward (a fn forward(self, ...) inside the model)"
    assert incremental_equals_fresh(src, renamed) == [("E0409", message)]
    assert incremental_equals_fresh(renamed, src) == []


# ====================================================================== divisions of a model's dims

HEADS = """\
dim W = 12

model Heads[E, NH]:
    param w: [E E] = zeros

    fn split(self, x: [b E]) -> [b NH (E/NH)]:
        return reshape(x, [b NH (E/NH)])

model Grouped[Ci, Co, groups = 1]:
    param w: [Co (Ci/groups)] = zeros
    # a division with another dim in it floors, as a conv's output size does
    fn sizes(self, x: [L]) -> [(L/groups)]:
        return zeros([(L/groups)])
"""


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Heads[W, 4]", []),
        (
            "Heads[W, 5]",
            [
                (
                    "E0212",
                    "dim expression (E/NH): in Heads[W, 5] it is 12/5, not a whole number: NH must divide E",
                    "Heads[W, 5]",
                )
            ],
        ),
        ("Grouped[6, 4, groups=3]", []),
        (
            "Grouped[6, 4, groups=4]",
            [
                (
                    "E0212",
                    "dim expression (Ci/groups): in Grouped[6, 4, groups=4] it is 6/4, not a whole number: groups must divide Ci",
                    "Grouped[6, 4, groups=4]",
                )
            ],
        ),
    ],
)
def test_an_instance_whose_dims_leave_a_remainder_in_a_division_is_e0212(written: str, expected) -> None:
    # one diagnostic, at the instance, in a model's member and in a signature alike; nothing at the uses
    src = (
        HEADS
        + f"\nmodel Net:\n    param l: {written}\n\nfn use(n: Net, l: {written}) -> Net:\n    print(l)\n    return n\n"
    )
    assert spanned(src) == expected * 2


def test_adding_a_division_to_a_model_checks_its_instances_again() -> None:
    src = "model Heads[E, NH]:\n    param w: [E NH] = zeros\n\nfn f(h: Heads[12, 5]) -> Heads[12, 5]:\n    return h\n"
    divided = src.replace("[E NH] = zeros", "[E NH] = zeros\n    param v: [(E/NH)] = zeros")
    message = "dim expression (E/NH): in Heads[12, 5] it is 12/5, not a whole number: NH must divide E"
    assert incremental_equals_fresh(src, divided) == [("E0212", message), ("E0212", message)]
    assert incremental_equals_fresh(divided, src) == []


def test_the_methods_of_a_second_model_of_a_name_see_its_own_options() -> None:
    # One mistake (E0104, and the first header's missing block), no unknown
    # 'eps' in the second model's method; an edit that makes the second one a
    # duplicate answers as a fresh check (found by the incremental fuzz)
    src = "model After[E, eps: Float = 1e-5]:\n    param g: [E] = ones\n\n    fn forward(self, x: [.. E]) -> [.. E]:\n        return x + eps\n"
    duplicated = "model After[E, eps: Float = 1e-5]:\n" + src
    expected = [
        ("E0003", "expected an indented block after the model name, found the end of the file"),
        ("E0104", "'After' is defined more than once"),
    ]
    assert incremental_equals_fresh(src, duplicated) == expected
    assert incremental_equals_fresh(duplicated, src) == []


def test_e0212_of_an_instance_shows_the_division_as_written() -> None:
    # `(Ci/(G*M))` printed as `(Ci/G*M)` read as (Ci/G)*M, another expression;
    # a product keeps its written order, and a factor of 1 stays as written (issue 36)
    src = (
        "model Conv[Ci, M, G]:\n    param w: [(Ci/(M*G))] = zeros\n    param v: [(Ci/(G*1))] = zeros\n\n"
        "fn use(a: Conv[5, 1, 2], b: Conv[5, 2, 1]) -> Int:\n    return 0\n"
    )
    assert spanned(src) == [
        (
            "E0212",
            "dim expression (Ci/(M*G)): in Conv[5, 1, 2] it is 5/2, not a whole number: M*G must divide Ci",
            "Conv[5, 1, 2]",
        ),
        (
            "E0212",
            "dim expression (Ci/(M*G)): in Conv[5, 2, 1] it is 5/2, not a whole number: M*G must divide Ci",
            "Conv[5, 2, 1]",
        ),
    ]
