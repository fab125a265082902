"""The fast parser's expressions (fast_parser.py), lowest precedence first:
pipes, `or`/`and`/`not`, comparisons, the operator levels, casts, unary
operators, postfix calls and indexing, literals and atoms."""

from __future__ import annotations

from collections.abc import Callable

from . import ast as A
from . import fstrings
from .fast_lexer import _ADD, _COMPARE, _MAX_PREFIX, _MUL, _Decline, _tokenize
from .fast_types import _TypeParser
from .lexical import int_value, keyword_value, unescape

Span = A.Span

# What ends a slice's end bound when it is left out: `a:]`, `a:,`, `a::k`.
_SLICE_PART_END = frozenset({"]", ",", ":"})


def _left_assoc(
    operand: Callable[[_ExpressionParser], A.Expr], ops: frozenset[str], node: type[A.Binary] | type[A.BoolOp]
):
    """A precedence level `operand (op operand)*` read left to right: `node`
    (Binary or BoolOp, which take the same fields) for each operator in `ops`."""

    def level(self: _ExpressionParser) -> A.Expr:
        left = operand(self)
        k = self.k
        while k[self.i] in ops:
            op = self.i
            self.i = op + 1
            right = operand(self)
            left = node(Span(left.span.start, right.span.end), k[op], left, right, Span(self.s[op], self.e[op]))
        return left

    return level


class _ExpressionParser(_TypeParser):
    __slots__ = ()

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
        if kind == "is":  # `x is None`, `x is not None`
            last = op + 1 if self.k[op + 1] == "not" else op
            if self.k[last + 1] != "NAME" or self.v[last + 1] != "None":
                raise _Decline
            self.i = last + 2
            if self.k[self.i] in _COMPARE or self.k[self.i] == "is":
                raise _Decline  # comparisons do not chain
            none = A.Name(Span(self.s[last + 1], self.e[last + 1]), "None")
            text = "is not" if last > op else "is"
            return A.Compare(Span(left.span.start, none.span.end), text, left, none, Span(self.s[op], self.e[last]))
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
        items: list[A.Expr | A.Slice | A.Arg | A.EllipsisItem] = []
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
        if len(items) == 1 and commas == 0 and not isinstance(items[0], (A.Arg, A.EllipsisItem)):
            item = items[0]
            if isinstance(item, A.Slice):  # one slice: spans the brackets' inside
                return A.Index(span, value, A.Slice(inner, item.start, item.end, item.step))
            return A.Index(span, value, item)
        return A.Index(span, value, A.Subscripts(inner, tuple(items)))

    def subscript(self) -> A.Expr | A.Slice | A.Arg | A.EllipsisItem:
        """An index, a slice (`a:b`, `:`, `a:b:k`, spanning what is written),
        `...` or an option (`bias=False`)."""
        k = self.k
        i = self.i
        if k[i] == "...":
            self.i = i + 1
            return A.EllipsisItem(Span(self.s[i], self.e[i]))
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
        end = None if k[self.i] in _SLICE_PART_END else self.expr()
        first = start.span.start if start is not None else self.s[colon]
        last = end.span.end if end is not None else self.e[colon]
        step = None
        if k[self.i] == ":":
            last = self.e[self.i]
            self.i += 1
            if k[self.i] != "]" and k[self.i] != ",":
                step = self.expr()
                last = step.span.end
        return A.Slice(Span(first, last), start, end, step)

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
        if kind == "FSTRING":
            self.i = i + 1
            return fstrings.read(self.v[i], self.s[i], field_expression)  # FStringError: the item is declined
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


def field_expression(text: str, start: int, braces: Span) -> A.Expr:
    """The expression of an f-string's field, its spans in the item (the
    `fstrings.FieldReader` both parsers give `fstrings.read`)."""
    if not text.strip():
        raise fstrings.FStringError(
            braces, "empty braces in an f-string: put a value in them, or write '{{' for a brace"
        )
    problem = fstrings.FStringError(Span(start, start + len(text)), f"cannot read '{text.strip()}' as an expression")
    try:
        tokens = _tokenize(text + "\n")
    except (RecursionError, ValueError):
        raise problem from None
    if tokens is None:
        raise problem
    kinds, values, starts, ends = tokens
    starts = [s + start for s in starts]
    ends = [e + start for e in ends]
    parser = _ExpressionParser(kinds, values, starts, ends)
    try:
        value = parser.expr()
    except (_Decline, IndexError, RecursionError, ValueError):
        raise problem from None
    if kinds[parser.i] != "NL" or kinds[parser.i + 1] != "EOF":
        raise problem
    return value
