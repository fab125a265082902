"""The Quiver language server: pygls over stdio, a thin adapter over
quiver.checker (whose `ide` module answers every question about the language).

Start it with `python -m quiver.server` or `quiver-lsp` (both accept `--stdio`).
Importing this package is free: pygls, lsprotocol and the checker are loaded
by `quiver.server.server`, never torch.
"""

__version__ = "0.1.0"
