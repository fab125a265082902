"""`[tool.quiver]` in pyproject.toml, as the server applies it: the codes a
file's `select` / `ignore` leave out are not shown, so the editor shows what
`qlint` reports for the same file (driver/config.py finds and validates the
table; `strict` only changes qlint's exit status and means nothing here).

A file's settings come from the nearest pyproject.toml with the table, from
its folder up, read once per folder and read again when a pyproject.toml
changes (the server watches them). A table that is not valid is reported
once, as qlint reports it, and then filters nothing."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

from quiver import config

D = TypeVar("D")


class ProjectConfigs:
    def __init__(self, report: Callable[[str], None]) -> None:
        self._report = report
        self._reported: set[str] = set()
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
        try:
            found = config.load(folder)
        except config.ConfigError as e:
            found = config.Config()
            with self._lock:
                first = str(e) not in self._reported
                self._reported.add(str(e))
            if first:
                self._report(f"{e}; no codes are left out until it is fixed")
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
            self.generation += 1
