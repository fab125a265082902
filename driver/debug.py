"""`quiver debug FILE.qv` (= `quiver run FILE.qv --debug`): run main under a debugger.

Compiled code runs at `.qv` lines under the `.qv` path (runtime/_lines.py),
so a standard Python debugger steps through `.qv` files. This module starts
one around `main` (docs/debugging.md):

- debugpy, the debugger of VS Code's Python extension: `--listen HOST:PORT`
  (the default, 127.0.0.1:5678; port 0 picks a free one, printed on stderr)
  with `--wait-for-client` to wait for the editor before main starts, or
  `--connect HOST:PORT` to an editor that listens. debugpy's listening
  asks a client for no token: any local user who reaches the port can
  attach (docs/debugging.md, "Who can attach"). Started by a debugger (the
  editor's launch), it opens no port. The runtime's, the
  driver's and the checker's frames, and the `quiver` script's, are library code (never stepped into,
  whatever the client's rules), and debugpy shows Quiver values with Quiver
  types (runtime/pydevd_plugin_quiver.py). An error stops at the innermost
  `.qv` frame (an uncaught exception, as the client's filters allow).
- `--pdb`: no debugpy; the first error opens pdb at the innermost `.qv` frame.
- `--break-on-nan`: the first statement whose result holds a NaN or an
  infinity stops the debugger (debugpy, or pdb with `--pdb`) at its line.
"""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_ADDRESS = "127.0.0.1:5678"


def add_options(run: argparse.ArgumentParser) -> None:
    g = run.add_argument_group("debugging (quiver debug FILE is quiver run FILE --debug)")
    g.add_argument(
        "--debug", action="store_true", help=f"run main under debugpy, listening on {DEFAULT_ADDRESS} unless told"
    )
    g.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="debugpy listens here for VS Code to attach (port 0: any); it asks for no token, so any local user"
        " who reaches the port can attach and run code as you",
    )
    g.add_argument("--connect", metavar="HOST:PORT", help="debugpy connects to a client listening here")
    g.add_argument("--wait-for-client", action="store_true", help="with --listen: start main once a client attached")
    g.add_argument("--pdb", action="store_true", help="no debugpy: open pdb at the .qv line of the first error")
    g.add_argument(
        "--break-on-nan",
        action="store_true",
        help="stop at the first statement whose result holds a NaN or inf (debugpy, or pdb with --pdb)",
    )


def wanted(args) -> bool:
    return bool(args.debug or args.pdb or args.break_on_nan or args.listen or args.connect)


def problem(args) -> str | None:
    """Why these debugging options cannot be used together; None when they can."""
    if args.listen and args.connect:
        return "--listen and --connect cannot be used together"
    if args.pdb and (args.listen or args.connect or args.wait_for_client):
        return "--pdb runs pdb in this terminal: it takes no --listen, --connect or --wait-for-client"
    if args.nproc > 1:
        return "a debugged run is one process: --nproc cannot be used"
    for value in (args.listen, args.connect):
        if value is not None and address(value) is None:
            return f"expected HOST:PORT or PORT, found {value!r}"
    return None


def address(text: str) -> tuple[str, int] | None:
    host, _, port = text.rpartition(":")
    try:
        n = int(port)
    except ValueError:
        return None
    if not 0 <= n < 65536:
        return None
    return host or "127.0.0.1", n


class Session:
    """The debugger around one run: made before the program is loaded (the
    NaN checks are added as it is compiled), then calls main."""

    def __init__(self, args) -> None:
        from quiver.runtime import _debug

        self.args = args
        _debug.nan_checks = bool(args.break_on_nan)
        if args.pdb:
            _debug.debugger = "pdb"
        else:
            _debug.debugger = "debugpy"
            _start_debugpy(args)

    def call(self, main, kwargs: dict) -> None:
        from quiver.runtime import _debug

        try:
            main(**kwargs)
        except Exception as exc:  # stop where it happened, then `quiver run` reports it
            _debug.post_mortem(exc)
            raise


def _quiver_dirs() -> list[str]:
    import quiver
    import quiver.checker
    import quiver.runtime

    return sorted(
        {os.path.dirname(os.path.abspath(m.__file__ or "")) for m in (quiver, quiver.checker, quiver.runtime)}
    )


def _launcher_script() -> str | None:
    """The file of the script that started this process when it is only
    quiver's launcher: the console script pip writes (`bin/quiver`, which
    calls quiver.cli.main) lies outside the package and site-packages, so
    debugpy would take it for the user's code."""
    import quiver.cli

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "main", None) is not quiver.cli.main:
        return None
    return os.path.abspath(path)


def _library_quiver() -> None:
    """The runtime's, the driver's and the checker's frames are library code
    for debugpy's "just my code", whatever rules the client sends (an
    editable install is not in site-packages)."""
    try:
        from _pydevd_bundle import pydevd_filtering  # type: ignore
    except ImportError:  # pragma: no cover - another debugpy layout: the client's rules apply
        return
    ours = [pydevd_filtering.ExcludeFilter(d + "/**", True, True) for d in _quiver_dirs()]
    ours.append(pydevd_filtering.ExcludeFilter("quiver", True, False))
    launcher = _launcher_script()
    if launcher is not None:  # the `quiver` command's own frame, `quiver:8 (<module>)`
        ours.append(pydevd_filtering.ExcludeFilter(launcher, True, True))
    cls = pydevd_filtering.FilesFiltering
    if getattr(cls, "_quiver_patched", False):
        return
    original = cls.set_exclude_filters

    def set_exclude_filters(self, exclude_filters):
        original(self, list(exclude_filters) + ours)

    cls.set_exclude_filters = set_exclude_filters
    cls._quiver_patched = True
    try:  # a debugger that already runs (the process was started by debugpy): now
        import pydevd  # type: ignore

        py_db = pydevd.get_global_debugger()
        if py_db is not None:
            py_db.set_exclude_filters(list(py_db._files_filtering._exclude_filters))
    except (ImportError, AttributeError):  # pragma: no cover - another pydevd
        pass
    os.environ["PYDEVD_FILTERS"] = ";".join([d + "/**" for d in _quiver_dirs()] + ([launcher] if launcher else []))


def _present_quiver_values() -> None:
    """debugpy shows tensors, models and gradients with Quiver types
    (runtime/pydevd_plugin_quiver.py, found by its name in this path)."""
    try:
        import pydevd_plugins.extensions as extensions  # type: ignore
    except ImportError:  # pragma: no cover
        return
    import quiver.runtime

    folder = os.path.dirname(os.path.abspath(quiver.runtime.__file__ or ""))
    path = extensions.__path__
    if folder not in list(path):
        path.append(folder)
    try:  # pydevd may have read its extensions already (importing it does): add ours
        import importlib

        from _pydevd_bundle import pydevd_extension_utils  # type: ignore

        manager = pydevd_extension_utils.EXTENSION_MANAGER_INSTANCE
        if manager.loaded_extensions is not None:
            module = importlib.import_module(extensions.__name__ + ".pydevd_plugin_quiver")
            if module not in manager.loaded_extensions:
                manager.loaded_extensions.append(module)
            manager.type_to_instance = {}
    except (ImportError, AttributeError):  # pragma: no cover - another pydevd: plain reprs
        pass


def _start_debugpy(args) -> None:
    # (pydevd's warning about frozen stdlib modules concerns breakpoints in the
    # standard library, which a Quiver program never sets)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    try:
        import debugpy
        from debugpy._vendored import force_pydevd  # noqa: F401  (puts pydevd on sys.path)
    except ImportError as e:
        raise SystemExit(
            f"quiver: debugging needs debugpy ({e}); install it with `pip install debugpy` or quiver-lang[dev]"
        ) from None
    _library_quiver()
    _present_quiver_values()
    if debugpy.is_client_connected():  # started by debugpy (VS Code's `quiver` launch): it is attached
        print("quiver: running under the debugger that started this process", file=sys.stderr, flush=True)
        return
    if args.connect:
        host, port = address(args.connect) or ("127.0.0.1", 5678)
        debugpy.connect((host, port))
        print(f"quiver: debugger connected to {host}:{port}", file=sys.stderr, flush=True)
        return
    host, port = address(args.listen or DEFAULT_ADDRESS) or ("127.0.0.1", 5678)
    got = debugpy.listen((host, port))
    if isinstance(got, tuple):
        host, port = got[0], got[1]
    print(f"quiver: debugger listening on {host}:{port}", file=sys.stderr, flush=True)
    if args.wait_for_client:
        print("quiver: waiting for the debugger to attach", file=sys.stderr, flush=True)
        debugpy.wait_for_client()
