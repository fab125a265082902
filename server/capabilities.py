"""What the server tells the client in its `initialize` reply, as plain JSON.

`python -m quiver.server` answers `initialize` from this module before pygls
and lsprotocol are loaded (see __main__.py), and the pygls side returns
exactly the same object, so the two paths cannot disagree. Besides the
standard library it reads only the checker's semantic-token legend
(`quiver.checker.legend`): the checker decides
what kinds of tokens there are, the server only announces them.
"""

from __future__ import annotations

from typing import Any

from quiver.checker.legend import TOKEN_MODIFIERS, TOKEN_TYPES

from . import __version__

SERVER_NAME = "quiver-lsp"

ENCODINGS = ("utf-8", "utf-16", "utf-32")

COMMANDS = ("quiver.runFile", "quiver.stopRun", "quiver.showParamReads")

# Code action kinds the server offers: quick fixes, and "run this file".
RUN_ACTION_KIND = "source.run"
CODE_ACTION_KINDS = ("quickfix", RUN_ACTION_KIND)

DIAGNOSTIC_MODES = ("both", "push", "pull")


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def choose_encoding(client_capabilities: Any) -> str:
    """The first encoding the client lists that the server supports; UTF-16
    when it lists none (the protocol's default)."""
    offered = _get(client_capabilities, "general", "positionEncodings")
    if isinstance(offered, list):
        for enc in offered:
            if enc in ENCODINGS:
                return enc
    return "utf-16"


def diagnostic_mode(initialization_options: Any) -> str:
    """How diagnostics reach the client, from initializationOptions
    (`{"diagnostics": {"mode": ...}}`, optionally under a "quiver" key)."""
    opts = initialization_options
    if isinstance(opts, dict) and isinstance(opts.get("quiver"), dict):
        opts = opts["quiver"]
    mode = _get(opts, "diagnostics", "mode")
    return mode if mode in DIAGNOSTIC_MODES else "both"


def server_capabilities(client_capabilities: Any, initialization_options: Any = None) -> dict[str, Any]:
    caps: dict[str, Any] = {
        "positionEncoding": choose_encoding(client_capabilities),
        "textDocumentSync": {"openClose": True, "change": 2},  # incremental
        "hoverProvider": True,
        "completionProvider": {"triggerCharacters": ["."], "resolveProvider": False},
        "signatureHelpProvider": {"triggerCharacters": ["(", ","], "retriggerCharacters": [","]},
        "definitionProvider": True,
        "referencesProvider": True,
        "documentHighlightProvider": True,
        "documentSymbolProvider": True,
        "codeLensProvider": {"resolveProvider": False},
        "executeCommandProvider": {"commands": list(COMMANDS)},
        "semanticTokensProvider": {
            "legend": {"tokenTypes": list(TOKEN_TYPES), "tokenModifiers": list(TOKEN_MODIFIERS)},
            "full": True,
            "range": True,
        },
        "inlayHintProvider": {"resolveProvider": False},
        "documentFormattingProvider": True,
        "documentRangeFormattingProvider": True,
    }
    if _get(client_capabilities, "textDocument", "codeAction", "codeActionLiteralSupport") is not None:
        caps["codeActionProvider"] = {"codeActionKinds": list(CODE_ACTION_KINDS), "resolveProvider": False}
    else:
        caps["codeActionProvider"] = True
    # Programs of several files: symbols, rename and folders across the workspace.
    caps["workspaceSymbolProvider"] = True
    caps["workspace"] = {"workspaceFolders": {"supported": True, "changeNotifications": True}}
    prepare = _get(client_capabilities, "textDocument", "rename", "prepareSupport")
    caps["renameProvider"] = {"prepareProvider": True} if prepare else True
    # Notebooks (server/notebooks.py): the cells of language quiver, and the
    # Python cells that start with the %%quiver magic, of every notebook type
    caps["notebookDocumentSync"] = {
        "notebookSelector": [{"notebook": "*", "cells": [{"language": "quiver"}, {"language": "python"}]}]
    }
    if diagnostic_mode(initialization_options) != "push":
        caps["diagnosticProvider"] = {
            "identifier": "quiver",
            "interFileDependencies": True,
            "workspaceDiagnostics": True,
        }
    return caps


def initialize_result(params: Any) -> dict[str, Any]:
    params = params if isinstance(params, dict) else {}
    return {
        "capabilities": server_capabilities(params.get("capabilities"), params.get("initializationOptions")),
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }
