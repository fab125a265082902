"""More optimizers: ``rt.RMSprop``, ``rt.Adagrad``, ``rt.Adadelta``, ``rt.LBFGS``;
``rt.clip_grad_norm``; the checkpoint protocol of the optimizers of this module.

RMSprop, Adagrad and Adadelta are stepped as ``rt.Adam`` is (runtime/_optim.py):
torch's functional forms (``torch.optim.rmsprop.rmsprop``, ...) with
``foreach=True`` on lists of the params, the gradient's tensors and the state,
so the numbers are those of ``torch.optim.X(..., foreach=True)``.

LBFGS needs the loss again and again within one step (torch's closure):
``opt.step(m, f, *args)`` gives torch.optim.LBFGS a closure that computes
``value_and_grad(f, m, *args)`` and puts the gradient in ``.grad`` of the
params for the length of the step (they are None again afterwards). The
algorithm is torch.optim.LBFGS itself, run on the model's floating params.
"""

from __future__ import annotations

import math

import torch
from torch.optim.adadelta import adadelta as _adadelta
from torch.optim.adagrad import adagrad as _adagrad
from torch.optim.rmsprop import rmsprop as _rmsprop

from ._errors import OptimError
from ._grad_value import Grad
from ._optim import Optimizer, _at_least_zero, _flag, _found, _number, scalar_dtype
from ._optim_groups import groups_text, set_groups


def _zeros(params):
    return [torch.zeros_like(p, memory_format=torch.preserve_format) for p in params]


def _steps(params):
    return [torch.zeros((), dtype=scalar_dtype()) for _ in params]


# The checkpoint protocol (_qv_state_dict / _qv_load_state_dict) is the base
# class's, driven by _qv_state_slots; it saves the param groups too. LBFGS,
# whose state is not per param, has its own.


def _mismatch(opt, where: str, what: str) -> OptimError:
    return OptimError(f"{where}: cannot load the state of {opt._qv_kind_text()}: {what}")


class _SlotsOptimizer(Optimizer):
    """An optimizer whose state is one list per kind of state (``_qv_state_slots``)."""

    __slots__ = ()
    _qv_state_slots: tuple = ()

    def _qv_init_hyper(self, lr, **numbers) -> None:
        k = self._qv_kind_text()
        s = object.__setattr__
        s(self, "_qv_lr", _at_least_zero(k, "learning rate", lr))
        for name, v in numbers.items():
            s(self, "_qv_" + name, _at_least_zero(k, name, v))

    def __repr__(self) -> str:
        base = super().__repr__()
        lines = groups_text(self)
        return base if not lines else base + " [" + "; ".join(lines) + "]"

    def _qv_pick(self, lists, sel):
        return [[lst[i] for i in sel] if lst is not None else [] for lst in lists]

    def _qv_complex(self, sel) -> bool:
        return any(self._qv_params[i].is_complex() for i in sel)


class RMSprop(_SlotsOptimizer):
    """RMSprop, as ``torch.optim.RMSprop`` (same defaults)."""

    __slots__ = ("_qv_alpha", "_qv_eps", "_qv_weight_decay", "_qv_momentum", "_qv_centered", "_qv_square_avg",
                 "_qv_grad_avg", "_qv_momentum_buf", "_qv_step_counts")  # fmt: skip
    _qv_kind = "RMSprop"
    _qv_hyper = ("lr", "alpha", "eps", "weight_decay", "momentum", "centered")
    _qv_state_slots = ("_qv_square_avg", "_qv_grad_avg", "_qv_momentum_buf", "_qv_step_counts")

    def __init__(self, m, lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, groups=None):
        self._qv_setup(m)
        self._qv_init_hyper(lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum)
        s = object.__setattr__
        s(self, "_qv_centered", _flag(self._qv_kind_text(), "centered", centered))
        ps = self._qv_params
        s(self, "_qv_square_avg", _zeros(ps))
        s(self, "_qv_grad_avg", _zeros(ps) if centered else None)
        s(self, "_qv_momentum_buf", _zeros(ps))
        s(self, "_qv_step_counts", _steps(ps))
        set_groups(self, groups)

    alpha = property(lambda self: self._qv_alpha, doc="The smoothing constant.")
    eps = property(lambda self: self._qv_eps, doc="The term added to the denominator.")
    weight_decay = property(lambda self: self._qv_weight_decay, doc="The L2 penalty.")
    momentum = property(lambda self: self._qv_momentum, doc="The momentum factor.")
    centered = property(lambda self: self._qv_centered, doc="Whether the gradient is normalised by its variance.")
    square_avg = property(lambda self: self._qv_state(self._qv_square_avg), doc="The running average of g².")
    momentum_buffer = property(lambda self: self._qv_state(self._qv_momentum_buf), doc="The momentum buffers.")

    @property
    def grad_avg(self) -> Grad:
        """With centered=True: the running average of the gradient (a copy)."""
        if self._qv_grad_avg is None:
            raise OptimError(f"{self._qv_kind_text()} has no grad_avg: it was created with centered=False")
        return self._qv_state(self._qv_grad_avg)

    def _qv_apply(self, sel, params, grads) -> None:
        sq, gavg, mom, steps = self._qv_pick(
            (self._qv_square_avg, self._qv_grad_avg, self._qv_momentum_buf, self._qv_step_counts), sel
        )
        _rmsprop(
            params,
            grads,
            sq,
            gavg,
            mom if self._qv_momentum > 0 else [],
            steps,
            foreach=True,
            maximize=False,
            differentiable=False,
            capturable=torch.compiler.is_compiling(),  # traced: step counts stay tensors in the graph
            has_complex=self._qv_complex(sel),
            lr=self._qv_lr,
            alpha=self._qv_alpha,
            eps=self._qv_eps,
            weight_decay=self._qv_weight_decay,
            momentum=self._qv_momentum,
            centered=self._qv_centered,
        )


class Adagrad(_SlotsOptimizer):
    """Adagrad, as ``torch.optim.Adagrad`` (same defaults)."""

    __slots__ = ("_qv_lr_decay", "_qv_weight_decay", "_qv_initial_accumulator_value", "_qv_eps", "_qv_sum",
                 "_qv_step_counts")  # fmt: skip
    _qv_kind = "Adagrad"
    _qv_hyper = ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")
    _qv_state_slots = ("_qv_sum", "_qv_step_counts")

    def __init__(self, m, lr=0.01, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 groups=None):  # fmt: skip
        self._qv_setup(m)
        self._qv_init_hyper(
            lr, lr_decay=lr_decay, weight_decay=weight_decay, initial_accumulator_value=initial_accumulator_value,
            eps=eps,
        )  # fmt: skip
        v = self._qv_initial_accumulator_value
        s = object.__setattr__
        s(self, "_qv_sum", [torch.full_like(p, v, memory_format=torch.preserve_format) for p in self._qv_params])
        s(self, "_qv_step_counts", _steps(self._qv_params))
        set_groups(self, groups)

    lr_decay = property(lambda self: self._qv_lr_decay, doc="The learning-rate decay.")
    weight_decay = property(lambda self: self._qv_weight_decay, doc="The L2 penalty.")
    initial_accumulator_value = property(lambda self: self._qv_initial_accumulator_value, doc="The sums' start.")
    eps = property(lambda self: self._qv_eps, doc="The term added to the denominator.")
    sum = property(lambda self: self._qv_state(self._qv_sum), doc="The sums of squared gradients (a copy).")

    def _qv_apply(self, sel, params, grads) -> None:
        sums, steps = self._qv_pick((self._qv_sum, self._qv_step_counts), sel)
        _adagrad(
            params,
            grads,
            sums,
            steps,
            fused=None,
            grad_scale=None,
            found_inf=None,
            has_sparse_grad=False,
            foreach=True,
            differentiable=False,
            has_complex=self._qv_complex(sel),
            lr=self._qv_lr,
            weight_decay=self._qv_weight_decay,
            lr_decay=self._qv_lr_decay,
            eps=self._qv_eps,
            maximize=False,
        )


class Adadelta(_SlotsOptimizer):
    """Adadelta, as ``torch.optim.Adadelta`` (same defaults)."""

    __slots__ = ("_qv_rho", "_qv_eps", "_qv_weight_decay", "_qv_square_avg", "_qv_acc_delta", "_qv_step_counts")
    _qv_kind = "Adadelta"
    _qv_hyper = ("lr", "rho", "eps", "weight_decay")
    _qv_state_slots = ("_qv_square_avg", "_qv_acc_delta", "_qv_step_counts")

    def __init__(self, m, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, groups=None):
        self._qv_setup(m)
        self._qv_init_hyper(lr, rho=rho, eps=eps, weight_decay=weight_decay)
        if self._qv_rho > 1.0:
            raise OptimError(f"{self._qv_kind_text()}: invalid rho {self._qv_rho!r} (it must be >= 0 and <= 1)")
        s = object.__setattr__
        s(self, "_qv_square_avg", _zeros(self._qv_params))
        s(self, "_qv_acc_delta", _zeros(self._qv_params))
        s(self, "_qv_step_counts", _steps(self._qv_params))
        set_groups(self, groups)

    rho = property(lambda self: self._qv_rho, doc="The decay of the running averages.")
    eps = property(lambda self: self._qv_eps, doc="The term added to the denominator.")
    weight_decay = property(lambda self: self._qv_weight_decay, doc="The L2 penalty.")
    square_avg = property(lambda self: self._qv_state(self._qv_square_avg), doc="The running average of g².")
    acc_delta = property(lambda self: self._qv_state(self._qv_acc_delta), doc="The running average of the updates².")

    def _qv_apply(self, sel, params, grads) -> None:
        sq, acc, steps = self._qv_pick((self._qv_square_avg, self._qv_acc_delta, self._qv_step_counts), sel)
        _adadelta(
            params,
            grads,
            sq,
            acc,
            steps,
            capturable=torch.compiler.is_compiling(),  # traced: step counts stay tensors in the graph
            foreach=True,
            differentiable=False,
            has_complex=self._qv_complex(sel),
            lr=self._qv_lr,
            rho=self._qv_rho,
            eps=self._qv_eps,
            weight_decay=self._qv_weight_decay,
            maximize=False,
        )


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS`` (same defaults); ``step(m, f, *args)``
    evaluates ``f(m, *args)`` and its gradient as often as torch's closure is
    called and returns the first value."""

    __slots__ = ("_qv_torch", "_qv_max_iter", "_qv_max_eval", "_qv_tolerance_grad", "_qv_tolerance_change",
                 "_qv_history_size", "_qv_line_search_fn")  # fmt: skip
    _qv_kind = "LBFGS"
    _qv_hyper = ("lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size", "line_search_fn")
    _qv_state_slots = ()

    def __init__(self, m, lr=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):  # fmt: skip
        self._qv_setup(m)
        k = self._qv_kind_text()
        s = object.__setattr__
        s(self, "_qv_lr", _at_least_zero(k, "learning rate", lr))
        for name, v in (("max_iter", max_iter), ("history_size", history_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise OptimError(f"{k}: {name} must be an Int >= 1, found {_found(v)}")
        if max_eval is not None and (isinstance(max_eval, bool) or not isinstance(max_eval, int) or max_eval < 1):
            raise OptimError(f"{k}: max_eval must be an Int >= 1, found {_found(max_eval)}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise OptimError(f'{k}: line_search_fn must be "strong_wolfe" or left out, found {line_search_fn!r}')
        s(self, "_qv_max_iter", max_iter)
        s(self, "_qv_max_eval", max_eval if max_eval is not None else max_iter * 5 // 4)
        s(self, "_qv_tolerance_grad", _number(k, "tolerance_grad", tolerance_grad))
        s(self, "_qv_tolerance_change", _number(k, "tolerance_change", tolerance_change))
        s(self, "_qv_history_size", history_size)
        s(self, "_qv_line_search_fn", line_search_fn)
        s(
            self,
            "_qv_torch",
            torch.optim.LBFGS(
                self._qv_float_params or [torch.zeros(())],
                lr=self._qv_lr,
                max_iter=max_iter,
                max_eval=max_eval,
                tolerance_grad=self._qv_tolerance_grad,
                tolerance_change=self._qv_tolerance_change,
                history_size=history_size,
                line_search_fn=line_search_fn,
            ),
        )

    max_iter = property(lambda self: self._qv_max_iter, doc="Iterations per step.")
    max_eval = property(
        lambda self: self._qv_max_eval, doc="Evaluations of f per step (max_iter * 5 // 4 if left out)."
    )
    tolerance_grad = property(lambda self: self._qv_tolerance_grad, doc="First-order optimality tolerance.")
    tolerance_change = property(lambda self: self._qv_tolerance_change, doc="Tolerance on changes of value or params.")
    history_size = property(lambda self: self._qv_history_size, doc="How many updates the Hessian estimate keeps.")
    line_search_fn = property(lambda self: self._qv_line_search_fn or "", doc='"strong_wolfe", or "" for none.')

    def _qv_tstate(self) -> dict:
        return self._qv_torch.state[self._qv_torch._params[0]]

    @property
    def func_evals(self) -> int:
        """How many times f has been evaluated over all steps."""
        return int(self._qv_tstate().get("func_evals", 0))

    @property
    def n_iter(self) -> int:
        """How many iterations have run over all steps."""
        return int(self._qv_tstate().get("n_iter", 0))

    def step(self, m, f, *args):  # type: ignore[override]
        """One torch.optim.LBFGS step on the params of ``m``; ``f(m, *args)`` is
        the loss (value and gradient evaluated by ``rt.value_and_grad``)."""
        from ._grad import value_and_grad

        if m is not self._qv_m:
            self._qv_model_error(m)
        if not callable(f):
            raise OptimError(f"{self._qv_kind_text()}.step: expected a function (m, ...) -> [], found {_found(f)}")
        sel = self._qv_float
        ps = self._qv_float_params
        topt = self._qv_torch
        topt.param_groups[0]["lr"] = self._qv_lr

        def closure():
            value, g = value_and_grad(f, m, *args)
            if not isinstance(value, torch.Tensor) or value.numel() != 1:
                raise OptimError(f"{self._qv_kind_text()}.step: f must return one number, found {_found(value)}")
            values = g._qv_values
            for i, p in zip(sel, ps):
                p.grad = values[i]
            return value

        try:
            loss = topt.step(closure) if ps else closure()
        finally:
            for p in ps:
                p.grad = None
        object.__setattr__(self, "_qv_steps", self._qv_steps + 1)
        return loss

    def _qv_state_dict(self) -> dict:
        return {"kind": "LBFGS", "lr": self._qv_lr, "steps": self._qv_steps, "torch": self._qv_torch.state_dict()}

    def _qv_load_state_dict(self, d: dict, where: str) -> None:
        if not isinstance(d, dict) or d.get("kind") != "LBFGS" or "torch" not in d:
            raise _mismatch(self, where, "the saved state is not that of an LBFGS optimizer")
        saved = d["torch"]
        try:
            self._qv_torch.load_state_dict(saved)
        except (ValueError, KeyError, RuntimeError) as e:
            raise _mismatch(self, where, str(e)) from None
        object.__setattr__(self, "_qv_lr", float(d["lr"]))
        object.__setattr__(self, "_qv_steps", int(d["steps"]))


def clip_grad_norm(g, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """``(clipped, total_norm)`` as ``torch.nn.utils.clip_grad_norm_``: the norm
    of all of ``g``'s values together (``norm_type``: a p > 0 or inf), and
    ``g`` scaled by ``min(max_norm / (total_norm + 1e-6), 1)``; ``g`` itself is unchanged."""
    if type(g) is not Grad or g._qv_layout.batch:
        raise OptimError(f"clip_grad_norm: expected a gradient Grad[M], found {_found(g)}")
    max_norm = _number("clip_grad_norm", "max_norm", max_norm)
    p = _number("clip_grad_norm", "norm_type", norm_type)
    if not (p > 0 or math.isinf(p)):
        raise OptimError(f"clip_grad_norm: norm_type must be > 0 or inf, found {p!r}")
    values = list(g._qv_values)
    floating = [v for v in values if v.is_floating_point() or v.is_complex()]
    with torch.no_grad():
        if not floating:
            return g, torch.zeros(())
        total = torch.nn.utils.get_total_norm(floating, p, False, None)
        if _flag("clip_grad_norm", "error_if_nonfinite", error_if_nonfinite) and not bool(torch.isfinite(total)):
            raise OptimError(
                f"clip_grad_norm: the total norm of order {p!r} of the gradient is {float(total)!r}, "
                f"so it cannot be clipped (error_if_nonfinite=True)"
            )
        coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
        out = [v.clone() for v in values]
        scaled = [o for o in out if o.is_floating_point() or o.is_complex()]
        torch._foreach_mul_(scaled, coef)  # pyright: ignore[reportPrivateImportUsage]
    return Grad._new(g._qv_layout, out), total


__all__ = ["RMSprop", "Adagrad", "Adadelta", "LBFGS", "clip_grad_norm"]
