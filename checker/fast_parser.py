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

The parts: fast_lexer.py (tokens), fast_types.py, fast_expressions.py; this
module reads items and statements.
"""

from __future__ import annotations

from . import ast as A
from .deep import MAX_CHAIN
from .fast_expressions import _ExpressionParser
from .fast_lexer import _AUG, _Decline, _tokenize
from .fstrings import FStringError
from .lexical import unescape

Span = A.Span


def parse(text: str) -> A.Item | None:
    """The tree of one item's text, exactly as lark's builder makes it, or None
    when the item is one to leave to lark. Never raises."""
    if "\x00" in text:
        return None  # lark's path reports it anywhere, comments and strings too (E0002)
    try:
        tokens = _tokenize(text if text.endswith(("\n", "\r")) else text + "\n")
        if tokens is None or (len(tokens[0]) > MAX_CHAIN and _long_statement(tokens[0])):
            return None
        return _Parser(*tokens).item()
    except (_Decline, IndexError, RecursionError, ValueError, FStringError):
        return None


# The links of a chain as parser.py counts them (MAX_CHAIN), in this lexer's
# kinds: these always; `+`, `-`, `(` and `[` right after an operand.
_LINKS = frozenset(
    {"*", "/", "//", "%", "@", "==", "!=", "<=", ">=", "<", ">", "|", "&", "and", "or", "as", "|>", "**", "."}
)
_AFTER_OPERAND_LINKS = frozenset({"+", "-", "(", "["})
_OPERAND_END = frozenset({"NAME", "INT", "FLOAT", "STRING", "FSTRING", "True", "False", ")", "]"})


def _long_statement(kinds: list[str]) -> bool:
    """Whether a statement may have more than MAX_CHAIN links, which lark
    reports (E0015). Only statements of more than that many tokens (tokens
    bound links) are counted, and only in texts of that many tokens."""
    limit = MAX_CHAIN
    last = 0
    ends = [i for i, kind in enumerate(kinds) if kind == "NL"]
    ends.append(len(kinds))
    for end in ends:
        if end - last > limit:
            links = 0
            operand_end = False
            for kind in kinds[last:end]:
                if kind in _LINKS or (operand_end and kind in _AFTER_OPERAND_LINKS):
                    links += 1
                operand_end = kind in _OPERAND_END
            if links > limit:
                return True
        last = end
    return False


class _Parser(_ExpressionParser):
    __slots__ = ()

    # -- items

    def item(self) -> A.Item:
        kind = self.k[0]
        if kind == "NAME":
            word = self.v[0]
            if word == "dim":
                node: A.Item = self.dim_decl()
            elif word == "const":
                node = self.const_decl()
            elif word == "type":
                node = self.type_alias()
            elif word == "model":
                node = self.model_decl()
            elif word == "trait":
                node = self.trait_decl()
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

    def const_decl(self) -> A.ConstDecl:
        self.i = 1
        name = self.ident()
        type_ = None
        if self.k[self.i] == ":":
            self.i += 1
            type_ = self.type()
        self.expect("=")
        value = self.expr()
        self.expect("NL")
        return A.ConstDecl(Span(self.s[0], value.span.end), name, type_, value)

    def type_alias(self) -> A.TypeAlias:
        self.i = 1
        name = self.ident()
        params: list[A.Ident] = []
        if self.k[self.i] == "[":
            self.i += 1
            params.append(self.ident())
            while self.k[self.i] == ",":
                self.i += 1
                if self.k[self.i] == "]":
                    break
                params.append(self.ident())
            self.expect("]")
        self.expect("=")
        target = self.type()
        self.expect("NL")
        return A.TypeAlias(Span(self.s[0], target.span.end), name, tuple(params), target)

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

    def bracket_list(self, item):
        """`[a, b, c]` and `[a, b,]`, each entry read by `item`: a model's
        params, a fn's type parameters."""
        self.i += 1  # "["
        k = self.k
        out = []
        while True:
            out.append(item())
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

    def model_params(self) -> tuple[A.ModelParam, ...]:
        return self.bracket_list(self.model_param)

    def model_param(self) -> A.ModelParam:
        name = self.ident()
        type_ = default = None
        if self.k[self.i] == ":":
            self.i += 1
            type_ = self.type()
        if self.k[self.i] == "=":
            self.i += 1
            default = self.expr()
        end = (default or type_ or name).span.end
        return A.ModelParam(Span(name.span.start, end), name, type_, default)

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
        options: list[A.MemberOption] = []
        while self.k[self.i] == ",":
            at = self.i
            self.i += 1
            key = self.ident()
            self.expect("=")
            value = self.expr()
            options.append(A.MemberOption(Span(self.s[at], value.span.end), key, value))
        cond = None
        if self.k[self.i] == "if":
            self.i += 1
            cond = self.expr()
        self.expect("NL")
        end = (cond or (options[-1] if options else None) or init or type_).span.end
        kind = "param" if word == "param" else "buffer"
        return A.Member(Span(self.s[i], end), kind, name, type_, init, cond, tuple(options))

    def signature(self) -> tuple[A.Ident, tuple[A.Param, ...], A.TypeExpr | None]:
        return self._signature_after(self.ident())

    def param(self) -> A.Param:
        start = self.s[self.i]
        mut = self.k[self.i] == "mut"
        if mut:
            self.i += 1
        name = self.ident()
        type_ = default = None
        if self.k[self.i] == ":":
            self.i += 1
            type_ = self.type()
            if self.k[self.i] == "|" and self.k[self.i + 1] == "NAME" and self.v[self.i + 1] == "None":
                self.i += 2  # `Int | None`: a parameter that may be None
                type_ = A.OptionalType(Span(type_.span.start, self.e[self.i - 1]), type_)
        if self.k[self.i] == "=":
            self.i += 1
            default = self.expr()
        end = (default or type_ or name).span.end
        return A.Param(Span(start, end), mut, name, type_, default)

    def fn_decl(self) -> A.FnDecl:
        """An item's or a method's `fn`, at the current token."""
        start = self.s[self.expect("fn")]
        type_params: tuple[A.TypeParam, ...] = ()
        if self.k[self.i + 1] == "[":
            name = self.ident()
            type_params = self.type_params()
            name, params, ret = self._signature_after(name)
        else:
            name, params, ret = self.signature()
        colon = self.expect(":")
        body, end = self.suite()
        return A.FnDecl(Span(start, end), name, params, ret, body, Span(start, self.e[colon]), type_params)

    def _signature_after(self, name: A.Ident) -> tuple[A.Ident, tuple[A.Param, ...], A.TypeExpr | None]:
        """The signature's parameters and result, its name (and type
        parameters) already read."""
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

    def type_params(self) -> tuple[A.TypeParam, ...]:
        """`[M: CharModel, N: A + B]` after a fn's name (a `-` between bounds: declined)."""
        return self.bracket_list(self.type_param)

    def type_param(self) -> A.TypeParam:
        name = self.ident()
        self.expect(":")
        bounds = [self.qualname()]
        while self.k[self.i] == "+":
            self.i += 1
            bounds.append(self.qualname())
        return A.TypeParam(Span(name.span.start, bounds[-1].span.end), name, tuple(bounds))

    def trait_decl(self) -> A.TraitDecl:
        self.i = 1
        name = self.ident()
        header: tuple[A.ModelParam, ...] = ()
        if self.k[self.i] == "[":
            header = self.model_params()
        self.expect(":")
        self.expect("NL")
        self.expect("INDENT")
        methods: list[A.FnDecl] = []
        if self.k[self.i] == "pass":  # a trait without methods: any model
            end = self.e[self.i]
            self.i += 1
            self.expect("NL")
            self.expect("DEDENT")
            return A.TraitDecl(Span(self.s[0], end), name, (), header)
        while self.k[self.i] != "DEDENT":
            start = self.s[self.expect("fn")]
            mname, params, ret = self.signature()
            end = ret.span.end if ret is not None else self.e[self.i - 1]
            self.expect("NL")
            span = Span(start, end)
            methods.append(A.FnDecl(span, mname, params, ret, (), span))
        self.i += 1
        return A.TraitDecl(Span(self.s[0], methods[-1].span.end), name, tuple(methods), header)

    def extern_decl(self) -> A.ExternDecl:
        self.i = 1
        self.expect("fn")
        name, params, ret = self.signature()
        self.expect("from")
        at = self.expect("STRING")
        self.expect("NL")
        target = A.StrLit(Span(self.s[at], self.e[at]), unescape(self.v[at]))
        return A.ExternDecl(Span(self.s[0], self.e[at]), name, params, ret, target)

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
            targets = [self.ident()]
            while self.k[self.i] == ",":
                self.i += 1
                targets.append(self.ident())
            self.expect("in")
            iterable = self.expr()
            self.expect(":")
            body, end = self.suite()
            return A.For(Span(start, end), tuple(targets), iterable, body)
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
