"""`%load_ext quiver` in an in-process IPython shell: how it shares the
shell's custom exception handler with one the user set before."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
InteractiveShell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell

CELL = """\
fn double(x: [n 3]) -> [n 3]:
    return x * 2.0
"""


def run(shell, code: str) -> None:
    shell.run_cell(code, store_history=True)  # numbered In [1], In [2], ... as in a notebook


@pytest.fixture
def shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    InteractiveShell.clear_instance()
    sh = InteractiveShell.instance()
    yield sh
    InteractiveShell.clear_instance()


def test_a_users_exception_handler_is_kept_and_restored(shell, capsys) -> None:
    seen = []

    def mine(self, etype, value, tb, tb_offset=None):
        seen.append(f"{etype.__name__}: {value}")

    shell.set_custom_exc((KeyError,), mine)
    before = shell.CustomTB
    run(shell, "%load_ext quiver")  # In [1]
    run(shell, "%%quiver\n" + CELL)  # In [2]
    assert shell.custom_exceptions == (Exception, KeyError)

    run(shell, "{}['k']")  # the user's handler, as before the extension
    assert seen == ["KeyError: 'k'"]

    capsys.readouterr()
    run(shell, "import torch\ndouble(torch.ones(2, 4))")  # Quiver's error view
    out = capsys.readouterr().out
    assert "<cell 2>:2:11: error: double(): argument 'x' expected [n 3] f32, found [2 4] f32" in out, out
    assert seen == ["KeyError: 'k'"]

    run(shell, "1 / 0")  # neither's: IPython's usual traceback
    assert "ZeroDivisionError" in capsys.readouterr().out and len(seen) == 1

    run(shell, "%load_ext quiver")  # loaded again: still one handler before it
    run(shell, "%unload_ext quiver")
    assert shell.custom_exceptions == (KeyError,) and shell.CustomTB == before
    run(shell, "{}['j']")
    assert seen == ["KeyError: 'k'", "KeyError: 'j'"]
