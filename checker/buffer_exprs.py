"""Computed and non-persistent buffers: a buffer whose initializer is an
expression of the model's dims, options and constants, and the keyword
`, persistent=False` after a member.

```
model Rotary[T, D, theta: Float = 10000.0]:
    buffer inv_freq: [(D/2)] = 1.0 / theta ** (2.0 * (arange((D / 2)) as f32) / (D as Float))
    buffer mask: [T T] Bool = tril(ones([T T] Bool)), persistent=False
```

An initializer is told from an expression by its form alone: a number or
`True`/`False`, an initializer's name (`zeros`, `xavier`, `normal` ...), or a
call of an initializer that takes arguments (`normal(0.0, 0.02)`,
`xavier_uniform(gain=2.0)`) is an initializer, as before. Anything else on a
buffer is an expression (`ones([T T] Bool)` is the built-in, since the
initializer `ones` takes no arguments). A param keeps initializers only.

The expression is checked by the body checker as the body of a method that
returns it (`A.ComputedBuffer`, `fn inv_freq(self): return EXPR`), whose
`self` it may not read (E0930): the model's dims are dims, its options
values. The analysis checks that function with the model's methods and
then compares the expression's type with the declared one (E0928,
`computed_result`); the compiler compiles it and `init` calls it once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from . import ast as A
from . import catalog as C
from . import shapes as S
from . import types as T
from .fn_decl import Owner, declare_fn
from .infos import FnInfo, ModelInfo
from .initializers import INITIALIZERS
from .names import Names, dotted_text
from .results import BodyResult
from .show import expr_text
from .typectx import TypeContext


def is_initializer(init: A.Expr) -> bool:
    """Whether a member's `= ...` is an initializer (else an expression)."""
    if isinstance(init, (A.IntLit, A.FloatLit, A.BoolLit)):
        return True
    if isinstance(init, A.Unary) and init.op in ("-", "+") and isinstance(init.operand, (A.IntLit, A.FloatLit)):
        return True
    if isinstance(init, A.Name):
        return init.name in INITIALIZERS
    if isinstance(init, A.Call) and isinstance(init.func, A.Name):
        spec = INITIALIZERS.get(init.func.name)
        return spec is not None and bool(spec.params)
    return False


def member_persistence(m: A.Member, ctx: TypeContext) -> bool:
    """Whether a member is saved: False for a buffer with `, persistent=False`.
    Reports (E0929) a keyword other than `persistent`, one given twice, a
    value other than True/False, on a param, and a non-persistent buffer
    without an initializer; each such member stays persistent."""
    persistent = True
    seen: set[str] = set()
    for opt in m.options:
        key = opt.name.text
        if key != "persistent":
            ctx.diagnostics.append(C.E0929.at(opt.name.span, problem=C.E0929.say("unknown", key=key)))
            return True
        if key in seen:
            ctx.diagnostics.append(C.E0929.at(opt.span, problem=C.E0929.say("twice", key=key)))
            return True
        seen.add(key)
        if not isinstance(opt.value, A.BoolLit):
            found = expr_text(opt.value)
            ctx.diagnostics.append(C.E0929.at(opt.value.span, problem=C.E0929.say("not_bool", found=found)))
            return True
        persistent = opt.value.value
    if persistent:
        return True
    if m.kind == "param":
        ctx.diagnostics.append(C.E0929.at(m.options[-1].span, problem=C.E0929.say("param", name=m.name.text)))
        return True
    if m.init is None:
        ctx.diagnostics.append(C.E0929.at(m.options[-1].span, problem=C.E0929.say("needs_init", name=m.name.text)))
        return True
    return False


def _reads_self(e: A.Expr) -> A.Expr | None:
    """The outermost `self...` the expression reads, if any (parents come
    before their children in A.walk)."""
    for node in A.walk(e):
        if isinstance(node, A.Field):
            written = dotted_text(node)
            if written is not None and written.split(".", 1)[0] == "self":
                return node
        if isinstance(node, A.Name) and node.name == "self":
            return node
    return None


def computed_fn(m: A.Member, names: Names, owner: Owner, ctx: TypeContext) -> tuple[FnInfo | None, frozenset[str]]:
    """The method that computes buffer `m` from its initializer expression,
    to be checked and compiled with the model's methods (and the names its
    signature looked up); None when the expression reads `self` (E0930)."""
    init = m.init
    assert init is not None
    read = _reads_self(init)
    if read is not None:
        what = dotted_text(read) or expr_text(read)
        ctx.diagnostics.append(C.E0930.at(read.span, name=m.name.text, what=what))
        return None, frozenset()
    span = m.name.span
    decl = A.ComputedBuffer(
        m.span,
        A.Ident(span, m.name.text),
        (A.Param(span, False, A.Ident(span, "self"), None),),
        None,
        (A.Return(init.span, (init,)),),
        span,
        buffer=m.name.text,
    )
    d = declare_fn(decl, names, owner)
    if not isinstance(d.info, FnInfo):  # pragma: no cover - a method of `self` alone always declares
        return None, frozenset()
    ctx.diagnostics.extend(d.diagnostics)
    # returns anything: the analysis compares the result with the buffer's type
    return dataclasses.replace(d.info, ret=T.UNKNOWN, declared_ret=True), d.lookups


def computed_result(info: FnInfo, result: BodyResult, models: Mapping[str, ModelInfo]) -> BodyResult:
    """The body result of a computed buffer's function, with E0928 when the
    expression's type is not the buffer's declared type."""
    decl = info.decl
    if not isinstance(decl, A.ComputedBuffer) or info.owner is None:
        return result
    model = models.get(info.owner)
    expr = decl.body[0]
    assert isinstance(expr, A.Return)
    value = expr.values[0]
    fields = model.fields if model is not None else ()
    field = next((f for f in fields if f.name == decl.buffer and f.decl.init is value), None)
    found = result.types.get(value)
    if field is None or found is None or isinstance(found, T.UnknownT) or isinstance(field.type, T.UnknownT):
        return result
    if any(
        d.span.start >= value.span.start and d.span.end <= value.span.end and d.code[0] == "E"
        for d in result.diagnostics
    ):
        return result  # one mistake, one diagnostic: the expression's own error stands
    if S.assignable(field.type, found) is None:
        return result
    wrong = C.E0928.at(value.span, name=decl.buffer, expected=str(field.type), found=str(found))
    return dataclasses.replace(result, diagnostics=(*result.diagnostics, wrong))
