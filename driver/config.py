"""qlint's settings in pyproject.toml, under `[tool.quiver]`.

    [tool.quiver]
    select = ["E", "W02"]   # only these codes or prefixes (qlint --select)
    ignore = ["W0105"]      # never these (qlint --ignore)
    strict = true           # warnings fail the run too (qlint --strict)

The file is found as ruff finds its own: the nearest pyproject.toml that has
a `[tool.quiver]` table, from the folder of the first path checked (the
current folder when none is given, or for `-`) upward to the filesystem
root; so a file above the workspace, even one of another owner, may apply
(`qlint --show-settings` and the server's log say which one did). An option
on the command line replaces the setting of the same name.

A table that cannot be applied (not TOML, nested too deeply for the parser,
an integer of thousands of digits, an unknown key, a value of the wrong type,
an unknown code) is a `ConfigError` that names the file, the problem and its
line: qlint and the server report it as E0014 at the file and check with the
defaults. A pyproject.toml that is not a regular file (a FIFO, a device) or
a link out of the workspace (driver/inputs.py) is never read: it counts as
absent, with a note.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quiver.checker import catalog
from quiver.checker.ast import Span
from quiver.checker.diagnostics import Diagnostic
from quiver.checker.source import LineIndex

from .inputs import read_source, why_not_source

# A pyproject.toml is read whole; its own cap, not a source file's.
MAX_CONFIG_BYTES = 1 << 20

KEYS = ("select", "ignore", "strict")


class ConfigError(Exception):
    """A `[tool.quiver]` table that cannot be applied: the file, what is
    wrong, and the 1-based line where it is when that is known. qlint and
    the server report it as E0014 at the file and go on with defaults."""

    def __init__(self, path: Path | str, problem: str, line: int | None = None) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem
        self.line = line
        self.text = ""  # the file's text, when it was read

    def diagnostic(self) -> Diagnostic:
        """E0014 at the file: on the problem's line, or on the first line."""
        lines = LineIndex(self.text)
        n = len(lines.line_starts)
        line = min(max((self.line or 1) - 1, 0), n - 1)
        text = lines.line_text(line)
        start = lines.offset(line, len(text) - len(text.lstrip()))
        end = lines.offset(line, len(text.rstrip()))
        E0014 = catalog.CODES["E0014"]
        return Diagnostic("E0014", E0014.severity, E0014.message.format(problem=self.problem), Span(start, end))


@dataclass(frozen=True)
class Config:
    path: str | None = None  # the pyproject.toml read, None when there is none
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    strict: bool = False

    def shows(self, code: str) -> bool:
        """Whether a diagnostic with this code is reported under these settings."""
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(i) for i in self.ignore)


def find(start: str, roots: Sequence[str] = (), notes: list[str] | None = None) -> tuple[Path, dict, bytes] | None:
    """The nearest pyproject.toml with a [tool.quiver] table, from `start`
    up, that table and the file's bytes (for the line of a problem). A candidate that is not read (a FIFO, a device, a
    link out of the root that holds it, or of its own folder when no root
    does) counts as absent; why is appended to `notes`."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    resolved_roots = [os.path.realpath(r) for r in roots]
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not os.path.lexists(candidate):
            continue
        # the folder may be untrusted: a FIFO, a device or a link out of it is refused, never read
        within = _holding_root(str(folder), resolved_roots) or str(folder)
        try:
            data = read_source(str(candidate), limit=MAX_CONFIG_BYTES, within=within)
        except OSError as e:
            if notes is not None:
                reason = why_not_source(str(candidate), within) or (e.strerror or str(e))
                notes.append(f"{candidate} was not read ({reason}); its settings do not apply")
            continue
        if b"quiver" in data:  # no [tool.quiver] table without the word
            try:
                table = _table(candidate, data)
            except ConfigError as e:
                e.text = data.decode("utf-8", "replace")
                raise
            if table is not None:
                return candidate, table, data
    return None


def _holding_root(folder: str, roots: Sequence[str]) -> str | None:
    holding = [r for r in roots if folder == r or folder.startswith(r.rstrip(os.sep) + os.sep)]
    return min(holding, key=len) if holding else None


def _table(path: Path, data: bytes) -> dict | None:
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(path, f"not valid UTF-8 (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(path, f"not valid TOML: {e}", _toml_error_line(str(e), data)) from None
    except RecursionError:
        # tomllib recurses once per nested array or inline table
        problem = "not read: its arrays or tables are nested too deeply"
        raise ConfigError(path, problem, _key_line(data, None)) from None
    except ValueError as e:  # an integer past Python's limit on digits, among others
        raise ConfigError(path, f"not read: {e}", _key_line(data, None)) from None
    except MemoryError:
        raise ConfigError(path, "not read: it needs too much memory", _key_line(data, None)) from None
    tool = doc.get("tool")
    table = tool.get("quiver") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(path, "tool.quiver must be a table", _key_line(data, None))
    return table


def _toml_error_line(message: str, data: bytes) -> int | None:
    m = re.search(r"\(at line (\d+), column \d+\)", message)
    if m:
        return int(m.group(1))
    if "(at end of document)" in message:
        return max(1, len(data.decode("utf-8", "replace").rstrip().splitlines()))
    return _key_line(data, None)


def _key_line(data: bytes, key: str | None) -> int | None:
    """The line of `[tool.quiver]` (key None) or of `key = ...` in it."""
    lines = data.decode("utf-8", "replace").splitlines()
    header = next((i for i, t in enumerate(lines) if re.match(r"\s*\[\s*tool\s*\.\s*quiver\s*\]", t)), None)
    if header is None:
        return None
    if key is not None:
        for i in range(header + 1, len(lines)):
            if re.match(r"\s*\[", lines[i]):
                break
            if re.match(rf"\s*\"?{re.escape(key)}\"?\s*=", lines[i]):
                return i + 1
    return header + 1


def load(start: str, roots: Sequence[str] = (), notes: list[str] | None = None) -> Config:
    found = find(start, roots, notes)
    if found is None:
        return Config()
    try:
        return parse(*found)
    except ConfigError as e:
        e.text = found[2].decode("utf-8", "replace")
        raise


def parse(path: Path, table: dict, data: bytes = b"") -> Config:
    for key in table:
        if key not in KEYS:
            raise ConfigError(
                path, f"unknown key tool.quiver.{key} (the keys are {', '.join(KEYS)})", _key_line(data, key)
            )
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigError(path, "tool.quiver.strict must be true or false", _key_line(data, "strict"))
    return Config(str(path), _codes(path, table, "select", data), _codes(path, table, "ignore", data), strict)


def _codes(path: Path, table: dict, key: str, data: bytes = b"") -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            path,
            f'tool.quiver.{key} must be a list of codes or prefixes, such as ["E02", "W0101"]',
            _key_line(data, key),
        )
    out = []
    for v in value:
        code = v.strip().upper()
        if not code or not any(k.startswith(code) for k in catalog.CODES):
            raise ConfigError(
                path,
                f"tool.quiver.{key}: no diagnostic code matches '{v}' (see qlint --list-codes)",
                _key_line(data, key),
            )
        out.append(code)
    return tuple(out)
