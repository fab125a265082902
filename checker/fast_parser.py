"""The fast path of parsing: a hand-written recursive-descent parser for items
that parse cleanly.

lark's LALR parser (parser.py, grammar.lark) is the reference and does all the
hard work: syntax errors, their messages, recovery. It is also most of the
time a cold check takes, so the common case, an item with no syntax error at
all, goes through this parser first. It accepts a subset of what lark
accepts, exactly the items lark parses with no diagnostic, and builds exactly
the tree lark's builder does: the same nodes, fields and spans (a span runs
from the first to the last token or child of its rule, so parentheses around
an operand are not in the spans of the nodes around it). On anything else (a
syntax error, a tab or form feed, nesting anywhere near the limit, a hard
keyword where a name is expected) it declines, by returning None, and
parse_item hands the item to lark.

Declining is always safe; accepting wrongly is not. tests/checker/
test_fast_parser.py and tests/stress/parser_fuzz.py compare the two parsers
on the examples, the docs, generated programs and mutated ones.

How it matches lark's lexing: the token patterns are the grammar's. lark's
contextual lexer reads a word as a keyword where the parser accepts the
keyword, else as a name; hard keywords (lexical.HARD_KEYWORDS) are names
nowhere (a name spelled like one is an error), so here they are always
keywords. The soft ones (`dim`, `model`, `param`, `buffer`, `on`) are keywords
only where no name could stand (an item's or a member's first word, after a
model's name), and names everywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import ast as A
from .lexical import HARD_KEYWORDS, MAX_INT_DIGITS, int_value, keyword_value, unescape

Span = A.Span

# The grammar's terminals (grammar.lark), tried in lark's order: FLOAT has
# priority over INT, longer punctuation before its prefixes. Each token takes
# the spaces and backslash-newlines before it (lark skips them), so one match
# is one token; possessively (`*+`), since lark's lexer never gives back what
# it skipped: backslash CR LF is one continuation, never a continuation and a
# newline. A newline with the blank and comment lines after it is one NL
# token, as lark's _NL. Tabs, form feeds and any other character match
# nothing: the item is declined.
_TOKEN = re.compile(
    r"(?:[ ]+|\\[ ]*(?:\r\n?|\n))*+"
    r"(?:(?P<nl>(?:(?:\r\n?|\n)[ ]*|#[^\r\n]*)+)"
    r"|(?P<NAME>[^\W\d]\w*)"
    r"|(?P<FLOAT>\d[\d_]*\.(?:\d[\d_]*)?(?:[eE][+-]?\d+)?|\.\d[\d_]*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+)"
    r"|(?P<INT>\d[\d_]*)"
    r"|(?P<STRING>\"(?:[^\"\\\r\n]|\\.)*\"|'(?:[^'\\\r\n]|\\.)*')"
    r"|(?P<op>->|\|>|\*\*|==|!=|<=|>=|[-+*/]=|\.\.|[-+*/%@<>=()\[\],:.|&~]))"
)
# The kind of token each group gives, by group number (op: the text itself).
_NL, _NAME, _FLOAT, _INT, _STRING, _OP = 1, 2, 3, 4, 5, 6
_GROUP_KIND = (None, "NL", "NAME", "FLOAT", "INT", "STRING", None)

# Nesting past these declines (lark reports E0009 past parser.MAX_NESTING,
# counted its own way; these keep every accepted item far below it).
_MAX_BRACKETS_AND_BLOCKS = 30
_MAX_PREFIX = 15

_COMPARE = frozenset({"==", "!=", "<=", ">=", "<", ">"})
_ADD = frozenset({"+", "-"})
_MUL = frozenset({"*", "/", "%", "@"})
_AUG = frozenset({"+=", "-=", "*=", "/="})


class _Decline(Exception):
    """Not an item this parser takes: lark will."""


def parse(text: str) -> A.Item | None:
    """The tree of one item's text, exactly as lark's builder makes it, or None
    when the item is one to leave to lark. Never raises."""
    if "\x00" in text:
        return None  # lark's path reports it anywhere, comments and strings too (E0002)
    try:
        tokens = _tokenize(text if text.endswith(("\n", "\r")) else text + "\n")
        if tokens is None:
            return None
        return _Parser(*tokens).item()
    except (_Decline, IndexError, RecursionError, ValueError):
        return None


def _tokenize(text: str) -> tuple[list[str], list[str], list[int], list[int]] | None:
    """Parallel lists of token kinds, texts, starts and ends, with NL, INDENT
    and DEDENT as lark's indentation post-lexer makes them; then EOF."""
    kinds: list[str] = []
    values: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    depth = 0  # brackets open: newlines inside them are not tokens
    levels = [0]
    max_depth = 0
    max_levels = 1
    pos = 0
    hard = HARD_KEYWORDS
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            return None  # a character no terminal matches
        group: int = m.lastindex  # pyright: ignore[reportAssignmentType]  (every match has a group)
        start, end = m.span(group)
        glued = start == pos  # nothing skipped since the last token
        pos = end
        value = m.group(group)
        if group == _NAME:
            kind = value if value in hard else "NAME"
            if glued and kinds and (kinds[-1] == "INT" or kinds[-1] == "FLOAT") and values[-1][-1] != ".":
                return None  # `2N`: a word split in two, which lark's path reports (E0003)
        elif group == _OP:
            kind = value
            if value == "(" or value == "[":
                depth += 1
                if depth > max_depth:
                    max_depth = depth
            elif value == ")" or value == "]":
                if depth == 0:
                    return None
                depth -= 1
        elif group == _NL:
            if depth:
                continue
            if not kinds:
                return None  # an item starts with its keyword
            kinds.append("NL")
            values.append(value)
            starts.append(start)
            ends.append(end)
            indent = end - start - 1 - max(value.rfind("\n"), value.rfind("\r"))
            if indent > levels[-1]:
                levels.append(indent)
                if len(levels) > max_levels:
                    max_levels = len(levels)
                kind = "INDENT"
            else:
                while indent < levels[-1]:
                    levels.pop()
                    kinds.append("DEDENT")
                    values.append("")
                    starts.append(end)
                    ends.append(end)
                if indent != levels[-1]:
                    return None  # a dedent to a column no block uses
                continue
        else:
            kind = _GROUP_KIND[group]
            if group == _INT and len(value) > MAX_INT_DIGITS:
                return None  # maybe too long to read: lark's path reports it (E0011)
        kinds.append(kind)  # pyright: ignore[reportArgumentType]
        values.append(value)
        starts.append(start)
        ends.append(end)
    if pos != len(text) or depth:
        return None
    if max_depth + max_levels > _MAX_BRACKETS_AND_BLOCKS:
        return None
    if len(levels) > 1:
        return None  # the text ends with a newline at column 0: every block closed
    kinds.append("EOF")
    values.append("")
    starts.append(len(text))
    ends.append(len(text))
    return kinds, values, starts, ends


def _left_assoc(operand: Callable[[_Parser], A.Expr], ops: frozenset[str], node: type[A.Binary] | type[A.BoolOp]):
    """A precedence level `operand (op operand)*` read left to right: `node`
    (Binary or BoolOp, which take the same fields) for each operator in `ops`."""

    def level(self: _Parser) -> A.Expr:
        left = operand(self)
        k = self.k
        while k[self.i] in ops:
            op = self.i
            self.i = op + 1
            right = operand(self)
            left = node(Span(left.span.start, right.span.end), k[op], left, right, Span(self.s[op], self.e[op]))
        return left

    return level


class _Parser:
    __slots__ = ("k", "v", "s", "e", "i", "prefix")

    def __init__(self, kinds: list[str], values: list[str], starts: list[int], ends: list[int]) -> None:
        self.k = kinds
        self.v = values
        self.s = starts
        self.e = ends
        self.i = 0
        self.prefix = 0  # prefix operators (and `**`) whose operand is being parsed

    # -- tokens

    def expect(self, kind: str) -> int:
        """Consume a token of `kind`; its index."""
        i = self.i
        if self.k[i] != kind:
            raise _Decline
        self.i = i + 1
        return i

    def ident(self) -> A.Ident:
        i = self.i
        if self.k[i] != "NAME":
            raise _Decline
        self.i = i + 1
        return A.Ident(Span(self.s[i], self.e[i]), self.v[i])

    def qualname(self) -> A.Ident:
        """NAME ("." NAME)*, one identifier (lark's `dotted`)."""
        k = self.k
        i = self.i
        if k[i] != "NAME":
            raise _Decline
        if k[i + 1] != ".":
            self.i = i + 1
            return A.Ident(Span(self.s[i], self.e[i]), self.v[i])
        first = i
        parts = [self.v[i]]
        i += 1
        while k[i] == ".":
            if k[i + 1] != "NAME":
                raise _Decline
            parts.append(self.v[i + 1])
            i += 2
        self.i = i
        return A.Ident(Span(self.s[first], self.e[i - 1]), ".".join(parts))

    # -- items

    def item(self) -> A.Item:
        kind = self.k[0]
        if kind == "NAME":
            word = self.v[0]
            if word == "dim":
                node: A.Item = self.dim_decl()
            elif word == "model":
                node = self.model_decl()
            else:
                raise _Decline
        elif kind == "fn":
            node = self.fn_decl()
        elif kind == "extern":
            node = self.extern_decl()
        elif kind == "import":
            self.i = 1
            module = self.qualname()
            self.expect("NL")
            node = A.ImportDecl(Span(self.s[0], module.span.end), module)
        elif kind == "from":
            node = self.from_import()
        else:
            raise _Decline
        if self.k[self.i] != "EOF":
            raise _Decline
        return node

    def dim_decl(self) -> A.DimDecl:
        self.i = 1
        name = self.ident()
        self.expect("=")
        value = self.expr()
        self.expect("NL")
        return A.DimDecl(Span(self.s[0], value.span.end), name, value)

    def from_import(self) -> A.FromImport:
        self.i = 1
        module = self.qualname()
        self.expect("import")
        names = [self.import_name()]
        end = names[0].span.end
        while self.k[self.i] == ",":
            end = self.e[self.i]
            self.i += 1
            if self.k[self.i] == "NL":
                break
            names.append(self.import_name())
            end = names[-1].span.end
        self.expect("NL")
        return A.FromImport(Span(self.s[0], end), module, tuple(names))

    def import_name(self) -> A.ImportName:
        name = self.ident()
        alias = None
        if self.k[self.i] == "as":
            self.i += 1
            alias = self.ident()
        return A.ImportName(Span(name.span.start, (alias or name).span.end), name, alias)

    def model_decl(self) -> A.ModelDecl:
        self.i = 1
        name = self.ident()
        device = None
        k = self.k
        params: tuple[A.ModelParam, ...] = ()
        if k[self.i] == "[":
            params = self.model_params()
        if k[self.i] == "NAME" and self.v[self.i] == "on":
            on = self.i
            i = on + 1
            if k[i] == "NAME":
                text = self.v[i]
            elif k[i] == "STRING":
                text = unescape(self.v[i])
            else:
                raise _Decline
            self.i = i + 1
            device = A.Device(Span(self.s[on], self.e[i]), text)
        self.expect(":")
        self.expect("NL")
        self.expect("INDENT")
        members: list[A.Member] = []
        methods: list[A.FnDecl] = []
        end = 0
        while k[self.i] != "DEDENT":
            if k[self.i] == "fn":
                methods.append(self.fn_decl())
                end = methods[-1].span.end
            else:
                members.append(self.member())
                end = members[-1].span.end
        self.i += 1
        return A.ModelDecl(Span(self.s[0], end), name, device, tuple(members), params, tuple(methods))

    def model_params(self) -> tuple[A.ModelParam, ...]:
        self.i += 1  # "["
        k = self.k
        out = []
        while True:
            name = self.ident()
            type_ = default = None
            if k[self.i] == ":":
                self.i += 1
                type_ = self.type()
            if k[self.i] == "=":
                self.i += 1
                default = self.expr()
            end = (default or type_ or name).span.end
            out.append(A.ModelParam(Span(name.span.start, end), name, type_, default))
            if k[self.i] == ",":
                self.i += 1
                if k[self.i] == "]":
                    break
            elif k[self.i] != "]":
                raise _Decline
            else:
                break
        self.expect("]")
        return tuple(out)

    def member(self) -> A.Member:
        i = self.i
        word = self.v[i]
        if self.k[i] != "NAME" or (word != "param" and word != "buffer"):
            raise _Decline
        self.i = i + 1
        name = self.ident()
        self.expect(":")
        type_ = self.type()
        init = None
        if self.k[self.i] == "=":
            self.i += 1
            init = self.expr()
        cond = None
        if self.k[self.i] == "if":
            at = self.i
            self.i += 1
            flags: list[A.MemberCond] = []
            while True:
                start = self.i
                negated = self.k[self.i] == "not"
                if negated:
                    self.i += 1
                flag = self.ident()
                flags.append(A.MemberCond(Span(self.s[start], flag.span.end), flag, negated))
                if self.k[self.i] != "and":
                    break
                self.i += 1
            first = flags[0]
            cond = A.MemberCond(Span(self.s[at], flags[-1].span.end), first.name, first.negated, tuple(flags[1:]))
        self.expect("NL")
        end = (cond or init or type_).span.end
        return A.Member(Span(self.s[i], end), "param" if word == "param" else "buffer", name, type_, init, cond)

    def signature(self) -> tuple[A.Ident, tuple[A.Param, ...], A.TypeExpr | None]:
        name = self.ident()
        self.expect("(")
        params = []
        k = self.k
        while k[self.i] != ")":
            params.append(self.param())
            if k[self.i] == ",":
                self.i += 1
            elif k[self.i] != ")":
                raise _Decline
        self.i += 1
        ret = None
        if k[self.i] == "->":
            self.i += 1
            ret = self.type()
        return name, tuple(params), ret

    def param(self) -> A.Param:
        start = self.s[self.i]
        mut = self.k[self.i] == "mut"
        if mut:
            self.i += 1
        name = self.ident()
        if self.k[self.i] != ":":
            return A.Param(Span(start, name.span.end), mut, name, None)
        self.i += 1
        type_ = self.type()
        return A.Param(Span(start, type_.span.end), mut, name, type_)

    def fn_decl(self) -> A.FnDecl:
        """An item's or a method's `fn`, at the current token."""
        start = self.s[self.expect("fn")]
        name, params, ret = self.signature()
        colon = self.expect(":")
        body, end = self.suite()
        return A.FnDecl(Span(start, end), name, params, ret, body, Span(start, self.e[colon]))

    def extern_decl(self) -> A.ExternDecl:
        self.i = 1
        self.expect("fn")
        name, params, ret = self.signature()
        self.expect("from")
        at = self.expect("STRING")
        self.expect("NL")
        target = A.StrLit(Span(self.s[at], self.e[at]), unescape(self.v[at]))
        return A.ExternDecl(Span(self.s[0], self.e[at]), name, params, ret, target)

    # -- types

    def type(self) -> A.TypeExpr:
        kind = self.k[self.i]
        if kind == "[":
            return self.tensor_type()
        if kind == "NAME":
            return self.named_type()
        if kind == "(":
            return self.tuple_type()
        raise _Decline

    def tensor_type(self) -> A.TensorType:
        k = self.k
        start = self.s[self.i]
        self.i += 1  # "["
        rest = k[self.i] == ".."
        if rest:
            self.i += 1
        dims: list[A.Dim] = []
        while k[self.i] != "]":
            dims.append(self.dim_atom())
        end = self.e[self.i]
        self.i += 1
        elem = None
        if k[self.i] == "NAME":
            name = self.qualname()
            args: tuple[A.TypeArg, ...] = ()
            options: tuple[A.TypeOption, ...] = ()
            elem_end = name.span.end
            if k[self.i] == "[":
                args, options, elem_end = self.type_args()
            elem = A.ElemType(Span(name.span.start, elem_end), name, args, options)
            end = elem_end
        return A.TensorType(Span(start, end), tuple(dims), elem, rest)

    def dim_atom(self) -> A.Dim:
        i = self.i
        kind = self.k[i]
        if kind == "NAME":
            name = self.qualname()
            return A.DimName(name.span, name.text)
        if kind == "INT":
            self.i = i + 1
            return A.DimInt(Span(self.s[i], self.e[i]), int_value(self.v[i]))
        if kind == "(":
            self.i = i + 1
            inner = self.dim_sum()
            self.expect(")")
            return inner
        raise _Decline

    def dim_sum(self) -> A.Dim:
        return self.dim_chain(self.dim_product, _ADD)

    def dim_product(self) -> A.Dim:
        return self.dim_chain(self.dim_atom, _MUL)

    def dim_chain(self, operand, ops: frozenset[str]) -> A.Dim:
        """operand (op operand)*, left-associative, for `ops` of one precedence."""
        left = operand()
        while self.k[self.i] in ops:
            op = self.v[self.i]
            self.i += 1
            right = operand()
            left = A.DimBinary(Span(left.span.start, right.span.end), op, left, right)
        return left

    def named_type(self) -> A.NamedType:
        name = self.qualname()
        if self.k[self.i] != "[":
            return A.NamedType(name.span, name)
        args, options, end = self.type_args()
        return A.NamedType(Span(name.span.start, end), name, args, options)

    def type_args(self) -> tuple[tuple[A.TypeArg, ...], tuple[A.TypeOption, ...], int]:
        """`[` type_arg ("," type_arg)* [","] `]`: the args, the options and the end of `]`."""
        k = self.k
        self.i += 1  # "["
        args: list[A.TypeArg] = []
        options: list[A.TypeOption] = []
        while True:
            i = self.i
            kind = k[i]
            if kind == "NAME" and k[i + 1] == "=":
                name = self.ident()
                self.i += 1
                after = k[self.i]
                if after == "[":
                    names = self.type_names()
                    options.append(A.TypeOption(Span(name.span.start, self.e[self.i - 1]), name, names))
                elif after == "True" or after == "False":
                    options.append(A.TypeOption(Span(name.span.start, self.e[self.i]), name, (), after == "True"))
                    self.i += 1
                elif after == "FLOAT":
                    number = float(self.v[self.i].replace("_", ""))
                    options.append(A.TypeOption(Span(name.span.start, self.e[self.i]), name, (), None, None, number))
                    self.i += 1
                elif after == "NAME" or after == "INT" or after == "(":
                    dim = self.dim_atom()
                    options.append(A.TypeOption(Span(name.span.start, dim.span.end), name, (), None, dim))
                else:
                    raise _Decline
            elif kind == "INT":
                self.i = i + 1
                args.append(A.DimInt(Span(self.s[i], self.e[i]), int_value(self.v[i])))
            elif kind == "(":
                # dim arithmetic (`(2*E)`) or a tuple type (`(Int, Float)`): at
                # most one of them parses, so try the dim first
                try:
                    self.i = i + 1
                    dim = self.dim_sum()
                    self.expect(")")
                    if k[self.i] != "," and k[self.i] != "]":
                        raise _Decline
                    args.append(dim)
                except (_Decline, IndexError):
                    self.i = i
                    args.append(self.type())
            else:
                args.append(self.type())
            if k[self.i] == ",":
                self.i += 1
                if k[self.i] == "]":
                    break
            elif k[self.i] != "]":
                raise _Decline
            else:
                break
        end = self.e[self.expect("]")]
        return tuple(args), tuple(options), end

    def type_names(self) -> tuple[A.Ident, ...]:
        self.expect("[")
        names = [self.ident()]
        k = self.k
        while k[self.i] == ",":
            self.i += 1
            if k[self.i] == "]":
                break
            names.append(self.ident())
        self.expect("]")
        return tuple(names)

    def tuple_type(self) -> A.TupleType:
        start = self.s[self.i]
        self.i += 1  # "("
        items = [self.type()]
        self.expect(",")
        items.append(self.type())
        k = self.k
        while k[self.i] == ",":
            self.i += 1
            if k[self.i] == ")":
                break
            items.append(self.type())
        end = self.e[self.expect(")")]
        return A.TupleType(Span(start, end), tuple(items))

    # -- statements

    def suite(self) -> tuple[tuple[A.Stmt, ...], int]:
        """The statements of a block (or of the one-line form after `:`) and
        the end of the last one."""
        k = self.k
        if k[self.i] != "NL":
            stmt = self.simple_stmt()
            self.expect("NL")
            return (stmt,), stmt.span.end
        self.i += 1
        self.expect("INDENT")
        body = []
        while k[self.i] != "DEDENT":
            body.append(self.stmt())
        self.i += 1
        return tuple(body), body[-1].span.end

    def stmt(self) -> A.Stmt:
        kind = self.k[self.i]
        if kind == "if":
            return self.if_stmt()
        if kind == "for":
            start = self.s[self.i]
            self.i += 1
            var = self.ident()
            self.expect("in")
            iterable = self.expr()
            self.expect(":")
            body, end = self.suite()
            return A.For(Span(start, end), var, iterable, body)
        if kind == "while":
            start = self.s[self.i]
            self.i += 1
            cond = self.expr()
            self.expect(":")
            body, end = self.suite()
            return A.While(Span(start, end), cond, body)
        stmt = self.simple_stmt()
        self.expect("NL")
        return stmt

    def if_stmt(self) -> A.If:
        k = self.k
        start = self.s[self.i]
        self.i += 1
        cond = self.expr()
        self.expect(":")
        body, end = self.suite()
        branches = [A.IfBranch(Span(start, end), cond, body)]
        while k[self.i] == "elif":
            at = self.s[self.i]
            self.i += 1
            cond = self.expr()
            self.expect(":")
            body, end = self.suite()
            branches.append(A.IfBranch(Span(at, end), cond, body))
        orelse = None
        if k[self.i] == "else":
            self.i += 1
            self.expect(":")
            orelse, end = self.suite()
        return A.If(Span(start, end), tuple(branches), orelse)

    def simple_stmt(self) -> A.Stmt:
        k = self.k
        i = self.i
        kind = k[i]
        if kind == "return":
            self.i = i + 1
            if k[self.i] == "NL":
                return A.Return(Span(self.s[i], self.e[i]), ())
            values = [self.expr()]
            end = values[0].span.end
            while k[self.i] == ",":
                end = self.e[self.i]
                self.i += 1
                if k[self.i] == "NL":
                    break
                values.append(self.expr())
                end = values[-1].span.end
            return A.Return(Span(self.s[i], end), tuple(values))
        if kind == "pass":
            self.i = i + 1
            return A.Pass(Span(self.s[i], self.e[i]))
        if kind == "break":
            self.i = i + 1
            return A.Break(Span(self.s[i], self.e[i]))
        if kind == "continue":
            self.i = i + 1
            return A.Continue(Span(self.s[i], self.e[i]))
        first = self.expr()
        kind = k[self.i]
        if kind == "NL":
            return A.ExprStmt(first.span, first)
        if kind == "=" or kind == ",":
            targets = [first]
            while k[self.i] == ",":
                self.i += 1
                if k[self.i] == "=":
                    break
                targets.append(self.expr())
            self.expect("=")
            value = self.expr()
            return A.Assign(Span(first.span.start, value.span.end), tuple(targets), value)
        if kind in _AUG:
            op = self.i
            self.i += 1
            value = self.expr()
            return A.AugAssign(
                Span(first.span.start, value.span.end), first, kind[0], value, Span(self.s[op], self.e[op])
            )
        raise _Decline

    # -- expressions, lowest precedence first

    def expr(self) -> A.Expr:
        left = self.or_expr()
        k = self.k
        while k[self.i] == "|>":
            op = self.i
            self.i += 1
            target = self.postfix()
            left = A.Pipe(Span(left.span.start, target.span.end), left, target, Span(self.s[op], self.e[op]))
        return left

    def not_expr(self) -> A.Expr:
        i = self.i
        if self.k[i] != "not":
            return self.comparison()
        self.i = i + 1
        self.prefix += 1
        if self.prefix > _MAX_PREFIX:
            raise _Decline
        operand = self.not_expr()
        self.prefix -= 1
        return A.Not(Span(self.s[i], operand.span.end), operand)

    def comparison(self) -> A.Expr:
        left = self.bit_or()
        op = self.i
        kind = self.k[op]
        if kind not in _COMPARE:
            return left
        self.i = op + 1
        right = self.bit_or()
        if self.k[self.i] in _COMPARE:
            raise _Decline  # comparisons do not chain
        return A.Compare(Span(left.span.start, right.span.end), kind, left, right, Span(self.s[op], self.e[op]))

    def cast(self) -> A.Expr:
        value = self.unary()
        while self.k[self.i] == "as":
            self.i += 1
            type_ = self.type()
            value = A.Cast(Span(value.span.start, type_.span.end), value, type_)
        return value

    def unary(self) -> A.Expr:
        i = self.i
        kind = self.k[i]
        if kind == "-" or kind == "+" or kind == "~":
            self.i = i + 1
            self.prefix += 1
            if self.prefix > _MAX_PREFIX:
                raise _Decline
            operand = self.unary()
            self.prefix -= 1
            return A.Unary(Span(self.s[i], operand.span.end), kind, operand)
        if kind == "[":
            return self.bracket()
        value = self.postfix()
        if self.k[self.i] != "**":
            return value
        op = self.i
        self.i = op + 1
        self.prefix += 1
        if self.prefix > _MAX_PREFIX:
            raise _Decline
        right = self.unary()
        self.prefix -= 1
        return A.Binary(Span(value.span.start, right.span.end), "**", value, right, Span(self.s[op], self.e[op]))

    # The left-associative binary levels, each built from the one above it
    # (no extra call per level: the operand is called directly).
    term = _left_assoc(cast, _MUL, A.Binary)
    arith = _left_assoc(term, _ADD, A.Binary)
    bit_and = _left_assoc(arith, frozenset({"&"}), A.Binary)
    bit_or = _left_assoc(bit_and, frozenset({"|"}), A.Binary)
    and_expr = _left_assoc(not_expr, frozenset({"and"}), A.BoolOp)
    or_expr = _left_assoc(and_expr, frozenset({"or"}), A.BoolOp)

    def bracket(self) -> A.Expr:
        """An expression in square brackets: a shape (`[B T] f32`), a list of
        names (`[a, b]`) or a tensor literal (`[1.0, 2.0]`), told apart as
        lark's parser does, by the tokens after `[`."""
        k = self.k
        first = k[self.i + 1]
        if first == "NAME":
            if k[self.i + 2] == ",":
                return self.name_list()
            return self.tensor_type()
        if first == "INT":
            if k[self.i + 2] == ",":
                return self.tensor_lit()
            return self.tensor_type()
        if first == "]" or first == "(" or first == "..":
            return self.tensor_type()
        return self.tensor_lit()

    def name_list(self) -> A.NameList:
        k = self.k
        start = self.s[self.i]
        self.i += 1
        names = [self.name()]
        while k[self.i] == ",":
            self.i += 1
            if k[self.i] == "]":
                break
            names.append(self.name())
        end = self.e[self.expect("]")]
        return A.NameList(Span(start, end), tuple(names))

    def name(self) -> A.Name:
        i = self.i
        if self.k[i] != "NAME":
            raise _Decline
        self.i = i + 1
        return A.Name(Span(self.s[i], self.e[i]), self.v[i])

    def tensor_lit(self) -> A.TensorLit:
        k = self.k
        start = self.s[self.i]
        self.i += 1
        items = [self.lit_item()]
        if k[self.i] == "]":
            if isinstance(items[0], A.IntLit):
                raise _Decline  # `[2]` is a shape; lark reads it so before here
        else:
            while k[self.i] == ",":
                self.i += 1
                if k[self.i] == "]":
                    break
                items.append(self.lit_item())
        end = self.e[self.expect("]")]
        return A.TensorLit(Span(start, end), tuple(items))

    def lit_item(self) -> A.Expr:
        k = self.k
        i = self.i
        kind = k[i]
        if kind == "INT":
            self.i = i + 1
            return A.IntLit(Span(self.s[i], self.e[i]), int_value(self.v[i]))
        if kind == "FLOAT":
            self.i = i + 1
            return A.FloatLit(Span(self.s[i], self.e[i]), float(self.v[i].replace("_", "")))
        if kind == "-" or kind == "+":
            j = i + 1
            text = self.v[j].replace("_", "")
            span = Span(self.s[j], self.e[j])
            if k[j] == "INT":
                lit: A.Expr = A.IntLit(span, int(text))
            elif k[j] == "FLOAT":
                lit = A.FloatLit(span, float(text))
            else:
                raise _Decline
            self.i = j + 1
            return A.Unary(Span(self.s[i], self.e[j]), kind, lit)
        if kind == "[":
            return self.tensor_lit()
        raise _Decline

    def postfix(self) -> A.Expr:
        value = self.atom()
        k = self.k
        while True:
            kind = k[self.i]
            if kind == "(":
                value = self.call(value)
            elif kind == ".":
                self.i += 1
                name = self.ident()
                value = A.Field(Span(value.span.start, name.span.end), value, name)
            elif kind == "[":
                value = self.index(value)
            else:
                return value

    def call(self, func: A.Expr) -> A.Call:
        k = self.k
        lpar = self.i
        self.i += 1
        args = []
        while k[self.i] != ")":
            args.append(self.arg())
            if k[self.i] == ",":
                self.i += 1
            elif k[self.i] != ")":
                raise _Decline
        rpar = self.i
        self.i += 1
        return A.Call(Span(func.span.start, self.e[rpar]), func, tuple(args), Span(self.s[lpar], self.e[rpar]))

    def arg(self) -> A.Arg:
        i = self.i
        if self.k[i] == "NAME" and self.k[i + 1] == "=":
            keyword = A.Ident(Span(self.s[i], self.e[i]), self.v[i])
            self.i = i + 2
            value = keyword_value(keyword.text, self.expr())
            return A.Arg(Span(keyword.span.start, value.span.end), keyword, value)
        value = self.expr()
        return A.Arg(value.span, None, value)

    def index(self, value: A.Expr) -> A.Index:
        k = self.k
        lsqb = self.i
        self.i += 1
        items: list[A.Expr | A.Slice | A.Arg] = []
        commas = 0
        while True:
            items.append(self.subscript())
            if k[self.i] == ",":
                commas += 1
                self.i += 1
                if k[self.i] == "]":
                    break
            elif k[self.i] == "]":
                break
            else:
                raise _Decline
        rsqb = self.i
        self.i += 1
        inner = Span(self.e[lsqb], self.s[rsqb])
        span = Span(value.span.start, self.e[rsqb])
        if len(items) == 1 and commas == 0 and not isinstance(items[0], A.Arg):
            item = items[0]
            if isinstance(item, A.Slice):  # one slice: spans the brackets' inside
                return A.Index(span, value, A.Slice(inner, item.start, item.end))
            return A.Index(span, value, item)
        return A.Index(span, value, A.Subscripts(inner, tuple(items)))

    def subscript(self) -> A.Expr | A.Slice | A.Arg:
        """An index, a slice (`a:b`, `:`, spanning what is written) or an option (`bias=False`)."""
        k = self.k
        i = self.i
        if k[i] == "NAME" and k[i + 1] == "=":
            keyword = A.Ident(Span(self.s[i], self.e[i]), self.v[i])
            self.i = i + 2
            kw_value = keyword_value(keyword.text, self.expr())
            return A.Arg(Span(keyword.span.start, kw_value.span.end), keyword, kw_value)
        start = None
        if k[i] != ":":
            start = self.expr()
            if k[self.i] != ":":
                return start
        colon = self.i
        self.i += 1
        end = None if k[self.i] == "]" or k[self.i] == "," else self.expr()
        first = start.span.start if start is not None else self.s[colon]
        last = end.span.end if end is not None else self.e[colon]
        return A.Slice(Span(first, last), start, end)

    def atom(self) -> A.Expr:
        i = self.i
        kind = self.k[i]
        if kind == "NAME":
            self.i = i + 1
            return A.Name(Span(self.s[i], self.e[i]), self.v[i])
        if kind == "INT":
            self.i = i + 1
            return A.IntLit(Span(self.s[i], self.e[i]), int_value(self.v[i]))
        if kind == "FLOAT":
            self.i = i + 1
            return A.FloatLit(Span(self.s[i], self.e[i]), float(self.v[i].replace("_", "")))
        if kind == "STRING":
            self.i = i + 1
            return A.StrLit(Span(self.s[i], self.e[i]), unescape(self.v[i]))
        if kind == "True" or kind == "False":
            self.i = i + 1
            return A.BoolLit(Span(self.s[i], self.e[i]), kind == "True")
        if kind == "(":
            return self.paren()
        raise _Decline

    def paren(self) -> A.Expr:
        k = self.k
        lpar = self.i
        self.i += 1
        first = self.expr()
        if k[self.i] == ")":
            self.i += 1
            return first  # lark's `paren` gives the inner node, with its own span
        self.expect(",")
        items = [first]
        while k[self.i] != ")":
            items.append(self.expr())
            if k[self.i] == ",":
                self.i += 1
            elif k[self.i] != ")":
                raise _Decline
        rpar = self.i
        self.i += 1
        return A.TupleExpr(Span(self.s[lpar], self.e[rpar]), tuple(items))
