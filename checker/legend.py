"""The semantic-token legend: the token types and modifiers the checker's
highlighting (checker/ide/highlighting.py) uses, which the language server
announces. Standard LSP names, plus `mutable` (a `mut` parameter) and
`buffer` (a model buffer, as opposed to a param).

Its own module, importing nothing, so the server can announce it before the
checker is loaded.
"""

TOKEN_TYPES = ("typeParameter", "class", "property", "parameter", "variable", "function")
TOKEN_MODIFIERS = ("declaration", "readonly", "defaultLibrary", "mutable", "buffer")
