"""The diagnostic catalog: every code Quiver reports, defined once.

Each entry is frozen data: the code, a short title, the severity, the message
template (its `{placeholders}` are the only way a message gets its details), an
explanation, an example that triggers it and the same example fixed. The
checker builds diagnostics with `E0201.at(span, expected=..., found=...)` and
never writes a message literal; `qlint --explain`, docs/diagnostics.md and the
language server all read this table. tests/test_catalog.py checks that every
example triggers its own code and every fix checks clean.

Ranges: E00xx syntax, E01xx names and scopes, E02xx shapes and dims, E03xx types
and dtypes, E04xx calls and bindings, E05xx mutability, E09xx models, E11xx
gradients, Wxxxx warnings.
"""

from __future__ import annotations

import string
import textwrap
from dataclasses import dataclass

from .ast import Span
from .diagnostics import Fix, LocalDiagnostic, LocalRelated, Severity

CODES: dict[str, "Code"] = {}


@dataclass(frozen=True)
class Code:
    code: str
    title: str
    severity: Severity
    message: str
    explanation: str
    example: str
    fixed: str | None
    unnecessary: bool = False

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(f for _, f, _, _ in string.Formatter().parse(self.message) if f)

    def at(
        self,
        span: Span,
        *,
        related: tuple[LocalRelated, ...] = (),
        fix: Fix | None = None,
        **args: object,
    ) -> LocalDiagnostic:
        if set(args) != self.placeholders:
            raise TypeError(f"{self.code} needs {sorted(self.placeholders)}, got {sorted(args)}")
        return LocalDiagnostic(
            self.code, self.severity, self.message.format(**args), span, tuple(related), fix, self.unnecessary
        )

    @property
    def docs_anchor(self) -> str:
        return self.code.lower()


def _code(code: str, title: str, message: str, explanation: str, example: str, fixed: str | None,
          *, warning: bool = False, unnecessary: bool = False) -> Code:
    assert code not in CODES, code
    entry = Code(
        code,
        title,
        Severity.WARNING if warning else Severity.ERROR,
        message,
        textwrap.dedent(explanation).strip(),
        textwrap.dedent(example).lstrip("\n"),
        textwrap.dedent(fixed).lstrip("\n") if fixed is not None else None,
        unnecessary,
    )
    CODES[code] = entry
    return entry


# ====================================================================== E00xx syntax

E0001 = _code(
    "E0001", "source is not valid UTF-8",
    "the file is not valid UTF-8: byte 0x{byte} cannot be decoded",
    """
    Quiver source files are UTF-8. The file contains a byte sequence that is not
    UTF-8 (often a file saved as Latin-1 or Windows-1252). The rest of the file is
    still checked, with the bad bytes read as U+FFFD; re-save the file as UTF-8.
    """,
    # A lone surrogate stands for the undecodable byte 0xFF (tests encode the
    # example with "surrogateescape").
    """
    # caf\udcff
    dim D = 4
    """,
    """
    # café
    dim D = 4
    """,
)

E0002 = _code(
    "E0002", "unexpected character",
    "unexpected character {char}",
    """
    The character cannot start any token of the language: it is not part of a
    name, number, string, operator or comment. Names may use letters, digits and
    `_`; strings are quoted with `"` or `'`; comments start with `#`.
    """,
    """
    fn main():
        x = 3 $ 4
    """,
    """
    fn main():
        x = 3 * 4
        print(x)
    """,
)

E0003 = _code(
    "E0003", "unexpected token",
    "expected {expected}{context}, found {found}",
    """
    The parser met a token that cannot come next at this point. The message says
    what could have come instead; the range is the token that was found. When the
    error is inside a function body only that statement is dropped, so the rest of
    the file is still checked.
    """,
    """
    fn main()
        print(1)
    """,
    """
    fn main():
        print(1)
    """,
)

E0004 = _code(
    "E0004", "unbalanced brackets",
    "{what}",
    """
    Every `(` needs a matching `)` and every `[` a matching `]`. A bracket that is
    never closed is reported at the bracket that opens it, a stray closing bracket
    where it stands.
    """,
    """
    fn main():
        print((1 + 2)
    """,
    """
    fn main():
        print((1 + 2))
    """,
)

E0005 = _code(
    "E0005", "bad indentation",
    "{what}",
    """
    Blocks are marked by indentation, as in Python. A line is indented more than
    the block it is in, or dedents to a column that no enclosing block uses.
    Top-level items (`dim`, `model`, `fn`, `extern fn`) start at column 0, and
    every line inside an item, continuation lines included, is indented.
    """,
    """
    fn main():
        x = 1
          print(x)
    """,
    """
    fn main():
        x = 1
        print(x)
    """,
)

E0006 = _code(
    "E0006", "tabs and spaces mixed",
    "indentation mixes tabs and spaces",
    """
    An item's indentation uses both tabs and spaces. Tabs count as eight columns,
    which rarely matches what the editor shows; indent with spaces only.
    """,
    """
    fn main():
        x = 1
    \tprint(x)
    """,
    """
    fn main():
        x = 1
        print(x)
    """,
)

E0007 = _code(
    "E0007", "invalid assignment target",
    "only a name or a field (m.w) can be assigned",
    """
    The left side of `=` must be a name (`x = ...`), several names
    (`l, g = ...`) or one field of a model (`m.w = ...`). Calls, operators and
    literals cannot be assigned.
    """,
    """
    fn main():
        f(1) = 2

    fn f(x: Int) -> Int:
        return x
    """,
    """
    fn main():
        y = f(1)
        print(y)

    fn f(x: Int) -> Int:
        return x
    """,
)

E0008 = _code(
    "E0008", "unterminated string",
    "unterminated string: the closing quote is missing",
    """
    A string literal must close on the line it opens, with the same quote it
    started with.
    """,
    """
    fn main():
        print("loss)
    """,
    """
    fn main():
        print("loss")
    """,
)

E0009 = _code(
    "E0009", "nested too deeply",
    "nested more than {limit} levels deep",
    """
    Brackets or expressions are nested more than the parser allows. No program
    written by hand comes close; generated code should introduce names for
    intermediate values.
    """,
    "fn main():\n    x = " + "(" * 101 + "1" + ")" * 101 + "\n",
    """
    fn main():
        x = 1
        print(x)
    """,
)

E0010 = _code(
    "E0010", "loop control outside a loop",
    "'{keyword}' outside a loop",
    """
    `break` and `continue` only mean something inside a `for` or `while` body.
    """,
    """
    fn main():
        break
    """,
    """
    fn main():
        for i in range(3):
            break
    """,
)


def get(code: str) -> Code | None:
    return CODES.get(code.upper())
