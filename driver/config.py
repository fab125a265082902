"""qlint's settings in pyproject.toml, under `[tool.quiver]`.

    [tool.quiver]
    select = ["E", "W02"]   # only these codes or prefixes (qlint --select)
    ignore = ["W0105"]      # never these (qlint --ignore)
    strict = true           # warnings fail the run too (qlint --strict)

The file is found as ruff finds its own: the nearest pyproject.toml that has
a `[tool.quiver]` table, from the folder of the first path checked (the
current folder when none is given, or for `-`) upward to the filesystem
root. An option on the command line replaces the setting of the same name.
A file that is not TOML, an unknown key, a value of the wrong type or an
unknown code is an error that names the file and the key (qlint exits 2);
so is a pyproject.toml that is not a regular file (a FIFO, a link out of its
folder: driver/inputs.py), which is never read.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from quiver.checker import catalog

from .inputs import read_source

# A pyproject.toml is read whole; its own cap, not a source file's.
MAX_CONFIG_BYTES = 1 << 20

KEYS = ("select", "ignore", "strict")


class ConfigError(Exception):
    pass


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


def find(start: str) -> tuple[Path, dict] | None:
    """The nearest pyproject.toml with a [tool.quiver] table, from `start`
    up, and that table."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if not os.path.lexists(candidate):
            continue
        # the folder may be untrusted: a FIFO, a device or a link out of it is refused, never read
        try:
            data = read_source(str(candidate), limit=MAX_CONFIG_BYTES, within=str(folder))
        except OSError as e:
            raise ConfigError(f"{candidate}: cannot read it: {e.strerror or e}") from None
        if b"quiver" in data:  # no [tool.quiver] table without the word
            table = _table(candidate, data)
            if table is not None:
                return candidate, table
    return None


def _table(path: Path, data: bytes) -> dict | None:
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    tool = doc.get("tool")
    table = tool.get("quiver") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.quiver must be a table")
    return table


def load(start: str) -> Config:
    found = find(start)
    return Config() if found is None else parse(*found)


def parse(path: Path, table: dict) -> Config:
    for key in table:
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown key tool.quiver.{key} (the keys are {', '.join(KEYS)})")
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigError(f"{path}: tool.quiver.strict must be true or false")
    return Config(str(path), _codes(path, table, "select"), _codes(path, table, "ignore"), strict)


def _codes(path: Path, table: dict, key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{path}: tool.quiver.{key} must be a list of codes or prefixes, such as ["E02", "W0101"]')
    out = []
    for v in value:
        code = v.strip().upper()
        if not code or not any(k.startswith(code) for k in catalog.CODES):
            raise ConfigError(f"{path}: tool.quiver.{key}: no diagnostic code matches '{v}' (see qlint --list-codes)")
        out.append(code)
    return tuple(out)
