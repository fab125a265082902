"""The texts of Quiver's own library (library/*.qv), for tests that check
examples importing it through the pure checker (`check_example(..., library=)`)."""

from __future__ import annotations

from pathlib import Path

LIBRARY_FOLDER = Path(__file__).resolve().parents[1] / "library"
LIBRARY = {p.name: p.read_text(encoding="utf-8") for p in sorted(LIBRARY_FOLDER.glob("*.qv"))}
