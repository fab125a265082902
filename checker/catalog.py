"""The diagnostic catalog: every code Quiver reports, defined once.

Each entry is frozen data: the code, a short title, the severity, the message
template (its `{placeholders}` are the only way a message gets its details), an
explanation, an example that triggers it and the same example fixed. The
checker builds diagnostics with `E0201.at(span, expected=..., found=...)` and
never writes a message literal; `qlint --explain`, docs/diagnostics.md and the
language server all read this table. tests/checker/test_catalog.py checks that every
example triggers its own code and every fix checks clean.

Ranges: E00xx syntax, E01xx names and scopes, E02xx shapes and dims, E03xx types
and dtypes, E04xx calls and bindings, E05xx mutability, E09xx models, E11xx
gradients, Wxxxx warnings.
"""

from __future__ import annotations

import textwrap

from .catalog_code import CODES as CODES
from .catalog_code import Code, _code

# ====================================================================== E00xx syntax

E0001 = _code(
    "E0001",
    "source is not valid UTF-8",
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
    "E0002",
    "unexpected character",
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
    "E0003",
    "unexpected token",
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
    "E0004",
    "unbalanced brackets",
    "'{bracket}' {problem}",
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
    variants={
        "no_opening": "has no opening bracket",
        "mismatch": "does not match '{opener}'; expected '{closer}'",
        "never_closed": "is never closed; expected '{closer}'",
    },
)

E0005 = _code(
    "E0005",
    "bad indentation",
    "this line {problem}",
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
    variants={
        "dedent_to_no_block": "dedents to a column that no enclosing block uses",
        "indented_more": "is indented more than its block",
    },
)

E0006 = _code(
    "E0006",
    "tabs and spaces mixed",
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
    "E0007",
    "invalid assignment target",
    "only a name, a field (m.w) or a subscript of one (x[i], m.w[i]) can be assigned",
    """
    The left side of `=` must be a name (`x = ...`), several names
    (`l, g = ...`), one field of a model (`m.w = ...`) or one subscript of a
    name or of a field (`x[:, 0] = ...`, `m.buf[t] = ...`). Calls, operators,
    literals and subscripts of subscripts (`x[0][1] = ...`: write `x[0, 1]`)
    cannot be assigned.
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
    "E0008",
    "unterminated string",
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
    "E0009",
    "nested too deeply",
    "nested more than {limit} levels deep",
    """
    A statement is nested more than 100 levels deep. Each level is a block
    (the function's body is the first, each `if`, `for` or `while` inside it
    one more), a bracket (parentheses, a call's, indexing, a list) or a prefix
    operator (`-`, `not`) or `**` whose operand is still open. Chains that read
    flat count nothing: `a + b + c`, `x.a.b` or `x[0][1]` are one level
    whatever their length. The error is at the first block, bracket or operator
    past the limit; the statement that holds it is skipped. No program written
    by hand comes close; generated code should introduce names for
    intermediate values.
    """,
    "fn main():\n    x = " + "-" * 120 + "1\n    print(x)\n",
    """
    fn main():
        x = 1
        print(x)
    """,
)

E0010 = _code(
    "E0010",
    "loop control outside a loop",
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

E0011 = _code(
    "E0011",
    "number too long",
    "this integer has {digits} digits, more than the {limit} a program may write",
    """
    An integer literal may have at most 4,300 digits, the most Python reads or
    prints as a number (compiled programs are Python). No shape, count or seed
    needs more: a number that long is almost always text pasted in the wrong
    place.
    """,
    "fn main():\n    print(" + "9" * 4301 + ")\n",
    """
    fn main():
        print(9999)
    """,
)

E0012 = _code(
    "E0012",
    "file cannot be checked",
    "this file is not checked: {reason}",
    """
    A source file is checked only when it is a regular file of at most 10 MiB
    inside the folder being checked. The file, or the editor's document, is
    larger than that (often data saved under a `.qv` name, or text pasted by
    mistake), or on disk it is not a regular file (a folder, a FIFO, a device,
    a broken link), or it is a symbolic link that leads out of the workspace:
    Quiver never reads outside the folder it was asked to check, so a
    repository cannot make it show or quote files elsewhere. Nothing in the
    file is parsed; a file that imports it reports E0113. Shrink or split the
    file, or replace the link by the file itself.
    """,
    # The example stands for a file of more than 10 MiB: the catalog's test
    # pads it past the limit.
    """
    # ... followed by 10 MiB more
    dim D = 4
    """,
    """
    dim D = 4
    """,
    example_stands_for=True,
    variants={
        "too_large": "it is larger than {limit} ({size} bytes), the limit for a source file",
    },
)

E0015 = _code(
    "E0015",
    "chain too long",
    "this statement chains more than {limit} operators, fields, calls or indexes",
    """
    A statement may chain at most 100,000 links: binary operators
    (`a + b + c` has two), `.` fields, `as` casts, `|>` pipes, and the
    brackets of calls and indexing after a value. Chains read flat, but each
    link is one more level of the syntax tree, which the checker and the
    compiler walk; past the limit the statement is skipped, so the work a file
    costs stays in proportion to its size. No program written by hand comes
    close: generated code should introduce names for partial results (`s1 =
    a + b`, then `s2 = s1 + c`).
    """,
    # The example stands for a statement of more than 100,000 links: the
    # catalog's test writes one out.
    """
    fn main():
        a = 1.0
        x = a + a + a  # ... and 100,000 more
        print(x)
    """,
    """
    fn main():
        a = 1.0
        x = a + a + a
        print(x)
    """,
    example_stands_for=True,
)

# Most examples below share this model.
_LIN = """
dim D = 4
dim C = 3

model Lin:
    param w: [D C] = normal(0.0, 0.1)
    param b: [C] = zeros
"""


def _with_lin(body: str) -> str:
    return _LIN.lstrip("\n") + "\n" + textwrap.dedent(body).lstrip("\n")


E0014 = _code(
    "E0014",
    "settings not applied",
    "the [tool.quiver] settings of this file are not applied: {problem}",
    """
    qlint and the editor read `[tool.quiver]` (select, ignore, strict) from
    the nearest pyproject.toml that has the table. This one cannot be
    applied: it is not valid TOML, it is nested more deeply or holds a longer
    integer than Python's TOML reader accepts, or the table has an unknown
    key, a value of the wrong type or a code that matches no diagnostic.
    Every file is still checked, with the default settings (every code
    shown), so a broken or hostile pyproject.toml never hides a problem. The
    diagnostic is at the file, on the line of the problem when it is known.
    Fix the table; `qlint --show-settings` prints the settings that apply.
    """,
    """
    [tool.quiver]
    ignore = ["W9999"]
    """,
    """
    [tool.quiver]
    ignore = ["W0101"]
    """,
    example_language="toml",
)

# ====================================================================== E01xx names and scopes

E0101 = _code(
    "E0101",
    "unknown name",
    "unknown name '{name}'{hint}",
    """
    The name is not a local variable, a parameter, a generic dim of the function,
    a top-level item (dim, model, fn, extern fn) or a built-in. Names are
    case-sensitive. After this error the name is treated as defined, so a typo is
    reported once, where it first appears.
    """,
    """
    fn main():
        total = 1
        print(totl)
    """,
    """
    fn main():
        total = 1
        print(total)
    """,
)

E0102 = _code(
    "E0102",
    "unknown type",
    "unknown {what} '{name}'{hint}",
    """
    A type names something that is not a type. Types are tensor types such as
    `[b D] f64` (element types: Float, f16, bf16, f32, f64, i32, i64, Bool, NonNeg,
    Prob, Index[C]), the numbers Int, Float, Bool and Str, Mode, a model's name,
    Grad[M] and tuples `(A, B)`.
    """,
    """
    fn half(x: [4] Flaot) -> [4]:
        return x / 2.0
    """,
    """
    fn half(x: [4] Float) -> [4]:
        return x / 2.0
    """,
)

E0103 = _code(
    "E0103",
    "possibly unassigned variable",
    "'{name}' may be used before it is assigned",
    """
    On some path to this use the variable is never assigned: it is assigned only
    in one branch of an `if`, or only inside a loop that may run zero times.
    Assign it before the `if` or the loop.
    """,
    """
    fn main():
        for i in range(3):
            last = i
        print(last)
    """,
    """
    fn main():
        last = 0
        for i in range(3):
            last = i
        print(last)
    """,
)

E0104 = _code(
    "E0104",
    "duplicate definition",
    "'{name}' is defined more than once",
    """
    Dims, models, functions and extern functions share one namespace, and each
    name may be defined once. The first definition is the one used; later ones
    are reported.
    """,
    """
    dim D = 4
    dim D = 8
    """,
    """
    dim D = 4
    dim E = 8
    """,
)

E0105 = _code(
    "E0105",
    "duplicate parameter",
    "duplicate parameter '{name}'",
    """
    Two parameters of one function have the same name.
    """,
    """
    fn add(x: Int, x: Int) -> Int:
        return x
    """,
    """
    fn add(x: Int, y: Int) -> Int:
        return x + y
    """,
)

E0106 = _code(
    "E0106",
    "duplicate field",
    "duplicate field '{name}' in model {model}",
    """
    Params and buffers of a model share one namespace; each name may appear once.
    """,
    """
    model Lin:
        param w: [4 3] = zeros
        buffer w: [] i64 = 0
    """,
    """
    model Lin:
        param w: [4 3] = zeros
        buffer steps: [] i64 = 0
    """,
)

E0107 = _code(
    "E0107",
    "unknown field",
    "{owner} has no field '{name}'{hint}",
    """
    The field does not exist on the value: a model has its params and buffers as
    fields, a gradient `Grad[M]` has one field per param of M. Tensors and numbers
    have no fields, and no methods either: what torch writes as a method is a
    built-in function (`x.sum(1)` is `sum(x, over=D)`, `x.masked_fill(mask, v)`
    is `where(mask, v, x)`), and the message names it where it can.
    """,
    _with_lin("""
    fn score(m: Lin, x: [b D]) -> [b C]:
        return x @ m.weight + m.b
    """),
    _with_lin("""
    fn score(m: Lin, x: [b D]) -> [b C]:
        return x @ m.w + m.b
    """),
)

E0109 = _code(
    "E0109",
    "unknown dim",
    "unknown dim '{name}'{hint}",
    """
    Inside a function body, a dim (in `over=`, or in a shape such as
    `zeros([b H])`) must be a `dim` constant or one of the function's generic dims,
    which are the names that appear in its parameter types.
    """,
    """
    dim C = 3

    fn total(x: [b C]) -> [b]:
        return sum(x, over=K)
    """,
    """
    dim C = 3

    fn total(x: [b C]) -> [b]:
        return sum(x, over=C)
    """,
)

E0110 = _code(
    "E0110",
    "wrong kind of name",
    "'{name}' is {kind}, not {use}",
    """
    The name exists but is the wrong kind of thing here: a model or a function
    used as a value, a dim used as a type, and so on. A function is only called
    (or passed as the first argument of value_and_grad); a model is created with
    `M.init(seed=...)`.
    """,
    _with_lin("""
    fn main():
        m = Lin
        print(m)
    """),
    _with_lin("""
    fn main():
        m = Lin.init(seed=0)
        print(m)
    """),
)

E0111 = _code(
    "E0111",
    "cannot assign to a global name",
    "cannot assign to '{name}': it is {what}",
    """
    Dims, models and functions are fixed; a local variable cannot take their name.
    Pick another name for the variable.
    """,
    """
    dim D = 4

    fn main():
        D = 5
        print(D)
    """,
    """
    dim D = 4

    fn main():
        d = 5
        print(d, D)
    """,
)

E0112 = _code(
    "E0112",
    "parameter named like a generic dim",
    "'{name}' names both a parameter and a generic dim of this function",
    """
    Generic dims are names too: inside the body `b` is the size of the batch dim
    of `x: [b D]`. A parameter with the same name would make every use of `b`
    ambiguous. Rename one of them. (An `Int` parameter may name a dim: its
    value is that size, `fn mask(size: Int) -> [size size] Bool`.)
    """,
    """
    fn f(x: [b 4], b: Float) -> [b 4]:
        return x
    """,
    """
    fn f(x: [b 4], scale: Int) -> [b 4]:
        return x
    """,
)

E0113 = _code(
    "E0113",
    "module not found",
    "no module '{module}'{where}{hint}",
    """
    `import nn.layers` looks for `nn/layers.qv` next to the importing file,
    then in the project folder (the nearest folder above with a `quiver.toml`)
    and in the workspace roots (the folders given to qlint, the editor's
    workspace folders). A file that is not saved under one of those folders
    cannot be imported.
    """,
    """
    # file: train.qv
    from layrs import Lin
    # file: layers.qv
    model Lin:
        param w: [4] = zeros
    """,
    """
    # file: train.qv
    from layers import Lin

    fn main():
        print(Lin.init(seed=0))
    # file: layers.qv
    model Lin:
        param w: [4] = zeros
    """,
    variants={
        "not_in_folders": " (no {path} in {folders})",
        "unreadable": " ({target} cannot be read)",
        "unreadable_because": " ({target} cannot be read: {why})",
    },
)

E0114 = _code(
    "E0114",
    "import cycle",
    "import cycle: {cycle}",
    """
    Modules are checked in the order they import each other, so the imports of
    a program must not form a cycle. Move what both files need into a third
    module that both import.
    """,
    """
    # file: a.qv
    import b
    dim D = 4
    # file: b.qv
    import a
    dim E = 4
    """,
    """
    # file: a.qv
    import b
    dim D = b.E
    # file: b.qv
    dim E = 4
    """,
)

E0115 = _code(
    "E0115",
    "no such name in module",
    "module '{module}' has no '{name}'{hint}",
    """
    The module exists but defines no dim, model, function or extern function
    of that name.
    """,
    """
    # file: train.qv
    from layers import Linear
    # file: layers.qv
    model Lin:
        param w: [4] = zeros
    """,
    """
    # file: train.qv
    from layers import Lin

    fn main():
        print(Lin.init(seed=0))
    # file: layers.qv
    model Lin:
        param w: [4] = zeros
    """,
)

E0116 = _code(
    "E0116",
    "private name",
    "'{name}' is private to module '{module}'",
    """
    A name that starts with `_` belongs to its file: other files cannot import
    it or write `module._name`. Rename it without the underscore to share it.
    """,
    """
    # file: train.qv
    from layers import _scale
    # file: layers.qv
    fn _scale(x: [4]) -> [4]:
        return 2.0 * x
    """,
    """
    # file: train.qv
    from layers import scale

    fn main():
        print(scale(zeros([4])))
    # file: layers.qv
    fn scale(x: [4]) -> [4]:
        return 2.0 * x
    """,
)

E0117 = _code(
    "E0117",
    "import clashes with a name",
    "'{name}' is already {what}",
    """
    An import binds a name in the importing file, in the same namespace as the
    file's own dims, models and functions. Two bindings of one name would make
    every use of it ambiguous. Import it under another name (`from layers import
    Mlp as LayerMlp`) or rename the definition.
    """,
    """
    # file: train.qv
    from layers import Lin
    model Lin:
        param w: [8] = zeros
    # file: layers.qv
    model Lin:
        param w: [4] = zeros
    """,
    """
    # file: train.qv
    from layers import Lin as SmallLin
    model Lin:
        param w: [8] = zeros

    fn main():
        print(SmallLin.init(seed=0), Lin.init(seed=0))
    # file: layers.qv
    model Lin:
        param w: [4] = zeros
    """,
)

# ====================================================================== E02xx shapes and dims

E0201 = _code(
    "E0201",
    "shape mismatch",
    "{context}expected {expected}, found {found}",
    """
    A tensor has the wrong shape: a different number of dims, or a dim that is not
    the one required. Dims compare by name when both are `dim` constants (`H` and
    `E` differ even if both are 128), by value between a constant and a number,
    and generic dims are bound once per call. When a convolution's padding made
    the sizes that differ, the message says which convolution and the padding
    that gives the sizes expected (`padding=1 keeps H and W`).
    """,
    """
    dim D = 4
    dim H = 8

    fn first(x: [b D]) -> [b D]:
        return x

    fn main():
        x = randn([2 H], seed=0)
        print(first(x))
    """,
    """
    dim D = 4
    dim H = 8

    fn first(x: [b D]) -> [b D]:
        return x

    fn main():
        x = randn([2 D], seed=0)
        print(first(x))
    """,
)

E0202 = _code(
    "E0202",
    "cannot broadcast",
    "cannot broadcast {left} {op} {right}: {a} and {b} differ",
    """
    Elementwise operators line the shapes up from the right; each pair of dims must
    be equal or one of them 1. Here a pair is neither.
    """,
    """
    dim D = 4
    dim C = 3

    fn mix(x: [b D], y: [b C]) -> [b D]:
        return x + y
    """,
    """
    dim D = 4
    dim C = 3

    fn mix(x: [b D], y: [b D]) -> [b D]:
        return x + y
    """,
)

E0203 = _code(
    "E0203",
    "matmul dims differ",
    "matmul {left} @ {right}: inner dims {a} and {b} differ",
    """
    `a @ b` contracts the last dim of a with the second-to-last dim of b (the only
    dim of a vector); they must be the same dim.
    """,
    _with_lin("""
    fn score(m: Lin, x: [b C]) -> [b C]:
        return x @ m.w
    """),
    _with_lin("""
    fn score(m: Lin, x: [b D]) -> [b C]:
        return x @ m.w
    """),
)

E0204 = _code(
    "E0204",
    "over= names no dim of the operand",
    "over={dim}: {dim} is not a dim of {operand}",
    """
    `over=` picks the dim a reduction, softmax or cross_entropy works along; it
    must be one of the operand's dims.
    """,
    """
    dim H = 8
    dim C = 3

    fn probs(x: [b C]) -> [b C] Prob:
        return softmax(x, over=H)
    """,
    """
    dim H = 8
    dim C = 3

    fn probs(x: [b C]) -> [b C] Prob:
        return softmax(x, over=C)
    """,
)

E0205 = _code(
    "E0205",
    "generic dim bound twice",
    "{context}expected {expected}, found {found} ({first} from argument '{where}', not {now})",
    """
    A generic dim of the function called (such as the batch dim `b`) takes one
    value per call. Two arguments give it different dims. The expected type is
    the parameter's with the dims the call bound (in the caller's dims), and
    the message says which argument bound the dim that differs.
    """,
    """
    dim D = 4

    fn add(x: [b D], y: [b D]) -> [b D]:
        return x + y

    fn main():
        print(add(randn([2 D], seed=0), randn([3 D], seed=1)))
    """,
    """
    dim D = 4

    fn add(x: [b D], y: [b D]) -> [b D]:
        return x + y

    fn main():
        print(add(randn([2 D], seed=0), randn([2 D], seed=1)))
    """,
)

E0206 = _code(
    "E0206",
    "unbound generic dim in return type",
    "generic dim '{name}' in the return type is not bound by any parameter",
    """
    A generic dim gets its value from the arguments of each call; one that appears
    only in the return type could never be known. Use a `dim` constant, take a
    parameter that carries the dim, or an `Int` parameter of that name (its value
    is the size). (An `extern fn` may have such a dim: each call's result then
    has a size known only at run time of its own.)
    """,
    """
    fn make(x: [b]) -> [n]:
        return x
    """,
    """
    fn make(x: [b]) -> [b]:
        return x
    """,
)

E0207 = _code(
    "E0207",
    "model shape not fixed",
    "model shapes use integers and dim constants; '{name}' is not a dim{hint}",
    """
    A model's params and buffers have fixed shapes: every dim is an integer or a
    `dim` constant. Generic dims belong to functions.
    """,
    """
    model Lin:
        param w: [D 3] = zeros
    """,
    """
    dim D = 4

    model Lin:
        param w: [D 3] = zeros
    """,
)

E0208 = _code(
    "E0208",
    "invalid dim size",
    "a dim is a positive integer, found {value}",
    """
    `dim NAME = N` declares a size, and literal dims in shapes are sizes: both are
    integers of at least 1.
    """,
    """
    dim D = 0
    """,
    """
    dim D = 4
    """,
)

E0209 = _code(
    "E0209",
    "ambiguous over= dim",
    "over={dim} is ambiguous: {operand} has {dim} more than once; give its position: {positions}",
    """
    The operand has the dim twice (a square matrix `[H H]`, or attention scores
    `[b T T]`), so `over=` cannot tell which one is meant. Give the position of
    the dim instead, counted from the end with a negative number (`over=-1` is
    the last dim), or give the two dims different names.
    """,
    """
    dim H = 8

    fn rows(x: [H H]) -> [H]:
        return sum(x, over=H)
    """,
    """
    dim H = 8

    fn rows(x: [H H]) -> [H]:
        return sum(x, over=-1)
    """,
)

E0210 = _code(
    "E0210",
    "not enough dims",
    "{operation} needs {needed}, found {found}",
    """
    The operation needs more dims than the tensor has: `@` needs at least one on
    each side, `transpose` two, indexing one, and an axis position such as
    `over=-3` as many as it counts (`over=-1` and `over=0` need one).
    """,
    """
    fn bad(x: []) -> []:
        return x[0]
    """,
    """
    fn good(x: [4]) -> []:
        return x[0]
    """,
)

E0211 = _code(
    "E0211",
    "not a dim",
    "'{name}' is {kind}, not a dim{why}",
    """
    A name used as a dim (in a shape or in `over=`) refers to a model, a
    function, or a constant that is not a positive `Int`. A `const` whose
    value is made by `/` is a `Float` (`64 / 2` is `32.0`, as in a body), so it
    cannot size a shape; `dim HIDC = H / 2` is the integer form: a `dim`'s `/`
    divides integers, exactly, and the name stays in the types.
    """,
    """
    model Lin:
        param w: [4 3] = zeros

    fn f(x: [Lin]) -> Int:
        return 1
    """,
    """
    dim N = 4

    fn f(x: [N]) -> Int:
        return 1
    """,
)

E0212 = _code(
    "E0212",
    "invalid dim expression",
    "dim expression {expr}: {reason}",
    """
    A dim may be computed from others with `+ - * /` inside parentheses in a
    shape (`[b (T*E)]`, `[b C ((H-K)/S+1)]`), and `dim NAME = ...` may compute
    a constant from other constants (`dim HD = E / NH`). `/` is integer division
    floored, as torch floors the sizes of convolutions and pools; in a `dim`
    declaration it must be exact, so a head size that does not divide the width
    is caught where it is declared. So must a division of a model's own dims
    written in its members or methods (`(Ci/groups)` in nn.Conv2d's weight,
    `(E/NH)` in nn.MultiheadAttention's heads): an instance whose dims leave a
    remainder, `nn.MultiheadAttention[10, 3]`, is the error, where it is
    written, as torch refuses such a layer when it is built. A dim's value
    must be a positive integer.
    """,
    """
    dim E = 64
    dim NH = 5
    dim HD = E / NH
    """,
    """
    dim E = 64
    dim NH = 4
    dim HD = E / NH
    """,
    variants={
        "not_arithmetic": "'{op}' is not dim arithmetic (+ - * / // %)",
        "division_by_zero": "division by zero",
        "not_positive": "it is {value}; a dim is a positive integer",
        "inexact_in_model": "in {model} it is {n}/{d}, not a whole number: {divisor} must divide {dividend}",
        "not_positive_in_result": "in the result of {fn} it is {value} for these arguments; a dim is a positive integer",
    },
)

E0213 = _code(
    "E0213",
    "slice out of range",
    "slice of {dim}: {reason}",
    """
    `x[i:j]` keeps the entries i to j-1 of a dim of x (`x[:, i:j]` of the
    second), so its size is `(j-i)`; `x[i:]` and `x[:j]` leave out one bound,
    and a negative bound counts from the end. When the bounds are literals or
    dims the checker knows the size, and a slice that keeps nothing, or
    reaches past either end of the dim, is an error rather than a silently
    short tensor.
    """,
    """
    dim T = 8

    fn f(x: [T]) -> [4]:
        return x[6:10]
    """,
    """
    dim T = 8

    fn f(x: [T]) -> [4]:
        return x[4:8]
    """,
    variants={
        "keeps_none": "it keeps {value} of {dim}",
        "past_end": "it reaches past the end of {dim}",
        "before_start": "it starts {count} before the start of {dim}",
    },
)

E0214 = _code(
    "E0214",
    "shape operation does not fit",
    "{operation}: {reason}",
    """
    A shape operation needs shapes that fit it: `reshape` keeps the number of
    elements (the products of the dims must be provably equal), `permute` names
    each of the operand's dims exactly once, `concat` joins tensors whose other
    dims are the same, `stack` joins tensors of one shape, and `chunk` cuts a dim
    into parts that divide it exactly. `conv2d` takes images `[b Ci H W]` and
    kernels `[Co Ci KH KW]` with the same channels `Ci`, and a convolution's or
    a pool's window must fit in its (padded) input.
    """,
    """
    dim T = 8
    dim E = 64
    dim NH = 5

    fn heads(x: [b T E]) -> [b T NH 12]:
        return reshape(x, [b T NH 12])
    """,
    """
    dim T = 8
    dim E = 64
    dim NH = 4

    fn heads(x: [b T E]) -> [b T NH 16]:
        return reshape(x, [b T NH 16])
    """,
    variants={
        "rest_dims_unknown": "{type} has any number of leading dims, and {fn} needs to know them: name the dims in the fn's signature",
        "rest_dims_over": "{type} has any number of leading dims: name the dim, or count it from the end (over=-1 ... over=-{last})",
        "over_twice": "over= names {dim} (position {axis}) twice",
        "layout_rank": "{name} is {layout}, {rank} dims; found {type}",
        "groups_output_channels": "{groups} groups do not divide the {channels} output channels (dim 0 of {w})",
        "groups_input_channels": "{groups} groups do not divide the {channels} input channels (dim 1 of {x})",
        "transposed_no_output": "padding {padding} leaves no output: ({size}-1)*{stride}-2*{padding}+{window}{extra} is below 1",
        "qkv_leading_dims": "q, k and v have the same leading dims; q is {q}, {name} is {type}",
        "queries_keys_dim": "the queries' last dim {q_dim} (of {q}) is not the keys' {k_dim} (of {k})",
        "keys_values_dim": "the keys' {k_dim} (dim -2 of {k}) is not the values' {v_dim} (of {v})",
        "mask_broadcast": "the mask {mask} does not broadcast to the scores {scores}",
        "groups_channels": "{groups} groups do not divide the {channels} channels (dim 1 of {x})",
        "k_above_size": "k={k} is more than the size of {dim} (dim {axis} of {type})",
        "element_counts": "{x} has {have} elements and {target} has {want}",
        "not_a_dim": "{dim} is not a dim of {type}",
        "not_a_dim_unknown": "{dim} is not a dim of {type}; name its dims known only at run time (?) with a cast first, `... as [..]`",
        "dim_ambiguous": "{dim} is more than one dim of {type}; give the dims different names",
        "named_twice": "{dim} is named twice",
        "missing_dims": "every dim of {type} is named once; missing: {missing}",
        "concat_dims": "{a} and {b} must have the same dims but for the one joined (position {position})",
        "stack_shapes": "every tensor has one shape: {first}, found {found}",
        "chunk_parts": "{n} parts do not divide {whole} ({size} leaves {left})",
        "pad_pairs": "the sizes come in pairs (left, right), from the last dim back; found {count}",
        "does_not_divide": "{by} does not divide {dim} (dim {position} of {type})",
        "literal_rows": "every item is {want}; this is {found}",
    },
)

E0215 = _code(
    "E0215",
    "subscripts that do not fit together",
    "{what}: {problem}",
    """
    Brackets after a tensor hold one subscript per dim, as in torch: an Int
    (`x[i]`, the dim is dropped), a slice (`x[:, i:j]`, `x[::2]`), a tensor of
    labels (`emb[tokens]`, a gather along that dim) or `...`, which stands for
    the dims no other subscript takes (`x[..., -1]`) and may appear once.
    Several label tensors index together, as in torch's advanced indexing
    (`logp[arange(b), y]`, one entry per pair), so their shapes must
    broadcast. An option (`bias=False`) belongs in a model's type applied in
    an expression (`Linear[D, H, bias=False].init(seed=0)`), not among a
    tensor's subscripts.
    """,
    """
    dim B = 2
    dim D = 4

    fn last(x: [B D]) -> [B]:
        return x[..., ..., -1]
    """,
    """
    dim B = 2
    dim D = 4

    fn last(x: [B D]) -> [B]:
        return x[..., -1]
    """,
    variants={
        "ellipsis_twice": "'...' may appear only once",
        "option": "an option (name=value) is for a model's type, not a tensor's subscripts",
        "labels_broadcast": "label tensors index together and must broadcast: {shown} do not ({left} and {right})",
    },
)

E0217 = _code(
    "E0217",
    "index out of range",
    "index {index} of {dim}: {reason}",
    """
    `x[i]` takes entry i of a dim of n entries: `0 <= i < n`, or counted from
    the end, `-n <= i < 0`. When the index is a literal or computed from dim
    constants and the dim's size is known, an index outside it is an error
    here rather than torch's IndexError when the program runs.
    """,
    """
    dim T = 8
    dim D = 4

    fn f(x: [T D]) -> [T]:
        return x[:, 4]
    """,
    """
    dim T = 8
    dim D = 4

    fn f(x: [T D]) -> [T]:
        return x[:, 3]
    """,
    variants={
        "entries": "it has {n} entries, 0 to {last} (or -{n} to -1)",
    },
)

E0218 = _code(
    "E0218",
    "slice step not positive",
    "slice step {step}: a step is 1 or more (torch refuses a zero or negative step)",
    """
    `x[i:j:k]` keeps every k-th entry from i up to j, and `x[::2]` the entries
    0, 2, 4, ... of a dim. torch takes only a positive step: to reverse a dim,
    use `flip(x, over=D)`.
    """,
    """
    dim T = 8

    fn f(x: [T]) -> [T]:
        return x[::-1]
    """,
    """
    dim T = 8

    fn f(x: [T]) -> [T]:
        return flip(x, over=T)
    """,
)

E0219 = _code(
    "E0219",
    "index assignment does not fit",
    "{target}= ...: the value {found} does not broadcast to the indexed part {part}",
    """
    `x[:, :10] = e` replaces a part of `x`: the value is a number or a tensor
    whose dims broadcast to the part's, each the same or 1 (aligned from the
    right, as few dims or fewer). The assignment never changes the shape of
    `x`, so a value that would grow the part is an error.
    """,
    """
    dim B = 2
    dim D = 4

    fn f(x: [B D], y: [B 3]) -> [B D]:
        x[:, :2] = y
        return x
    """,
    """
    dim B = 2
    dim D = 4

    fn f(x: [B D], y: [B 3]) -> [B D]:
        x[:, :3] = y
        return x
    """,
)

# ====================================================================== E03xx types and dtypes

E0216 = _code(
    "E0216",
    "leading dims outside a signature",
    "{type} is for a fn's parameters and result, not {where}",
    """
    `[.. d]` in a function's signature stands for any number of leading dims
    before `d`, bound at each call: `fn rms(x: [.. d]) -> [.. d]` takes a
    `[b d]` and gives a `[b d]`, takes a `[b T d]` and gives a `[b T d]`. Every
    `..` of one signature is the same sequence. A model's fields have fixed
    shapes, and inside a body a value's dims are known: write them.
    """,
    """
    model Norm:
        param gain: [.. 4] = ones
    """,
    """
    model Norm:
        param gain: [4] = ones
    """,
)

E0301 = _code(
    "E0301",
    "type mismatch",
    "{context}expected {expected}, found {found}",
    """
    The value is the wrong kind of thing: a number where a tensor is needed, a
    tensor where a model is, a tuple where a single value is, and so on. Numbers
    (`Int`, `Float`) and tensors are different types; `x as []` turns a number
    into a scalar tensor and `t as Float` a scalar tensor into a number.
    """,
    """
    fn twice(x: [4]) -> [4]:
        return x * 2.0

    fn main():
        print(twice(3.0))
    """,
    """
    fn twice(x: [4]) -> [4]:
        return x * 2.0

    fn main():
        print(twice(ones([4])))
    """,
)

E0302 = _code(
    "E0302",
    "element type mismatch",
    "{context}expected {expected}, found {found}",
    """
    Element types differ (f32 and f64, a float and an integer tensor). Quiver never
    converts them silently; cast one side with `as`, e.g. `x as f64`. `NonNeg` and
    `Prob` written in a type are refinements of f32: an f64 loss is declared
    `-> [] f64`, and the message says so.
    """,
    """
    fn mix(x: [4], y: [4] f64) -> [4]:
        return x + y
    """,
    """
    fn mix(x: [4], y: [4] f64) -> [4]:
        return x + (y as f32)
    """,
)

E0303 = _code(
    "E0303",
    "invalid Grad type",
    "{type}: {reason}",
    """
    `Grad[M]` is the type of a gradient with respect to the params of model M, so
    its argument must be a model. Gradients come only from value_and_grad:
    nothing can be cast to a Grad type with `as`.
    """,
    """
    fn f(g: Grad[[4]]) -> []:
        return norm(g)
    """,
    """
    model Lin:
        param w: [4] = zeros

    fn f(g: Grad[Lin]) -> [] NonNeg:
        return norm(g)
    """,
    variants={
        "optimizer_of_model": "an optimizer is of a model, as in {name}[Mlp]",
        "grad_needs_model": "Grad needs a model, as in Grad[Mlp]",
        "grad_option": "Grad takes wrt=[...], not {option}=",
        "not_a_model": "{type} is not a model",
        "cast_to_grad": "a value cannot be cast to a gradient type",
    },
)

E0304 = _code(
    "E0304",
    "refinement not satisfied",
    "{context}expected {expected}, found {found}",
    """
    `NonNeg` (>= 0) and `Prob` (in [0, 1]) are refinements of Float that the
    checker tracks: relu, exp, sqrt, abs, norm and cross_entropy give NonNeg;
    sigmoid and softmax give Prob; sums and products of NonNeg values stay
    NonNeg. A plain Float is not known to satisfy them. If you know better,
    assert it with a cast (`x as NonNeg`), which is checked at run time.
    """,
    """
    fn loss(x: [b]) -> [] NonNeg:
        return mean(x)
    """,
    """
    fn loss(x: [b]) -> [] NonNeg:
        return mean(x * x)
    """,
)

E0305 = _code(
    "E0305",
    "wrong index dim",
    "{context}expected {expected}, found {found}",
    """
    `Index[C]` is an integer tensor whose values index dim C. Labels given to
    cross_entropy must index the class dim named by `over=`, and labels that
    index a tensor (`m.emb[tokens]`, an embedding; `x[:, ids]`) must index the dim they take; an
    `Index[K]`, or a plain integer tensor, does not. This catches labels and logits that belong to
    different dims even when the sizes happen to match.
    """,
    """
    dim C = 10
    dim K = 10

    fn loss(logits: [b C], y: [b] Index[K]) -> [] NonNeg:
        return cross_entropy(logits, y, over=C)
    """,
    """
    dim C = 10
    dim K = 10

    fn loss(logits: [b C], y: [b] Index[C]) -> [] NonNeg:
        return cross_entropy(logits, y, over=C)
    """,
)

E0306 = _code(
    "E0306",
    "unsupported operand",
    "{op} is not defined for {left}{right}{detail}",
    """
    The operator does not apply to these values: arithmetic on Bool tensors,
    strings or models, `and`/`or`/`not` on non-Bool values, comparisons of models.
    """,
    """
    fn main():
        print(1 + "a")
    """,
    """
    fn main():
        print(1 + 2)
    """,
)

E0307 = _code(
    "E0307",
    "condition is not Bool",
    "a condition must be Bool or [] Bool, found {found}",
    """
    `if` and `while` take a Bool: a comparison, a Bool number, or a scalar Bool
    tensor. A tensor with dims has no single truth value.
    """,
    """
    fn main():
        if 1:
            print("yes")
    """,
    """
    fn main():
        if 1 > 0:
            print("yes")
    """,
)

E0308 = _code(
    "E0308",
    "invalid cast",
    "cannot cast {source} to {target}{why}",
    """
    `e as T` converts between element types of the same shape (`x as f64`,
    `y as [b] Index[C]`), between a `[]` tensor and a number, and asserts a
    refinement (`x as NonNeg`). It never changes a shape, and models,
    gradients, modes and tuples cannot be cast.
    """,
    """
    fn f(x: [4]) -> [2]:
        return x as [2]
    """,
    """
    fn f(x: [4]) -> [4] f64:
        return x as [4] f64
    """,
)

E0309 = _code(
    "E0309",
    "misused element type",
    "element type {elem}: {reason}",
    """
    Element types (f64, NonNeg, Index[C], ...) describe the values of a tensor and
    are written after its shape: `[] f64` is a scalar tensor. Alone they are not
    types. Index needs its dim; the others take no argument, but for `NonNeg`
    and `Prob` of a model's DType option in its own types (`[..] Prob[dtype]`
    in `model Sigmoid[dtype: DType = f32]`: a Prob of the instance's dtype).
    """,
    """
    fn f(x: f64) -> Int:
        return 1
    """,
    """
    fn f(x: [] f64) -> Int:
        return 1
    """,
    variants={
        "takes_no_argument": "{name} takes no argument",
        "refines_an_option": (
            "{name} takes no argument but a DType option of its model, as in [..] {name}[dtype] "
            "in model M[dtype: DType = f32]"
        ),
        "takes_no_option": "{name} takes no {option}=",
        "vocab_needs_dim": "Vocab needs the dim its ids index, as in Vocab[V]",
        "vocab_takes_dim": "Vocab takes the dim its ids index, as in Vocab[V]",
        "not_a_type_alone": "it is not a type by itself; write [] {written} for a scalar tensor",
        "stack_has_one_dim": "a stack of {model} has exactly one dim, as in [L] {model}",
        "index_needs_dim": "Index needs the dim it indexes, as in Index[C]",
        "index_dim_arithmetic": (
            "Index takes a dim's name, a number or arithmetic of dim constants, not arithmetic of "
            "generic dims ({dims}); give that dim a name of its own, as in Index[K]"
        ),
        "index_takes_one_dim": "Index takes one dim, its name or a number, as in Index[C]",
        "randn_plain_float": "randn gives plain floats (Float, f16, bf16 or f64)",
        "randint_index": "randint needs an Index[C] element type, as in [64] Index[C]",
        "rand_float": "rand gives floats in [0, 1) (Float, f16, bf16 or f64)",
    },
)

E0310 = _code(
    "E0310",
    "float tensor required",
    "{what} needs a float tensor{hint}",
    """
    The operation is defined for floating-point tensors only (activations,
    softmax, matmul, mean, `/`). Cast integer tensors first, e.g. `y as f32`.
    """,
    """
    fn f(y: [b] i64) -> [b]:
        return exp(y)
    """,
    """
    fn f(y: [b] i64) -> [b] NonNeg:
        return exp(y as f32)
    """,
)

E0311 = _code(
    "E0311",
    "variable changes type",
    "'{name}' is {first} on one path and {second} on another",
    """
    After an `if` or a loop a variable must have one type whichever way the
    program went. Refinements are forgotten when they differ (NonNeg and Float
    give Float) and a number can grow into a `[]` tensor, but shapes and element
    types must agree.
    """,
    """
    fn f(x: [4], flag: Bool) -> [4]:
        y = x
        if flag:
            y = 1.0
        return y
    """,
    """
    fn f(x: [4], flag: Bool) -> [4]:
        y = x
        if flag:
            y = x * 2.0
        return y
    """,
)

# ====================================================================== E04xx calls and bindings

E0401 = _code(
    "E0401",
    "wrong number of arguments",
    "{name} takes {expected}, found {found}",
    """
    The call passes more or fewer positional arguments than the function has
    parameters (keyword-only arguments such as `over=` and `seed=` are counted
    separately).
    """,
    """
    fn add(x: Int, y: Int) -> Int:
        return x + y

    fn main():
        print(add(1))
    """,
    """
    fn add(x: Int, y: Int) -> Int:
        return x + y

    fn main():
        print(add(1, 2))
    """,
)

E0402 = _code(
    "E0402",
    "unknown keyword argument",
    "{fn} has no parameter '{name}'{hint}",
    """
    A keyword argument names no parameter of the function.
    """,
    """
    fn main():
        x = randn([4], sed=1)
        print(x)
    """,
    """
    fn main():
        x = randn([4], seed=1)
        print(x)
    """,
)

E0403 = _code(
    "E0403",
    "missing keyword argument",
    "{name} needs the argument {param}",
    """
    Some built-ins take a required keyword argument: `over=` names the dim of
    softmax, log_softmax, argmax and cross_entropy; `seed=` makes randn,
    randint, Train and M.init deterministic.
    """,
    """
    dim C = 3

    fn probs(x: [b C]) -> [b C] Prob:
        return softmax(x)
    """,
    """
    dim C = 3

    fn probs(x: [b C]) -> [b C] Prob:
        return softmax(x, over=C)
    """,
)

E0404 = _code(
    "E0404",
    "argument given twice",
    "argument '{name}' of {fn} is given more than once",
    """
    A parameter receives an argument twice, by position and by keyword or by two
    keywords.
    """,
    """
    fn main():
        x = randn([4], seed=1, seed=2)
        print(x)
    """,
    """
    fn main():
        x = randn([4], seed=1)
        print(x)
    """,
)

E0405 = _code(
    "E0405",
    "positional argument after keyword",
    "a positional argument cannot follow a keyword argument",
    """
    As in Python, keyword arguments come after all positional ones.
    """,
    """
    dim C = 3

    fn f(x: [b C]) -> [b] Index[C]:
        return argmax(over=C, x)
    """,
    """
    dim C = 3

    fn f(x: [b C]) -> [b] Index[C]:
        return argmax(x, over=C)
    """,
)

E0406 = _code(
    "E0406",
    "no value",
    "{what} gives no value",
    """
    The function has no return type, so its call has no value to assign or pass
    on. Declare a return type (`-> [b C]`) and return a value.
    """,
    """
    fn show(x: Int):
        print(x)

    fn main():
        y = show(1)
        print(y)
    """,
    """
    fn show(x: Int) -> Int:
        print(x)
        return x

    fn main():
        y = show(1)
        print(y)
    """,
)

E0407 = _code(
    "E0407",
    "missing return",
    "missing return: '{name}' must return {type} on every path",
    """
    A function with a return type must end every path with `return value`; this
    one can reach its end, or a bare `return`, without a value.
    """,
    """
    fn sign(x: Int) -> Int:
        if x > 0:
            return 1
    """,
    """
    fn sign(x: Int) -> Int:
        if x > 0:
            return 1
        return 0
    """,
)

E0408 = _code(
    "E0408",
    "unexpected return value",
    "'{name}' declares no return type but returns {found}",
    """
    A function without `-> TYPE` returns nothing. Add the return type to the
    signature, or drop the value.
    """,
    """
    fn two():
        return 2
    """,
    """
    fn two() -> Int:
        return 2
    """,
)

E0409 = _code(
    "E0409",
    "not callable",
    "{callee} cannot be called: {reason}",
    """
    Only functions, extern functions, built-ins and `M.init` can be called.
    The right side of `|>` is a call or a function name: `x |> f(y)` means
    `f(x, y)` and `x |> f` means `f(x)`. Models have no methods: a function that
    takes a model is called with it, `forward(m, x)` (the message says so when
    such a function exists). A checkpoint is written `save(path, m)` and read
    `load(path, m)`, not `m.save(path)`: the quick fix rewrites the call.
    """,
    """
    fn main():
        x = 3
        print(x(1))
    """,
    """
    fn main():
        x = 3
        print(x + 1)
    """,
    variants={
        "model_method": "models have no methods; write {method}(path, {recv})",
        "model_method_rewrite": "models have no methods; write {rewrite}",
        "pipe_target": "the right side of |> must be a function or a call, as in x |> f(y)",
        "a_stack": "it is a stack, {stack}; call one of them, as in {written}[i](...)",
        "a_field": "it is a {kind} of {model}, not a function",
        "model_method_call": "{model} has no method '{method}', but a function has that name: write {method}({value}, ...)",
        "no_such_function": "{model} has no method '{method}' (its methods: {methods})",
        "not_callable": "only a function can be called",
        "not_a_function": "it is {what}, not a function",
        "a_model": "it is a model; create one with {written}.init(seed=0)",
        "a_mode": "it is a mode, not a function; write Eval",
        "no_forward": "model {model} has no method forward (a fn forward(self, ...) inside the model)",
    },
)

E0410 = _code(
    "E0410",
    "cannot unpack",
    "cannot unpack {found} into {count} names",
    """
    `a, b = e` needs e to be a tuple with exactly that many values.
    """,
    """
    fn pair() -> (Int, Int):
        return 1, 2

    fn main():
        a, b, c = pair()
        print(a, b, c)
    """,
    """
    fn pair() -> (Int, Int):
        return 1, 2

    fn main():
        a, b = pair()
        print(a, b)
    """,
)

E0411 = _code(
    "E0411",
    "value_and_grad not bound to two names",
    "value_and_grad gives a value and a gradient, to bind to two names (l, g = value_and_grad(...)); here it is {found}",
    """
    `value_and_grad(f, m, args...)` calls f(m, args...) and gives two results:
    f's value and the gradient with respect to the params of m. Its only use is
    to bind both, `l, g = value_and_grad(...)`. The quick fix adds the missing
    name.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn step(m: Lin, x: [b D]) -> [] NonNeg:
        l = value_and_grad(loss, m, x)
        return l
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn step(m: Lin, x: [b D]) -> [] NonNeg:
        l, g = value_and_grad(loss, m, x)
        print(norm(g))
        return l
    """),
)

E0412 = _code(
    "E0412",
    "invalid extern target",
    "extern target '{target}' must have the form \"module:attr\"",
    """
    An extern fn names the Python function it calls as "module:attr". The module
    is looked up next to the .qv file first; both parts are dotted Python names.
    """,
    """
    extern fn load(n: Int) -> [4] from "data.load"
    """,
    """
    extern fn load(n: Int) -> [4] from "data:load"
    """,
)

E0414 = _code(
    "E0414",
    "not a range",
    "a for loop runs over range(...), batches(...) or a stack of models; found {found}",
    """
    `for i in range(n):` (or `range(start, stop)`, `range(start, stop, step)`)
    runs over numbers, `for xb, yb in batches(x, y, size=64):` over the
    mini-batches of tensors, and `for block in m.blocks:` over a stack of
    sub-models (`param blocks: [L] Block`) or the matching field of a
    gradient, one model at a time; nothing else is a loop's sequence (to walk
    a tensor's first dim, `for i in range(T):` and `x[i]`), and `range` is not
    a value of its own.
    """,
    """
    fn main():
        for i in 10:
            print(i)
    """,
    """
    fn main():
        for i in range(10):
            print(i)
    """,
)

# ====================================================================== E05xx mutability

E0415 = _code(
    "E0415",
    "parameter without a type",
    "parameter '{name}' needs a type, as in {name}: [b D]",
    """
    Every parameter of a function has a type: that is what lets a call be
    checked without running it. Only `self`, the first parameter of a method
    (a function inside a model), is written without one.
    """,
    """
    fn double(x) -> [4]:
        return zeros([4])
    """,
    """
    fn double(x: [4]) -> [4]:
        return x * 2.0
    """,
)

E0501 = _code(
    "E0501",
    "assignment not through a mut parameter",
    "cannot assign {field}: {why}",
    """
    A model's fields change only through a parameter declared `mut`
    (`fn step(mut m: Mlp, ...)`), so every function that updates a model says so
    in its signature. The quick fix adds `mut`.

    This holds for every change of a model: assigning a field (`m.b = ...`),
    `m -= lr * g`, and `opt.step(m, g)`, which changes `m`'s params. It holds in
    `main` too: a model that `main` makes with `Mlp.init(seed=0)` is not a `mut`
    parameter, so `main` cannot step it itself. Put the update in a function
    that takes the model (and its optimizer) as `mut`, such as
    `fn train_step(mut m: Mlp, mut opt: Adam[Mlp], x: [b D], y: [b] Index[C])`,
    and call that from `main` with the model it made. An optimizer that a
    function makes itself it may step, as long as the model is a `mut`
    parameter of that function.
    """,
    _with_lin("""
    fn reset(m: Lin):
        m.b = zeros([C])
    """),
    _with_lin("""
    fn reset(mut m: Lin):
        m.b = zeros([C])
    """),
)

E0502 = _code(
    "E0502",
    "model passed as mut without being mut",
    "'{name}' is not mut, but {fn} takes '{param}' as mut",
    """
    Passing a model to a `mut` parameter lets the callee change it. A function can
    only do that with a model it may change itself: one it created, or one it
    received as `mut`.
    """,
    _with_lin("""
    fn reset(mut m: Lin):
        m.b = zeros([C])

    fn outer(m: Lin):
        reset(m)
    """),
    _with_lin("""
    fn reset(mut m: Lin):
        m.b = zeros([C])

    fn outer(mut m: Lin):
        reset(m)
    """),
)

E0503 = _code(
    "E0503",
    "invalid mut",
    "'mut {name}': {reason}",
    """
    `mut` marks a model parameter whose fields the function may assign. Tensors
    and numbers are values and are never mutated; extern fns cannot take a
    mut parameter.
    """,
    """
    fn f(mut x: Int) -> Int:
        return x
    """,
    """
    fn f(x: Int) -> Int:
        return x
    """,
    variants={
        "extern_fn": "an extern fn cannot take a mut parameter",
        "not_mutable": "only a model, an optimizer or a schedule can be mut, and this is {type}",
    },
)

E0504 = _code(
    "E0504",
    "mut parameter rebound",
    "cannot rebind mut parameter '{name}'; assign its fields instead",
    """
    A `mut` model parameter stands for the caller's model. Binding the name to
    another value would silently stop the updates from reaching the caller.
    """,
    _with_lin("""
    fn reset(mut m: Lin):
        m = Lin.init(seed=0)
    """),
    _with_lin("""
    fn reset(mut m: Lin):
        m.w = zeros([D C])
    """),
)

E0505 = _code(
    "E0505",
    "gradient is read-only",
    "a gradient is read-only: cannot assign a field of Grad[{model}]",
    """
    Gradients are values. Build a new one with gradient arithmetic
    (`g2 = g * 0.5`) instead of assigning its fields.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn clip(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        g.w = g.w * 0.5
        return g
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn clip(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g * 0.5
    """),
)

E0506 = _code(
    "E0506",
    "optimizer field is read-only",
    "{field} of {type} cannot be assigned: only lr can (a learning-rate schedule)",
    """
    An optimizer's hyper-parameters are fixed when it is created, and its state
    (moments, step count) is changed only by `opt.step(m, g)`. The learning rate
    can be changed between steps with `opt.lr = e`, through an optimizer the
    function created or received as `mut`.
    """,
    _with_lin("""
    fn fit(mut m: Lin, mut opt: Adam[Lin], g: Grad[Lin]):
        opt.eps = 0.1
        opt.step(m, g)
    """),
    _with_lin("""
    fn fit(mut m: Lin, mut opt: Adam[Lin], g: Grad[Lin]):
        opt.lr = 0.1
        opt.step(m, g)
    """),
)

# ====================================================================== E09xx models

E0901 = _code(
    "E0901",
    "gradient of a buffer",
    "Grad[{model}] has no field '{name}': {name} is a buffer, and buffers are not differentiated",
    """
    A gradient has one field per param of its model. Buffers (step counters,
    running statistics) are not differentiated, so `Grad[M]` has no field for
    them.
    """,
    """
    model Counter:
        param w: [4] = zeros
        buffer steps: [] i64 = 0

    fn loss(m: Counter) -> [] NonNeg:
        return sum(m.w * m.w)

    fn main():
        m = Counter.init(seed=0)
        l, g = value_and_grad(loss, m)
        print(l, g.steps)
    """,
    """
    model Counter:
        param w: [4] = zeros
        buffer steps: [] i64 = 0

    fn loss(m: Counter) -> [] NonNeg:
        return sum(m.w * m.w)

    fn main():
        m = Counter.init(seed=0)
        l, g = value_and_grad(loss, m)
        print(l, g.w)
    """,
)

E0902 = _code(
    "E0902",
    "non-float param",
    "param '{name}' must be a float tensor, found {found}: its gradient is undefined",
    """
    Params are what value_and_grad differentiates, and only floating-point values
    have gradients. Integer or Bool state belongs in a `buffer`.
    """,
    """
    model Counter:
        param steps: [] i64 = 0
    """,
    """
    model Counter:
        buffer steps: [] i64 = 0
    """,
)

E0903 = _code(
    "E0903",
    "invalid initializer",
    "invalid initializer: {what}",
    """
    A field's initializer is a number (every value set to it), `zeros`, `ones`,
    `normal(mean, std)`, `uniform(low, high)` or `xavier` (Glorot uniform, for
    matrices). Random initializers need a float field and draw from the seed given
    to `M.init(seed=...)`. Their arguments are numbers made of literals, dims
    and `sqrt`, `exp`, `log` (`normal(0.0, 0.02 / sqrt(2 * L))`). A buffer may
    instead be computed by an expression of the model's dims and options
    (`tril(ones([T T] Bool))`, E0928).
    """,
    """
    model Lin:
        param w: [4 3] = gaussian(0.0, 0.1)
    """,
    """
    model Lin:
        param w: [4 3] = normal(0.0, 0.1)
    """,
)

E0904 = _code(
    "E0904",
    "wrong model",
    "{context}expected {expected}, found {found}",
    """
    Two model types that must agree do not: the model passed to value_and_grad is
    not the model of f's first parameter, gradients of different models are added,
    or a function is given a model (or gradient) of another type.
    """,
    """
    model A:
        param w: [4] = zeros

    model B:
        param w: [4] = zeros

    fn loss(m: A) -> [] NonNeg:
        return sum(m.w * m.w)

    fn main():
        b = B.init(seed=0)
        l, g = value_and_grad(loss, b)
        print(l, g)
    """,
    """
    model A:
        param w: [4] = zeros

    model B:
        param w: [4] = zeros

    fn loss(m: A) -> [] NonNeg:
        return sum(m.w * m.w)

    fn main():
        a = A.init(seed=0)
        l, g = value_and_grad(loss, a)
        print(l, g)
    """,
)

E0905 = _code(
    "E0905",
    "unknown model method",
    "model {model} has no method '{name}'{hint}",
    """
    A model name has one method, `init(seed=...)`, which creates a model with its
    fields initialised. Everything else is a function that takes the model as an
    argument. A saved model is read by creating one and loading into it:
    `m = Lin.init(seed=0)`, then `load(path, m)`.
    """,
    _with_lin("""
    fn main():
        m = Lin.new(seed=0)
        print(m)
    """),
    _with_lin("""
    fn main():
        m = Lin.init(seed=0)
        print(m)
    """),
)

E0906 = _code(
    "E0906",
    "unknown device",
    "unknown device '{device}': use cpu, cuda, cuda:N (as a string, \"cuda:1\") or mps",
    """
    `model M on DEVICE:` places the model's params and buffers, and its
    gradients, on a device: cpu (the default), cuda, "cuda:1", mps.
    """,
    """
    model Lin on tpu:
        param w: [4] = zeros
    """,
    """
    model Lin on cuda:
        param w: [4] = zeros
    """,
)

E0907 = _code(
    "E0907",
    "field is not a tensor",
    "a {kind} must be a tensor type, found {found}",
    """
    Params and buffers hold tensors: write `[]` for a scalar (`buffer steps: [] i64`).
    """,
    """
    model Lin:
        buffer steps: Int = 0
    """,
    """
    model Lin:
        buffer steps: [] i64 = 0
    """,
)

E0908 = _code(
    "E0908",
    "reserved field name",
    "a model field cannot be named '{name}': models use it themselves",
    """
    Every model has `init` (in Quiver and Python) and, for Python users of a
    compiled program, `save`, `load`, `state_dict`, `load_state_dict`, `keys`,
    `values` and `items`; a field with one of these names would hide it. Names
    starting with `_` are kept for the runtime.
    """,
    """
    model Lin:
        param w: [4] = zeros
        buffer items: [] i64 = 0
    """,
    """
    model Lin:
        param w: [4] = zeros
        buffer seen: [] i64 = 0
    """,
)

# ====================================================================== E11xx gradients

E0909 = _code(
    "E0909",
    "model contains itself",
    "model {model} contains itself through its sub-models: {chain}",
    """
    A param whose type is a model (`param enc: Encoder`) or a stack of models
    (`param blocks: [L] Block`) makes that model part of this one. A model cannot
    be part of itself, directly or through other models: it would never end.
    """,
    """
    dim D = 4

    model Node:
        param w: [D]
        param child: Node
    """,
    """
    dim D = 4

    model Leaf:
        param w: [D]

    model Node:
        param w: [D]
        param child: Leaf
    """,
)

E0910 = _code(
    "E0910",
    "wrong dims for a model",
    "{model} {problem}",
    """
    A model declared with dims (`model Linear[I, O]:`) is a type only with
    them: `Linear[D, H]` is a linear layer from D to H, and another instance,
    `Linear[H, C]`, is another type. Give it one dim for each of its own, in
    the order of its declaration, each a dim constant, a number, a generic dim
    of the function or dim arithmetic in parentheses (`Linear[(2*E), E]`).
    Dims declared with a default (`model Conv2d[Ci, Co, K, stride = 1]`) may
    be left out or given by name (`Conv2d[C, 8, 3, stride=2]`). A model
    declared without dims takes none.
    """,
    """
    dim D = 4
    dim H = 8

    model Linear[I, O]:
        param w: [I O] = zeros

    fn f(l: Linear[D]) -> [D]:
        return zeros([D])
    """,
    """
    dim D = 4
    dim H = 8

    model Linear[I, O]:
        param w: [I O] = zeros

    fn f(l: Linear[D, H]) -> [D]:
        return zeros([D])
    """,
    variants={
        "takes_no_dims": "takes no dims, found {written}[...]",
        "dims_count": "takes {wanted}, found {count}",
        "default_not_a_size": "gives dim {dim} its default ({default}), which is {found} here: not a size",
        "dim_twice": "is given its dim {dim} twice",
        "needs_dim": "needs its dim {dim}",
        "needs_dims": "needs its dims {dims}",
        "type_for_dim": "takes a dim for {param} here (a name, a number or (dim arithmetic)), found the type {type}",
        "dim_as_option": "takes a dim for {param} (a name, a number or (dim arithmetic))",
        "grad_dims": "{takes}: write Grad[{written}[{dims}]] with the dims of the instance",
        "method_dims": "{takes}: write {written}[{dims}].{method}(...) with the dims it is made for",
        "dims_here": "takes dims here (a name, a number or (dim arithmetic)), found {found}",
        "has_dims": "has its dims already",
    },
)

E0911 = _code(
    "E0911",
    "unknown model option",
    "{model} {problem}",
    """
    A model's options are the typed parameters of its declaration
    (`model Linear[I, O, bias: Bool = True, dtype: DType = f32]`), given by
    name after its dims, each once: a Bool option as True or False
    (`Linear[D, H, bias=False]`), a Float option as a number (`eps=1e-6`), a
    DType option as a float element type (`dtype=f64`); a Bool or Float option
    may also be given a constant of its kind (`eps=NORM_EPS`). They decide which of
    its members exist and what their types are, so they are part of the type
    and known when the program is checked. A top-level function may be
    generic over a Bool or Float option as it is over dims: a new name
    there (`fn f(blk: Block[E, bias=b])`) is bound at each call from the
    model given, and is a value in the body (`if b:`). A method or an
    extern fn is not, nor is any fn over a DType option; a model's members
    pass its own options on (`bias=bias`). A dim
    with a default may also be given by name (`Conv2d[C, 8, 3, stride=2]`).
    """,
    """
    dim D = 4

    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias

    fn f(l: Linear[D, D, bais=False]) -> [D]:
        return zeros([D])
    """,
    """
    dim D = 4

    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias

    fn f(l: Linear[D, D, bias=False]) -> [D]:
        return zeros([D])
    """,
    variants={
        "no_such_option_hint": "has no option '{option}'{hint}",
        "no_such_option": "has no option '{option}' (it takes by name: {listed})",
        "no_options": "has no options, found {option}=",
        "wants_bool": "takes True or False for its option {option}{found}",
        "wants_dtype": "takes an element type (f32, f64, f16 or bf16) for its option {option}{found}",
        "wants_number": "takes a number for its option {option}{found}",
        "found_constant": ", found '{name}', {kind} constant",
        "options_not_generic": (
            ", found '{name}': only a top-level fn is generic over a model's Bool and Float options (a new name "
            "there, `{option}=v`, is bound at each call); here give it a value ({option}={example}), or in a "
            "model's members its own option ({option}={option})"
        ),
        "option_twice": "takes its option {option} once",
        "found_option_value": ", found '{name}', which this fn binds to a {kind} option",
    },
)

E0912 = _code(
    "E0912",
    "invalid model parameter",
    "{problem}",
    """
    In `model NAME[...]`, each parameter is a dim (a name, `I`, or a name
    with a default: a whole number, `stride = 1`, a dim before it,
    `stride = K`, a Bool option of the model, 1 when True and 0 when False,
    or `+ - * // %` of those, `padding = K // 2`, `num_directions = 1 +
    bidirectional`) or an option
    with its type
    and default: a Bool (`bias: Bool = True`), a Float (`eps: Float = 1e-5`)
    or the element type of its tensors (`dtype: DType = f32`, whose default
    is always f32). Dims come first, and the
    dims with defaults after those without; each name is declared once and is
    not also the name of a dim constant (inside the model it would mean two
    things).
    """,
    """
    model Linear[I, O, bias: Bool]:
        param w: [I O] = zeros
    """,
    """
    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
    """,
    variants={
        "declared_twice": "'{name}' is declared twice in {model}'s header",
        "option_kind": (
            "option {name} of {model} must be a Bool, a Float or a DType, as in {name}: Bool = True (found {found})"
        ),
        "dtype_default": (
            "option {name} of {model} is an element type whose default is f32, "
            "torch's default dtype: {name}: DType = f32"
        ),
        "bool_default": "option {name} of {model} needs a default, True or False: {name}: Bool = True",
        "float_default": "option {name} of {model} needs a number as its default: {name}: Float = 0.1",
        "dim_after_option": "dim {name} comes after an option: a model's dims come first",
        "dim_named_as_constant": (
            "the model's dim {name} has the name of a dim constant: inside the model it would mean two things"
        ),
        "dim_default": (
            "the default of dim {name} must be a whole number, a dim before it, a Bool option (1 when True), or "
            "+ - * // % of those, as in {name} = 1 or {name} = K // 2 (found {found})"
        ),
        "dim_default_later": "the default of dim {name} reads dim {dim}, which comes after it: a default reads the "
        "dims before it",
        "dim_default_missing": (
            "dim {name} has no default but comes after {before}, which has one: the dims with defaults come last"
        ),
    },
)

E0913 = _code(
    "E0913",
    "member condition is not an option",
    "{problem}",
    """
    `param b: [O] = zeros if bias` makes a member exist only when the model's
    option `bias` is True (`if not bias`: when it is False; `if affine and
    bias`: when both are). Each name after `if` that is not compared must be
    one of the model's own Bool options; the model's dims are compared
    (`if stride != 1 or Ci != Co`).
    """,
    """
    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bais
    """,
    """
    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias
    """,
    variants={
        "float_option": (
            "'{flag}' is a Float option of {model}; a member's condition is a Bool option (its Bool options: {options})"
        ),
        "float_option_no_bool": (
            "'{flag}' is a Float option of {model}; a member's condition is a Bool option, and {model} has none"
        ),
        "not_an_option_hint": "'{flag}' is not an option of {model}{hint}",
        "not_an_option": "'{flag}' is not an option of {model} (its options: {options})",
        "no_options": "'{flag}' is not an option of {model}, which has none",
    },
)

E0914 = _code(
    "E0914",
    "field absent in this instance",
    "{owner} has no field '{name}': it exists only when {cond}",
    """
    A member declared with a condition (`param b: [O] = zeros if bias`) exists
    only in the instances whose option says so: `Linear[D, H, bias=False]` has
    no `b`. Inside the model's own functions (`self`), read such a member only
    where the option is known, under `if bias:`. A walk by kind (`for l in
    modules(m, Linear, seed=0)`) gives every instance of the kind, whatever its
    options: reach such a member by its name in `named_params` instead.
    """,
    """
    dim D = 4

    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias

    fn f(l: Linear[D, D, bias=False], x: [D]) -> [D]:
        return x @ l.w + l.b
    """,
    """
    dim D = 4

    model Linear[I, O, bias: Bool = True]:
        param w: [I O] = zeros
        param b: [O] = zeros if bias

    fn f(l: Linear[D, D, bias=False], x: [D]) -> [D]:
        return x @ l.w
    """,
    variants={
        "in_method": "{cond}; read it under {test}",
        "in_walk": (
            "{cond}; a walk by kind sees every instance, so reach it by name through"
            ' named_params (`if name.endswith(".{name}"):`)'
        ),
    },
)

E0915 = _code(
    "E0915",
    "invalid method",
    "{problem}",
    """
    A function declared inside a model is one of its methods: its first
    parameter is `self` (or `mut self`), written without a type, which is the
    model itself (with its dims: in `model Linear[I, O]`, `self` is a
    `Linear[I, O]` and the method may use I and O). `layer(x)` calls the
    method `forward`; `layer.name(x)` any other.
    """,
    """
    model Scale:
        param s: [] = 1.0

        fn forward(x: [4]) -> [4]:
            return x
    """,
    """
    model Scale:
        param s: [] = 1.0

        fn forward(self, x: [4]) -> [4]:
            return x * self.s
    """,
    variants={
        "method_without_self": (
            "the first parameter of method {method} is self, without a type (it is the {model}), found none"
        ),
        "method_first_not_self": (
            "the first parameter of method {method} is self, without a type (it is the {model}), found '{found}'"
        ),
        "self_outside_method": "only a method (a fn inside a model) has self, as its first parameter; {fn} is not one",
        "self_not_first": "self is the first parameter of a method, and only the first",
        "name_taken": "{model} already has a member or method '{name}'",
    },
)

E0916 = _code(
    "E0916",
    "invalid checkpoint call",
    "{fn}: {problem}",
    """
    `save` and `load` take the path first, then either one model or optimizer
    positionally (its state alone: `save(path, m)`, `load(path, m)`) or several
    values by keyword (`save(path, model=m, opt=opt, step=step)`), never both.
    `load`'s options `names=` and `transpose=` map a file's tensors to the fields
    of one model given positionally, and are not names to save under.
    """,
    _with_lin("""
    fn main():
        m = Lin.init(seed=0)
        opt = Adam(m, lr=0.01)
        save("ckpt.pt", m, opt)
    """),
    _with_lin("""
    fn main():
        m = Lin.init(seed=0)
        opt = Adam(m, lr=0.01)
        save("ckpt.pt", model=m, opt=opt)
    """),
    variants={
        "nothing_given": "give what to {fn}: one model or optimizer, as in {fn}(path, m), or several by keyword, as in {fn}(path, model=m, opt=opt, step=step)",
        "several_positional": "one value goes positionally ({fn}(path, m)); give several by keyword, as in {fn}(path, model=m, opt=opt)",
        "positional_and_keyword": "give one value positionally or every value by keyword, not both (as in {fn}(path, model=m, opt=opt))",
        "load_option_saved": "{keyword}= is an option of load, not a name to save under (choose another keyword)",
        "map_needs_model": "{name}= maps a file's tensors to a model's fields: it needs one model given positionally, as in load(path, m, {name}=...)",
    },
)

E1105 = _code(
    "E1105",
    "invalid function for value_and_grad",
    "{caller}: {problem}",
    """
    The first argument of value_and_grad is the name of a `fn` — not an extern
    fn, a built-in or a value — whose first parameter is a model and which has no
    `mut` parameter: differentiating a function that updates its model would
    differentiate through the update.
    """,
    _with_lin("""
    fn loss(mut m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g
    """),
    variants={
        "a_value": "f must be the name of a fn; a value",
        "local_value": "f must be the name of a fn; '{name}' is a local value",
        "extern_fn": "f must be the name of a fn; '{name}' is an extern fn",
        "builtin": "f must be the name of a fn; '{name}' is a built-in",
        "not_a_fn": "f must be the name of a fn; '{name}' is {found}",
        "first_not_model": "the first parameter of {fn} must be a model, found {found}",
        "no_parameters": "the first parameter of {fn} must be a model; it has no parameters",
        "mut_param": "{fn} has a mut parameter '{param}'",
    },
)

E1106 = _code(
    "E1106",
    "differentiated function does not return a scalar float",
    "value_and_grad needs f to return a [] of floats, such as a loss; {name} returns {found}",
    """
    A gradient is taken of a single number: f must return a `[]` tensor of a
    float type (a loss). Reduce a tensor with `mean` or `sum` first.
    """,
    _with_lin("""
    fn scores(m: Lin, x: [b D]) -> [b C]:
        return x @ m.w + m.b

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(scores, m, x)
        return g
    """),
    _with_lin("""
    fn scores(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(scores, m, x)
        return g
    """),
)

E1107 = _code(
    "E1107",
    "differentiated function reads no param",
    "{fn} reads no param of {model}: its gradient would always be zero",
    """
    The param-read analysis found no param of the model that f reads, directly or
    through the functions it passes the model to, so every gradient would be zero.
    A model passed to an extern fn (or printed, or returned) may be read entirely
    and silences this check.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(x * x)

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g
    """),
)

E1108 = _code(
    "E1108",
    "invalid gradient arithmetic",
    "{operation} is not defined: gradients support g + g, g - g, -g, and * or / by a number or []",
    """
    Gradients of the same model can be added and subtracted, negated, multiplied
    by a number or a `[]` tensor on either side and divided by one; `norm(g)` gives
    their overall size. Anything else (g * g, g + x for a tensor x, 2 / g,
    mean(g)) is not a gradient operation: work on the fields (`g.w1`) instead.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn sq(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g * g
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn sq(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g * norm(g)
    """),
)

# ====================================================================== E12xx optimizers and schedules

E1201 = _code(
    "E1201",
    "param group selects no param",
    "{group} selects no param of {model}: {why}",
    """
    A `Group(...)` in an optimizer's `groups=` takes the params its selectors
    match (`max_rank=`, `min_rank=`, `names=` a glob on the params' paths such
    as `blocks.0.ln.g`) that no earlier group took. A group left with no param
    is a mistake in the selector (a rank no param has, a misspelt name), so it
    is an error rather than a group that does nothing.
    """,
    _with_lin("""
    fn make(m: Lin) -> AdamW[Lin]:
        return AdamW(m, weight_decay=0.1, groups=Group(names="*.bias", weight_decay=0.0))
    """),
    _with_lin("""
    fn make(m: Lin) -> AdamW[Lin]:
        return AdamW(m, weight_decay=0.1, groups=Group(names="b", weight_decay=0.0))
    """),
)

E1202 = _code(
    "E1202",
    "bad param group",
    "{problem}",
    """
    An optimizer's `groups=` takes a `Group(...)` or a tuple of them. A group
    names the params it selects with literals (`max_rank=1`, `min_rank=2`,
    `names="*.bias"`; all that are given must hold) and sets some of the
    optimizer's number hyper-parameters for them (`lr`, `weight_decay`, `eps`,
    `betas`, `momentum`, ...): only hyper-parameters the optimizer has.
    """,
    _with_lin("""
    fn make(m: Lin) -> Adam[Lin]:
        return Adam(m, groups=Group(max_rank=1, momentum=0.9))
    """),
    _with_lin("""
    fn make(m: Lin) -> Adam[Lin]:
        return Adam(m, groups=Group(max_rank=1, lr=0.01))
    """),
    variants={
        "groups_type": "groups= of {kind} takes a Group(...) or a tuple of them; found {found}",
        "no_hyper": "{kind} has no hyper-parameter {name} for a Group to set (a Group sets {settable})",
        "names_form": "Group's names must be a glob on the params' paths as a string literal, such as names=\"*.bias\"; found {found}",
        "rank_form": "Group's {name} must be an Int literal >= 0, such as {name}=1; found {found}",
        "no_selector": "Group needs the params it selects: max_rank=, min_rank= or names= (a glob on their paths)",
        "no_rank": "Group selects no rank: min_rank={lo} is above max_rank={hi}",
    },
)

E1203 = _code(
    "E1203",
    "schedule does not fit",
    "{problem}",
    """
    A learning-rate schedule's arguments contradict each other or the optimizer:
    OneCycleLR cycles the momentum unless `cycle_momentum=False`, which needs an
    optimizer with `momentum` (SGD, RMSprop) or `betas` (Adam, AdamW);
    WarmupCosineLR needs `0 < warmup_steps < total_steps`.
    """,
    _with_lin("""
    fn make(m: Lin) -> OneCycleLR:
        opt = Adagrad(m, lr=0.1)
        return OneCycleLR(opt, max_lr=0.5, total_steps=100)
    """),
    _with_lin("""
    fn make(m: Lin) -> OneCycleLR:
        opt = Adagrad(m, lr=0.1)
        return OneCycleLR(opt, max_lr=0.5, total_steps=100, cycle_momentum=False)
    """),
    variants={
        "onecycle_momentum": "OneCycleLR cycles the momentum, and {opt} has neither momentum nor betas; give cycle_momentum=False",
        "warmup_range": "WarmupCosineLR needs 0 < warmup_steps < total_steps, found warmup_steps={warmup}, total_steps={total}",
    },
)

E1204 = _code(
    "E1204",
    "schedule field is read-only",
    "{field} of {kind} cannot be assigned: a schedule changes only by sched.step(opt)",
    """
    A schedule's hyper-parameters are fixed when it is created; its step count
    and learning rate move only with `sched.step(opt)`, which also sets the
    optimizer's learning rate. To set a learning rate by hand, assign `opt.lr`.
    """,
    _with_lin("""
    fn fit(mut opt: SGD[Lin], mut sched: StepLR):
        sched.lr = 0.1
        sched.step(opt)
    """),
    _with_lin("""
    fn fit(mut opt: SGD[Lin], mut sched: StepLR):
        opt.lr = 0.1
        sched.step(opt)
    """),
)

# ====================================================================== warnings

W0001 = _code(
    "W0001",
    "bidirectional control character",
    "{code} ({name}) in a {where}: it changes the order in which the text after it is shown",
    """
    The Unicode embeddings, overrides and isolates (U+202A to U+202E, U+2066 to
    U+2069) make an editor show the text after them in another order than the
    one it is read in. In a comment or a string they can make code look like
    something it is not: a line that seems to be a comment can run, and a
    condition can seem to test what it does not ("Trojan Source",
    CVE-2021-42574; rustc, gcc and clang warn on them too). Quiver has no
    other use for them: remove the character (the quick fix does). Anywhere
    else in the code it is an unexpected character (E0002).
    """,
    # The example holds U+202E (RIGHT-TO-LEFT OVERRIDE) in its comment.
    """
    fn main():
        print("ready")  # \u202edone
    """,
    """
    fn main():
        print("ready")  # done
    """,
    warning=True,
)

W0101 = _code(
    "W0101",
    "unused variable",
    "'{name}' is assigned but never used",
    """
    The value is computed and then never read. Remove the assignment, or start the
    name with `_` to say the value is unused on purpose. (Names bound together,
    `l, g = ...`, are not reported.)
    """,
    """
    fn main():
        x = 1
        y = 2
        print(x)
    """,
    """
    fn main():
        x = 1
        print(x)
    """,
    warning=True,
    unnecessary=True,
)

W0102 = _code(
    "W0102",
    "unreachable code",
    "unreachable code",
    """
    The statements follow a `return`, `break` or `continue` in the same block and
    can never run.
    """,
    """
    fn one() -> Int:
        return 1
        print("never")
    """,
    """
    fn one() -> Int:
        print("always")
        return 1
    """,
    warning=True,
    unnecessary=True,
)

W0103 = _code(
    "W0103",
    "unused import",
    "{what} is imported but never used",
    """
    Nothing in this file uses the name the import binds. Remove the import (or
    the name from the `from ... import` list).
    """,
    """
    # file: train.qv
    from layers import Lin, scale

    fn main():
        m = Lin.init(seed=0)
        print(m.w)
    # file: layers.qv
    model Lin:
        param w: [4] = zeros

    fn scale(x: [4]) -> [4]:
        return 2.0 * x
    """,
    """
    # file: train.qv
    from layers import Lin

    fn main():
        m = Lin.init(seed=0)
        print(m.w)
    # file: layers.qv
    model Lin:
        param w: [4] = zeros

    fn scale(x: [4]) -> [4]:
        return 2.0 * x
    """,
    warning=True,
    unnecessary=True,
)

W0104 = _code(
    "W0104",
    "value computed and dropped",
    "the value of {expr} ({found}) is computed and dropped{hint}",
    """
    A statement that is only an expression runs for its effect, but this one
    has none: a built-in function or an operator computes a value, and the
    statement drops it. Bind the value (`y = exp(x)`) or remove the line. A
    call of one of your functions is never reported: it may change a `mut`
    model. `log(x)` with one argument is the natural logarithm; a metric is
    logged with a name, `log(step, loss=l)`.
    """,
    """
    fn main():
        for step in range(3):
            l = 0.5 / (step + 1.0)
            log(l)
    """,
    """
    fn main():
        for step in range(3):
            l = 0.5 / (step + 1.0)
            log(step, loss=l)
    """,
    warning=True,
)

W0105 = _code(
    "W0105",
    "unused suppression",
    "this suppression silences nothing: {why}",
    """
    A comment `# qlint: ignore[CODE]` (or `# quiver: ignore[CODE]`) silences
    the warnings with those codes that start or end on its line; a bare
    `# qlint: ignore` silences every warning of the line. This one silences
    nothing: no such warning is reported on the line (the code was fixed, or
    the comment is on the wrong line), the code is not a diagnostic code, or
    it is an error's code, and errors are never silenced. Remove the code
    from the list, or the whole comment (`qlint --fix` does). W0105 itself is
    not silenced by a comment; turn it off with `qlint --ignore W0105` or
    `ignore = ["W0105"]` under `[tool.quiver]` in pyproject.toml.
    """,
    """
    dim C = 10

    fn predict(z: [b C]) -> [b C]:
        return log_softmax(z, over=-1)  # qlint: ignore[W0202]
    """,
    """
    dim C = 10

    fn predict(z: [b C]) -> [b C]:
        return log_softmax(z, over=-1)
    """,
    warning=True,
    unnecessary=True,
)

W0201 = _code(
    "W0201",
    "outer product by broadcasting",
    "'{op}' broadcasts {left} against {right} into {result}: {dim} twice, an outer product",
    """
    Broadcasting lines shapes up from the right, so a column `[b 1]` against a
    vector `[b]` gives `[b b]`: every prediction against every target. That is
    the classic silent bug of a regression loss (torch only warns about it in
    `mse_loss`). When the operands have different ranks and the result has a
    dim twice that neither operand had twice, Quiver warns. To mean it, give
    both operands the same rank (`[b 1]` and `[1 b]`); otherwise drop the `1`
    (`reshape(pred, [b])`) or keep the reduced dim with `keep=True`.
    """,
    """
    fn loss(pred: [b 1], target: [b]) -> []:
        return mean((pred - target) ** 2)
    """,
    """
    fn loss(pred: [b 1], target: [b]) -> []:
        return mean((reshape(pred, [b]) - target) ** 2)
    """,
    warning=True,
)

W0202 = _code(
    "W0202",
    "normalised over the batch dim by position",
    "{fn}(over={over}) is over {dim}, the batch dim of {operand}: the values sum to 1 across the examples, "
    "not across {want}; did you mean over={want}?",
    """
    A position in `over=` counts dims, so `over=0` of `[b C]` is the batch
    dim `b`: the probabilities of one class then sum to 1 across the examples,
    and every example's prediction depends on the others in its batch. The
    shapes are all legal, so nothing else stops it (torch's `dim=0` bug in
    mnist or GCN ports). Name the dim instead: `over=C` cannot pick the wrong
    one. A generic dim named explicitly (`over=b`) is not reported: that says
    the batch is meant. Silence it on one line with `# quiver: ignore[W0202]`.
    """,
    """
    dim C = 10

    fn predict(z: [b C]) -> [b C]:
        return log_softmax(z, over=0)
    """,
    """
    dim C = 10

    fn predict(z: [b C]) -> [b C]:
        return log_softmax(z, over=C)
    """,
    warning=True,
)

W0203 = _code(
    "W0203",
    "normalised over the first of two equal dims",
    "{fn}(over={over}) of {operand} normalises over the first of two {dim} dims; attention normalises "
    "each query's scores over the keys, the last dim: over=-1",
    """
    Attention scores `q @ transpose(k)` are `[.. T T]`: one row per query,
    one column per key. Each query's weights must sum to 1 over the keys, the
    last dim. `over=-2` normalises each key's column over the queries instead,
    a legal shape and a model that quietly does not learn. If the
    normalisation over the first dim is meant (slot attention normalises over
    the slots), name it with `# quiver: ignore[W0203]`.
    """,
    """
    dim T = 8

    fn weights(q: [b T 16], k: [b T 16]) -> [b T T]:
        return softmax(q @ transpose(k), over=-2)
    """,
    """
    dim T = 8

    fn weights(q: [b T 16], k: [b T 16]) -> [b T T]:
        return softmax(q @ transpose(k), over=-1)
    """,
    warning=True,
)

W0204 = _code(
    "W0204",
    "reshape that moves a dim",
    "reshape of {source} to {target} moves {dim}: reshape keeps the order {order} of the data, it does not "
    "transpose it; permute to the new order",
    """
    `reshape` only regroups the dims it is given, in their order. Its source
    `[b T (NH*HD)]` holds the dims b, T, NH, HD in that order; a target that
    writes them in another order (`[b NH T HD]`) has the right element count
    and the wrong data: the rows of T are cut into pieces and spread over the
    heads. Split first, in the source's order, then permute:
    `permute(reshape(x, [b T NH HD]), [b NH T HD])`. The quick fix writes
    that. Only dims written as names or products are compared (`[b 784]`
    to `[b 28 28]` is not), in the order the products are written: `(NH*HD)`
    holds NH then HD, also in a model's field once its dims are put in;
    a factor that is not a name, such as `(H/PH)`, is compared as written.
    A product in a param's own type (`param W: [I (Hd*Heads)]`) is a size,
    not a layout: the weight's columns hold whatever the program reads them
    as, so `reshape(h @ self.W, [n Heads Hd])` may split it in any order.
    Silence with `# quiver: ignore[W0204]`.
    """,
    """
    dim T = 8
    dim NH = 4
    dim HD = 16

    fn heads(x: [b T (NH*HD)]) -> [b NH T HD]:
        return reshape(x, [b NH T HD])
    """,
    """
    dim T = 8
    dim NH = 4
    dim HD = 16

    fn heads(x: [b T (NH*HD)]) -> [b NH T HD]:
        return permute(reshape(x, [b T NH HD]), [b NH T HD])
    """,
    warning=True,
)

W0205 = _code(
    "W0205",
    "causal mask in the wrong direction",
    "this mask {how} the positions of {made}, which {problem}",
    """
    Row i of an attention mask is query i, column j key j; a causal model
    must let position i see the keys j <= i only. `tril(ones([T T]))` is
    those positions, so it is kept (`where(mask, scores, -inf)`), and
    `triu(ones([T T] Bool), diagonal=1)` is the future, so it is blocked
    (`where(mask, -inf, scores)`, or torch's `attn_mask`, which is True where
    attending is not allowed). The other two combinations let every position
    read the tokens it is meant to predict: training looks perfect and
    generation fails. Quiver follows the mask from `tril`/`triu` through
    locals, comparisons (`mask == 0`), `not` and casts to the `where` or the
    `attn_mask` argument that uses it. Silence with `# quiver: ignore[W0205]`
    for a deliberately anti-causal mask.
    """,
    """
    dim T = 8

    fn causal(scores: [b T T]) -> [b T T]:
        mask = triu(ones([T T]))
        return where(mask == 1, scores, -inf)
    """,
    """
    dim T = 8

    fn causal(scores: [b T T]) -> [b T T]:
        mask = tril(ones([T T]))
        return where(mask == 1, scores, -inf)
    """,
    warning=True,
    variants={
        "attends_future": "lets each position attend to the positions after it (the future)",
        "blocks_itself": "blocks each position from itself: the first position attends to nothing (a softmax of NaN)",
    },
)

W0301 = _code(
    "W0301",
    "labels of different dims",
    "'{op}' mixes labels of different dims: {left} and {right}",
    """
    `Index[C]` labels index dim C. Comparing them with, or mixing them into
    arithmetic with, labels of another dim (`Index[K]`) is almost always a mix-up
    of two label sets that happen to have the same size, such as predicted
    classes against labels of another task.
    """,
    """
    dim C = 10
    dim K = 10

    fn agree(p: [b] Index[C], y: [b] Index[K]) -> [b] Bool:
        return p == y
    """,
    """
    dim C = 10

    fn agree(p: [b] Index[C], y: [b] Index[C]) -> [b] Bool:
        return p == y
    """,
    warning=True,
)

W0302 = _code(
    "W0302",
    "probabilities where logits are expected",
    "{fn} expects {want} as '{param}'; this is {found}, already probabilities",
    """
    `cross_entropy` and `binary_cross_entropy_with_logits` take logits and
    apply the softmax or sigmoid themselves; `nll` and `kl_div` take
    log-probabilities. Passing `softmax(...)` or `sigmoid(...)` (a `Prob`
    value) still has legal shapes, but it squashes the scores twice: the loss
    barely moves and training stalls. Pass the logits (the quick fix removes
    the softmax), or use `log_softmax` where log-probabilities are expected.
    Silence with `# quiver: ignore[W0302]`.
    """,
    """
    dim C = 10

    fn loss(z: [b C], y: [b] Index[C]) -> [] NonNeg:
        return cross_entropy(softmax(z, over=C), y, over=C)
    """,
    """
    dim C = 10

    fn loss(z: [b C], y: [b] Index[C]) -> [] NonNeg:
        return cross_entropy(z, y, over=C)
    """,
    warning=True,
)

W0303 = _code(
    "W0303",
    "log of a softmax",
    "log(softmax(...)) is log_softmax(...), computed stably",
    """
    `log(softmax(z))` underflows: a probability that rounds to 0 gives
    `-inf`, and its gradient NaN. `log_softmax` computes the same values
    without forming the probabilities. The quick fix rewrites the call.
    Silence with `# quiver: ignore[W0303]`.
    """,
    """
    dim C = 10

    fn logp(z: [b C]) -> [b C]:
        return log(softmax(z, over=C))
    """,
    """
    dim C = 10

    fn logp(z: [b C]) -> [b C]:
        return log_softmax(z, over=C)
    """,
    warning=True,
)

W0401 = _code(
    "W0401",
    "arguments swapped",
    "{first} and {second} are passed as {fn}'s '{p}' and '{q}': swapped?",
    """
    Two arguments of the same type, each named as the other's parameter:
    `reparameterize(logvar, mu)` into `fn reparameterize(mu, logvar)`. The
    types cannot tell them apart, the names can. A name matches a parameter
    when it is the same or adds a prefix or suffix with `_` (`z_mu` matches
    `mu`). Pass them by keyword to say the order is meant, or swap them (the
    quick fix). Silence with `# quiver: ignore[W0401]`.
    """,
    """
    fn reparameterize(mu: [b 8], logvar: [b 8]) -> [b 8]:
        return mu + exp(0.5 * logvar)

    fn encode(mu: [b 8], logvar: [b 8]) -> [b 8]:
        return reparameterize(logvar, mu)
    """,
    """
    fn reparameterize(mu: [b 8], logvar: [b 8]) -> [b 8]:
        return mu + exp(0.5 * logvar)

    fn encode(mu: [b 8], logvar: [b 8]) -> [b 8]:
        return reparameterize(mu, logvar)
    """,
    warning=True,
)

W0402 = _code(
    "W0402",
    "evaluation in Train mode",
    "{fn} runs with Train while evaluating: dropout drops values and batch norm updates its running "
    "statistics; pass Eval",
    """
    A function named as an evaluation (`evaluate`, `test`, `validate`,
    `predict`, `generate`, `sample`, ...) that runs the model with `Train`
    reports numbers from a dropped-out model and changes the batch-norm
    statistics it is measuring, the missing `model.eval()` of a torch
    program. Pass `Eval`. Silence with `# quiver: ignore[W0402]`.
    """,
    """
    dim D = 4

    fn forward(x: [b D], mode: Mode) -> [b D]:
        return dropout(x, 0.5, mode)

    fn evaluate(x: [b D]) -> []:
        return mean(forward(x, Train(seed=0)))
    """,
    """
    dim D = 4

    fn forward(x: [b D], mode: Mode) -> [b D]:
        return dropout(x, 0.5, mode)

    fn evaluate(x: [b D]) -> []:
        return mean(forward(x, Eval))
    """,
    warning=True,
)

W1101 = _code(
    "W1101",
    "param never read",
    "{fn} {how} param {param} of {model}{only}: its gradient is always zero",
    """
    The function given to value_and_grad never reads this param, directly or
    through the functions it passes the model to, so its gradient is zero on
    every step: usually a param that was declared and then forgotten in the
    forward pass. The diagnostic points at the differentiated function; its
    related location is the param's declaration.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x)
        return g
    """),
    warning=True,
)


W1102 = _code(
    "W1102",
    "gradient through a target",
    "the target of {fn} reads {model}, the model being differentiated: the loss also trains the target; "
    "wrap it in stop_grad(...)",
    """
    A regression target computed from the model being trained, such as the
    TD target `r + gamma * value(m, s2)` of Q-learning or actor-critic, must
    be a constant of the step: otherwise the gradient also moves the target
    towards the prediction, and the critic chases itself. torch users write
    `.detach()`; in Quiver wrap the target in `stop_grad(...)`, which the
    quick fix does. Reported in functions given to `value_and_grad` in the
    same file, for mse, smooth_l1 and huber. Silence with
    `# quiver: ignore[W1102]` when training through the target is meant.
    """,
    """
    dim S = 4

    model Critic:
        param w: [S] = normal(0.0, 0.1)

    fn value(m: Critic, s: [b S]) -> [b]:
        return s @ m.w

    fn loss(m: Critic, s: [b S], r: [b], s2: [b S]) -> [] NonNeg:
        return mse(value(m, s), r + 0.99 * value(m, s2))

    fn step(m: Critic, s: [b S], r: [b], s2: [b S]) -> Grad[Critic]:
        l, g = value_and_grad(loss, m, s, r, s2)
        return g
    """,
    """
    dim S = 4

    model Critic:
        param w: [S] = normal(0.0, 0.1)

    fn value(m: Critic, s: [b S]) -> [b]:
        return s @ m.w

    fn loss(m: Critic, s: [b S], r: [b], s2: [b S]) -> [] NonNeg:
        return mse(value(m, s), stop_grad(r + 0.99 * value(m, s2)))

    fn step(m: Critic, s: [b S], r: [b], s2: [b S]) -> Grad[Critic]:
        l, g = value_and_grad(loss, m, s, r, s2)
        return g
    """,
    warning=True,
)

W1103 = _code(
    "W1103",
    "advantage that trains the critic",
    "this factor of a log-probability reads {model}, the model being differentiated: the policy loss "
    "also trains it; wrap it in stop_grad(...)",
    """
    A policy-gradient loss weighs each log-probability by a return or an
    advantage (`(R - value) * log_prob`). That weight is a constant of the
    step: when it reads the model being differentiated, the policy loss also
    pushes the critic (the value) to make the advantage larger, the classic
    missing `.detach()` of actor-critic. Wrap the weight in
    `stop_grad(...)` (the quick fix). Entropy terms (`p * log(p)`, a
    probability times its log) are not reported. Reported in functions given
    to `value_and_grad` in the same file. Silence with
    `# quiver: ignore[W1103]`.
    """,
    """
    dim S = 4
    dim A = 2

    model AC:
        param pi: [S A] = normal(0.0, 0.1)
        param v: [S] = normal(0.0, 0.1)

    fn loss(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> []:
        logp = log_softmax(s @ m.pi, over=A)
        adv = r - s @ m.v
        return -mean(adv * sum(logp * one_hot(a, over=A), over=A)) + mse(s @ m.v, r)

    fn step(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> Grad[AC]:
        l, g = value_and_grad(loss, m, s, a, r)
        return g
    """,
    """
    dim S = 4
    dim A = 2

    model AC:
        param pi: [S A] = normal(0.0, 0.1)
        param v: [S] = normal(0.0, 0.1)

    fn loss(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> []:
        logp = log_softmax(s @ m.pi, over=A)
        adv = stop_grad(r - s @ m.v)
        return -mean(adv * sum(logp * one_hot(a, over=A), over=A)) + mse(s @ m.v, r)

    fn step(m: AC, s: [b S], a: [b] Index[A], r: [b]) -> Grad[AC]:
        l, g = value_and_grad(loss, m, s, a, r)
        return g
    """,
    warning=True,
)

W1104 = _code(
    "W1104",
    "loss differentiated in Eval mode",
    "{fn} is differentiated with Eval: dropout is off and batch norm uses its running statistics while training; "
    "pass Train(seed=...)",
    """
    The mode decides what dropout and batch norm do. Training with `Eval`
    runs without dropout and normalises with running statistics that never
    update, a model that trains and then generalises worse, with no error.
    Reported where `value_and_grad` (or `grad`) is given `Eval` for a model,
    and where a function given to `value_and_grad` in the same file calls
    something with `Eval`. Silence with `# quiver: ignore[W1104]` when it is
    meant (a frozen, pretrained batch norm).
    """,
    """
    dim D = 4

    model Lin:
        param w: [D] = normal(0.0, 0.1)

    fn loss(m: Lin, x: [b D], mode: Mode) -> []:
        return mean(dropout(x, 0.5, mode) @ m.w)

    fn step(m: Lin, x: [b D]) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x, Eval)
        return g
    """,
    """
    dim D = 4

    model Lin:
        param w: [D] = normal(0.0, 0.1)

    fn loss(m: Lin, x: [b D], mode: Mode) -> []:
        return mean(dropout(x, 0.5, mode) @ m.w)

    fn step(m: Lin, x: [b D], seed: Int) -> Grad[Lin]:
        l, g = value_and_grad(loss, m, x, Train(seed=seed))
        return g
    """,
    warning=True,
)

E1109 = _code(
    "E1109",
    "invalid wrt selection",
    "wrt: {problem}",
    """
    `wrt=[...]` names the params or sub-models of the model to differentiate, by
    their field names (`wrt=[head, b2]`); the gradient then has only those
    fields, and the others are neither differentiated nor updated by it. Each
    name must be a param of the model (not a buffer), named once; the list is
    not empty. A `Grad[M, wrt=[...]]` type follows the same rules.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin, wrt=[b]]:
        return grad(loss, m, x, wrt=[bias])
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn grads(m: Lin, x: [b D]) -> Grad[Lin, wrt=[b]]:
        return grad(loss, m, x, wrt=[b])
    """),
    variants={
        "not_a_list": "expected a list of param names, as in wrt=[w, b], found {found}",
        "no_param": "{model} has no param '{name}'{hint}",
        "buffer": "'{name}' is a buffer of {model}; only params are differentiated",
        "named_twice": "'{name}' is named twice",
        "every_param": "it selects every param of {model}; write Grad[{model}]",
    },
)

E1110 = _code(
    "E1110",
    "field not selected",
    "{type} has no field {name}: it was not selected with wrt",
    """
    A gradient taken with `wrt=[...]` has a field only for each selected param or
    sub-model; the others were not differentiated. Select the param too, or
    take its gradient in another call.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn bias_step(m: Lin, x: [b D]) -> [D C]:
        g = grad(loss, m, x, wrt=[b])
        return g.w
    """),
    _with_lin("""
    fn loss(m: Lin, x: [b D]) -> [] NonNeg:
        return mean(relu(x @ m.w + m.b))

    fn bias_step(m: Lin, x: [b D]) -> [C]:
        g = grad(loss, m, x, wrt=[b])
        return g.b
    """),
)

E1111 = _code(
    "E1111",
    "invalid per-example gradient",
    "batch={dim}: {problem}",
    """
    `value_and_grad(f, m, args..., batch=b)` computes one gradient per example:
    f is written for one example, and each argument either has the type f's
    parameter has with a leading dim `b` (it is split into examples) or exactly
    f's parameter type (it is shared by all examples). At least one argument
    must carry the dim `b`. The value is `[b]` and the gradient `[b] Grad[M]`.
    """,
    _with_lin("""
    fn loss(m: Lin, x: [D]) -> [] NonNeg:
        return sum(relu(x @ m.w + m.b))

    fn per_example(m: Lin, xs: [n D]) -> [n] Grad[Lin]:
        ls, gs = value_and_grad(loss, m, xs, batch=k)
        return gs
    """),
    _with_lin("""
    fn loss(m: Lin, x: [D]) -> [] NonNeg:
        return sum(relu(x @ m.w + m.b))

    fn per_example(m: Lin, xs: [n D]) -> [n] Grad[Lin]:
        ls, gs = value_and_grad(loss, m, xs, batch=n)
        return gs
    """),
    variants={
        "aux_not_batched": "aux outputs (f returning a tuple) are not batched",
        "not_a_dim": "expected a dim: a generic dim of this function or a dim constant",
        "no_leading_dim": "no argument of {fn} has a leading dim {dim}",
    },
)

E1112 = _code(
    "E1112",
    "invalid jvp",
    "jvp({fn}): {problem}",
    """
    `y, dy = jvp(f, m, t, args...)` runs f(m, args...) and gives its value and
    its derivative in the direction `t`, a `Grad[M]` of f's model (forward
    mode). f follows value_and_grad's rules (a fn whose first parameter is the
    model, without mut parameters) but may return any float tensor or tuple of
    float tensors; `dy` has the type of the value without refinements.
    """,
    _with_lin("""
    fn predict(m: Lin, x: [b D]) -> [b] Index[C]:
        return argmax(x @ m.w + m.b, over=C)

    fn sensitivity(m: Lin, x: [b D], t: Grad[Lin]) -> [b] Index[C]:
        y, dy = jvp(predict, m, t, x)
        return dy
    """),
    _with_lin("""
    fn logits(m: Lin, x: [b D]) -> [b C]:
        return x @ m.w + m.b

    fn sensitivity(m: Lin, x: [b D], t: Grad[Lin]) -> [b C]:
        y, dy = jvp(logits, m, t, x)
        return dy
    """),
    variants={
        "returns_not_float": "f must return a float tensor or a tuple of them, found {type}",
        "returns_nothing": "f must return a float tensor or a tuple of them, found nothing",
    },
)


# ---------------------------------------------------------------------- log(step, name=value): metrics

E0420 = _code(
    "E0420",
    "log without metric names",
    "log(step, {found}) logs nothing: name each value, as in log(step, loss=l)",
    """
    `log(step, loss=l, acc=a)` records metrics: `step` is an Int, each keyword
    argument is one metric, named by its keyword. With positional values only
    the values have no names to be written under, so the call is refused.
    (`log(x)` with one argument and no keywords is the natural logarithm.)
    """,
    """
    fn main():
        for step in range(10):
            l = mean(randn([4], seed=step))
            log(step, l)
    """,
    """
    fn main():
        for step in range(10):
            l = mean(randn([4], seed=step))
            log(step, loss=l)
    """,
)

E0421 = _code(
    "E0421",
    "metric is not one number",
    "metric '{name}' of log is {found}: a metric is an Int, a Float or a [] tensor",
    """
    Each metric that `log` writes is one number per step: an Int, a Float or a
    tensor with no dims (`[]`, such as the result of `mean` or of a loss). A
    tensor with dims is several numbers; reduce it first (`mean(x)`,
    `x[0]`), or log its parts under names of their own.
    """,
    """
    fn main():
        x = randn([4], seed=0)
        log(0, x=x)
    """,
    """
    fn main():
        x = randn([4], seed=0)
        log(0, x=mean(x))
    """,
)
# type aliases and fns generic over options; parameter defaults, main's
# command-line parameters, constants, f-strings
from .catalog_aliases import E0925 as E0925  # noqa: E402
from .catalog_aliases import E0926 as E0926  # noqa: E402
from .catalog_aliases import E0927 as E0927  # noqa: E402
from .catalog_args import E0013 as E0013  # noqa: E402
from .catalog_args import E0118 as E0118  # noqa: E402
from .catalog_args import E0312 as E0312  # noqa: E402
from .catalog_args import E0416 as E0416  # noqa: E402
from .catalog_args import E0417 as E0417  # noqa: E402
from .catalog_args import W0403 as W0403  # noqa: E402

# computed and non-persistent buffers
from .catalog_buffers import E0928 as E0928  # noqa: E402
from .catalog_buffers import E0929 as E0929  # noqa: E402
from .catalog_buffers import E0930 as E0930  # noqa: E402

# distributions: Categorical, Normal, Bernoulli, kl_divergence
from .catalog_distributions import E0980 as E0980  # noqa: E402
from .catalog_distributions import E0981 as E0981  # noqa: E402
from .catalog_distributions import E0982 as E0982  # noqa: E402

# the layers of issue 40: instance_norm's running statistics, pad's modes, interpolate
from .catalog_layers40 import E0950 as E0950  # noqa: E402
from .catalog_layers40 import E0951 as E0951  # noqa: E402
from .catalog_layers40 import E0952 as E0952  # noqa: E402

# lists of sub-models (nn.ModuleList, nn.Sequential)
from .catalog_lists import E0938 as E0938  # noqa: E402
from .catalog_lists import E0939 as E0939  # noqa: E402
from .catalog_lists import E0940 as E0940  # noqa: E402

# models built from model types: model ResNet[B: ResBlock, E]
from .catalog_model_params import E0946 as E0946  # noqa: E402
from .catalog_model_params import E0947 as E0947  # noqa: E402
from .catalog_model_params import E0948 as E0948  # noqa: E402

# ranges (arange's start and stop) and ops along a dim
from .catalog_ops40 import E0955 as E0955  # noqa: E402
from .catalog_ops40 import E0956 as E0956  # noqa: E402
from .catalog_ops40 import E0957 as E0957  # noqa: E402

# members' conditions over dims and options, same-name members
from .catalog_presence import E0931 as E0931  # noqa: E402
from .catalog_presence import E0932 as E0932  # noqa: E402
from .catalog_presence import E0933 as E0933  # noqa: E402

# einsum's and rearrange's patterns
from .catalog_rearrange import E0970 as E0970  # noqa: E402
from .catalog_rearrange import E0971 as E0971  # noqa: E402
from .catalog_rearrange import E0972 as E0972  # noqa: E402
from .catalog_rearrange import E0973 as E0973  # noqa: E402
from .catalog_rearrange import E0974 as E0974  # noqa: E402
from .catalog_rearrange import E0975 as E0975  # noqa: E402

# a model's fn reset_parameters, which init runs
from .catalog_reset import E0944 as E0944  # noqa: E402

# lists built in a body, loops over tuples
from .catalog_sequences40 import E0961 as E0961  # noqa: E402
from .catalog_sequences40 import E0962 as E0962  # noqa: E402
from .catalog_sequences40 import E0963 as E0963  # noqa: E402
from .catalog_sequences40 import E0964 as E0964  # noqa: E402
from .catalog_sequences40 import E0965 as E0965  # noqa: E402
from .catalog_sequences40 import E0966 as E0966  # noqa: E402
from .catalog_sequences40 import E0967 as E0967  # noqa: E402
from .catalog_sequences40 import E0968 as E0968  # noqa: E402

# integer arithmetic for sizes: min and max of numbers
from .catalog_sizes import E0960 as E0960  # noqa: E402

# traits and functions generic over models
from .catalog_traits import E0920 as E0920  # noqa: E402
from .catalog_traits import E0921 as E0921  # noqa: E402
from .catalog_traits import E0922 as E0922  # noqa: E402
from .catalog_traits import E0923 as E0923  # noqa: E402
from .catalog_traits import E0924 as E0924  # noqa: E402

# a tuple type of one element outside a list of sub-models
from .catalog_tuples import E0941 as E0941  # noqa: E402

# walks over a model: named_params, modules, num_params, p.init(...)
from .catalog_walks import E0934 as E0934  # noqa: E402
from .catalog_walks import E0935 as E0935  # noqa: E402
from .catalog_walks import E0936 as E0936  # noqa: E402
from .catalog_walks import E0937 as E0937  # noqa: E402

# load_weights (a torch or safetensors state_dict into a model) and load_tokenizer
from .catalog_weights41 import E1005 as E1005  # noqa: E402
from .catalog_weights41 import E1006 as E1006  # noqa: E402
from .catalog_weights41 import E1007 as E1007  # noqa: E402


def get(code: str) -> Code | None:
    return CODES.get(code.upper())
