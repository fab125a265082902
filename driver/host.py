"""The checker's view of the file system for the command-line tools.

`checker.workspace.Workspace` does no I/O; `DiskHost` answers its questions
from disk: module files are read through `inputs.read_source` (regular files
of at most 10 MiB, never through a symbolic link that leads out of the
workspace), decoded as the checker decodes bytes (invalid UTF-8 is E0001,
not a failure), and a project is the nearest folder above a file that holds
a `quiver.toml`.

The workspace boundary is what the user chose: the roots (the folders open in
the editor, the paths given to qlint). A `quiver.toml` found above every root
is not part of it: such a marker may sit in a home folder, and honouring it
would let a link in the workspace (`tok.qv -> ../token.txt`) be read. Only
`quiver run` and `quiver.load`, which run the program anyway, take the
project folder of the file they were asked to run (`projects_above_roots`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from quiver.checker.source import decode_source
from quiver.checker.workspace import PROJECT_FILE, DecodedText, Workspace

from . import inputs


class DiskHost:
    """`remember_projects`: look for each folder's `quiver.toml` once (a
    command's run); the language server looks again each time, since a
    project file may come and go while it runs.

    The folders checked are untrusted: a symbolic link in them is followed
    only while it stays inside the tree that holds it, the outermost of the
    workspace roots and project folders that contain its path (for a file
    under none of them, its own folder). A link that leads out is neither
    read nor listed: `why_unusable` says so, for E0113, and reading it gives
    an empty text marked `unreadable`, for E0012."""

    def __init__(
        self, remember_projects: bool = True, roots: Iterable[str] = (), projects_above_roots: bool = False
    ) -> None:
        self._projects: dict[str, str | None] = {}
        self._remember = remember_projects
        self._projects_above_roots = projects_above_roots
        self._roots: tuple[str, ...] = tuple(roots)
        self.libraries: tuple[str, ...] = library_folders()

    def set_roots(self, roots: Iterable[str]) -> None:
        """The workspace roots (the checker's Workspace passes its own)."""
        self._roots = tuple(roots)

    def boundary(self, path: str) -> str:
        """The folder a link at `path` must not lead out of."""
        tops = [*self._roots, *self.libraries]
        project = self.project_root(path)
        if project is not None:
            tops.append(project)
        holding = [t for t in tops if inputs.inside(path, t)]
        return min(holding, key=len) if holding else os.path.dirname(path)

    def read(self, path: str) -> str | None:
        if "\0" in path:  # no file has such a name
            return None
        within = self.boundary(path)
        try:
            data = inputs.read_source(path, within=within)
        except inputs.InputError as e:
            return DecodedText("", unreadable=e.strerror)
        except (OSError, ValueError):  # ValueError: a path with a NUL in it
            # missing: None; there but not readable (a broken link, no permission): why
            reason = inputs.why_not_source(path, within)
            return None if reason is None else DecodedText("", unreadable=reason)
        text, problem = decode_source(data)
        return DecodedText(text, problem)

    def is_file(self, path: str) -> bool:
        return inputs.is_regular(path) and not inputs.escapes(path, self.boundary(path))

    def why_unusable(self, path: str) -> str | None:
        return inputs.why_not_source(path, within=self.boundary(path))

    def list_modules(self, folder: str) -> list[str]:
        """The modules in a folder (for "did you mean" on a missing import)."""
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        return sorted(
            n[:-3]
            for n in names
            if n.endswith(".qv") and n[:-3].isidentifier() and self.is_file(os.path.join(folder, n))
        )

    def project_root(self, path: str) -> str | None:
        """The folder of the nearest `quiver.toml` above `path`, when it lies
        inside a root (or anywhere, with `projects_above_roots` or no roots)."""
        found = self._nearest_project(path)
        if found is None or self._projects_above_roots or not self._roots:
            return found
        return found if any(inputs.inside(found, r) for r in self._roots) else None

    def _nearest_project(self, path: str) -> str | None:
        folder = os.path.dirname(path)
        seen = []
        found = None
        while True:
            if folder in self._projects:
                found = self._projects[folder]
                break
            seen.append(folder)
            if os.path.isfile(os.path.join(folder, PROJECT_FILE)):
                found = folder
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        if self._remember:
            for f in seen:
                self._projects[f] = found
        return found


def library_folders() -> tuple[str, ...]:
    """The folders of the libraries Quiver ships, written in Quiver (`nn`):
    the `quiver.library` package's folder, found without importing anything."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("quiver.library")
    except (ImportError, ValueError):
        return ()
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return tuple(normal_path(p) for p in locations[:1])


def normal_path(path: str) -> str:
    """The form the workspace keys files by: absolute, normalised, `/`."""
    return os.path.abspath(path).replace(os.sep, "/")


def workspace_for(paths: list[str], extra_roots: Iterable[str] = ()) -> Workspace:
    """A workspace over disk whose roots are the given folders (qlint's
    arguments; a file stands for its folder), then `extra_roots` (qlint's
    `--root`)."""
    roots = []
    for p in paths:
        p = normal_path(p)
        folder = p if os.path.isdir(p) else os.path.dirname(p)
        if folder not in roots:
            roots.append(folder)
    for r in extra_roots:
        if normal_path(r) not in roots:
            roots.append(normal_path(r))
    return Workspace(DiskHost(), roots)
