"""The argument check of a generic function's type parameter: `m: M`,
`g: Grad[M]`, `opt: AdamW[M]` of `fn f[M: CharModel](...)` (docs/language.md,
"Traits: functions generic over models"). Any model's class fits; the
arguments of one type parameter must be of one class (the first binds it)."""

from __future__ import annotations

from ._grad_value import Grad, _layout
from ._model import Model
from ._optim import Optimizer
from ._specs import ArgSpec, describe


class TypeParamArg(ArgSpec):
    """`what` is "model", "grad" or an optimizer class (`rt.AdamW`);
    `param` the type parameter's name, `traits` its bound as written."""

    __slots__ = ("key", "param", "traits", "what")
    generic = True  # binds the type parameter in the call's env

    def __init__(self, name, param, traits, loc=None, what="model"):
        super().__init__(name, loc)
        self.param = param
        self.key = "<" + param + ">"  # its binding in the call's env, made once
        self.traits = traits
        if not (what in ("model", "grad") or (isinstance(what, type) and issubclass(what, Optimizer))):
            raise TypeError(f"TypeParamArg what must be 'model', 'grad' or an optimizer class, found {what!r}")
        self.what = what

    def type_text(self) -> str:
        of = f"{self.param}: {self.traits}"
        if self.what == "model":
            return f"a model ({of})"
        if self.what == "grad":
            return f"Grad[{self.param}] ({of})"
        kind = getattr(self.what, "_qv_kind", self.what)
        return f"{kind}[{self.param}] ({of})"

    def _check(self, a, env, sig):
        if self.what == "model":
            if not isinstance(a, Model):
                self._fail(sig, describe(a))
            cls = type(a)
        elif self.what == "grad":
            # the whole model's gradient: not a wrt= selection nor per-example ([b])
            if type(a) is not Grad or a._qv_layout is not _layout(a._qv_model):
                self._fail(sig, describe(a))
            cls = a._qv_model
        else:
            if type(a) is not self.what:
                self._fail(sig, describe(a))
            cls = a._qv_cls
        earlier = env.get(self.key) if env is not None else None
        if earlier is None:
            if env is not None:
                env[self.key] = (cls, self.label)
        elif earlier[0] is not cls:
            self._fail(sig, f"{describe(a)}, where {earlier[1]} is a model {earlier[0]._qv_name}")
        return cls._qv_torch_device.type != "cpu"
