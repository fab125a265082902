"""Stub: replaced in the next step."""

from __future__ import annotations

from . import ast as A


def parse(text: str) -> A.Item | None:
    return None
