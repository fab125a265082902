"""Turning lark's parse errors into sentences a user can act on.

lark reports the set of terminal names the parser could have accepted
(`RPAR`, `__ANON_0`, `_NL`, ...). This module says the same in words
("expected ',' or ')' in the argument list, found name 'y'") and picks the
offending token's range. The phrase after "expected" comes from the expected
set; the context ("after the function signature") from the tokens the parser
holds on its stack.
"""

from __future__ import annotations

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import catalog as C
from .ast import Span
from .diagnostics import LocalDiagnostic

_PUNCT = {
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COLON": "':'",
    "COMMA": "','",
    "DOT": "'.'",
    "EQUAL": "'='",
    "ARROW": "'->'",
    "PIPE_OP": "'|>'",
    "AUG_OP": "'+='",
    "COMP_OP": "a comparison",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "an operator",
    "FLOOR_OP": "'//'",
    "POW_OP": "'**'",
    "BIT_OR": "'|'",
    "BIT_AND": "'&'",
    "TILDE": "'~'",
    "DOTDOT": "'..'",
    "ELLIPSIS": "'...'",
}
_KEYWORDS = {
    "DIM": "dim",
    "CONST": "const",
    "TYPE": "type",
    "MODEL": "model",
    "TRAIT": "trait",
    "PARAM": "param",
    "BUFFER": "buffer",
    "FN": "fn",
    "EXTERN": "extern",
    "FROM": "from",
    "IMPORT": "import",
    "MUT": "mut",
    "ON": "on",
    "RETURN": "return",
    "PASS": "pass",
    "BREAK": "break",
    "CONTINUE": "continue",
    "IF": "if",
    "ELIF": "elif",
    "ELSE": "else",
    "FOR": "for",
    "IN": "in",
    "WHILE": "while",
    "OR": "or",
    "AND": "and",
    "NOT": "not",
    "AS": "as",
    "IS": "is",
    "NONE": "None",
    "TRUE": "True",
    "FALSE": "False",
}
_EXPR_START = {"NAME", "INT", "FLOAT", "STRING", "FSTRING", "LPAR", "LSQB", "ADD_OP", "NOT", "TRUE", "FALSE", "TILDE"}
_TYPE_START = {"NAME", "LSQB", "LPAR"}
# Tokens that could continue an expression already complete: listing them
# ("expected '+' or '*' or ...") only hides the useful alternatives.
_CONTINUATIONS = {
    "ADD_OP",
    "MUL_OP",
    "FLOOR_OP",
    "POW_OP",
    "COMP_OP",
    "PIPE_OP",
    "AS",
    "IS",
    "DOT",
    "LPAR",
    "LSQB",
    "AND",
    "OR",
    "AUG_OP",
    "BIT_OR",
    "BIT_AND",
}
_ITEM_START = {"DIM", "CONST", "TYPE", "MODEL", "TRAIT", "FN", "EXTERN", "IMPORT", "FROM"}
_STMT_START = {"RETURN", "PASS", "BREAK", "CONTINUE", "IF", "FOR", "WHILE", "RECOVERED"}


def _word(terminal: str) -> str:
    if terminal in _PUNCT:
        return _PUNCT[terminal]
    if terminal in _KEYWORDS:
        return f"'{_KEYWORDS[terminal]}'"
    return {
        "NAME": "a name",
        "INT": "an integer",
        "FLOAT": "a number",
        "STRING": "a string",
        "FSTRING": "an f-string",
        "_NL": "a new line",
        "_INDENT": "an indented block",
        "_DEDENT": "the end of the block",
        "$END": "the end of the item",
    }.get(terminal, terminal.lower())


def _found(token: Token) -> str:
    t = token.type
    if t == "$END":
        return "the end of the file"
    if t == "_NL":
        return "the end of the line"
    if t == "_INDENT":
        return "an indented line"
    if t == "_DEDENT":
        return "the end of the block"
    if t == "NAME":
        return f"name '{token}'"
    if t in ("INT", "FLOAT"):
        return f"number {token}"
    if t == "STRING":
        return "a string"
    if t == "RECOVERED":
        return "a statement"
    if t in _KEYWORDS:
        return f"keyword '{token}'"
    return f"'{token}'"


def expected_phrase(expected: set[str], in_args: bool = False) -> str:
    expected = {e for e in expected if e != "RECOVERED"}
    if in_args:
        expected.discard("EQUAL")  # `name=` of a keyword argument
    words: list[str] = []
    rest = set(expected)
    if {"INT", "STRING"} <= rest:
        words.append("an expression")
        rest -= _EXPR_START
    elif {"NAME", "LSQB"} <= rest and "INT" not in rest:
        words.append("a type")
        rest -= _TYPE_START
    if len(rest & _ITEM_START) >= 3:
        words.append("an item ('dim', 'const', 'type', 'model', 'fn', 'extern fn', 'import' or 'from')")
        rest -= _ITEM_START
    if len(rest & _STMT_START) >= 3 or ("RETURN" in rest and words == ["an expression"]):
        words = ["a statement"]
        rest -= _STMT_START
    # Operators that could continue a complete expression are listed only
    # when nothing else could come.
    core = rest - _CONTINUATIONS
    if core or words:
        rest = core
    end_of_line = "_NL" in rest
    rest.discard("_NL")
    ordered = sorted(rest, key=lambda t: (t not in _PUNCT, t))
    words.extend(_word(t) for t in ordered)
    if end_of_line:
        words.append("the end of the line")
    if not words:
        return "something else"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _context(stack: list, expected: set[str]) -> str:
    """Where the parser was, from the raw tokens still on its stack."""
    opens = []
    for i, v in enumerate(stack):
        if isinstance(v, Token):
            if v.type in ("LPAR", "LSQB"):
                opens.append((i, v))
            elif v.type in ("RPAR", "RSQB") and opens:
                opens.pop()
    keyword = None
    for v in reversed(stack):
        if isinstance(v, Token) and v.type in ("_NL", "_INDENT", "_DEDENT"):
            break  # the construct that opened a line before this one is finished
        if isinstance(v, Token) and v.type in (
            "FN",
            "MODEL",
            "DIM",
            "CONST",
            "EXTERN",
            "PARAM",
            "BUFFER",
            "IF",
            "ELIF",
            "ELSE",
            "WHILE",
            "FOR",
            "RETURN",
        ):
            keyword = v.type
            break
    if opens:
        i, tok = opens[-1]
        before = stack[i - 1] if i > 0 else None
        if (
            tok.type == "LPAR"
            and isinstance(before, Token)
            and before.type == "NAME"
            and keyword in ("FN", "EXTERN")
            and i >= 2
            and isinstance(stack[i - 2], Token)
            and stack[i - 2].type == "FN"
        ):
            return " in the parameter list"
        if (
            tok.type == "LPAR"
            and i > 0
            and not isinstance(before, Token | None)
            or (tok.type == "LPAR" and isinstance(before, Token) and before.type in ("NAME", "RPAR", "RSQB"))
        ):
            return " in the argument list"
        if tok.type == "LSQB":
            return " in the brackets"
        return " inside the parentheses"
    if "COLON" in expected:
        return {
            "FN": " after the function signature",
            "MODEL": " after the model name",
            "IF": " after the condition",
            "ELIF": " after the condition",
            "WHILE": " after the condition",
            "FOR": " after the loop header",
            "ELSE": " after 'else'",
            "PARAM": " after the param name",
            "BUFFER": " after the buffer name",
        }.get(keyword or "", "")
    if "FROM" in expected and any(isinstance(v, Token) and v.type == "EXTERN" for v in stack):
        return " after the extern signature"
    return ""


def describe_unexpected(e: UnexpectedInput, text: str) -> tuple[LocalDiagnostic, int]:
    """The diagnostic for a lark parse error, and the offset it is about."""
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream
        return C.E0002.at(Span(pos, pos + 1), char=repr(text[pos])), pos
    if isinstance(e, UnexpectedEOF):
        end = len(text.rstrip())
        return C.E0003.at(
            Span(end, end), expected=expected_phrase(set(e.expected)), context="", found="the end of the file"
        ), end
    assert isinstance(e, UnexpectedToken)
    token = e.token
    stack = []
    if e.interactive_parser is not None:
        stack = list(e.interactive_parser.parser_state.value_stack)
    expected = set(e.expected)
    try:
        # The exact set: LALR merges lookaheads, so the table's set can hold
        # tokens that would fail a step later (accepts() tries each one).
        accepted = set(e.accepts or ())
        if accepted:
            expected = accepted
    except Exception:  # pragma: no cover - fall back to the table's set
        pass
    span = _token_span(token, text)
    pipe = next((v for v in reversed(stack[-3:]) if isinstance(v, Token) and v.type == "PIPE_OP"), None)
    if pipe is not None and token.type not in ("_NL", "$END"):
        return C.E0003.at(
            span,
            expected="the end of the pipe",
            context="",
            found=f"{_found(token)} (the right side of |> is a call such as f(y); "
            "put the pipe in parentheses to go on)",
        ), span.start
    if token.type == "_INDENT":
        return C.E0005.at(span, problem=C.E0005.say("indented_more")), span.start
    tail = [v.type if isinstance(v, Token) else None for v in stack[-2:]]
    if tail == ["COLON", "_NL"]:
        # A block header whose block is missing.
        context = _context(stack[:-1], {"COLON"})
        return C.E0003.at(span, expected="an indented block", context=context, found=_found(token)), span.start
    context = _context(stack, expected)
    if context == " in the parameter list" and "COLON" in expected and token.type in _TYPE_START:
        # `fn f(x Int)`: a parameter may end at its name only as a method's `self`,
        # so after a name followed by a type the colon is what is missing.
        expected = {"COLON"}
    hint = _bracket_hint(stack, token)
    if hint is None and token.type == "COLON" and "EQUAL" in expected:
        hint = ANNOTATION_HINT  # `x: [3] = ...`, a target with Python's annotation
    found = _found(token) if hint is None else f"{_found(token)} ({hint})"
    digits = _digits_before(token, text)
    if digits:
        # `[2.5]`: where only an integer may stand, the lexer read `2` and then
        # `.5`; the number the user wrote is `2.5`
        span = Span(span.start - len(digits), span.end)
        found = f"number {digits}{token} (a dim is a whole number)"
    in_args = context in (
        " in the argument list",
        " in the parameter list",
        " inside the parentheses",
        " in the brackets",
    )
    return C.E0003.at(span, expected=expected_phrase(expected, in_args), context=context, found=found), span.start


SAME_PADDING_HINT = (
    'torch\'s padding="same" is its own layer here, nn.Conv2dSame[Ci, Co, K] or nn.Conv1dSame[Ci, Co, K], '
    "which keeps the input's size in its type"
)
ANNOTATION_HINT = "an assignment takes no type: the name has its value's type, as in x = zeros([3])"
ANY_RANK_HINT = "[..], a shape of any rank, is for built-ins only, for now: a fn's types name every dim, as in [b D]"
INDEX_HINT = (
    "indexing takes one index or one slice, of the first dim: x[i], x[i:j]; "
    "to slice another dim, move it to the front with permute first"
)


def _digits_before(token: Token, text: str) -> str:
    """The integer part the lexer cut off a `.5` it found (`2` of `2.5`)."""
    if token.type != "FLOAT" or not str(token).startswith(".") or token.start_pos is None:
        return ""
    start = token.start_pos
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] == "_"):
        start -= 1
    if (
        start == token.start_pos
        or not text[start].isdigit()
        or start
        and (text[start - 1].isalpha() or text[start - 1] == "_")
    ):
        return ""  # nothing cut off, or the end of a name (`a1.5`)
    return text[start : token.start_pos]


def _option_named(stack: list, name: str) -> bool:
    """Whether the parser stands after `name=` (a type's option)."""
    last = [v for v in stack[-2:] if isinstance(v, Token)]
    return len(last) == 2 and last[0].type == "NAME" and str(last[0]) == name and last[1].type == "EQUAL"


def _bracket_hint(stack: list, token: Token) -> str | None:
    """What to do instead, for two forms written as in other languages: `[..]`
    in a fn's type, and indexing several dims at once (`a[:, :D]`)."""
    if token.type == "DOT":
        return ANY_RANK_HINT if stack and isinstance(stack[-1], Token) and stack[-1].type == "LSQB" else None
    if token.type == "STRING" and str(token).strip("\"'") == "same" and _option_named(stack, "padding"):
        return SAME_PADDING_HINT
    if token.type != "COMMA":
        return None
    depth = 0
    for i in range(len(stack) - 1, -1, -1):
        v = stack[i]
        if not isinstance(v, Token):
            continue
        if v.type in ("RPAR", "RSQB"):
            depth += 1
        elif v.type in ("LPAR", "LSQB"):
            if depth:
                depth -= 1
                continue
            # the innermost open bracket: indexing when a value stands before it
            indexing = v.type == "LSQB" and i > 0 and not isinstance(stack[i - 1], Token)
            return INDEX_HINT if indexing else None
    return None


def _token_span(token: Token, text: str) -> Span:
    t = token.type
    start = getattr(token, "start_pos", None)
    end_pos = getattr(token, "end_pos", None)
    if start is None or end_pos is None or t == "$END":
        end = len(text.rstrip())
        return Span(end, end)
    if t == "_NL":
        # The line break itself: the end of the line the error is on (the
        # token may begin with a trailing comment).
        value = token.value
        brk = min((i for i in (value.find("\n"), value.find("\r")) if i >= 0), default=0)
        return Span(start + brk, start + brk + 1)
    if t == "_DEDENT" and not token.value:
        # Made up at the end of the input: point after the last character.
        end = len(text.rstrip())
        return Span(end, end + 1) if end < len(text) else Span(end, end)
    if t in ("_INDENT", "_DEDENT"):
        # Borrowed from the line break before the indentation.
        end = end_pos
        indent = len(token.value)
        return Span(end - indent, max(end, end - indent + 1)) if indent else Span(end, end)
    return Span(start, end_pos)
