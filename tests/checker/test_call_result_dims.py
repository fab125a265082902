"""A call whose result has a dim that the arguments make a number below 1 —
a layer whose kernel is larger than the input it is applied to — is E0212 at
the call, with the dim as the callee wrote it, rather than a negative size
that only torch would refuse when the program runs."""

from __future__ import annotations

from annotations import spanned


def test_a_kernel_larger_than_the_input_is_reported_at_the_call() -> None:
    src = """model Conv[K, stride = 1]:
    param w: [4 3 K K] = zeros

    fn forward(self, x: [b 3 h v]) -> [b 4 ((h-K)/stride+1) ((v-K)/stride+1)]:
        return conv2d(x, self.w, stride=stride)

fn main():
    c = Conv[5].init(seed=0)
    y = c(zeros([1 3 2 9]))
    print(y)
"""
    assert spanned(src) == [
        (
            "E0212",
            "dim expression ((h-K)/stride+1): in the result of Conv.forward it is -2 for these arguments; "
            "a dim is a positive integer",
            "c(zeros([1 3 2 9]))",
        )
    ]


def test_a_function_whose_result_dim_is_not_positive() -> None:
    src = "fn shrink(x: [b (t+3)]) -> ([b (t-2)], [b t]):\n    return zeros([b (t-2)]), zeros([b t])\n\n"
    src += "fn main():\n    print(shrink(zeros([1 4])))\n    print(shrink(zeros([1 6])))\n"
    assert spanned(src) == [
        (
            "E0212",
            "dim expression (t-2): in the result of shrink it is -1 for these arguments; a dim is a positive integer",
            "shrink(zeros([1 4]))",
        )
    ]
