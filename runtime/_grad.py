"""Differentiation: ``rt.value_and_grad`` (with ``wrt``, ``aux`` and ``batch``,
nested calls), ``rt.grad``, per-example gradients and ``rt.jvp`` through
torch.func. The gradient value itself is in _grad_value.py."""

from __future__ import annotations

import threading
import warnings

import torch

from . import _checks, _dist
from ._elems import tensor_text
from ._errors import GradError
from ._grad_value import Grad, _layout, _operand_text, _selection
from ._model import Model, tied_tensors

_is_grad_enabled = torch.is_grad_enabled
_set_grad_enabled = torch._C._set_grad_enabled


class _Running(threading.local):
    """``depth[0]``: how many value_and_grad calls are running in this thread
    (their f entered and not left).  A one-item list, so that a call does one
    thread-local lookup and then plain item reads and writes."""

    def __init__(self):
        self.depth = [0]


_running = _Running()


def value_and_grad(f, m, *args, wrt=None, aux=False, batch=None):
    """``(value, gradient)`` of ``f(m, *args)`` with respect to the params of ``m``.

    Runs ``f`` with autograd enabled (also inside ``torch.no_grad()``), then
    ``torch.autograd.grad`` over the params in declaration order; ``.grad`` is
    neither read nor written.  The gradient is the partial derivative with
    respect to the params, the other arguments held fixed; params that ``f``
    does not use get zeros.

    The outermost call in a thread (no other value_and_grad's ``f`` running)
    sets the params to require grad while ``f`` runs and back to not requiring
    it afterwards, passes tensor arguments that require grad detached, keeps
    no graph, and returns the value detached.

    A call made while another one's ``f`` is running (on any model) is
    differentiable for the enclosing calls: see :func:`_nested`.

    ``wrt`` (top-level param names) selects the params to differentiate;
    ``aux=True``: ``f`` returns a tuple whose first element is the loss;
    ``batch`` (one 0/None per argument): per-example gradients.  See
    :func:`_value_and_grad_ex`.
    """
    if wrt is not None or aux or batch is not None:
        return _value_and_grad_ex(f, m, args, wrt, aux, batch)
    _check_operands(f, m)
    running = _running.depth
    if running[0]:
        return _nested(f, m, args, running, _layout(type(m)), False)
    if torch.compiler.is_compiling():
        return _traced(f, m, args)
    cls = type(m)
    params = m._qv_tensors
    diff = cls._qv_diff
    all_diff = cls._qv_all_diff
    depth, grad_was = _enter(m, params, diff, running)
    try:
        for a in args:
            if (isinstance(a, torch.Tensor) and a.requires_grad) or type(a) is tuple:
                args = tuple([_detached(a) for a in args])
                break
        out = f(m, *args)
        if not isinstance(out, torch.Tensor) or out.dim() != 0 or not out.is_floating_point():
            raise _result_error(f, out)
        if out.requires_grad:
            wrt = params if all_diff else tuple([p for p, d in zip(params, diff) if d])
            got = torch.autograd.grad(out, wrt, allow_unused=True)
            if not all_diff:
                it = iter(got)
                got = [next(it) if d else None for d in diff]
            for gr in got:
                if gr is None:
                    got = [torch.zeros_like(p) if gr is None else gr for p, gr in zip(params, got)]
                    break
        else:
            got = [torch.zeros_like(p) for p in params]
    finally:
        _leave(m, params, running, depth, grad_was)
    value = out.detach()
    if out.is_leaf or out._base is not None:
        # a param or an argument itself, or a view of one (m.w[0, 0]): a
        # later update of the param must not change the returned value
        value = value.clone()
    if _dist._current().size > 1:  # data-parallel: averaged over the ranks, one all-reduce
        got, value = _averaged(got, diff, value)
    return value, Grad._make(cls, got)


def _check_operands(f, m) -> None:
    if not isinstance(m, Model):
        raise GradError(f"value_and_grad needs a model as its second argument, found {_operand_text(m)}")
    if not callable(f):
        raise GradError(f"value_and_grad needs a function as its first argument, found {_operand_text(f)}")


def _enter(m, tensors, diff, running):
    """Enter differentiation in the outermost value_and_grad of a thread, for
    the param tensors ``tensors`` (those where ``diff`` is true are floating):
    the first call on ``m`` sets them to require grad, ``m``'s depth and the
    thread's running count go up, and autograd is enabled.  Returns what
    :func:`_leave` needs to undo it: ``(depth, grad_was)``.  The whole-model
    and the ``wrt=`` paths share it, so that they cannot drift apart."""
    depth = m._qv_depth
    if depth == 0:
        for p, d in zip(tensors, diff):
            if d:
                p.requires_grad_(True)
    object.__setattr__(m, "_qv_depth", depth + 1)
    running[0] = 1
    grad_was = _is_grad_enabled()
    _set_grad_enabled(True)
    return depth, grad_was


def _leave(m, tensors, running, depth, grad_was) -> None:
    """Undo :func:`_enter` (in a ``finally``, whether ``f`` returned or raised)."""
    _set_grad_enabled(grad_was)
    running[0] = 0
    object.__setattr__(m, "_qv_depth", depth)
    if depth == 0:
        for p in tensors:
            p.requires_grad_(False)


def _traced(f, m, args, lay=None, aux=False):
    """value_and_grad as torch.compile traces it (docs/torch-interop.md): the
    same value and gradient through ``torch.func.grad_and_value`` over the
    param leaves (dynamo supports neither ``requires_grad_`` nor
    ``torch.autograd.grad`` in a graph); ``lay``: the layout of a ``wrt``
    selection, else every param. Integer leaves get zeros, as in the eager
    path, and in a process group the gradient and the loss are averaged over
    the ranks as there."""
    cls = type(m)
    params = m._qv_tensors
    if lay is None:
        index, diff = range(len(params)), cls._qv_diff
    else:
        index, diff = lay.leaf_index, lay.diff
    at = [i for i, d in zip(index, diff) if d]
    args = tuple([_detached(a) for a in args])

    def loss(*leaves):
        full = list(params)
        for i, t in zip(at, leaves):
            full[i] = t
        out = f(m._qv_shallow(full), *args)
        return _loss_of(f, out, aux), out

    counts, outer = [], _checks.deferred.counts
    _checks.deferred.counts = counts
    try:
        grads, (_, out) = torch.func.grad_and_value(loss, argnums=tuple(range(len(at))), has_aux=True)(
            *[params[i] for i in at]
        )
    finally:
        _checks.deferred.counts = outer
    if outer is not None:  # inside an enclosing traced gradient: counted when that one returns
        outer.extend(counts)
    else:
        with torch.no_grad():
            for t in counts:
                t.add_(1)
    found = iter(grads)
    got = [next(found) if d else torch.zeros_like(params[i]) for i, d in zip(index, diff)]
    value = _detach_value(out)
    if _dist._current().size > 1:  # data-parallel, as in the eager path (dynamo traces the all-reduce)
        got, value = _averaged_with_aux(got, diff, value, aux)
    return value, (Grad._make(cls, got) if lay is None else Grad._new(lay, got))


def _averaged_with_aux(got, diff, value, aux):
    """``_averaged``, where with an aux output only the loss is averaged
    (the aux outputs stay this rank's)."""
    if not aux:
        return _averaged(got, diff, value)
    assert isinstance(value, tuple)
    got, first = _averaged(got, diff, value[0])
    return got, (first, *value[1:])


def _averaged(got, diff, value):
    """The gradient's floating leaves (``diff``) and the value averaged over
    the ranks of the process group, in one all-reduce (``_dist.average``);
    integer leaves (zeros) are left as they are."""
    at = [i for i, d in enumerate(diff) if d]
    reduced, value = _dist.average([got[i] for i in at], value)
    got = list(got)
    for i, t in zip(at, reduced):
        got[i] = t
    return got, value


def _value_and_grad_ex(f, m, args, wrt, aux, batch):
    """value_and_grad with a selection (``wrt``), an aux output or a batch."""
    _check_operands(f, m)
    cls = type(m)
    lay = _layout(cls, _selection(cls, wrt))
    if batch is not None:
        return _per_example(f, m, args, lay, aux, batch)
    running = _running.depth
    if running[0]:
        return _nested(f, m, args, running, lay, bool(aux))
    if torch.compiler.is_compiling():
        return _traced(f, m, args, lay, bool(aux))
    params = m._qv_tensors
    sel = [params[i] for i in lay.leaf_index]
    diff = lay.diff
    depth, grad_was = _enter(m, sel, diff, running)
    try:
        args = tuple([_detached(a) for a in args])
        out = f(m, *args)
        loss = _loss_of(f, out, aux)
        wrt_t = [p for p, d in zip(sel, diff) if d]
        got: list = [None] * len(sel)
        if loss.requires_grad and wrt_t:
            found = iter(torch.autograd.grad(loss, wrt_t, allow_unused=True))
            got = [next(found) if d else None for d in diff]
        got = [torch.zeros_like(p) if gr is None else gr for p, gr in zip(sel, got)]
    finally:
        _leave(m, sel, running, depth, grad_was)
    value = _detach_value(out)
    if _dist._current().size > 1:  # data-parallel: averaged over the ranks, one all-reduce
        got, value = _averaged_with_aux(got, diff, value, aux)
    return value, Grad._new(lay, got)


def _loss_of(f, out, aux):
    """The value to differentiate: ``out`` itself, or its first element with ``aux``."""
    if aux:
        if not isinstance(out, tuple) or not out:
            raise GradError(
                f"value_and_grad({getattr(f, '__name__', 'f')}, aux=True): the function must return a tuple "
                f"whose first element is a [] of floats, found {_result_text(out)}"
            )
        loss = out[0]
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0 or not loss.is_floating_point():
            raise GradError(
                f"value_and_grad({getattr(f, '__name__', 'f')}, aux=True): the first element of the result "
                f"must be a [] of floats, found {_result_text(loss)}"
            )
        return loss
    if not isinstance(out, torch.Tensor) or out.dim() != 0 or not out.is_floating_point():
        raise _result_error(f, out)
    return out


def _detach_value(x):
    """A returned value cut from autograd: tensors detached, and copied when
    they are a leaf or a view (a param, an argument, ``m.w[0]``)."""
    if isinstance(x, torch.Tensor):
        v = x.detach()
        if x.is_leaf or x._base is not None:
            v = v.clone()
        return v
    if type(x) is tuple:
        return tuple(_detach_value(v) for v in x)
    return x


def _nested(f, m, args, running, lay, aux):
    """value_and_grad inside the ``f`` of another one: differentiable.

    ``f`` runs on stand-ins for the floating params of ``m`` (the selected
    ones with ``wrt``), put in the model's fields (and its sub-models') for
    the duration of the call, and the gradient is taken with respect to the
    stand-ins with ``create_graph=True``.  Since nothing computed before the
    call depends on a stand-in, the gradient is the partial derivative with
    the arguments held fixed, even when they were computed from the params
    (or are a param).  The arguments are not detached and the value is not
    detached, so the enclosing calls differentiate through the value, the
    gradient and the arguments.

    When an enclosing call differentiates ``m`` itself, a stand-in is an
    identity view of the current param (``p.view_as(p)``), through which the
    enclosing gradient reaches the param; otherwise no enclosing call needs a
    gradient with respect to ``m``, and a stand-in is a fresh leaf sharing
    the param's storage (the param itself never requires grad then).
    """
    cls = type(m)
    params = m._qv_tensors
    depth = m._qv_depth
    index = lay.leaf_index
    diff = lay.diff
    # A param requires grad exactly when an enclosing call differentiates m.
    stand = list(params)
    for i, ok in zip(index, diff):
        if ok:
            p = params[i]
            stand[i] = p.view_as(p) if p.requires_grad else p.detach().requires_grad_(True)
    stand_ins = tied_tensors(cls, stand)  # a tied param: its source's stand-in
    object.__setattr__(m, "_qv_depth", depth + 1)
    if cls._qv_nested:
        m._qv_install(stand_ins)
    else:
        object.__setattr__(m, "_qv_tensors", stand_ins)
        m.__dict__.update(zip(cls._qv_param_names, stand_ins))
    outer = running[0]
    running[0] = outer + 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        out = f(m, *args)
        loss = _loss_of(f, out, aux)
        if aux:
            out = tuple(_own(v, stand_ins) for v in out)
            loss = out[0]
        else:
            out = loss = _own(loss, stand_ins)
        got: list = [None] * len(index)
        if loss.requires_grad:
            wrt = [stand_ins[i] for i, ok in zip(index, diff) if ok]
            if wrt:
                found = iter(torch.autograd.grad(loss, wrt, allow_unused=True, create_graph=True))
                got = [next(found) if ok else None for ok in diff]
        got = [torch.zeros_like(params[i]) if gr is None else gr for i, gr in zip(index, got)]
    finally:
        _set_grad_enabled(grad_was)
        running[0] = outer
        if cls._qv_nested:
            m._qv_install(params)
        else:
            m.__dict__.update(zip(cls._qv_param_names, params))
            object.__setattr__(m, "_qv_tensors", params)
        object.__setattr__(m, "_qv_depth", depth)
    return out, Grad._new(lay, got)


def _own(v, stand_ins):
    """``v``, copied when it is a leaf or a stand-in (a param or an argument itself)."""
    if isinstance(v, torch.Tensor) and (v.is_leaf or any(v is s for s in stand_ins)):
        return v.clone()
    return v


# --- torch.func: per-example gradients and forward mode ----------------------------


def _functional(f, m, index, wrap_result=None):
    """``compute(leaves, *args)``: ``f`` on a shallow copy of ``m`` whose leaves
    at ``index`` are ``leaves`` (the others are ``m``'s own tensors)."""
    params = m._qv_tensors

    def compute(leaves, *args):
        full = list(params)
        for i, p in zip(index, leaves):
            full[i] = p
        out = f(m._qv_shallow(full), *args)
        return out if wrap_result is None else wrap_result(out)

    return compute


def _per_example(f, m, args, lay, aux, in_dims):
    name = getattr(f, "__name__", "f")
    if type(in_dims) is list:
        in_dims = tuple(in_dims)
    if not isinstance(in_dims, tuple) or len(in_dims) != len(args):
        raise GradError(
            f"value_and_grad({name}, batch=...): batch needs one entry (0 or None) per argument after the "
            f"model ({len(args)}), found {in_dims!r}"
        )
    if any(d is not None and (d != 0 or isinstance(d, bool)) for d in in_dims) or all(d is None for d in in_dims):
        raise GradError(
            f"value_and_grad({name}, batch=...): each entry of batch must be 0 (map over the leading dim) "
            f"or None (shared), and at least one must be 0; found {in_dims!r}"
        )
    if _running.depth[0]:
        raise GradError(
            f"value_and_grad({name}, batch=...): per-example gradients cannot be taken inside the "
            f"function of another value_and_grad"
        )
    cls = type(m)
    params = m._qv_tensors
    index = [i for i, d in zip(lay.leaf_index, lay.diff) if d]
    args = tuple(_detached(a) for a in args)
    b = 0
    for a, d in zip(args, in_dims):
        if d == 0:
            t = a
            while type(t) is tuple and t:
                t = t[0]
            if not isinstance(t, torch.Tensor) or t.dim() == 0:
                raise GradError(
                    f"value_and_grad({name}, batch=...): an argument mapped over (batch entry 0) must be a "
                    f"tensor with a leading example dim, found {_result_text(a)}"
                )
            b = int(t.shape[0])
            break

    if aux:

        def split(out):
            return _loss_of(f, out, True), out

        compute = _functional(f, m, index, split)
    else:
        compute = _functional(f, m, index, lambda out: _loss_of(f, out, False))
    primals = tuple(params[i] for i in index)
    # randomness="different": rt.dropout under Train draws its own mask per example
    mapped = torch.func.vmap(
        torch.func.grad_and_value(compute, has_aux=aux), in_dims=(None, *in_dims), randomness="different"
    )
    transform = _checks.transforms
    transform.depth += 1
    grad_was = _is_grad_enabled()
    try:
        _set_grad_enabled(True)
        grads, value = mapped(primals, *args)
        if aux:
            value = value[1]
    finally:
        _set_grad_enabled(grad_was)
        transform.depth -= 1
    found = iter(grads)
    got = []
    for i, d in zip(lay.leaf_index, lay.diff):
        if d:
            got.append(next(found).detach())
        else:
            p = params[i]
            got.append(torch.zeros((b, *p.shape), dtype=p.dtype, device=p.device))
    return _detach_value(value), Grad._new(_layout(cls, lay.wrt, True), got)


_jvp_loaded = []


def _load_jvp_decompositions() -> None:
    """torch loads its forward-mode decompositions at the first dual tensor,
    through the deprecated ``torch.jit.script``: a DeprecationWarning that is
    torch's own business, silenced here once."""
    if _jvp_loaded:
        return
    load = getattr(torch.autograd.forward_ad, "_maybe_load_decompositions", None)
    if load is not None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*", category=DeprecationWarning)
            load()
    _jvp_loaded.append(True)


def jvp(f, m, t, *args):
    """``(y, dy)``: ``y = f(m, *args)`` (detached) and its derivative along the
    params' direction ``t`` (a Grad of ``m``'s model, full or selected; params
    outside a selection have tangent zero).  ``f`` returns a floating tensor
    or a tuple of them; ``dy`` has the same form.  Forward mode
    (``torch.func.jvp``); the arguments are held fixed."""
    name = getattr(f, "__name__", "f")
    if not isinstance(m, Model):
        raise GradError(f"jvp needs a model as its second argument, found {_operand_text(m)}")
    if not callable(f):
        raise GradError(f"jvp needs a function as its first argument, found {_operand_text(f)}")
    cls = type(m)
    if type(t) is not Grad or t._qv_model is not cls or t._qv_layout.batch:
        raise GradError(f"jvp({name}): the tangent must be a Grad[{cls._qv_name}], found {_operand_text(t)}")
    lay = t._qv_layout
    params = m._qv_tensors
    index, tangents = [], []
    for i, v, d, path in zip(lay.leaf_index, t._qv_values, lay.diff, lay.paths):
        if not d:
            continue
        p = params[i]
        if not isinstance(v, torch.Tensor) or v.shape != p.shape or v.dtype != p.dtype:
            raise GradError(
                f"jvp({name}): the tangent's field {path} is {_result_text(v)}, "
                f"but {cls._qv_name}.{path} is {tensor_text(p)}"
            )
        index.append(i)
        tangents.append(v.detach().to(p.device))

    def result(out):
        items = out if type(out) is tuple else (out,)
        if not items or not all(isinstance(x, torch.Tensor) and x.is_floating_point() for x in items):
            raise GradError(
                f"jvp({name}): the function must return a floating tensor or a tuple of them, found {_result_text(out)}"
            )
        return out

    compute = _functional(f, m, index, result)
    args = tuple(_detached(a) for a in args)
    if not index:  # no floating param in the direction: the derivative is zero
        with torch.no_grad():
            y = compute((), *args)
        dy = tuple(torch.zeros_like(v) for v in y) if type(y) is tuple else torch.zeros_like(y)
        return _detach_value(y), dy
    _load_jvp_decompositions()
    transform = _checks.transforms
    transform.depth += 1
    try:
        y, dy = torch.func.jvp(
            lambda *leaves: compute(leaves, *args), tuple(params[i] for i in index), tuple(tangents)
        )[:2]
    finally:
        transform.depth -= 1
    return _detach_value(y), _detach_value(dy)


def _result_error(f, out) -> GradError:
    return GradError(
        f"value_and_grad({getattr(f, '__name__', 'f')}): the function must return "
        f"a [] of floats, found {_result_text(out)}"
    )


def _detached(a):
    if isinstance(a, torch.Tensor):
        return a.detach() if a.requires_grad else a
    if type(a) is tuple:
        return tuple(_detached(x) for x in a)
    return a


def _result_text(x) -> str:
    if isinstance(x, torch.Tensor):
        return tensor_text(x)
    if x is None:
        return "nothing (None)"
    if isinstance(x, (bool, int, float)):
        return f"a plain {type(x).__name__} ({x!r}), not a tensor"
    return _operand_text(x)


def grad(f, m, *args, wrt=None, aux=False, batch=None):
    """``grad(f, m, args...)``: the gradient alone, as ``value_and_grad`` gives it."""
    if wrt is None and not aux and batch is None:
        return value_and_grad(f, m, *args)[1]
    return _value_and_grad_ex(f, m, args, wrt, aux, batch)[1]
