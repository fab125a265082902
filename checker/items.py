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
from collections.abc import Callable
from dataclasses import dataclass

from .ast import Item
from .diagnostics import LocalDiagnostic
from .lexical import bidi_warnings
from .parser import ItemParse, parse_item
from .source import LineIndex

# Column 0, not blank, not a comment (nor a byte order mark: see split_items).
_ITEM_START = re.compile(r"^(?=[^\s#\ufeff])", re.M)
# The same, where a lone `\r` also ends a line (rare: checked for first).
_ITEM_START_CR = re.compile(r"(?:^|(?<=\r))(?=[^\s#\ufeff])", re.M)
_LONE_CR = re.compile(r"\r(?!\n)")
BOM = "\ufeff"


def split_items(text: str, at_document_start: bool = True) -> list[tuple[int, int]]:
    """(start, end) of each item's text; leading comments and blank lines form a
    chunk of their own, which parses to nothing. A byte order mark that starts
    the document is a chunk of its own, which parses to nothing too (an editor
    hands it over as text); anywhere else it is an unexpected character."""
    pattern = _ITEM_START_CR if "\r" in text and _LONE_CR.search(text) else _ITEM_START
    starts = [m.start() for m in pattern.finditer(text)]
    if at_document_start and text.startswith(BOM):
        if starts and starts[0] == 0:  # a line that starts with a stray mark is no item
            starts.pop(0)
        starts.insert(0, 1)
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
    # Warnings about the item's characters, whichever parser read it (W0001:
    # a bidirectional control in a string or a comment), found when the item
    # is cut and kept while it is reused. Not among the parse's diagnostics,
    # which mean a partial parse.
    lexical: tuple[LocalDiagnostic, ...] = ()

    @property
    def item(self) -> Item | None:
        return self.parse.item

    @property
    def end(self) -> int:
        return self.start + len(self.parse.text)


class ParseCache:
    """Parses by item text. Keeps the parses of the last two versions of a
    document, so undo and redo are as cheap as typing."""

    def __init__(self) -> None:
        self._current: dict[str, ItemParse] = {}
        self._previous: dict[str, ItemParse] = {}
        self.parsed = 0  # parses actually run (for tests and benchmarks)
        self.reused = 0  # lookups answered from the cache (a reused parse may be shared)

    def get(self, text: str) -> ItemParse:
        hit = self._current.get(text)
        if hit is None:
            hit = self._previous.get(text)
            if hit is None:
                hit = parse_item(text)
                self.parsed += 1
                self._current[text] = hit
                return hit
            self._current[text] = hit
        self.reused += 1
        return hit

    def parse_again(self, text: str) -> ItemParse:
        """A parse of its own, for a second item with the same text as
        another: analysis results are keyed by the item object, so two
        items of one document must never share one."""
        self.parsed += 1
        return parse_item(text)

    def keep(self, parse: ItemParse) -> None:
        """Keep a parse reused without a lookup (its text's hash is cached)."""
        self._current[parse.text] = parse

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


def _no_check() -> None:
    pass


def parse_document(
    text: str,
    cache: ParseCache | None = None,
    previous: ParsedDocument | None = None,
    check: Callable[[], None] = _no_check,
) -> ParsedDocument:
    """Parse a document. With the previous version, only the items around the
    edit are cut and looked up again: the items before it are reused as they
    are, the items after it moved by the edit's length. `check` is called
    before each item is looked up (it may raise to stop the parse: the cache
    then holds only whole parses, keyed by their text)."""
    cache = cache if cache is not None else ParseCache()
    reused = cache.reused
    if previous is None or not previous.slots:
        slots = tuple(_slots(text, 0, split_items(text), cache, check))
    else:
        # The previous slots were distinct, and a fresh parse is a new object:
        # only a parse the cache handed out again can be shared.
        slots = _reparse(text, cache, previous, check)
    if cache.reused != reused:
        slots = _distinct(slots, cache)
    cache.end_version()
    return ParsedDocument(text, LineIndex(text), slots)


def _distinct(slots: tuple[ItemSlot, ...], cache: ParseCache) -> tuple[ItemSlot, ...]:
    """The slots, where no two share a parse: a repeated item (a copy-pasted
    function) gets a parse of its own, whatever the edit history was."""
    parses = [id(s.parse) for s in slots if s.item is not None]
    if len(set(parses)) == len(parses):  # the usual case, checked at C speed
        return slots
    seen: set[int] = set()
    out = None
    for i, slot in enumerate(slots):
        if slot.item is None:
            continue
        key = id(slot.parse)
        if key in seen:
            out = list(slots) if out is None else out
            out[i] = ItemSlot(slot.start, cache.parse_again(slot.parse.text), slot.lexical)
        seen.add(key)
    return slots if out is None else tuple(out)


def _slots(text: str, base: int, bounds, cache: ParseCache, check: Callable[[], None]) -> list[ItemSlot]:
    out = []
    for s, e in bounds:
        check()
        item_text = text[base + s : base + e]
        out.append(ItemSlot(base + s, cache.get(item_text), bidi_warnings(item_text)))
    return out


def _reparse(text: str, cache: ParseCache, previous: ParsedDocument, check: Callable[[], None]) -> tuple[ItemSlot, ...]:
    old = previous.text
    prefix = _common_prefix(old, text)
    suffix = _common_suffix(old, text, max(0, min(len(old), len(text)) - prefix))
    delta = len(text) - len(old)
    old_slots = previous.slots
    # Items that the edit cannot have touched: those ending before the
    # character ahead of the change (its line break decides whether the
    # changed text starts an item), and those starting after it.
    changed_from = prefix - 1
    changed_to = len(old) - suffix + 1
    first = 0
    while first < len(old_slots) and old_slots[first].end <= changed_from:
        first += 1
    last = len(old_slots) - 1
    while last >= first and old_slots[last].start >= changed_to:
        last -= 1
    head = old_slots[:first]
    tail = old_slots[last + 1 :]
    start = old_slots[first].start if first < len(old_slots) else (head[-1].end if head else 0)
    end = (tail[0].start + delta) if tail else len(text)
    for s in head:
        cache.keep(s.parse)
    middle = _slots(text, start, split_items(text[start:end], at_document_start=start == 0), cache, check)
    moved = []
    for s in tail:
        cache.keep(s.parse)
        moved.append(ItemSlot(s.start + delta, s.parse, s.lexical) if delta else s)
    return tuple(head) + tuple(middle) + tuple(moved)


_CHUNK = 4096


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i + _CHUNK <= n and a[i : i + _CHUNK] == b[i : i + _CHUNK]:
        i += _CHUNK
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most `limit`."""
    i = 0
    la, lb = len(a), len(b)
    while i + _CHUNK <= limit and a[la - i - _CHUNK : la - i] == b[lb - i - _CHUNK : lb - i]:
        i += _CHUNK
    while i < limit and a[la - i - 1] == b[lb - i - 1]:
        i += 1
    return i
