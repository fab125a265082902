"""Typing rules of the readers of data files (`load_npy`, `load_npz`,
`load_csv`, `load_safetensors`, `load_chars`), of `decode`/`encode` and of
`randperm`. A reader's shape names the sizes it learns from the file: a new
name binds a dim known only at run time (`[n 64]`), a constant, a generic
dim or a run-time dim bound before is checked against the file when it runs
(docs/language.md, "Data")."""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from ..builtins.args import Bound
from ..builtins.args import dim_of_arg as _dim_of_arg
from ..builtins.registry import rule
from ..names import suggest
from ..results import DimCheck, RunDimOrigin
from .env import CallArg, Env

if TYPE_CHECKING:
    from .core import BodyChecker


class DataRules:
    def reader_shape(self: BodyChecker, node: A.Node, a: CallArg, fn: str, item: int | None = None) -> T.TensorT | None:
        """The shape a reader is given; its new names bind run-time dims
        whose sizes the value read gives (recorded for the compiler). With
        `item`, the reader gives a tuple whose element `item` has the shape."""
        mark = len(self.diags)
        with self.binding(node, fn):
            t = self.shape_arg(a, fn)
            bound = set(self.bound_keys())
        if len(self.diags) > mark:  # the shape has its diagnostic: nothing more about it
            return None
        if t is not None and bound:
            self.record_binds(node, t, bound, item)
        if t is not None and isinstance(node, A.Expr):
            # the file's sizes of the dims named before (a run-time dim, a
            # generic dim) are checked where it is read
            dims = tuple(
                d if not (isinstance(d, T.DimRun) and d.key in bound) and T.dim_value(d) is None else None
                for d in t.dims
            )
            if any(d is not None for d in dims):
                self.add_dim_check(node, DimCheck(f"{fn}(): value", str(t), dims, item=item, reader=True))
        return t

    def text_arg(self: BodyChecker, bound: Bound, name: str, env: Env, fn: str) -> None:
        if name in bound:
            self.expect_number(bound[name], env, "Str", f"{name} of {fn}")

    @rule("read_file")
    def _read_file(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """load_npy(path, [n D]), load_npz(path, key, [n D]), load_csv(path,
        [n F], header=, delimiter=), load_safetensors(path, key, [n D])."""
        for name in ("path", "key", "delimiter"):
            self.text_arg(bound, name, env, b.name)
        if "header" in bound:
            self.expect_number(bound["header"], env, "Bool", f"header of {b.name}")
        if "columns" in bound:
            picked = self.value(bound["columns"].node, env)
            fits = (isinstance(picked, T.NumberT) and picked.kind in ("Int", "Str")) or (
                isinstance(picked, T.TensorT) and picked.rank == 1 and picked.elem.is_int
            )
            if not fits and not isinstance(picked, T.UnknownT):
                self.diags.append(
                    C.E0301.at(
                        bound["columns"].node.span,
                        context="columns of load_csv: ",
                        expected="an Int, a column's name or a list of Ints such as [0, 3]",
                        found=T.describe(picked),
                    )
                )
        t = self.reader_shape(node, bound["shape"], b.name)
        if t is None:
            return T.UNKNOWN
        if b.name == "load_csv" and (t.rank not in (1, 2) or t.elem.is_bool):
            self.diags.append(
                C.E0301.at(
                    bound["shape"].node.span,
                    context="shape of load_csv: ",
                    expected="rows of numbers, [n] or [n F]",
                    found=str(t),
                )
            )
            return T.UNKNOWN
        return t

    @rule("load_chars")
    def _load_chars(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """load_chars(path, [n] Index[V]): a text's characters as ids, and its vocabulary."""
        self.text_arg(bound, "path", env, b.name)
        t = self.reader_shape(node, bound["shape"], b.name, item=0)
        if t is None:
            return T.UNKNOWN
        if t.rank != 1 or t.elem.index is None:
            self.diags.append(
                C.E0301.at(
                    bound["shape"].node.span,
                    context="shape of load_chars: ",
                    expected="the ids of the characters, [n] Index[V]",
                    found=str(t),
                )
            )
            return T.UNKNOWN
        return T.TupleT((t, T.VocabT(t.elem.index)))

    def vocab_arg(self: BodyChecker, a: CallArg, env: Env, fn: str) -> T.VocabT | None:
        t = self.value(a.node, env)
        if isinstance(t, T.VocabT):
            return t
        if not isinstance(t, T.UnknownT):
            self.diags.append(
                C.E0301.at(a.node.span, context=f"vocab of {fn}: ", expected="a Vocab", found=T.describe(t))
            )
        return None

    @rule("decode")
    def _decode(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """decode(vocab, ids): the text of `[n] Index[V]` ids."""
        vocab = self.vocab_arg(bound["vocab"], env, b.name)
        ids = self.tensor_arg(bound["ids"], env, b.name, "ids", float_only=False)
        if vocab is None or ids is None:
            return T.STR
        if ids.rank != 1 or ids.elem.index is None or not T.dims_equal(ids.elem.index, vocab.index):
            want = f"[n] Index[{vocab.index}]"
            self.diags.append(
                C.E0305.at(bound["ids"].node.span, context="ids of decode: ", expected=want, found=str(ids))
            )
        return T.STR

    @rule("encode")
    def _encode(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """encode(vocab, text): the ids of a text's characters, `[?] Index[V]`."""
        vocab = self.vocab_arg(bound["vocab"], env, b.name)
        self.text_arg(bound, "text", env, b.name)
        if vocab is None:
            return T.UNKNOWN
        return T.TensorT((T.DimUnknown(),), T.index_of(vocab.index))

    @rule("randperm")
    def _randperm(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        """randperm(n, seed=s): the numbers 0..n-1 in a random order, `[n] Index[n]`."""
        self.expect_number(bound["seed"], env, "Int", "seed of randperm")
        dim = _dim_of_arg(self, bound["n"].node, b.name, "n")
        if dim is None:
            return T.UNKNOWN
        return T.TensorT((dim,), T.index_of(dim))

    @rule("batches", raw=True)
    def _batches(self: BodyChecker, node: A.Node, b: Builtin, args: list[CallArg], env: Env, paren: A.Span) -> T.Type:
        """batches(x, y, ..., size=, shuffle=, drop_last=): each round of a
        `for` gets one batch of each input (a tuple for several), whose first
        dim is the batch's size: `size` with drop_last=True, otherwise a size
        known only at run time (the last batch is short), the same for all."""
        inputs: list[tuple[CallArg, T.TensorT]] = []
        ok = True
        named: dict[str, CallArg] = {}
        for a in args:
            if a.keyword is None:
                t = self.tensor_arg(a, env, b.name, "x", float_only=False)
                if t is None:
                    ok = False
                elif t.rank == 0:
                    self.diags.append(
                        C.E0210.at(a.node.span, operation="batches", needed="1 dim or more", found=str(t))
                    )
                    ok = False
                else:
                    inputs.append((a, t))
            elif a.keyword in ("size", "shuffle", "drop_last") and a.keyword not in named:
                named[a.keyword] = a
            else:
                self.value(a.node, env)
                if a.keyword in named:
                    self.diags.append(C.E0404.at(a.span, name=a.keyword, fn="batches"))
                else:
                    hint = suggest(a.keyword, ["size", "shuffle", "drop_last"])
                    self.diags.append(C.E0402.at(a.span, fn="batches", name=a.keyword, hint=hint))
                ok = False
        for word, kind in (("size", "Int"), ("shuffle", "Int"), ("drop_last", "Bool")):
            if word in named and not self.expect_number(named[word], env, kind, f"{word} of batches"):
                ok = False
        if "size" not in named:
            self.diags.append(C.E0403.at(paren, name="batches", param="size="))
            ok = False
        if not inputs and ok:
            self.diags.append(C.E0403.at(paren, name="batches", param="x (a tensor to batch)"))
            ok = False
        first = inputs[0][1].dims[0] if inputs else None
        for a, t in inputs[1:]:
            if first is not None and not T.dims_equal(t.dims[0], first):
                want = T.TensorT((first, *t.dims[1:]), t.elem)
                expected, found = T.show_pair(want, t)
                context = "batches(): the inputs share their first dim: "
                note = T.run_apart_note(want, t)
                self.diags.append(C.E0201.at(a.node.span, context=context, expected=expected, found=found + note))
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
                const = self.dim_constant(size)
                value = self.g.names.dim_values.get(const[1]) if const is not None else None
                if const is not None and value is not None:
                    dim = T.DimConst(const[1], value)
        if dim is None:
            dim = T.run_dim("batch", node.span.start)
            self.run_origins.setdefault(dim.key, RunDimOrigin("batches (the size of each batch)", node.span))
        items = tuple(T.TensorT((dim, *t.dims[1:]), t.elem) for _, t in inputs)
        return T.IterT(items[0] if len(items) == 1 else T.TupleT(items))
