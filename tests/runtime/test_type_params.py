"""The argument check of a generic function's type parameter
(rt.TypeParamArg, runtime/_type_params.py), written by hand as the compiler
writes it for `fn step[M: CharModel](mut m: M, mut opt: AdamW[M], g: Grad[M])`:
any model's class fits, the arguments of one type parameter must share it."""

from __future__ import annotations

import pytest
import torch

from quiver import runtime as rt

_src = rt.SourceFile("generic.qv")


class A(rt.Model):
    _qv_name = "A"
    _qv_device = "cpu"
    _qv_params = (rt.Field("w", (3,), rt.f32, rt.init.zeros, _src.loc(2, 5)),)
    _qv_buffers = ()


class B(rt.Model):
    _qv_name = "B"
    _qv_device = "cpu"
    _qv_params = (rt.Field("v", (2, 2), rt.f32, rt.init.zeros, _src.loc(5, 5)),)
    _qv_buffers = ()


class C(rt.Model):
    _qv_name = "C"
    _qv_device = "cpu"
    _qv_params = (
        rt.Field("w", (3,), rt.f32, rt.init.zeros, _src.loc(11, 5)),
        rt.Field("v", (2,), rt.f32, rt.init.zeros, _src.loc(12, 5)),
    )
    _qv_buffers = ()


SIG = rt.Signature(
    _src,
    "step",
    _src.loc(8, 1),
    (
        rt.TypeParamArg("m", "M", "CharModel", _src.loc(8, 24), "model"),
        rt.TypeParamArg("opt", "M", "CharModel", _src.loc(8, 34), rt.AdamW),
        rt.TypeParamArg("g", "M", "CharModel", _src.loc(8, 51), "grad"),
    ),
)


def test_any_model_fits_when_its_arguments_agree() -> None:
    for cls in (A, B):
        m = cls.init(seed=0)
        SIG.check(m, rt.AdamW(m, lr=0.1), rt.zeros_grad(m))


def test_a_second_model_for_one_type_parameter_names_the_first() -> None:
    a, b = A.init(seed=0), B.init(seed=0)
    with pytest.raises(rt.CheckError) as err:
        SIG.check(a, rt.AdamW(b, lr=0.1), rt.zeros_grad(a))
    assert str(err.value) == (
        "generic.qv:8: step(): argument 'opt' expected AdamW[M] (M: CharModel), "
        "found AdamW[B], where argument 'm' is a model A"
    )


def test_not_a_model_nor_the_optimizer_kind() -> None:
    a = A.init(seed=0)
    with pytest.raises(rt.CheckError) as err:
        SIG.check(torch.zeros(3), rt.AdamW(a, lr=0.1), rt.zeros_grad(a))
    assert "argument 'm' expected a model (M: CharModel), found" in str(err.value)
    with pytest.raises(rt.CheckError) as err:
        SIG.check(a, rt.SGD(a, lr=0.1), rt.zeros_grad(a))
    assert "argument 'opt' expected AdamW[M] (M: CharModel), found SGD[A]" in str(err.value)
    with pytest.raises(TypeError):
        rt.TypeParamArg("m", "M", "CharModel", None, "tensor")


def test_a_gradient_of_some_fields_or_per_example_is_not_a_grad_of_the_model() -> None:
    # Grad[M] is the whole model's gradient: a wrt= selection or a batch of
    # per-example gradients passed before (GradArg refuses both)
    c = C.init(seed=0)
    _, partial = rt.value_and_grad(lambda m: m.w.sum(), c, wrt=["w"])
    _, per_example = rt.value_and_grad(lambda m, x: m.w.sum() * x, c, torch.ones(2), batch=(0,))
    for g in (partial, per_example):
        with pytest.raises(rt.CheckError, match="argument 'g' expected Grad\\[M\\]"):
            SIG.check(c, rt.AdamW(c, lr=0.1), g)
