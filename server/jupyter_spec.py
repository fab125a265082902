"""The language server's spec for JupyterLab (jupyterlab-lsp / jupyter-lsp).

jupyter-lsp finds language servers through the `jupyter_lsp_spec_v1` entry
point (pyproject.toml): a function of the server manager that returns
`{key: spec}`. The spec starts the server with the Python that runs Jupyter
(`-P`: the notebook's folder, which is untrusted, is not put on sys.path), so
the quiver-lang installed next to Jupyter is the one used. Imports nothing
beyond the standard library: jupyter-lsp calls it while Jupyter starts.
"""

from __future__ import annotations

import sys
from typing import Any

KEY = "quiver-lsp"
MIME_TYPES = ["text/x-quiver"]


def spec(app: Any = None) -> dict[str, dict[str, Any]]:
    """`{"quiver-lsp": spec}` in jupyter-lsp's spec format (version 2)."""
    return {
        KEY: {
            "version": 2,
            "display_name": "Quiver",
            "argv": [sys.executable, "-P", "-m", "quiver.server", "--stdio"],
            "languages": ["quiver"],
            "mime_types": list(MIME_TYPES),
            "urls": {
                "home": "https://github.com/quiver-lang/quiver",
                "issues": "https://github.com/quiver-lang/quiver/issues",
            },
            "install": {"pip": "pip install quiver-lang"},
            "env": {"PYTHONUNBUFFERED": "1"},
        }
    }
