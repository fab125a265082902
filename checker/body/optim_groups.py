"""Per-field options of an optimizer (param groups) and LBFGS's step.

`AdamW(m, weight_decay=0.1, groups=Group(max_rank=1, weight_decay=0.0))`:
`Group(...)` is typed here (its selectors are literals: `max_rank=`,
`min_rank=`, `names=` a glob on the params' paths), and the optimizer's rule
checks its groups against the optimizer (each override one of its
hyper-parameters) and the model (each group selects at least one param that
no earlier group took: E1201). A param belongs to the first group that
selects it; the params no group selects keep the optimizer's own values, as
torch.optim's first param group.

`opt.step(m, f, args...)` of an LBFGS is value_and_grad's call `f(m, args...)`
(the same checks: checker/body/grad_sites.py), whose value it returns.
"""

from __future__ import annotations

# pyright: reportGeneralTypeIssues=false
import fnmatch
from typing import TYPE_CHECKING

from .. import ast as A
from .. import catalog as C
from .. import types as T
from ..builtins import Builtin
from ..builtins.args import Bound
from ..builtins.registry import rule
from .env import CallArg, Env
from .text import expr_text

if TYPE_CHECKING:
    from .core import BodyChecker

_MAX_LEAVES = 10_000


class GroupRules:
    @rule("param_group")
    def _builtin_group(self: BodyChecker, node: A.Node, b: Builtin, bound: Bound, env: Env) -> T.Type:
        selectors: list[tuple[str, int | str]] = []
        spans: list[tuple[str, A.Span]] = [("call", node.span)]
        ok = True
        for name in ("max_rank", "min_rank", "names"):
            a = bound.get(name)
            if a is None:
                continue
            t = self.value(a.node, env)
            if isinstance(t, T.UnknownT):
                ok = False
                continue
            e = a.node
            if name == "names":
                good = isinstance(e, A.StrLit) and e.value != ""
                want = 'a glob on the params\' paths as a string literal, such as names="*.bias"'
            else:
                good = isinstance(e, A.IntLit)
                want = f"an Int literal >= 0, such as {name}=1"
            if not good:
                self.diags.append(C.E1202.at(a.span, problem=f"Group's {name} must be {want}; found {expr_text(e)}"))
                ok = False
                continue
            assert isinstance(e, (A.StrLit, A.IntLit))
            selectors.append((name, e.value))
            spans.append((name, a.span))
        overrides: list[tuple[str, str]] = []
        for name in T.GROUP_OVERRIDABLE:
            a = bound.get(name)
            if a is None:
                continue
            word = "(Float, Float)" if name == "betas" else "Float"
            ok = self._hyper(a, env, word, f"{name} of Group") and ok
            overrides.append((name, expr_text(a.node)))
            spans.append((name, a.span))
        if not ok:
            return T.UNKNOWN
        if not selectors:
            self.diags.append(
                C.E1202.at(
                    node.span,
                    problem="Group needs the params it selects: max_rank=, min_rank= or names= (a glob on their paths)",
                )
            )
            return T.UNKNOWN
        sel = dict(selectors)
        lo, hi = sel.get("min_rank"), sel.get("max_rank")
        if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
            self.diags.append(
                C.E1202.at(node.span, problem=f"Group selects no rank: min_rank={lo} is above max_rank={hi}")
            )
            return T.UNKNOWN
        return T.GroupT(tuple(selectors), tuple(overrides), tuple(spans))

    def _groups_value(self: BodyChecker, a: CallArg, env: Env, kind: str) -> list[T.GroupT] | None:
        """The groups of `groups=`: a Group or a tuple of them; None after a diagnostic."""
        t = self.value(a.node, env)
        items = [t] if not isinstance(t, T.TupleT) else list(t.items)
        if any(isinstance(x, T.UnknownT) for x in items):
            return None
        if not items or not all(isinstance(x, T.GroupT) for x in items):
            self.diags.append(
                C.E1202.at(
                    a.node.span,
                    problem=f"groups= of {kind} takes a Group(...) or a tuple of them; found {T.describe(t)}",
                )
            )
            return None
        return [x for x in items if isinstance(x, T.GroupT)]

    def check_groups(self: BodyChecker, groups: list[T.GroupT], m: T.ModelT, kind: str) -> bool:
        """Each group's overrides are hyper-parameters of `kind`, and each
        group takes at least one param of the model (E1201)."""
        hyper = {n for n, _, _ in T.OPTIMIZERS[kind][0]}
        ok = True
        for g in groups:
            spans = dict(g.spans)
            for name, _ in g.overrides:
                if name not in hyper:
                    self.diags.append(
                        C.E1202.at(
                            spans.get(name, spans["call"]),
                            problem=f"{kind} has no hyper-parameter {name} for a Group to set "
                            f"(a Group sets {', '.join(n for n, _, _ in T.OPTIMIZERS[kind][0] if n in T.GROUP_OVERRIDABLE)})",
                        )
                    )
                    ok = False
        if not ok:
            return False
        leaves = self.model_leaves(m)
        if leaves is None:
            return True
        taken: set[str] = set()
        for g in groups:
            mine = [p for p, r in leaves if p not in taken and group_selects(g, p, r)]
            if not mine:
                spans = dict(g.spans)
                sel = ", ".join(f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in g.selectors)
                earlier = [p for p, r in leaves if group_selects(g, p, r)]
                why = (
                    f"an earlier group took {', '.join(earlier)}"
                    if earlier
                    else "its params: " + ", ".join(f"{p} (rank {r})" for p, r in leaves)
                )
                self.diags.append(C.E1201.at(spans["call"], group=f"Group({sel})", model=str(m), why=why))
                ok = False
            taken.update(mine)
        return ok

    def model_leaves(self: BodyChecker, m: T.ModelT, prefix: str = "", depth: int = 0) -> list[tuple[str, int]] | None:
        """(path, rank) of every floating param of the model, as the runtime
        names them (`blocks.0.ln.g`); None when they cannot be listed."""
        self.global_kind(m.name)  # the model's fields decide: a dependency of this body
        info = self.g.model(m)
        if info is None or info.partial or depth > 32:
            return None
        out: list[tuple[str, int]] = []
        for f in info.fields:
            if f.kind != "param":
                continue
            t = f.type
            if isinstance(t, T.TensorT):
                if t.elem.is_float:
                    out.append((prefix + f.name, t.rank))
            elif isinstance(t, T.ModelT):
                sub = self.model_leaves(t, f"{prefix}{f.name}.", depth + 1)
                if sub is None:
                    return None
                out.extend(sub)
            elif isinstance(t, T.StackT) and isinstance(t.item, T.ModelT):
                n = T.dim_value(t.dim)
                if n is None:
                    return None
                for k in range(n):
                    sub = self.model_leaves(t.item, f"{prefix}{f.name}.{k}.", depth + 1)
                    if sub is None:
                        return None
                    out.extend(sub)
            else:
                return None
            if len(out) > _MAX_LEAVES:
                return None
        return out

    def lbfgs_step(
        self: BodyChecker,
        node: A.Node,
        recv: T.OptimT,
        func: A.Field,
        args: list[CallArg],
        env: Env,
        paren: A.Span,
    ) -> T.Type:
        """`l = opt.step(m, f, args...)`: f(m, args...) as value_and_grad
        checks it; its value, the first loss of the step, is the result."""
        name = f"{recv.kind}.step"
        extra = [a for a in args if a.keyword in ("wrt", "batch")]
        for a in extra:
            self.diags.append(C.E0402.at(a.span, fn=name, name=a.keyword, hint=""))
        args = [a for a in args if a.keyword not in ("wrt", "batch")]
        positional = [a for a in args if a.keyword is None]
        if len(positional) < 2 or any(a.keyword is not None for a in args[:2]):
            self.diags.append(
                C.E0401.at(
                    paren, name=name, expected="at least 2 positional arguments (m, f)", found=str(len(positional))
                )
            )
            self._eval_args(args, env)
            return T.UNKNOWN
        m_arg, f_arg = args[0], args[1]
        result = self._value_and_grad(node, [f_arg, m_arg, *args[2:]], env, paren, name)
        self.require_mut_optimizer(func, func.value, env)
        mt = self.types.get(m_arg.node)
        if isinstance(mt, T.ModelT):
            if mt.name != recv.model:
                self.diags.append(
                    C.E0904.at(
                        m_arg.node.span, context=f"{name} of {recv}: ", expected=recv.model, found=T.describe(mt)
                    )
                )
                return T.UNKNOWN
            self.require_mut_model(m_arg.node, env)
        if not isinstance(result, T.TupleT):
            return T.UNKNOWN
        value = result.items[0]
        if isinstance(value, T.TupleT):  # aux outputs: LBFGS's f returns the loss alone
            self.sites.pop(node, None)  # type: ignore[call-overload]
            self.diags.append(C.E1106.at(f_arg.node.span, name=expr_text(f_arg.node), found=str(value), related=()))
            return T.UNKNOWN
        return value


def group_selects(g: T.GroupT, path: str, rank: int) -> bool:
    for k, v in g.selectors:
        if k == "max_rank" and isinstance(v, int) and rank > v:
            return False
        if k == "min_rank" and isinstance(v, int) and rank < v:
            return False
        if k == "names" and isinstance(v, str) and not fnmatch.fnmatchcase(path, v):
            return False
    return True
