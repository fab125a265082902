"""The `workspace/executeCommand` commands: run a file, stop runs, show the
params a function reads."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from quiver.checker import ide
from quiver.inputs import read_source

from .protocol import request_failed
from .quiver_server import QuiverServer
from .registry import command
from .runs import RunRefused, uri_to_path

# ====================================================================== commands

STOP_WAIT_SECONDS = 5.0


def _string_arg(args: tuple, what: str) -> str:
    if not args or not isinstance(args[0], str) or not args[0]:
        raise JsonRpcInvalidParams(f"expected {what} as the first argument")
    return args[0]


def _program_args(args: tuple) -> list[str] | None:
    """The words for `main` in quiver.runFile's optional second argument,
    `{"args": ["--lr", "1e-3"]}`; None when it is absent (the setting
    quiver.run.args applies then)."""
    if len(args) < 2 or args[1] is None:
        return None
    options = args[1]
    if hasattr(options, "_asdict"):  # pygls hands unknown JSON objects over as namedtuples
        options = options._asdict()
    words = options.get("args") if isinstance(options, dict) else None
    if isinstance(words, tuple):
        words = list(words)
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise JsonRpcInvalidParams('expected {"args": [strings]} as the second argument of quiver.runFile')
    return words


def _boundary(ls: QuiverServer, path: str) -> str | None:
    """The folder a link at `path` must not lead out of, as the workspace reads files."""
    boundary = getattr(ls.ws.host, "boundary", None)
    return boundary(path) if boundary is not None else None


@command("quiver.runFile")
async def run_file(ls: QuiverServer, *args):
    """Run the document's `main` (with `{"args": [...]}` for it, else the
    quiver.run.args setting); answers `{runId}` at once."""
    uri = _string_arg(args, "a document URI")
    program_args = _program_args(args)
    if program_args is None:
        program_args = list(ls.settings.run.args)
    doc = ls.docs.get(uri)
    if doc is not None:
        text, version = doc.text, doc.version
    else:
        path = uri_to_path(uri)
        if path is None:
            raise request_failed(f"cannot run {uri}: it is not open in the editor, and it is not a file: URI")
        try:
            # the one reader of sources: a FIFO, /dev/zero or a link out of the workspace is refused, not read
            text, version = read_source(str(path), within=_boundary(ls, str(path))).decode("utf-8"), 0
        except OSError as exc:
            raise request_failed(f"cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise request_failed(f"cannot run {path}: it is not UTF-8 text (byte {exc.start})") from None
    try:
        run = ls.runs.start(uri, text, version, program_args)
    except RunRefused as exc:
        raise request_failed(str(exc)) from None
    if doc is not None and doc.run_failure is not None:
        doc.run_failure = None
        ls._publish(doc)
    return {"runId": run.id}


@command("quiver.stopRun")
async def stop_run(ls: QuiverServer, *args):
    """Stop the runs of a document (by URI) or one run (by id). Answers when
    they have ended (within STOP_WAIT_SECONDS): `stopped` lists those that
    did, `running` any that had not yet."""
    key = _string_arg(args, "a document URI or a run id")
    runs = ls.runs.find(key)
    ended = await ls.runs.stop_and_wait(runs, STOP_WAIT_SECONDS)
    result: dict = {"stopped": [r.id for r in ended]}
    if len(ended) < len(runs):
        result["running"] = [r.id for r in runs if r not in ended]
    return result


@command("quiver.showParamReads")
async def show_param_reads(ls: QuiverServer, *args):
    """Show which params a function reads, with every chain (code lenses run this)."""
    uri = _string_arg(args, "a document URI")
    if len(args) < 2 or not isinstance(args[1], str):
        raise JsonRpcInvalidParams("expected a function name as the second argument")
    name = args[1]
    text = await ls.query(uri, lambda analysis, lines: ide.param_reads_report(analysis, name))
    if text is None:
        return None
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=text))
    return text
