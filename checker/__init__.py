"""The Quiver checker: parsing, checking and compiling .qv programs.

A pure library: no torch, no pygls, no file or network I/O in the analysis.
Entry points: `Analyzer` (incremental, one per document), `check_text`,
`check_bytes`, and `catalog` (every diagnostic code, documented).
"""

from .analysis import Analysis, Analyzer, check_bytes, check_text
from .diagnostics import Diagnostic, Severity

__all__ = ["Analysis", "Analyzer", "Diagnostic", "Severity", "check_bytes", "check_text"]
