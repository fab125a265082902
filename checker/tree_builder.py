"""The lark callbacks that build the typed AST while an item is parsed: one
per grammar rule or alias, each returning a node (checker/ast.py) whose
span is relative to the item. checker/fast_parser.py builds the same trees by
hand; tests compare the two."""

from __future__ import annotations

import dataclasses
from typing import cast

from lark import Token

from . import ast as A
from . import fstrings
from .fast_expressions import field_expression
from .lexical import int_value, keyword_value, unescape


class _Seq(list):
    """A list of child nodes produced by a helper rule (params, args, suite)."""

    span: A.Span | None = None


class _Names(_Seq):
    """The identifiers of a `type_names` list."""


class _Params(_Seq):
    """A model's `model_params`."""


class _TypeParams(_Seq):
    """A function's `type_params` (`[M: CharModel]`)."""


class _TypeArgs(_Seq):
    """What a type holds in its brackets (`type_args`)."""


class _MemberCond:
    """A member's `if ...`, before the member is made: its expression."""

    def __init__(self, expr):
        self.expr = expr
        self.span = expr.span


class _SliceAt:
    """A slice among subscripts, before its node is made: `span` covers what
    was written (`a:b`; for `:` alone, the colon)."""

    def __init__(self, span, start, end, step):
        self.span = span
        self.start = start
        self.end = end
        self.step = step

    def slice(self) -> A.Slice:
        return A.Slice(self.span, self.start, self.end, self.step)


def _type_args(ch) -> tuple[tuple, tuple]:
    """The args and options of a type's brackets (`type_args`), if it has them."""
    seq = next((c for c in ch if isinstance(c, _TypeArgs)), None)
    if seq is None:
        return (), ()
    return tuple(c for c in seq if not isinstance(c, A.TypeOption)), tuple(
        c for c in seq if isinstance(c, A.TypeOption)
    )


class _Else:
    def __init__(self, body, span):
        self.body = body
        self.span = span


def _start(t: Token) -> int:
    assert t.start_pos is not None  # the lexer sets positions on every token
    return t.start_pos


def _end(t: Token) -> int:
    assert t.end_pos is not None
    return t.end_pos


def _tok_span(t: Token) -> A.Span:
    start, end = t.start_pos, t.end_pos  # on the hot path: no helper calls
    assert start is not None and end is not None
    return A.Span(start, end)


def _span_of(x) -> A.Span | None:
    if isinstance(x, Token):
        if x.type.startswith("_"):
            return None
        return _tok_span(x)
    if isinstance(x, (A.Node, _Else, _SliceAt, _MemberCond)):
        return x.span
    if isinstance(x, _Seq):
        return x.span
    return None


def _span(children) -> A.Span:
    first = last = None
    for c in children:
        s = _span_of(c)
        if s is not None:
            first = s
            break
    for c in reversed(children):
        s = _span_of(c)
        if s is not None:
            last = s
            break
    if first is None or last is None:
        return A.Span(0, 0)
    return A.Span(first.start, last.end)


def _nodes(children) -> list:
    return [c for c in children if isinstance(c, (A.Node, _Seq, _Else))]


def _tokens(children, *types: str) -> list[Token]:
    return [c for c in children if isinstance(c, Token) and c.type in types]


def _ident(t: Token) -> A.Ident:
    return A.Ident(_tok_span(t), str(t))


class Builder:
    """lark callbacks: one per rule or alias, each returning an AST node."""

    def __init__(self) -> None:
        # what was wrong in the f-strings of the last parse (the parser reports them, E0013)
        self.fstring_errors: list[fstrings.FStringError] = []

    def start(self, ch):
        return ch[0]

    # -- items
    def dim_decl(self, ch):
        name = _tokens(ch, "NAME")[0]
        return A.DimDecl(_span(ch), _ident(name), _nodes(ch)[0])

    def const_decl(self, ch):
        name = _tokens(ch, "NAME")[0]
        nodes = _nodes(ch)
        type_ = nodes[0] if len(nodes) > 1 else None
        return A.ConstDecl(_span(ch), _ident(name), type_, nodes[-1])

    def type_alias(self, ch):
        names = _tokens(ch, "NAME")
        params = next((c for c in ch if isinstance(c, tuple)), ())
        return A.TypeAlias(_span(ch), _ident(names[0]), params, _nodes(ch)[-1])

    def alias_params(self, ch):
        return tuple(_ident(t) for t in _tokens(ch, "NAME"))

    def import_decl(self, ch):
        return A.ImportDecl(_span(ch), _ident(_tokens(ch, "NAME")[0]))

    def from_import(self, ch):
        module = _tokens(ch, "NAME")[0]
        names = tuple(c for c in ch if isinstance(c, A.ImportName))
        return A.FromImport(_span(ch), _ident(module), names)

    def import_name(self, ch):
        names = [c for c in ch if isinstance(c, Token) and c.type == "NAME"]
        return A.ImportName(_span(ch), _ident(names[0]), _ident(names[1]) if len(names) > 1 else None)

    def dotted(self, ch):
        """`a.b.c` as one NAME token spanning it (see `qualname`)."""
        parts = [c for c in ch if isinstance(c, Token) and c.type == "NAME"]
        first, last = parts[0], parts[-1]
        return Token(
            "NAME",
            ".".join(str(p) for p in parts),
            start_pos=first.start_pos,
            line=first.line,
            column=first.column,
            end_line=last.end_line,
            end_column=last.end_column,
            end_pos=last.end_pos,
        )

    def dim_dotted(self, ch):
        t = self.dotted(ch)
        return A.DimName(_tok_span(t), str(t))

    def model_decl(self, ch):
        name = _tokens(ch, "NAME")[0]
        device = next((c for c in ch if isinstance(c, A.Device)), None)
        members = tuple(c for c in ch if isinstance(c, A.Member))
        params = next((tuple(c) for c in ch if isinstance(c, _Params)), ())
        methods = tuple(c for c in ch if isinstance(c, A.FnDecl))
        return A.ModelDecl(_span(ch), _ident(name), device, members, params, methods)

    def model_params(self, ch):
        seq = _Params(c for c in ch if isinstance(c, A.ModelParam))
        seq.span = _span(ch)
        return seq

    def model_param(self, ch):
        nodes = _nodes(ch)
        type_ = next((n for n in nodes if isinstance(n, (A.TensorType, A.NamedType, A.TupleType))), None)
        default = next((n for n in nodes if n is not type_), None)
        return A.ModelParam(_span(ch), _ident(ch[0]), type_, default)

    def member_cond(self, ch):
        return _MemberCond(_nodes(ch)[0])

    def device(self, ch):
        t = ch[1]
        text = unescape(t) if t.type == "STRING" else str(t)
        return A.Device(_span(ch), text)

    def member_option(self, ch):
        return A.MemberOption(_span(ch), _ident(_tokens(ch, "NAME")[0]), _nodes(ch)[0])

    def member(self, ch):
        kind = ch[0]
        name = _tokens(ch, "NAME")[0]
        nodes = [c for c in _nodes(ch) if not isinstance(c, (_MemberCond, A.MemberOption))]
        cond = next((c.expr for c in ch if isinstance(c, _MemberCond)), None)
        options = tuple(c for c in ch if isinstance(c, A.MemberOption))
        init = nodes[1] if len(nodes) > 1 else None
        member_kind = "param" if str(kind) == "param" else "buffer"  # the grammar allows only these two
        return A.Member(_span(ch), member_kind, _ident(name), nodes[0], init, cond, options)

    def type_params(self, ch):
        seq = _TypeParams(c for c in ch if isinstance(c, A.TypeParam))
        seq.span = _span(ch)
        return seq

    def type_param(self, ch):
        names = _tokens(ch, "NAME")
        minus = next((c for c in ch if isinstance(c, Token) and c.type == "ADD_OP" and str(c) == "-"), None)
        bounds = tuple(_ident(n) for n in names[1:])
        return A.TypeParam(_span(ch), _ident(names[0]), bounds, _tok_span(minus) if minus is not None else None)

    def trait_decl(self, ch):
        name = _tokens(ch, "NAME")[0]
        params = next((c for c in ch if isinstance(c, _Params)), ())
        return A.TraitDecl(_span(ch), _ident(name), tuple(c for c in ch if isinstance(c, A.FnDecl)), tuple(params))

    def trait_method(self, ch):
        name = _tokens(ch, "NAME")[0]
        params: tuple = ()
        ret: A.TypeExpr | None = None
        after_arrow = False
        for c in ch:
            if isinstance(c, _Seq) and c and isinstance(c[0], A.Param):
                params = tuple(c)
            elif isinstance(c, Token) and c.type == "ARROW":
                after_arrow = True
            elif after_arrow and isinstance(c, A.Node) and ret is None:
                ret = cast(A.TypeExpr, c)
        span = _span(ch)
        return A.FnDecl(span, _ident(name), params, ret, (), span)

    def fn_decl(self, ch):
        name = _tokens(ch, "NAME")[0]
        type_params = next((tuple(c) for c in ch if isinstance(c, _TypeParams)), ())
        params: tuple = ()
        ret: A.TypeExpr | None = None
        body: tuple = ()
        colon: Token | None = None
        after_arrow = False
        for c in ch:
            if isinstance(c, _Seq) and c and isinstance(c[0], A.Param):
                params = tuple(c)
            elif isinstance(c, Token) and c.type == "ARROW":
                after_arrow = True
            elif after_arrow and isinstance(c, A.Node) and ret is None:
                ret = cast(A.TypeExpr, c)
            elif isinstance(c, Token) and c.type == "COLON" and colon is None:
                colon = c
            elif isinstance(c, _Seq) and colon is not None:
                body = tuple(c)
        assert colon is not None  # the grammar requires it
        header = A.Span(_start(ch[0]), _end(colon))
        return A.FnDecl(_span(ch), _ident(name), params, ret, body, header, type_params)

    def extern_decl(self, ch):
        name = _tokens(ch, "NAME")[0]
        params: tuple = ()
        ret: A.TypeExpr | None = None
        after_arrow = False
        target = None
        for c in ch:
            if isinstance(c, _Seq):
                params = tuple(c)
            elif isinstance(c, Token) and c.type == "ARROW":
                after_arrow = True
            elif after_arrow and isinstance(c, A.Node) and ret is None:
                ret = cast(A.TypeExpr, c)
            elif isinstance(c, Token) and c.type == "STRING":
                target = A.StrLit(_tok_span(c), unescape(c))
        return A.ExternDecl(_span(ch), _ident(name), params, ret, target)

    def params(self, ch):
        seq = _Seq(c for c in ch if isinstance(c, A.Param))
        seq.span = _span(ch)
        return seq

    def param(self, ch):
        mut = any(isinstance(c, Token) and c.type == "MUT" for c in ch)
        name = _tokens(ch, "NAME")[0]
        type_ = default = None
        after_eq = False
        for c in ch:
            if isinstance(c, Token) and c.type == "EQUAL":
                after_eq = True
            elif isinstance(c, A.Node):
                if after_eq:
                    default = c
                else:
                    type_ = c
        return A.Param(_span(ch), mut, _ident(name), cast("A.TypeExpr | None", type_), cast("A.Expr | None", default))

    # -- types
    def tensor_type(self, ch):
        dims = tuple(c for c in ch if isinstance(c, (A.DimName, A.DimInt, A.DimBinary)))
        elem = next((c for c in ch if isinstance(c, A.ElemType)), None)
        rest = any(isinstance(c, Token) and c.type == "DOTDOT" for c in ch)
        return A.TensorType(_span(ch), dims, elem, rest)

    def dim_name(self, ch):
        return A.DimName(_span(ch), str(ch[0]))

    def dim_paren(self, ch):
        inner = next(c for c in ch if isinstance(c, (A.DimName, A.DimInt, A.DimBinary)))
        # dim arithmetic spans its parentheses, so an enclosing one's range is whole
        return dataclasses.replace(inner, span=_span(ch), parens=True) if isinstance(inner, A.DimBinary) else inner

    def dim_binary(self, ch):
        left, op, right = ch
        return A.DimBinary(A.Span(left.span.start, right.span.end), str(op), left, right)

    def dim_int(self, ch):
        return A.DimInt(_span(ch), int_value(str(ch[0])))

    def elem_type(self, ch):
        args, options = _type_args(ch)
        return A.ElemType(_span(ch), _ident(ch[0]), args, options)

    def named_type(self, ch):
        args, options = _type_args(ch)
        return A.NamedType(_span(ch), _ident(ch[0]), args, options)

    def type_args(self, ch):
        seq = _TypeArgs(c for c in ch if isinstance(c, A.Node))
        seq.span = _span(ch)
        return seq

    def type_option(self, ch):
        names = next((c for c in ch if isinstance(c, _Names)), None)
        if names is not None:
            return A.TypeOption(_span(ch), _ident(ch[0]), tuple(names))
        dim = next((c for c in ch if isinstance(c, (A.DimName, A.DimInt, A.DimBinary))), None)
        if dim is not None:
            return A.TypeOption(_span(ch), _ident(ch[0]), (), None, dim)
        floats = _tokens(ch, "FLOAT")
        if floats:
            number = float(str(floats[0]).replace("_", ""))
            negative = any(str(t) == "-" for t in _tokens(ch, "ADD_OP"))  # `value=-2.5`
            return A.TypeOption(_span(ch), _ident(ch[0]), (), None, None, -number if negative else number)
        return A.TypeOption(_span(ch), _ident(ch[0]), (), str(ch[2]) == "True")

    def type_names(self, ch):
        out = _Names(_ident(t) for t in _tokens(ch, "NAME"))
        out.span = _span(ch)
        return out

    def name_list(self, ch):
        return A.NameList(_span(ch), tuple(A.Name(_span([t]), str(t)) for t in _tokens(ch, "NAME")))

    def optional_type(self, ch):
        return A.OptionalType(_span(ch), _nodes(ch)[0])

    def tuple_type(self, ch):
        return A.TupleType(_span(ch), tuple(_nodes(ch)))

    # -- statements
    def suite(self, ch):
        seq = _Seq(c for c in ch if isinstance(c, A.Node))
        seq.span = _span(ch)
        return seq

    def stmt(self, ch):
        return ch[0]

    def assign(self, ch):
        nodes = _nodes(ch)
        return A.Assign(_span(ch), tuple(nodes[:-1]), nodes[-1])

    def aug_assign(self, ch):
        target, op, value = ch
        return A.AugAssign(_span(ch), target, str(op)[:-1], value, _tok_span(op))

    def expr_stmt(self, ch):
        return A.ExprStmt(_span(ch), ch[0])

    def return_stmt(self, ch):
        return A.Return(_span(ch), tuple(_nodes(ch)))

    def recovered(self, ch):
        return None

    def pass_stmt(self, ch):
        return A.Pass(_span(ch))

    def break_stmt(self, ch):
        return A.Break(_span(ch))

    def continue_stmt(self, ch):
        return A.Continue(_span(ch))

    def if_stmt(self, ch):
        cond, body = _nodes(ch)[:2]
        branches = [A.IfBranch(A.Span(_start(ch[0]), body.span.end), cond, tuple(body))]
        orelse = None
        for c in ch:
            if isinstance(c, A.IfBranch):
                branches.append(c)
            elif isinstance(c, _Else):
                orelse = c.body
        return A.If(_span(ch), tuple(branches), orelse)

    def elif_clause(self, ch):
        cond, body = _nodes(ch)
        return A.IfBranch(_span(ch), cond, tuple(body))

    def else_clause(self, ch):
        return _Else(tuple(_nodes(ch)[0]), _span(ch))

    def for_stmt(self, ch):
        names = _tokens(ch, "NAME")
        it, body = _nodes(ch)
        return A.For(_span(ch), tuple(_ident(n) for n in names), it, tuple(body))

    def while_stmt(self, ch):
        cond, body = _nodes(ch)
        return A.While(_span(ch), cond, tuple(body))

    # -- expressions
    def pipe(self, ch):
        left, op, target = ch
        return A.Pipe(_span(ch), left, target, _tok_span(op))

    def bool_op(self, ch):
        left, op, right = ch
        return A.BoolOp(_span(ch), str(op), left, right, _tok_span(op))

    def not_op(self, ch):
        return A.Not(_span(ch), ch[1])

    def is_none(self, ch):
        # `x is None`, `x is not None`: a comparison with the name None
        left, none = ch[0], ch[-1]
        op = " ".join(str(t) for t in ch[1:-1])
        op_span = A.Span(_tok_span(ch[1]).start, _tok_span(ch[-2]).end)
        return A.Compare(_span(ch), op, left, A.Name(_tok_span(none), "None"), op_span)

    def compare(self, ch):
        left, op, right = ch
        return A.Compare(_span(ch), str(op), left, right, _tok_span(op))

    def binary(self, ch):
        left, op, right = ch
        return A.Binary(_span(ch), str(op), left, right, _tok_span(op))

    def cast(self, ch):
        return A.Cast(_span(ch), ch[0], ch[2])

    def unary(self, ch):
        return A.Unary(_span(ch), str(ch[0]), ch[1])

    def call(self, ch):
        func = ch[0]
        args = next((c for c in ch if isinstance(c, _Seq)), ())
        lpar = _tokens(ch, "LPAR")[0]
        rpar = _tokens(ch, "RPAR")[-1]
        return A.Call(_span(ch), func, tuple(args), A.Span(_start(lpar), _end(rpar)))

    def field(self, ch):
        return A.Field(_span(ch), ch[0], _ident(ch[2]))

    def index(self, ch):
        # children: value "[" subscript ("," subscript)* [","] "]"
        lsqb, rsqb = ch[1], ch[-1]
        inner = ch[2:-1]
        items = [c for c in inner if c is not None and not isinstance(c, Token)]
        commas = sum(1 for c in inner if isinstance(c, Token) and c.type == "COMMA")
        inner = A.Span(_end(lsqb), _start(rsqb))
        if len(items) == 1 and commas == 0 and not isinstance(items[0], (A.Arg, A.EllipsisItem)):
            item = items[0]
            if isinstance(item, _SliceAt):  # one slice: spans the brackets' inside, as before
                return A.Index(_span(ch), ch[0], A.Slice(inner, item.start, item.end, item.step))
            return A.Index(_span(ch), ch[0], item)
        out = tuple(item.slice() if isinstance(item, _SliceAt) else item for item in items)
        return A.Index(_span(ch), ch[0], A.Subscripts(inner, out))

    def slice(self, ch):
        # children: start? ":" end? [":" step?] (absent bounds are None)
        colons = [i for i, c in enumerate(ch) if isinstance(c, Token) and c.type == "COLON"]
        colon = colons[0]
        start = ch[colon - 1] if colon > 0 and isinstance(ch[colon - 1], A.Node) else None
        end = ch[colon + 1] if colon + 1 < len(ch) and isinstance(ch[colon + 1], A.Node) else None
        step = None
        if len(colons) > 1:
            second = colons[1]
            step = ch[second + 1] if second + 1 < len(ch) and isinstance(ch[second + 1], A.Node) else None
        return _SliceAt(_span(ch), start, end, step)

    def ellipsis(self, ch):
        return A.EllipsisItem(_span(ch))

    def args(self, ch):
        seq = _Seq(c if isinstance(c, A.Arg) else A.Arg(c.span, None, c) for c in _nodes(ch))
        seq.span = _span(ch)
        return seq

    def keyword_arg(self, ch):
        return A.Arg(_span(ch), _ident(ch[0]), keyword_value(str(ch[0]), ch[2]))

    def name(self, ch):
        return A.Name(_span(ch), str(ch[0]))

    def tensor_lit(self, ch):
        return A.TensorLit(_span(ch), tuple(cast(A.Expr, c) for c in ch if isinstance(c, A.Node)))

    def lit_signed(self, ch):
        sign, tok = ch
        text = str(tok).replace("_", "")
        lit = (
            A.FloatLit(_tok_span(tok), float(text))
            if tok.type == "FLOAT"
            else A.IntLit(_tok_span(tok), int_value(text))
        )
        return A.Unary(_span(ch), str(sign), lit)

    def int_lit(self, ch):
        return A.IntLit(_span(ch), int_value(str(ch[0])))

    def float_lit(self, ch):
        return A.FloatLit(_span(ch), float(str(ch[0]).replace("_", "")))

    def str_lit(self, ch):
        return A.StrLit(_span(ch), unescape(ch[0]))

    def fstring(self, ch):
        tok = ch[0]
        try:
            return fstrings.read(str(tok), _start(tok), field_expression)
        except fstrings.FStringError as e:
            self.fstring_errors.append(e)
            return A.FString(_tok_span(tok), ())

    def bool_lit(self, ch):
        return A.BoolLit(_span(ch), str(ch[0]) == "True")

    def paren(self, ch):
        return ch[1]

    def tuple(self, ch):
        return A.TupleExpr(_span(ch), tuple(_nodes(ch)))
