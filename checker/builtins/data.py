"""Reading data: the readers of data files (`load_npy`, `load_npz`,
`load_csv`, `load_safetensors`, `load_chars`), `decode`/`encode`, `batches`
and `randperm`, each spec above its typing rule. A reader's shape names the sizes it learns from the file: a new
name binds a dim known only at run time (`[n 64]`), a constant, a generic
dim or a run-time dim bound before is checked against the file when it runs
(docs/language.md, "Data")."""

from __future__ import annotations

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..body.context import RuleContext
from ..body.env import CallArg, Env
from ..names import suggest
from ..results import DimCheck, RunDimOrigin
from ..type_pairs import show_pair
from .args import Bound, dim_of_arg
from .registry import builtin
from .spec import PATH, SEED, SHAPE, BParam, Builtin, Lowering


@builtin(
    Builtin(
        name="load_npy",
        params=(PATH, SHAPE),
        signature="load_npy(path: Str, shape: [n ..] T) -> [n ..] T",
        doc="The array of a `.npy` file, checked against the shape; a new name in the shape is a size read from the "
        "file (a dim known only at run time). The path is relative to the `.qv` file.",
        example='d = load_npy("data.npy", [n D])',
        group="data",
        runtime="load_npy",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_npz",
        params=(PATH, BParam(name="key"), SHAPE),
        signature="load_npz(path: Str, key: Str, shape: [n ..] T) -> [n ..] T",
        doc="The array `key` of a `.npz` file, checked against the shape (new names are sizes read from the file).",
        example='d = load_npz("digits.npz", "x", [n D])',
        group="data",
        runtime="load_npz",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_csv",
        params=(
            PATH,
            SHAPE,
            BParam(name="header", required=False, keyword_only=True),
            BParam(name="delimiter", required=False, keyword_only=True),
            BParam(name="columns", required=False, keyword_only=True),
        ),
        signature='load_csv(path: Str, shape: [n F] T, header=False, delimiter=",", columns=[..]) -> [n F] T',
        doc="The numeric columns of a CSV file as rows (`[n F]`, or `[n]` for one column), all of them or those "
        "`columns=` picks (an Int, a header's name, or a list of Ints such as `[0, 3]`); header=True skips the "
        "first line.",
        example='d = load_csv("table.csv", [n D], header=True)',
        group="data",
        runtime="load_csv",
        lowering=Lowering.READER,
    ),
    Builtin(
        name="load_safetensors",
        params=(PATH, BParam(name="key"), SHAPE),
        signature="load_safetensors(path: Str, key: Str, shape: [n ..] T) -> [n ..] T",
        doc="The tensor `key` of a `.safetensors` file, checked against the shape (new names are sizes read from the "
        "file).",
        example='d = load_safetensors("weights.safetensors", "w", [n D])',
        group="data",
        runtime="load_safetensors",
        lowering=Lowering.READER,
    ),
)
def _read_file(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """load_npy(path, [n D]), load_npz(path, key, [n D]), load_csv(path,
    [n F], header=, delimiter=), load_safetensors(path, key, [n D])."""
    for name in ("path", "key", "delimiter"):
        text_arg(c, bound, name, env, b.name)
    if "header" in bound:
        c.expect_number(bound["header"], env, "Bool", f"header of {b.name}")
    if "columns" in bound:
        picked = c.value(bound["columns"].node, env)
        fits = (isinstance(picked, T.NumberT) and picked.kind in ("Int", "Str")) or (
            isinstance(picked, T.TensorT) and picked.rank == 1 and picked.elem.is_int
        )
        if not fits and not isinstance(picked, T.UnknownT):
            c.diags.append(
                C.E0301.at(
                    bound["columns"].node.span,
                    context="columns of load_csv: ",
                    expected="an Int, a column's name or a list of Ints such as [0, 3]",
                    found=T.describe(picked),
                )
            )
    t = reader_shape(c, node, bound["shape"], b.name)
    if t is None:
        return T.UNKNOWN
    if b.name == "load_csv" and (t.rank not in (1, 2) or t.elem.is_bool):
        c.diags.append(
            C.E0301.at(
                bound["shape"].node.span,
                context="shape of load_csv: ",
                expected="rows of numbers, [n] or [n F]",
                found=str(t),
            )
        )
        return T.UNKNOWN
    return t


@builtin(
    Builtin(
        name="load_chars",
        params=(PATH, SHAPE),
        signature="load_chars(path: Str, shape: [n] Index[V]) -> ([n] Index[V], Vocab[V])",
        doc="A UTF-8 text as the ids of its characters, and its vocabulary (its characters sorted; at most V of "
        "them) to `decode` ids back to text.",
        example='ids, vocab = load_chars("text.txt", [n] Index[D])',
        group="data",
        runtime="load_chars",
        lowering=Lowering.READER,
    ),
)
def _load_chars(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """load_chars(path, [n] Index[V]): a text's characters as ids, and its vocabulary."""
    text_arg(c, bound, "path", env, b.name)
    t = reader_shape(c, node, bound["shape"], b.name, item=0)
    if t is None:
        return T.UNKNOWN
    if t.rank != 1 or t.elem.index is None:
        c.diags.append(
            C.E0301.at(
                bound["shape"].node.span,
                context="shape of load_chars: ",
                expected="the ids of the characters, [n] Index[V]",
                found=str(t),
            )
        )
        return T.UNKNOWN
    return T.TupleT((t, T.VocabT(t.elem.index)))


@builtin(
    Builtin(
        name="decode",
        params=(BParam(name="vocab"), BParam(name="ids")),
        signature="decode(vocab: Vocab[V], ids: [n] Index[V]) -> Str",
        doc="The text of character ids.",
        example='ids, vocab = load_chars("text.txt", [n] Index[D])\ns = decode(vocab, ids)',
        group="data",
        runtime="decode",
    ),
)
def _decode(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """decode(vocab, ids): the text of `[n] Index[V]` ids."""
    vocab = vocab_arg(c, bound["vocab"], env, b.name)
    ids = c.tensor_arg(bound["ids"], env, b.name, "ids", float_only=False)
    if vocab is None or ids is None:
        return T.STR
    if ids.rank != 1 or ids.elem.index is None or not T.dims_equal(ids.elem.index, vocab.index):
        want = f"[n] Index[{vocab.index}]"
        c.diags.append(C.E0305.at(bound["ids"].node.span, context="ids of decode: ", expected=want, found=str(ids)))
    return T.STR


@builtin(
    Builtin(
        name="encode",
        params=(BParam(name="vocab"), BParam(name="text")),
        signature="encode(vocab: Vocab[V], text: Str) -> [?] Index[V]",
        doc="The ids of a text's characters (each must be in the vocabulary).",
        example='ids, vocab = load_chars("text.txt", [n] Index[D])\np = encode(vocab, "hello")',
        group="data",
        runtime="encode",
    ),
)
def _encode(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """encode(vocab, text): the ids of a text's characters, `[?] Index[V]`."""
    vocab = vocab_arg(c, bound["vocab"], env, b.name)
    text_arg(c, bound, "text", env, b.name)
    if vocab is None:
        return T.UNKNOWN
    return T.TensorT((T.DimUnknown(),), T.index_of(vocab.index))


@builtin(
    Builtin(
        name="batches",
        params=(
            BParam(name="size", keyword_only=True),
            BParam(name="shuffle", required=False, keyword_only=True),
            BParam(name="drop_last", required=False, keyword_only=True),
        ),
        signature="batches(x: [n ..], y: [n ..], ..., size=Int, shuffle=Int, drop_last=False) -> iterable of ([batch ..], ...)",
        doc="The mini-batches of tensors that share a first dim, for a `for` loop: `size` rows each, in order or "
        "shuffled by the seed `shuffle=` (torch.randperm), the last batch short unless drop_last=True.",
        example="for xb in batches(x, size=4, shuffle=0):\n    print(xb)",
        group="data",
        runtime="batches",
        lowering=Lowering.READER,
        variadic=True,
    ),
    raw=True,
)
def _batches(c: RuleContext, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
    """batches(x, y, ..., size=, shuffle=, drop_last=): each round of a
    `for` gets one batch of each input (a tuple for several), whose first
    dim is the batch's size: `size` with drop_last=True, otherwise a size
    known only at run time (the last batch is short), the same for all."""
    inputs: list[tuple[CallArg, T.TensorT]] = []
    ok = True
    named: dict[str, CallArg] = {}
    for a in args:
        if a.keyword is None:
            t = c.tensor_arg(a, env, b.name, "x", float_only=False)
            if t is None:
                ok = False
            elif t.rank == 0:
                c.diags.append(C.E0210.at(a.node.span, operation="batches", needed="1 dim or more", found=str(t)))
                ok = False
            else:
                inputs.append((a, t))
        elif a.keyword in ("size", "shuffle", "drop_last") and a.keyword not in named:
            named[a.keyword] = a
        else:
            c.value(a.node, env)
            if a.keyword in named:
                c.diags.append(C.E0404.at(a.span, name=a.keyword, fn="batches"))
            else:
                hint = suggest(a.keyword, ["size", "shuffle", "drop_last"])
                c.diags.append(C.E0402.at(a.span, fn="batches", name=a.keyword, hint=hint))
            ok = False
    for word, kind in (("size", "Int"), ("shuffle", "Int"), ("drop_last", "Bool")):
        if word in named and not c.expect_number(named[word], env, kind, f"{word} of batches"):
            ok = False
    if "size" not in named:
        c.diags.append(C.E0403.at(paren, name="batches", param="size="))
        ok = False
    if not inputs and ok:
        c.diags.append(C.E0403.at(paren, name="batches", param="x (a tensor to batch)"))
        ok = False
    first = inputs[0][1].dims[0] if inputs else None
    for a, t in inputs[1:]:
        if first is not None and not T.dims_equal(t.dims[0], first):
            want = T.TensorT((first, *t.dims[1:]), t.elem)
            expected, found = show_pair(want, t)
            context = "batches(): the inputs share their first dim: "
            note = T.run_apart_note(want, t)
            c.diags.append(C.E0201.at(a.node.span, context=context, expected=expected, found=found + note))
            ok = False
    if not ok:
        return T.IterT(T.UNKNOWN)
    drop = named.get("drop_last")
    size = named["size"].node
    dim: T.Dim | None = None
    if drop is not None and isinstance(drop.node, A.BoolLit) and drop.node.value:
        if isinstance(size, A.IntLit) and size.value > 0:
            dim = T.DimLit(size.value)
        else:
            const = c.dim_constant(size)
            value = c.g.names.dim_values.get(const[1]) if const is not None else None
            if const is not None and value is not None:
                dim = T.DimConst(const[1], value)
    if dim is None:
        dim = T.run_dim("batch", node.span.start)
        c.run_origins.setdefault(dim.key, RunDimOrigin("batches (the size of each batch)", node.span))
    items = tuple(T.TensorT((dim, *t.dims[1:]), t.elem) for _, t in inputs)
    return T.IterT(items[0] if len(items) == 1 else T.TupleT(items))


@builtin(
    Builtin(
        name="randperm",
        params=(BParam(name="n"), SEED),
        signature="randperm(n, seed=Int) -> [n] Index[n]",
        doc="The numbers 0..n-1 in a random order, deterministic for the seed (torch.randperm); n is a dim or an Int.",
        example="p = randperm(D, seed=0)",
        group="data",
        runtime="randperm",
    ),
)
def _randperm(c: RuleContext, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
    """randperm(n, seed=s): the numbers 0..n-1 in a random order, `[n] Index[n]`."""
    c.expect_number(bound["seed"], env, "Int", "seed of randperm")
    dim = dim_of_arg(c, bound["n"].node, b.name, "n")
    if dim is None:
        return T.UNKNOWN
    return T.TensorT((dim,), T.index_of(dim))


# What the rules above share.


def reader_shape(c: RuleContext, node: A.Node, a: CallArg, fn: str, item: int | None = None) -> T.TensorT | None:
    """The shape a reader is given; its new names bind run-time dims
    whose sizes the value read gives (recorded for the compiler). With
    `item`, the reader gives a tuple whose element `item` has the shape."""
    mark = len(c.diags)
    with c.binding(node, fn):
        t = c.shape_arg(a, fn)
        bound = set(c.bound_keys())
    if len(c.diags) > mark:  # the shape has its diagnostic: nothing more about it
        return None
    if t is not None and bound:
        c.record_binds(node, t, bound, item)
    if t is not None and isinstance(node, A.Expr):
        # the file's sizes of the dims named before (a run-time dim, a
        # generic dim) are checked where it is read
        dims = tuple(
            d if not (isinstance(d, T.DimRun) and d.key in bound) and T.dim_value(d) is None else None for d in t.dims
        )
        if any(d is not None for d in dims):
            c.add_dim_check(node, DimCheck(f"{fn}(): value", str(t), dims, item=item, reader=True))
    return t


def text_arg(c: RuleContext, bound: Bound, name: str, env: Env, fn: str) -> None:
    if name in bound:
        c.expect_number(bound[name], env, "Str", f"{name} of {fn}")


def vocab_arg(c: RuleContext, a: CallArg, env: Env, fn: str) -> T.VocabT | None:
    t = c.value(a.node, env)
    if isinstance(t, T.VocabT):
        return t
    if not isinstance(t, T.UnknownT):
        c.diags.append(C.E0301.at(a.node.span, context=f"vocab of {fn}: ", expected="a Vocab", found=T.describe(t)))
    return None
