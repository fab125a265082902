"""Cutting a document into top-level items, and parsing it incrementally.

An item starts at a line whose first character is neither whitespace nor `#`:
items begin at column 0 and everything inside one is indented (comment lines
may sit anywhere). The cut is a single regular-expression scan, so it is cheap
to redo on every edit; each item's text is then looked up in a cache of parses
keyed by the text itself. An edit re-parses only the items whose text it
changed, and the others are reused as they are: their trees hold offsets
relative to the item, so moving an item costs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .ast import Item, Node, Span
from .diagnostics import LocalDiagnostic
from .parser import ItemParse, parse_item
from .source import LineIndex

# Column 0, not blank, not a comment.
_ITEM_START = re.compile(r"^(?=[^\s#])", re.M)
# The same, where a lone `\r` also ends a line (rare: checked for first).
_ITEM_START_CR = re.compile(r"(?:^|(?<=\r))(?=[^\s#])", re.M)
_LONE_CR = re.compile(r"\r(?!\n)")


def split_items(text: str) -> list[tuple[int, int]]:
    """(start, end) of each item's text; leading comments and blank lines form a
    chunk of their own, which parses to nothing."""
    pattern = _ITEM_START_CR if "\r" in text and _LONE_CR.search(text) else _ITEM_START
    starts = [m.start() for m in pattern.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = []
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(text)
        if e > s:
            bounds.append((s, e))
    return bounds


@dataclass(frozen=True, slots=True)
class ItemSlot:
    start: int  # absolute offset of the item's first character
    parse: ItemParse

    @property
    def item(self) -> Item | None:
        return self.parse.item

    @property
    def end(self) -> int:
        return self.start + len(self.parse.text)

    def absolute(self, span: Span) -> Span:
        return Span(span.start + self.start, span.end + self.start)


class ParseCache:
    """Parses by item text. Keeps the parses of the last two versions of a
    document, so undo and redo are as cheap as typing."""

    def __init__(self) -> None:
        self._current: dict[str, ItemParse] = {}
        self._previous: dict[str, ItemParse] = {}
        self.parsed = 0  # parses actually run (for tests and benchmarks)

    def get(self, text: str) -> ItemParse:
        hit = self._current.get(text)
        if hit is None:
            hit = self._previous.get(text)
            if hit is None:
                hit = parse_item(text)
                self.parsed += 1
            self._current[text] = hit
        return hit

    def end_version(self) -> None:
        self._previous = self._current
        self._current = {}


@dataclass(frozen=True)
class ParsedDocument:
    text: str
    lines: LineIndex
    slots: tuple[ItemSlot, ...]

    @property
    def items(self) -> list[Item]:
        return [s.item for s in self.slots if s.item is not None]

    def syntax_diagnostics(self) -> list[tuple[ItemSlot, LocalDiagnostic]]:
        return [(s, d) for s in self.slots for d in s.parse.diagnostics]

    def slot_at(self, offset: int) -> ItemSlot | None:
        """The item whose text holds `offset` (an offset at the very end of an
        item belongs to it, so a cursor after the last character works)."""
        lo, hi = 0, len(self.slots) - 1
        found = None
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.slots[mid].start <= offset:
                found = self.slots[mid]
                lo = mid + 1
            else:
                hi = mid - 1
        return found

    def slot_of(self, node: Node) -> ItemSlot | None:
        for s in self.slots:
            if s.item is node:
                return s
        return None


def parse_document(text: str, cache: ParseCache | None = None) -> ParsedDocument:
    cache = cache if cache is not None else ParseCache()
    slots = tuple(ItemSlot(s, cache.get(text[s:e])) for s, e in split_items(text))
    cache.end_version()
    return ParsedDocument(text, LineIndex(text), slots)
