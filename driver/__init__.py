"""Quiver: a statically typed language for tensor programs and trainable models.

    import quiver
    mlp = quiver.load("examples/mlp.qv")
    m = mlp.Mlp.init(seed=0)

`quiver.load` checks, compiles and imports a .qv file (see docs/runtime.md).
The language itself lives in `quiver.checker`, the torch runtime in
`quiver.runtime`, the language server in `quiver.server`.

Nothing is imported here eagerly: compiled programs import `quiver.runtime`,
which must not pull in the checker, and the language server must not pull in
torch.
"""

from typing import TYPE_CHECKING

__all__ = ["CheckFailed", "load", "load_tokenizer", "load_weights", "to_module"]

if TYPE_CHECKING:
    from quiver.runtime import load_tokenizer, load_weights, to_module

    from .loader import CheckFailed, load
__version__ = "0.1.0"


def untrusted_folder_off_path() -> None:
    """For the entry points (`python -m quiver.server`, `python -m quiver
    run`): the working folder is the user's project, which is untrusted, and
    `python -m` puts it first on sys.path, where a `lark.py` or `torch/` of
    the project would replace the real module at its first import. Every
    process we start passes -P so that it is never there; this takes it off
    for a process started without (an editor's own configuration). Only
    `quiver` itself, imported before this runs, could still come from it."""
    import os
    import sys

    if sys.flags.safe_path or not sys.path:
        return
    first = sys.path[0]
    try:
        if first in ("", ".") or os.path.samefile(first, os.getcwd()):
            del sys.path[0]
    except OSError:
        pass


# ---------------------------------------------------------------- packaging: the version, the torch extra

DISTRIBUTION = "quiver-lang"
# Which torch each command gives: PyPI's torch is, on Linux, the build with CUDA's
# libraries; PyTorch's CPU index holds the `+cpu` builds, which pip prefers with
# --extra-index-url (quiver-lang and the rest still come from PyPI).
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_HINT = (
    f"pip install 'quiver-lang[torch]' --extra-index-url {CPU_INDEX} (torch's CPU build, about 1 GB),"
    " or without --extra-index-url torch's default build (on Linux with its CUDA libraries, several GB)"
)
# what the runtime (compiled programs, `quiver run`, quiver.load) imports
# beyond the base package: the `torch` extra of pyproject.toml
RUNTIME_MODULES = ("torch", "numpy", "safetensors", "tqdm")


def version() -> str:
    """The installed distribution's version, else this package's own constant
    (a source tree on sys.path without an install)."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return __version__


def missing_runtime_module() -> str | None:
    """The first module of the torch extra that cannot be imported, found
    without importing it (torch costs a second and a half); None when all are
    there."""
    from importlib.util import find_spec

    for name in RUNTIME_MODULES:
        try:
            if find_spec(name) is None:
                return name
        except (ImportError, ValueError):
            return name
    return None


def needs_runtime_message(what: str, name: str) -> str:
    """The one line that says how to get the runtime's dependencies."""
    return f"{what} needs {name}, which is not installed: {TORCH_HINT}"


def load_ipython_extension(shell) -> None:
    """`%load_ext quiver`: the `%%quiver` cell magic (driver/notebook.py, docs/notebooks.md)."""
    from .notebook import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell) -> None:
    """`%unload_ext quiver`: the error display and the handler set before it (driver/notebook.py)."""
    from .notebook import unload_ipython_extension as unload

    unload(shell)


def __getattr__(name: str):
    if name in ("to_module", "load_weights", "load_tokenizer"):
        # a model as a torch.nn.Module (docs/torch-interop.md); weights and
        # tokenizers from torch and Hugging Face files (docs/runtime.md)
        missing = missing_runtime_module()
        if missing is not None:
            raise ModuleNotFoundError(needs_runtime_message(f"quiver.{name}", missing), name=missing)
        import quiver.runtime

        return getattr(quiver.runtime, name)
    if name == "load":
        missing = missing_runtime_module()
        if missing is not None:
            raise ModuleNotFoundError(needs_runtime_message("quiver.load", missing), name=missing)
    if name in __all__:
        from . import loader

        return getattr(loader, name)
    raise AttributeError(f"module 'quiver' has no attribute {name!r}")
