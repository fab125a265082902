"""The simplifications the conv arithmetic needs (issue 40): a floored
division whose non-constant terms divide is a polynomial (`((4*h+1)/2)` is
`2*h`), and the parts of `chunk` are exact divisions, so four parts of
`[b e]` concatenated are `[b e]` again. A floored division that may not be
exact (a strided slice, a pool) stays one: an odd size halved and doubled is
still an error."""

from __future__ import annotations

from functools import partial

from annotations import check_annotated

from quiver.checker import dimexpr as DX

check = partial(check_annotated, dedent=True)
h, two, four = DX.var("h"), DX.const(2), DX.const(4)


def _p(*terms: tuple[int, DX.Poly]) -> DX.Poly:
    out = DX.ZERO
    for c, p in terms:
        out = DX.add(out, DX.mul(DX.const(c), p))
    return out


def test_a_division_whose_terms_divide_but_the_constant_is_a_polynomial() -> None:
    assert DX.div(_p((4, h), (1, DX.const(1))), two) == _p((2, h))  # ((4*h+1)/2) is 2*h
    assert DX.div(_p((4, h), (3, DX.const(1))), two) == _p((2, h), (1, DX.const(1)))  # 2*h+1
    assert DX.div(_p((4, h), (-1, DX.const(1))), two) == _p((2, h), (-1, DX.const(1)))  # floored: 2*h-1
    # a stride-2 conv's size on 4*h, ((4*h+2-3)/2+1), is 2*h
    conv = DX.add(DX.div(_p((4, h), (-1, DX.const(1))), two) or DX.ZERO, DX.const(1))
    assert conv == _p((2, h))
    # a term that does not divide keeps the division
    assert DX.div(_p((1, h), (1, DX.const(1))), two) == DX.atom(("d", _p((1, h), (1, DX.const(1))), two))


def test_exact_divisions_times_their_divisor_are_the_dividend() -> None:
    part = DX.div_exact(h, four)
    assert part == DX.atom(("d", h, four, "x"))
    assert DX.add(DX.add(part or DX.ZERO, part or DX.ZERO), DX.mul(two, part or DX.ZERO)) == h
    assert DX.mul(two, part or DX.ZERO) != DX.mul(two, DX.div(h, four) or DX.ZERO)
    assert DX.loose(DX.mul(two, part or DX.ZERO)) == DX.mul(two, DX.div(h, four) or DX.ZERO)
    assert DX.div_exact(_p((4, h)), four) == h  # a division that comes out needs no atom


def test_fast_neural_styles_network_takes_any_size_divisible_by_4() -> None:
    check(
        """
        model Net:
            param d1: [8 3 3 3] = normal(0.0, 0.1)
            param d2: [16 8 3 3] = normal(0.0, 0.1)
            param u1: [16 8 3 3] = normal(0.0, 0.1)
            param u2: [8 3 3 3] = normal(0.0, 0.1)

            fn down(self, x: [b 3 h w]) -> [b 16 ((((h+1)/2)+1)/2) ((((w+1)/2)+1)/2)]:
                return conv2d(conv2d(x, self.d1, stride=2, padding=1), self.d2, stride=2, padding=1)

            fn forward(self, x: [b 3 (4*k) (4*m)]) -> [b 3 (4*k) (4*m)]:
                y = conv2d(conv2d(x, self.d1, stride=2, padding=1), self.d2, stride=2, padding=1)
                y = conv_transpose2d(y, self.u1, stride=2, padding=1, output_padding=1)
                return conv_transpose2d(y, self.u2, stride=2, padding=1, output_padding=1)

            fn any_size(self, x: [b 3 h w]) -> [b 3 h w]:
                y = conv_transpose2d(self.down(x), self.u1, stride=2, padding=1, output_padding=1)
                return conv_transpose2d(y, self.u2, stride=2, padding=1, output_padding=1)
        #              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ E0201: return value: expected [b 3 h w], found [b 3 (4*(((h-1)/2)/2)+4) (4*(((w-1)/2)/2)+4)]
        """
    )


def test_the_parts_of_chunk_concatenated_are_the_whole() -> None:
    check(
        """
        fn parts(x: [b e]) -> [b e]:
            a, c, d, g = chunk(x, 4, over=-1)
            return concat(a, c, d, g, over=-1)

        fn one(x: [b e]) -> [b (e/4)]:
            a, c, d, g = chunk(x, 4, over=-1)
            return a + g

        fn two(x: [b e]) -> [b (2*(e/4))]:
            a, c, d, g = chunk(x, 4, over=-1)
            return concat(a, c, over=-1)

        fn halved(x: [b h]) -> [b h]:
            y = x[:, ::2]
            return concat(y, y, over=-1)
        #          ^^^^^^^^^^^^^^^^^^^^^ E0201: return value: expected [b h], found [b (((h+1)/2)+((h+1)/2))]
        """
    )
