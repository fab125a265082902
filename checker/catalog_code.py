"""One entry of the diagnostic catalog (`Code`: its code, title, severity,
message template, explanation and examples; `at` builds a diagnostic from
it), and `_code`, which makes one and registers it in `CODES`.

The entries themselves are in checker/catalog.py and, for parameter
defaults, `main`'s parameters, constants and f-strings, in
checker/catalog_args.py; both register here, so neither imports the other
(catalog.py imports catalog_args at its end, which keeps the order of
`CODES`).
"""

from __future__ import annotations

import re
import string
import textwrap
from dataclasses import dataclass

from . import types as T
from .ast import Span
from .diagnostics import Fix, LocalDiagnostic, LocalRelated, Severity, TextEdit
from .type_pairs import distinct

CODES: dict[str, Code] = {}


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
    # The example stands for an input that cannot be written out (E0012: a
    # file of 10 MiB): shown as text, triggered by the catalog's tests.
    example_stands_for: bool = False
    # The language of the example and its fix: "quiver", or "toml" for a
    # problem in pyproject.toml's [tool.quiver] (E0014), reported by the tools.
    example_language: str = "quiver"
    # The named texts of the message's free detail ({reason}, {problem}, ...):
    # a call site picks one by name with `say`, so every word a user reads
    # stands here, with the code, and none at the call sites.
    variants: tuple[tuple[str, str], ...] = ()

    def say(self, variant: str, **args: object) -> str:
        """The text of the named variant, its placeholders filled in (types
        and dims written out as in a message)."""
        template = dict(self.variants)[variant]
        wanted = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        if set(args) != wanted:
            raise TypeError(f"{self.code}/{variant} needs {sorted(wanted)}, got {sorted(args)}")
        return template.format(**_shown(args))

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
        args = _clipped(_shown(args))
        if fix is None:
            # A "did you mean" hint whose diagnostic is on the misspelt name:
            # replacing the name is the fix.
            name = getattr(args.get("hint"), "name", None)
            if name is not None:
                fix = Fix(f"Change to '{name}'", (TextEdit(span, name),))
        return LocalDiagnostic(
            self.code, self.severity, self.message.format(**args), span, tuple(related), fix, self.unnecessary
        )

    @property
    def docs_anchor(self) -> str:
        return self.code.lower()

    @property
    def example_text(self) -> str:
        """The example as printable text (E0001's undecodable byte as \\xff;
        E0011's thousands of digits as their first and last few)."""
        text = self.example.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        # W0001's bidirectional control, named rather than reordering the page around it
        text = re.sub("[\u202a-\u202e\u2066-\u2069]", lambda m: f"<U+{ord(m.group()):04X}>", text)
        return re.sub(r"\d{80,}", lambda m: f"{m.group()[:6]}...{m.group()[-6:]} ({len(m.group()):,} digits)", text)


# The longest a text from the user may stand in a message: a 200,000-letter
# name or f-string field is shown by its ends, not echoed whole in every reply.
MAX_SHOWN = 1000


def _clipped(args: dict[str, object]) -> dict[str, object]:
    long = [k for k, v in args.items() if isinstance(v, str) and len(v) > MAX_SHOWN]
    if not long:
        return args
    out = dict(args)
    for k in long:
        text = str(args[k])
        head, tail = MAX_SHOWN // 2, MAX_SHOWN // 10
        out[k] = f"{text[:head]} … ({len(text) - head - tail:,} characters) … {text[-tail:]}"
    return out


def _shown(args: dict[str, object]) -> dict[str, object]:
    """The arguments of a message with its types (and dims) written out: two
    that print the same but are not the same type are told apart
    (`type_pairs.distinct`), so a message never calls X and X different."""
    typed = [k for k, v in args.items() if isinstance(v, (T.Type, T.Elem, *T.DIM_CLASSES))]
    if not typed:
        return args
    out = dict(args)
    for k in typed:
        out[k] = str(args[k])
    for i, k in enumerate(typed):
        for j in typed[i + 1 :]:
            if out[k] == out[j] and args[k] != args[j]:
                out[k], out[j] = distinct(args[k], args[j])
    return out


def _code(
    code: str,
    title: str,
    message: str,
    explanation: str,
    example: str,
    fixed: str | None,
    *,
    warning: bool = False,
    unnecessary: bool = False,
    example_stands_for: bool = False,
    example_language: str = "quiver",
    variants: dict[str, str] | None = None,
) -> Code:
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
        example_stands_for,
        example_language,
        tuple((variants or {}).items()),
    )
    CODES[code] = entry
    return entry
