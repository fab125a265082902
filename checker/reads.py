"""The param-read analysis: which params of its model(s) each function reads.

Each function body yields facts (checker/body/): `m.w1` reads w1; passing
`m` as argument i of `g` reads whatever `g` reads through its parameter i
(calls, pipes and nested `value_and_grad` alike); handing `m` anywhere else (an
extern fn, print, a return value, a tuple) may read every param. A summary per
(function, model parameter) is the least fixed point of those facts over the
call graph, so recursion is fine. Each read keeps one witness chain, the path
by which it was first found, for the editor to show.

The summaries decide E1107 and W1101 at each `value_and_grad(f, m, ...)` site.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A
from . import catalog as C
from . import types as T
from .declarations import FnInfo, Globals, leaf_params
from .diagnostics import LocalDiagnostic, LocalRelated, SymbolRef
from .results import FactKind, GradSite, ReadFact

_NO_CALLEES: frozenset[str] = frozenset()  # shared: most functions pass no model on


@dataclass(frozen=True)
class Step:
    """One link of a witness chain: in `fn`, at `span` (relative to fn's item)."""

    fn: str
    span: A.Span
    text: str  # "m.w1", "forward(...)", "passed to extern fn load"


@dataclass(frozen=True)
class Reason:
    kind: FactKind
    fact: ReadFact
    fn: str
    # for "call": the callee's parameter whose summary supplied the read
    callee: str | None = None
    callee_param: str | None = None


@dataclass
class Summary:
    fn: str
    param: str
    model: str
    reads: dict[str, Reason]  # leaf param path ("w1", "enc.w1") -> first reason
    everything: Reason | None = None  # set when the model escapes
    # leaf param paths read under stop_grad (whether or not also read outside it)
    stopped: dict[str, Reason] = field(default_factory=dict)
    # The function, or one it passes the model to, has errors: what it reads
    # is then a guess, and no E1107/W1101 is drawn from it.
    tainted: bool = False
    # A parameter of a type parameter's model (`m: M` of `fn f[M: CharModel]`):
    # the methods of its traits called on it (`m(x)`, or by a generic function
    # it is passed to), by name, whose reads are the model's own methods'
    # (resolved per model at each value_and_grad site: `ReadAnalysis.for_model`)
    dispatch: dict[str, Reason] = field(default_factory=dict)

    def requalified(self, fn: str, model: str) -> Summary:
        """The same reads, for an importer that knows fn and its model by
        their qualified names (the witness chains stay in the module)."""
        out = Summary(fn, self.param, model, self.reads, self.everything, self.stopped, self.tainted, self.dispatch)
        out.__dict__["_key"] = (model, *self.key()[1:])
        return out

    def key(self) -> tuple:
        """What a value_and_grad site's diagnostics depend on (computed once:
        a summary does not change after its analysis is built)."""
        key = self.__dict__.get("_key")
        if key is None:
            key = self.__dict__["_key"] = (
                self.model,
                frozenset(self.reads),
                frozenset(self.stopped),
                self.everything is not None,
                self.tainted,
                frozenset(self.dispatch),
            )
        return key


class ReadAnalysis:
    """Summaries for every (function, model parameter).

    Built incrementally from the previous analysis: only functions whose
    facts changed, and the functions that (transitively) call them, are solved
    again; the others keep their summaries. Summaries are never modified once
    an analysis is built, so older analyses stay valid.
    """

    def __init__(
        self,
        glob: Globals,
        facts: dict[str, frozenset[ReadFact]],
        previous: ReadAnalysis | None = None,
        interfaces_changed: bool = True,
        erroneous: frozenset[str] = frozenset(),
        external: dict[tuple[str, str], Summary] | None = None,
    ) -> None:
        self.g = glob
        self.facts = facts
        self.erroneous = erroneous
        # the summaries of imported functions (qualified names), from their modules
        self.external: dict[tuple[str, str], Summary] = external or {}
        if previous is None or interfaces_changed:
            dirty = set(facts)
            previous = None
        else:
            dirty = {f for f, ff in facts.items() if previous.facts.get(f) is not ff}
            dirty |= set(previous.facts) - set(facts)
            dirty |= erroneous ^ previous.erroneous
        # the functions each one passes a model to (only those that pass one
        # on: most do not, and a file may have 100,000 functions)
        self.callees: dict[str, frozenset[str]] = {}
        for f, ff in facts.items():
            if previous is not None and f not in dirty:
                callees = previous.callees.get(f, _NO_CALLEES)
            else:
                callees = frozenset(x.target for x in ff if x.kind in ("call", "sg_call")) if ff else _NO_CALLEES
            if callees:
                self.callees[f] = callees
        callers: dict[str, set[str]] = {}
        for f, cs in self.callees.items():
            for c in cs:
                callers.setdefault(c, set()).add(f)
        todo = list(dirty)
        stale = set(dirty)
        while todo:
            for caller in callers.get(todo.pop(), ()):
                if caller not in stale:
                    stale.add(caller)
                    todo.append(caller)
        self.summaries: dict[tuple[str, str], Summary] = {}
        if previous is not None:
            self.summaries = {k: v for k, v in previous.summaries.items() if k[0] not in stale and k[0] in facts}
        self.solved = sorted(f for f in stale if f in facts)  # for tests
        for fn_name in self.solved:
            info = glob.fns.get(fn_name)
            if info is None:
                continue
            for p in info.params:
                if isinstance(p.type, T.ModelT):
                    self.summaries[(fn_name, p.name)] = Summary(
                        fn_name, p.name, p.type.name, {}, tainted=fn_name in erroneous
                    )
        self._solve({f: facts[f] for f in self.solved})

    def _param_name(self, fn: str, index: int) -> str | None:
        info = self.g.fns.get(fn)
        if info is None or index >= len(info.params):
            return None
        p = info.params[index]
        return p.name if isinstance(p.type, T.ModelT) else None

    def _solve(self, facts: dict[str, frozenset[ReadFact]]) -> None:
        """Direct facts, then propagation along call edges to a fixed point
        (a worklist: an edge is revisited only when its callee grew)."""
        edges: dict[tuple[str, str], list[tuple[Summary, Reason]]] = {}
        pending: list[tuple[Summary, Summary, Reason]] = []
        for fn_name, fn_facts in facts.items():
            for f in sorted(fn_facts, key=lambda f: (f.span.start, f.kind, f.target)):
                s = self.summaries.get((fn_name, f.param))
                if s is None:
                    continue
                if f.kind == "field":
                    s.reads.setdefault(f.target, Reason("field", f, fn_name))
                elif f.kind == "sg_field":
                    s.stopped.setdefault(f.target, Reason("field", f, fn_name))
                elif f.kind == "escape":
                    if s.everything is None:
                        s.everything = Reason("escape", f, fn_name)
                elif f.kind in ("call", "sg_call") and self._trait_method(f.target):
                    # m(x) of m: M, or self.l1(x) of `l1: B[4, H]` (a model
                    # parameter's instance): the method of the model given,
                    # known at a site (keyed by the sub-model's path)
                    reason = Reason(f.kind, f, fn_name)
                    if f.kind == "sg_call":
                        if s.everything is None:  # (under stop_grad: not followed)
                            s.everything = reason
                    else:
                        s.dispatch.setdefault(f.prefix + f.target.rpartition(".")[2], reason)
                elif f.kind in ("call", "sg_call"):
                    pname = self._param_name(f.target, f.index)
                    target = None
                    if pname is not None:
                        target = self.summaries.get((f.target, pname)) or self.external.get((f.target, pname))
                    if target is None:
                        continue
                    reason = Reason(f.kind, f, fn_name, f.target, pname)
                    edges.setdefault((f.target, pname), []).append((s, reason))  # type: ignore[arg-type]
                    pending.append((s, target, reason))
        while pending:
            s, target, reason = pending.pop()
            grew = False
            prefix = reason.fact.prefix
            if target is s and prefix:
                # a method calling itself on a sub-model of its own type: only
                # in a model that contains itself (E0909); nothing to add, and
                # adding would grow the paths without end
                continue
            stopped = reason.kind == "sg_call"
            into = s.stopped if stopped else s.reads
            for name in target.reads:
                if prefix + name not in into and _shallow(prefix + name):
                    into[prefix + name] = reason
                    grew = True
            for name in target.stopped:
                if prefix + name not in s.stopped and _shallow(prefix + name):
                    s.stopped[prefix + name] = reason
                    grew = True
            if target.everything is not None and s.everything is None and not stopped:
                s.everything = reason
                grew = True
            if target.tainted and not s.tainted:
                s.tainted = True
                grew = True
            if target.dispatch and stopped:
                if s.everything is None:  # under stop_grad: not followed
                    s.everything = reason
                    grew = True
            else:
                for method in target.dispatch:  # (a generic function given a sub-model: under its path)
                    if prefix + method not in s.dispatch and _shallow(prefix + method):
                        s.dispatch[prefix + method] = reason
                        grew = True
            if grew:
                for caller, r in edges.get((s.fn, s.param), ()):
                    pending.append((caller, s, r))

    def summary(self, fn: str, param: str) -> Summary | None:
        return self.summaries.get((fn, param)) or self.external.get((fn, param))

    def _trait_method(self, fn: str) -> bool:
        info = self.g.fns.get(fn)
        owner = self.g.models.get(info.owner) if info is not None and info.owner is not None else None
        return owner is not None and owner.trait

    def for_model(self, s: Summary | None, model_type: T.ModelT) -> Summary | None:
        """`s` at a value_and_grad site whose model is `model_type`: the
        trait methods it calls (`dispatch`) replaced by what the model's own
        methods read; unchanged for a summary with none, or at a site whose
        model is itself a type parameter (it has no params to report)."""
        if s is None or not s.dispatch:
            return s
        model = self.g.model(model_type)
        if model is None or model.trait:
            return s
        out = Summary(s.fn, s.param, s.model, dict(s.reads), s.everything, dict(s.stopped), s.tainted)
        for key, reason in s.dispatch.items():
            path, _, method = key.rpartition(".")
            sub = self._sub_model(model_type, path) if path else model_type
            info = self.g.model(sub) if sub is not None else None
            found = info.method(method) if info is not None and not info.trait else None
            target = self.summary(found.name, found.params[0].name) if found is not None and found.params else None
            if target is not None and target.dispatch and sub is not None and path:
                target = self.for_model(target, sub)  # a block that is itself a generic network
            if target is None or target.dispatch:  # (a method that is itself generic: not followed)
                out.everything = out.everything or reason
                continue
            prefix = path + "." if path else ""
            for name in target.reads:
                out.reads.setdefault(prefix + name, reason)
            for name in target.stopped:
                out.stopped.setdefault(prefix + name, reason)
            if target.everything is not None and out.everything is None:
                out.everything = reason
            out.tainted = out.tainted or target.tainted
        return out

    def _sub_model(self, t: T.ModelT, path: str) -> T.ModelT | None:
        """The model at a path of sub-models of instance `t` (`layer1.0` of
        `ResNet[BasicBlock]`: `BasicBlock[64, 64, 1]`); None when a step is
        not a sub-model (or a stack's element, whose path the reads leave out)."""
        now: T.Type = t
        for step in path.split("."):
            if isinstance(now, T.TupleT) and step.isdigit() and int(step) < len(now.items):
                now = now.items[int(step)]
                continue
            info = self.g.model(now) if isinstance(now, T.ModelT) else None
            field = info.field(step) if info is not None else None
            if field is None:
                return None
            now = field.type
        return now if isinstance(now, T.ModelT) and not now.bound else None

    def chain(self, fn: str, param: str, field: str) -> list[Step]:
        """The witness chain of `field` read by (fn, param)."""
        steps: list[Step] = []
        seen = set()
        s = self.summaries.get((fn, param))
        while s is not None and (s.fn, s.param) not in seen:
            seen.add((s.fn, s.param))
            reason = s.reads.get(field) if field != "*" else s.everything
            if reason is None:
                break
            if reason.fact.prefix and field.startswith(reason.fact.prefix):
                field = field[len(reason.fact.prefix) :]  # the callee's own path
            f = reason.fact
            if reason.kind == "field":
                steps.append(Step(s.fn, f.span, f"{f.param}.{field}"))
                break
            if reason.kind == "escape":
                steps.append(Step(s.fn, f.span, f.target))
                break
            if reason.callee is None or reason.callee_param is None:
                # a trait's method (`self.l1(x)` of `l1: B[4, H]`): what it reads is the model's given for B
                steps.append(Step(s.fn, f.span, f"{f.target}(...)"))
                break
            steps.append(Step(s.fn, f.span, f"{reason.callee}(...)"))
            s = self.summaries.get((reason.callee, reason.callee_param))
        return steps


# The deepest path of a read (`blocks.3.attn.qkv.weight` has 5 dots): far
# beyond any model's nesting; only a model that contains itself (E0909)
# reaches it, whose calls through sub-models would make paths without end.
_MAX_DOTS = 48


def _shallow(path: str) -> bool:
    return path.count(".") <= _MAX_DOTS


def site_diagnostics(site: GradSite, summary: Summary | None, glob: Globals) -> tuple[LocalDiagnostic, ...]:
    """E1107 / W1101 for one `value_and_grad(f, m, ...)` call: over the leaf
    params of the model (sub-models' included), or those of the selected
    fields when the call has `wrt=[...]`."""
    if summary is None or summary.everything is not None or summary.tainted:
        return ()
    model = glob.model(site.model_type)
    if model is None:
        return ()
    leaves = leaf_params(glob, site.model_type)
    if site.wrt is not None:
        leaves = [x for x in leaves if x[0].split(".", 1)[0] in site.wrt]
    params = [path for path, _, _ in leaves]
    owner = {path: (m, f.name) for path, m, f in leaves}
    read = [p for p in params if p in summary.reads]
    if not params:
        return ()
    if not read:
        return (
            C.E1107.at(
                site.f_span,
                fn=site.f_name,
                model=str(site.model_type),
                related=(LocalRelated(f"{site.f_name} is declared here", symbol=SymbolRef(("fn", site.f_name))),),
            ),
        )
    out = []
    for p in params:
        if p not in summary.reads:
            stopped = p in summary.stopped
            out.append(
                C.W1101.at(
                    site.f_span,
                    fn=site.f_name,
                    how="reads" if stopped else "never reads",
                    param=p,
                    model=str(site.model_type),
                    only=" only under stop_grad" if stopped else "",
                    related=(LocalRelated(f"param {p} is declared here", symbol=SymbolRef(("member", *owner[p]))),),
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class ParamReads:
    """For the editor: what one model parameter of a function reads."""

    param: str
    model: str
    read: tuple[tuple[str, tuple[Step, ...]], ...]  # (field, witness chain) in declaration order
    unread: tuple[str, ...]
    everything: tuple[Step, ...] | None  # the chain to an escape, when it may read anything
    # of `m: M`: the methods of M's traits it calls, which read what each model's own read
    dispatch: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.everything is not None:
            how = f" ({self.everything[-1].text})" if self.everything else ""
            return f"may read every param of {self.model}{how}"
        names = [r[0] for r in self.read]
        if self.dispatch and not names:
            return "reads what the model's " + ", ".join(self.dispatch) + " read (per model, at each call)"
        text = "reads " + (", ".join(names) if names else "no param")
        if self.unread and names:
            text += " — never " + ", ".join(self.unread)
        return text


def param_reads(analysis: ReadAnalysis, fn: FnInfo, glob: Globals) -> list[ParamReads]:
    out = []
    for p in fn.params:
        if not isinstance(p.type, T.ModelT):
            continue
        s = analysis.summary(fn.name, p.name)
        model = glob.model(p.type)
        if s is None or model is None:
            continue
        if s.dispatch and not p.type.bound and not p.type.generic:
            # `m: Net[Gated]`: its blocks' methods, as a value_and_grad site of it resolves them
            s = analysis.for_model(s, p.type) or s
        params = [path for path, _, _ in leaf_params(glob, p.type)]
        read = tuple((name, tuple(analysis.chain(fn.name, p.name, name))) for name in params if name in s.reads)
        unread = tuple(name for name in params if name not in s.reads)
        everything = tuple(analysis.chain(fn.name, p.name, "*")) if s.everything is not None else None
        out.append(ParamReads(p.name, p.type.name, read, unread, everything, tuple(sorted(s.dispatch))))
    return out
