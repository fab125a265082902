"""The fast parser's types (fast_parser.py): tensor types with their dims and
dim arithmetic, named types with their arguments and options, tuple types."""

from __future__ import annotations

import dataclasses

from . import ast as A
from .fast_lexer import _ADD, _MUL, _Cursor, _Decline
from .lexical import int_value

Span = A.Span


class _TypeParser(_Cursor):
    __slots__ = ()

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
            close = self.expect(")")
            if not isinstance(inner, A.DimBinary):
                return inner
            return dataclasses.replace(inner, span=Span(self.s[i], self.e[close]), parens=True)
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
                elif after == "FLOAT" or (after in _ADD and k[self.i + 1] == "FLOAT"):
                    sign = -1.0 if after == "-" else 1.0  # `value=-2.5`
                    self.i += after != "FLOAT"
                    number = sign * float(self.v[self.i].replace("_", ""))
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
                    close = self.expect(")")
                    if k[self.i] != "," and k[self.i] != "]":
                        raise _Decline
                    if isinstance(dim, A.DimBinary):
                        dim = dataclasses.replace(dim, span=Span(self.s[i], self.e[close]), parens=True)
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
        k = self.k
        if k[self.i] == ")":  # `(A,)`: a tuple of one
            end = self.e[self.i]
            self.i += 1
            return A.TupleType(Span(start, end), tuple(items))
        items.append(self.type())
        while k[self.i] == ",":
            self.i += 1
            if k[self.i] == ")":
                break
            items.append(self.type())
        end = self.e[self.expect(")")]
        return A.TupleType(Span(start, end), tuple(items))
