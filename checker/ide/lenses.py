"""Code lenses: the param reads of functions and `value_and_grad` calls; Run above `fn main`."""

from __future__ import annotations

from .. import ast as A
from .. import types as T
from ..analysis import Analysis
from ..declarations import FnInfo
from ..reads import ParamReads
from .hover import _reads_of
from .results import CodeLens
from .symbols import _abs


def code_lenses(analysis: Analysis) -> list[CodeLens]:
    """Above each function that takes a model, what it reads; on each
    `value_and_grad` call, what the differentiated function reads; "Run"
    above `fn main()`."""
    out = []
    for slot in analysis.parsed.slots:
        for item, info in analysis.functions(slot.item):
            out.extend(_lenses(analysis, slot, item, info))
    return out


def _lenses(analysis: Analysis, slot, item: A.FnDecl, info) -> list[CodeLens]:
    out: list[CodeLens] = []
    g = analysis.globals
    if is_runnable_main(info) and info.owner is None:
        out.append(CodeLens(_abs(slot, item.name.span), "▶ Run", "quiver.runFile"))
    reads = _reads_of(analysis, info)
    for pr in reads:
        title = lens_title(analysis, pr)
        if len(reads) > 1:
            title = f"{pr.param}: {title}"
        out.append(CodeLens(_abs(slot, item.name.span), title, "quiver.showParamReads", (info.name,)))
    body = analysis.bodies.get(item)
    for site in body.sites if body is not None else ():
        f = g.fns.get(site.f_name)
        if f is None:
            continue
        site_reads = _reads_of(analysis, f)
        if not site_reads:
            continue
        title = f"{site.f_name} " + lens_title(analysis, site_reads[0])
        out.append(CodeLens(_abs(slot, site.call.span), title, "quiver.showParamReads", (site.f_name,)))
    return out


def lens_title(analysis: Analysis, pr: ParamReads) -> str:
    total = len(pr.read) + len(pr.unread)  # (the leaves of the parameter's model, its instance's)
    if pr.everything is not None:
        return f"may read every param of {pr.model}"
    text = f"reads {len(pr.read)} of {total} param{'s' if total != 1 else ''} of {pr.model}"
    if pr.unread and pr.read:
        text += " — never " + ", ".join(pr.unread)
    if pr.dispatch:  # a generic model's blocks, or `m: M`: what the model given has them read
        text += " — and what its " + ", ".join(pr.dispatch) + " read"
    return text


def is_runnable_main(info: FnInfo) -> bool:
    """A `fn main` whose parameters can all come from a command line (Int,
    Float, Bool, Str, or an optional one: `quiver run FILE --lr 1e-3`; W0403
    for the others)."""
    return info.name == "main" and not info.extern and all(_cli_type(p.type) for p in info.params)


def _cli_type(t: T.Type) -> bool:
    """A type `quiver run` reads from a command line: a number, a Bool, a Str, or an optional one."""
    inner = t.inner if isinstance(t, T.OptionalT) else t
    return isinstance(inner, T.NumberT) and inner.kind in ("Int", "Float", "Bool", "Str")


def runnable(analysis: Analysis) -> bool:
    """Whether the document has a `fn main()` to run."""
    info = analysis.globals.fns.get("main")
    return info is not None and is_runnable_main(info)
