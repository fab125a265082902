"""The handlers of the session's life: initialize, initialized (configuration,
the file watcher, the first scan), watched-file and workspace-folder changes,
configuration changes, shutdown."""

from __future__ import annotations

import asyncio
import os

from lsprotocol import types as lsp

from . import capabilities, convert
from .quiver_server import QuiverServer
from .registry import feature, notification
from .workspace import uri_to_path as file_path

# ====================================================================== lifecycle


@feature(lsp.INITIALIZE)
@notification
def initialize(ls: QuiverServer, params: lsp.InitializeParams) -> None:
    raw = ls.quiver_protocol.raw_initialize_params
    ls.codec = convert.Codec(capabilities.choose_encoding(raw.get("capabilities") if raw else None))
    ls.diagnostic_mode = capabilities.diagnostic_mode(params.initialization_options)
    ls.update_settings(params.initialization_options)
    ls.roots = _roots(params)
    ls.ws.set_roots(ls.roots)


def _roots(params: lsp.InitializeParams) -> list[str]:
    """The workspace folders (file: URIs only), else the root URI or path."""
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    out = [p for p in (file_path(u) for u in uris) if p is not None]
    if not out and params.root_path and params.root_path.startswith("/"):
        out = [os.path.normpath(params.root_path)]
    return list(dict.fromkeys(out))


@feature(lsp.INITIALIZED)
def initialized(ls: QuiverServer, params: lsp.InitializedParams) -> None:
    ls.docs.warm_up()
    loop = asyncio.get_running_loop()
    loop.create_task(_pull_configuration(ls))
    ls.background.start(loop)
    loop.create_task(ls._scan())
    loop.create_task(_watch_files(ls))


async def _watch_files(ls: QuiverServer) -> None:
    """Ask the client to report created, changed and deleted .qv files."""
    ws = ls.client_capabilities.workspace
    watched = ws.did_change_watched_files if ws is not None else None
    if watched is None or not watched.dynamic_registration:
        return
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        watchers=[lsp.FileSystemWatcher(glob_pattern=g) for g in ("**/*.qv", "**/pyproject.toml")]
    )
    registration = lsp.Registration(
        id="quiver-watch-qv", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
    except Exception as exc:  # the client may refuse; files are then read when opened or imported
        ls.log(f"registering the file watcher failed: {exc}")


@feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@notification
def workspace_did_change_watched_files(ls: QuiverServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    changes = []
    config_changed = False
    for ch in params.changes:
        path = file_path(ch.uri)
        if path is not None and path.endswith(".qv"):
            changes.append((path, ch.type == lsp.FileChangeType.Deleted))
        config_changed |= path is not None and os.path.basename(path) == "pyproject.toml"
    if changes:
        ls.files_changed(changes)
    if config_changed:
        ls.project_config_changed()


@feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
@notification
def workspace_did_change_workspace_folders(ls: QuiverServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    removed = {p for p in (file_path(f.uri) for f in params.event.removed) if p is not None}
    added = [p for p in (file_path(f.uri) for f in params.event.added) if p is not None]
    roots = [r for r in ls.roots if r not in removed]
    roots += [a for a in added if a not in roots]
    ls.set_roots(roots)


async def _pull_configuration(ls: QuiverServer) -> None:
    ws = ls.client_capabilities.workspace
    if ws is None or not ws.configuration:
        return
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="quiver")])
        )
    except Exception as exc:  # the client may not answer; the defaults stand
        ls.log(f"workspace/configuration failed: {exc}")
        return
    if result:
        ls.update_settings(result[0])


@feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
@notification
def workspace_did_change_configuration(ls: QuiverServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and settings:
        ls.update_settings(settings)
    else:
        asyncio.get_running_loop().create_task(_pull_configuration(ls))


@feature(lsp.SHUTDOWN)
def shutdown(ls: QuiverServer, params) -> None:
    ls.runs.stop_all()
