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
from ..results import DimCheck
from .builtin_rules import Bound, rule
from .env import CallArg, Env
from .label_rules import _dim_of_arg

if TYPE_CHECKING:
    from .core import BodyChecker


class DataRules:
    def reader_shape(self: BodyChecker, node: A.Node, a: CallArg, fn: str) -> T.TensorT | None:
        """The shape a reader is given; its new names bind run-time dims
        whose sizes the value read gives (recorded for the compiler)."""
        mark = len(self.diags)
        with self.binding(node, fn):
            t = self.shape_arg(a, fn)
            bound = set(self.bound_keys())
        if len(self.diags) > mark:  # the shape has its diagnostic: nothing more about it
            return None
        if t is not None and bound:
            self.record_binds(node, t, bound)
        if t is not None and isinstance(node, A.Expr):
            # the file's sizes of the dims named before (a run-time dim, a
            # generic dim) are checked where it is read
            dims = tuple(
                d if not (isinstance(d, T.DimRun) and d.key in bound) and T.dim_value(d) is None else None
                for d in t.dims
            )
            if any(d is not None for d in dims):
                self.add_dim_check(node, DimCheck(f"{fn}(): value", str(t), dims))
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
        t = self.reader_shape(node, bound["shape"], b.name)
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
        self.record_binds(node, T.TupleT((t, T.VocabT(t.elem.index))), set(self.run_binds_keys(node)))
        return T.TupleT((t, T.VocabT(t.elem.index)))

    def run_binds_keys(self: BodyChecker, node: A.Node) -> list[str]:
        return [k for k, _, _ in self.run_binds.get(node, ())]

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
