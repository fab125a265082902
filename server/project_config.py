"""`[tool.quiver]` in pyproject.toml, as the server applies it: the codes a
file's `select` / `ignore` leave out are not shown, so the editor shows what
`qlint` reports for the same file (driver/config.py finds and validates the
table; `strict` only changes qlint's exit status and means nothing here).

A file's settings come from the nearest pyproject.toml with the table, from
its folder up, read once per folder and read again when a pyproject.toml
changes (the server watches them). Which file applies is written to the
log once. A table that cannot be applied is E0014 at that pyproject.toml,
as qlint reports it, and then filters nothing: every file is checked with
the defaults. A pyproject.toml that is not read (a FIFO, a link out of the
workspace) counts as absent, and the log says so."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from quiver import config

D = TypeVar("D")


class ProjectConfigs:
    def __init__(
        self,
        report: Callable[[str], None],
        problem: Callable[[config.ConfigError], None] = lambda e: None,
        cleared: Callable[[str], None] = lambda path: None,
        roots: Callable[[], Sequence[str]] = tuple,
    ) -> None:
        self._report = report  # a line for the log
        self._problem = problem  # publish E0014 at the file
        self._cleared = cleared  # the file's E0014 is gone
        self._roots = roots
        self._reported: set[str] = set()
        self._problems: set[str] = set()  # the files whose E0014 is published
        self._by_folder: dict[str, config.Config] = {}
        self._lock = threading.Lock()  # diagnostics are converted on query threads too
        self.generation = 0  # bumped at each change: part of pulled diagnostics' result ids

    def for_path(self, path: str | None) -> config.Config:
        if path is None:
            return config.Config()  # an untitled document: no folder, no settings
        folder = os.path.dirname(path)
        with self._lock:
            hit = self._by_folder.get(folder)
        if hit is not None:
            return hit
        notes: list[str] = []
        problem: config.ConfigError | None = None
        try:
            found = config.load(folder, self._roots(), notes)
        except config.ConfigError as e:
            found, problem = config.Config(), e
        lines = [*notes]
        if problem is not None:
            lines.append(f"{problem} (E0014): every file is checked with the default settings until it is fixed")
        elif found.path is not None:
            lines.append(
                f"settings of {found.path} apply: select {list(found.select) or 'every code'}, "
                f"ignore {list(found.ignore)}"
            )
        with self._lock:
            new = [line for line in lines if line not in self._reported]
            self._reported.update(new)
            first_problem = problem is not None and problem.path not in self._problems
            if first_problem and problem is not None:
                self._problems.add(problem.path)
        for line in new:
            self._report(line)
        if first_problem and problem is not None:
            self._problem(problem)
        with self._lock:
            self._by_folder[folder] = found
        return found

    def shown(self, path: str | None, diagnostics: Iterable[D], code: Callable[[D], str]) -> list[D]:
        conf = self.for_path(path)
        if not conf.select and not conf.ignore:
            return list(diagnostics)
        return [d for d in diagnostics if conf.shows(code(d))]

    def changed(self) -> None:
        """A pyproject.toml was created, changed or deleted somewhere."""
        with self._lock:
            self._by_folder.clear()
            self._reported.clear()
            problems, self._problems = self._problems, set()
            self.generation += 1
        for path in problems:  # published again when the file is still wrong
            self._cleared(path)
