"""rt.extern: resolution next to the .qv file, errors, argument and result checks."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch

from quiver import runtime as rt


def make_extern(tmp_path, target, ret=("n",), files=None, name="ext"):
    for rel, text in (files or {}).items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    src = rt.SourceFile(str(tmp_path / "prog.qv"))
    sig = rt.Signature(src, name, src.loc(3, 1), (rt.TensorArg("x", ("n",), rt.f32, src.loc(3, 12)),))
    returns = None if ret is None else rt.TensorArg("return", ret, rt.f32, src.loc(3, 25))
    return rt.extern(src, target, sig, returns, src.loc(3, 1))


@pytest.fixture
def clean_modules():
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_a_module_next_to_the_qv_file(tmp_path, clean_modules):
    ext = make_extern(
        tmp_path, "qv_ext_helpers:double", files={"qv_ext_helpers.py": "def double(x):\n    return x * 2\n"}
    )
    assert torch.equal(ext(torch.ones(3)), torch.full((3,), 2.0))
    assert sys.modules["qv_ext_helpers"].__file__ == str(tmp_path / "qv_ext_helpers.py")


def test_a_dotted_package_next_to_the_qv_file(tmp_path, clean_modules):
    ext = make_extern(
        tmp_path,
        "qv_ext_pkg.ops.inner:neg",
        files={
            "qv_ext_pkg/__init__.py": "",
            "qv_ext_pkg/ops/__init__.py": "",
            "qv_ext_pkg/ops/inner.py": "from .. import ops\n\ndef neg(x):\n    return -x\n",
        },
    )
    assert torch.equal(ext(torch.ones(2)), -torch.ones(2))


def test_resolution_is_lazy(tmp_path, clean_modules):
    marker = tmp_path / "imported.txt"
    ext = make_extern(
        tmp_path,
        "qv_ext_lazy:f",
        files={"qv_ext_lazy.py": f"open({str(marker)!r}, 'w').close()\ndef f(x):\n    return x\n"},
    )
    assert not marker.exists()
    ext.resolve()
    assert marker.exists()
    assert ext.resolve() is ext.resolve()


def test_modules_on_the_python_path_are_found_too():
    src = rt.SourceFile("/nowhere/prog.qv")
    sig = rt.Signature(src, "gelu", src.loc(1, 1), (rt.TensorArg("x", ("n",), rt.f32, src.loc(1, 10)),))
    ext = rt.extern(src, "torch.nn.functional:gelu", sig, rt.TensorArg("return", ("n",), rt.f32, None))
    x = torch.randn(5)
    assert torch.equal(ext(x), torch.nn.functional.gelu(x))


def test_a_local_module_wins_over_a_loaded_module_of_the_same_name(tmp_path, clean_modules):
    import json  # noqa: F401 - make sure the stdlib module is loaded

    ext = make_extern(tmp_path, "json:twice", files={"json.py": "def twice(x):\n    return x + x\n"})
    assert torch.equal(ext(torch.ones(2)), torch.full((2,), 2.0))
    assert sys.modules["json"].__file__ != str(tmp_path / "json.py")  # the stdlib one stays


def test_a_missing_module(tmp_path):
    ext = make_extern(tmp_path, "qv_no_such_module:f")
    with pytest.raises(rt.ExternError) as info:
        ext(torch.ones(1))
    msg = str(info.value)
    assert msg.startswith(
        'prog.qv:3: extern fn ext: cannot resolve "qv_no_such_module:f": '
        f"no module 'qv_no_such_module' in {tmp_path} or on the Python path"
    )
    assert info.value.loc == rt.Loc(str(tmp_path / "prog.qv"), 3, 1)


def test_a_missing_attribute(tmp_path, clean_modules):
    ext = make_extern(tmp_path, "qv_ext_attr:nope", files={"qv_ext_attr.py": "x = 1\n"})
    with pytest.raises(rt.ExternError) as info:
        ext(torch.ones(1))
    assert str(info.value) == (
        f'prog.qv:3: extern fn ext: cannot resolve "qv_ext_attr:nope": module '
        f"'qv_ext_attr' ({tmp_path / 'qv_ext_attr.py'}) has no attribute 'nope'"
    )


def test_an_attribute_that_is_not_callable(tmp_path, clean_modules):
    ext = make_extern(tmp_path, "qv_ext_val:x", files={"qv_ext_val.py": "x = 1\n"})
    with pytest.raises(rt.ExternError, match="qv_ext_val.x is a int, not callable"):
        ext.resolve()


def test_a_module_that_fails_to_import(tmp_path, clean_modules):
    ext = make_extern(tmp_path, "qv_ext_broken:f", files={"qv_ext_broken.py": "raise RuntimeError('nope')\n"})
    with pytest.raises(rt.ExternError, match="importing 'qv_ext_broken' failed: RuntimeError: nope"):
        ext(torch.ones(1))
    assert "qv_ext_broken" not in sys.modules


def test_a_bad_target_string(tmp_path):
    src = rt.SourceFile(str(tmp_path / "prog.qv"))
    sig = rt.Signature(src, "f", src.loc(1, 1), ())
    with pytest.raises(rt.ExternError, match='target must be "module:attr"'):
        rt.extern(src, "no_colon", sig)
    with pytest.raises(rt.ExternError, match="not a module:attr name"):
        rt.extern(src, "bad name:f", sig)()


def test_the_result_is_checked_against_the_declared_type(tmp_path, clean_modules):
    ext = make_extern(
        tmp_path,
        "qv_ext_shape:grow",
        files={"qv_ext_shape.py": "import torch\ndef grow(x):\n    return torch.zeros(len(x) + 1)\n"},
    )
    with pytest.raises(rt.CheckError) as info:
        ext(torch.ones(3))
    assert str(info.value) == (
        "prog.qv:3: ext(): dim n is 3 in argument 'x' but 4 in return value (expected [n] f32, found [4] f32)"
    )
    with rt.checks(False):
        assert ext(torch.ones(3)).shape == (4,)


def test_a_result_of_the_wrong_kind(tmp_path, clean_modules):
    ext = make_extern(tmp_path, "qv_ext_kind:f", files={"qv_ext_kind.py": "def f(x):\n    return [1.0]\n"})
    with pytest.raises(rt.CheckError) as info:
        ext(torch.ones(1))
    assert str(info.value) == "prog.qv:3: ext(): return value expected [n] f32, found a Python list"


def test_the_arguments_are_checked(tmp_path, clean_modules):
    ext = make_extern(tmp_path, "qv_ext_args:f", files={"qv_ext_args.py": "def f(x):\n    return x\n"})
    with pytest.raises(rt.CheckError) as info:
        ext(torch.ones(2, 2))
    assert str(info.value) == "prog.qv:3: ext(): argument 'x' expected [n] f32, found [2 2] f32"


def test_an_extern_without_a_result(tmp_path, clean_modules):
    ext = make_extern(tmp_path, "qv_ext_none:f", ret=None, files={"qv_ext_none.py": "def f(x):\n    return None\n"})
    assert ext(torch.ones(2)) is None
    assert repr(ext) == "<extern fn ext from 'qv_ext_none:f'>"


def test_the_kitchen_externs(kitchen, clean_modules):
    assert torch.equal(kitchen.ext_scale(torch.ones(3), 2.0), torch.full((3,), 2.0))
    with pytest.raises(rt.CheckError, match=r"kitchen.qv:37: ext_bad\(\): dim n is 3 in argument 'x' but 4"):
        kitchen.ext_bad(torch.ones(3))
    with pytest.raises(rt.ExternError, match=r"kitchen.qv:38: extern fn ext_missing: cannot resolve"):
        kitchen.ext_missing(torch.ones(3))
