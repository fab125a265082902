"""Editor queries over one analysed document: the IDE layer of the checker.

Every function here takes an `Analysis` (one version of one document) and an
offset or a span in absolute code points of its text, and returns plain frozen
dataclasses in the same offsets. Nothing here knows the Language Server
Protocol: quiver.server turns these answers into protocol types and converts
offsets into the client's position encoding.

The queries:

- `hover`: markdown for the name or expression under the cursor: its type with
  inferred shapes; a `Grad[M]` value's fields; a function's signature and the
  params it reads (with the chain for indirect reads).
- `definition`, `references`, `document_symbols`.
- `completions`: fields after `m.` / `g.`, dims after `over=`, types in
  signatures, and in bodies locals, dims, functions, built-ins and keywords.
- `signature_help`: works on broken text (the text is scanned, not the tree).
- `inlay_hints`: the inferred type of each binding.
- `semantic_tokens`: dims, models, model params, parameters, functions.
- `code_lenses`: the param reads of functions that take a model and of each
  `value_and_grad` call; "Run" above `fn main`.
- `code_actions`: quick fixes from the diagnostics' fixes, plus "did you mean"
  renames and a few other mechanical fixes.

One module per query (hover.py, navigation.py, completion.py,
signature_help.py, inlay_hints.py, highlighting.py, lenses.py, actions.py);
symbols.py indexes the name occurrences they share, models.py says what a
model type shows (an instance's fields and methods with its dims put in, a
receiver written as text), results.py holds the answer types.

Names in Quiver have function scope (like Python), so a local is identified by
its function and its name; a model param and the gradient field of the same
name are one symbol (renaming one means renaming both).
"""

from __future__ import annotations

from ..legend import TOKEN_MODIFIERS, TOKEN_TYPES
from .actions import code_actions, fixes
from .completion import completions
from .highlighting import semantic_tokens
from .hover import describe_fn, hover, param_reads_report
from .inlay_hints import inlay_hints
from .lenses import code_lenses, is_runnable_main, lens_title, runnable
from .navigation import definition, document_symbols, highlights, references
from .results import (
    CodeAction,
    CodeLens,
    Completion,
    DocumentSymbol,
    Hover,
    InlayHint,
    NavTarget,
    SemanticToken,
    Signature,
    SignatureHelp,
)
from .signature_help import signature_help

__all__ = [
    "CodeAction",
    "CodeLens",
    "Completion",
    "DocumentSymbol",
    "Hover",
    "InlayHint",
    "NavTarget",
    "SemanticToken",
    "Signature",
    "SignatureHelp",
    "TOKEN_MODIFIERS",
    "TOKEN_TYPES",
    "code_actions",
    "code_lenses",
    "completions",
    "definition",
    "describe_fn",
    "document_symbols",
    "fixes",
    "highlights",
    "hover",
    "inlay_hints",
    "is_runnable_main",
    "lens_title",
    "param_reads_report",
    "references",
    "runnable",
    "semantic_tokens",
    "signature_help",
]
