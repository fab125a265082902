"""The Quiver language server as the VS Code extension bundles it.

The extension runs `<the selected Python> bundled/tool/lsp_server.py --stdio`.
This script puts the extension's bundled/libs (Quiver without torch, pygls,
lsprotocol, lark, cattrs, attrs: pure Python, built by tools/bundle-python.sh)
first on sys.path and starts `quiver-lsp`. The libraries are added here, not
through PYTHONPATH, so that what the server starts (Run File's `quiver run`)
uses the interpreter's own packages and never these.
"""

import os
import sys

if sys.version_info < (3, 11):  # noqa: UP036 (this file runs on whatever Python the user has)
    sys.exit(
        "Quiver's bundled language server needs Python 3.11 or newer; "
        f"{sys.executable} is Python {sys.version.split()[0]}. Set quiver.interpreter to a newer Python."
    )

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
if not os.path.isdir(os.path.join(LIBS, "quiver")):
    sys.exit(f"Quiver's bundled libraries are missing ({LIBS}): reinstall the extension.")
sys.path.insert(0, LIBS)

from quiver.server.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
