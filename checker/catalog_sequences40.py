"""The diagnostics of lists built in a body (`hs = []`, `hs.append(h)`,
`hs += [h]`, then `stack(hs, over=1)`) and of loops over tuples (`for y in
(a, c):`, `for p, q in zip(ps, qs):`), registered in the one catalog,
`catalog_code.CODES`: checker/catalog.py imports this module at its end, so
they come after its own codes."""

from __future__ import annotations

from .catalog_code import _code

E0961 = _code(
    "E0961",
    "list elements of different types",
    "{name}: {what} is {found}, and the elements before it are {first}: a list holds elements of one type",
    """
    A list (`hs = []`, then `hs.append(h)` or `hs += [h]`) holds elements
    of one type, as a stack of them needs: every append must give a value of
    the type the first one gave, the same shape and element type. Convert
    the odd one (`as`, `reshape`), or keep two lists.
    """,
    """
    fn f(x: [4], y: [5]) -> [2 4]:
        hs = []
        hs.append(x)
        hs.append(y)
        return stack(hs)
    """,
    """
    fn f(x: [4], y: [4]) -> [2 4]:
        hs = []
        hs.append(x)
        hs.append(y)
        return stack(hs)
    """,
)

E0962 = _code(
    "E0962",
    "list with nothing in it used",
    "{name} is a list that nothing is appended to: {use} needs an element",
    """
    A list made empty (`hs = []`) and never appended to has no element
    type, and `stack` or `concat` of it fails in torch (no tensors to
    join). Append to it first (`hs.append(h)`), or build the value some
    other way.
    """,
    """
    fn f(x: [4]) -> [4]:
        hs = []
        return hs[0]
    """,
    """
    fn f(x: [4]) -> [4]:
        hs = []
        hs.append(x)
        return hs[0]
    """,
)

E0963 = _code(
    "E0963",
    "length of a list not known",
    "{fn} of {name}: its length is not known when the program is checked ({why}), and it becomes a dim of the result",
    """
    `stack(hs, over=1)` and `concat(hs, over=D)` make the list's length a
    dim of their result, so the checker must know it. It does when every
    append is made unconditionally: once per round of `for t in range(T)`
    gives `T` elements, two such loops `T + F`, and appends outside loops
    count one each. An append under an `if`, in a `while`, or in a loop
    that can `break` or `continue` leaves the length to the run: build the
    list with one append per round (compute the value under the `if`
    instead), or index and iterate the list, which need no length.
    """,
    """
    fn f(xs: [T 4]) -> [T 4]:
        hs = []
        for t in range(T):
            if t > 0:
                hs.append(xs[t])
        return stack(hs)
    """,
    """
    fn f(xs: [T 4]) -> [T 4]:
        hs = []
        for t in range(T):
            hs.append(xs[t])
        return stack(hs)
    """,
    variants={
        "conditional": "it is appended to under an `if`",
        "while": "it is appended to in a `while` loop",
        "jumps": "its loop can `break` or `continue`",
        "rebound": "it is assigned anew in a loop",
        "range": "its loop is not `for i in range(n)` of a dim or an Int n",
        "joined": "its length differs from one path or round of a loop to another",
    },
)

E0964 = _code(
    "E0964",
    "list shared or passed on",
    "{name} is a list: {use}",
    """
    A list lives in the function that builds it, under one name, so that
    the checker can follow every append and know its length and element
    type. It is not given a second name (`ys = hs`), put in a tuple,
    returned, or passed to a function: stack or concatenate it into a
    tensor (`stack(hs, over=1)`), which can go anywhere.
    """,
    """
    fn f(x: [4]) -> [4]:
        hs = []
        hs.append(x)
        ys = hs
        return ys[0]
    """,
    """
    fn f(x: [4]) -> [4]:
        hs = []
        hs.append(x)
        return hs[0]
    """,
    variants={
        "alias": "it is not given a second name (the checker follows each list under one name)",
        "tuple": "it is not put in a tuple; stack it into a tensor first",
        "returned": "a list is not returned; return stack({name}, over=...) or concat({name}, over=...)",
        "argument": "a list is not passed to {fn}; pass stack({name}, over=...)",
        "element": "a list holds tensors, numbers or tuples of them, not {found}",
    },
)

E0965 = _code(
    "E0965",
    "list method misused",
    "{name}.{method}: {problem}",
    """
    A list is changed by `hs.append(h)` (one element, a statement of its
    own) and by `hs += [h]` (the elements of another list); `hs + [h]` is a
    new list. `len(hs)`, `hs[i]` and `for h in hs:` read it. Other methods
    of Python's lists (`extend`, `pop`, `insert`) are not supported.
    """,
    """
    fn f(x: [4]) -> [2 4]:
        hs = [x]
        hs.push(x)
        return stack(hs)
    """,
    """
    fn f(x: [4]) -> [2 4]:
        hs = [x]
        hs.append(x)
        return stack(hs)
    """,
    variants={
        "unknown": "a list has append (and +=, len, indexing, for), not {method}",
        "args": "append takes one element, found {count} arguments",
        "plus": "+ and += join two lists ([h] is a list of one element), found {found}",
        "walked": "the list is appended to inside the for loop that walks it, which would then never end (walk a "
        "copy: stack it first, or build a second list)",
        "value": "append changes the list and gives nothing: write it as a statement of its own",
    },
)

E0966 = _code(
    "E0966",
    "loop over tuples that do not line up",
    "{what}: {problem}",
    """
    A `for` over a tuple runs its body once per element, each element with
    its own type (`for y in (a, c):`). `zip` of tuples pairs their elements
    (`for p, q in zip(ps, qs):`): the tuples must have as many elements,
    known when the program is checked; `enumerate` of a tuple gives each
    element with its position. The names after `for` must be as many as
    each element holds.
    """,
    """
    fn f(a: [4], b: [4], c: [4]) -> [4]:
        s = zeros([4])
        for p, q in zip((a, b), (c,)):
            s = s + p * q
        return s
    """,
    """
    fn f(a: [4], b: [4], c: [4]) -> [4]:
        s = zeros([4])
        for p, q in zip((a, b), (c, c)):
            s = s + p * q
        return s
    """,
    variants={
        "lengths": "the tuples have {counts} elements: zip pairs tuples of one length",
        "not_tuple": "argument {index} is {found}: zip and enumerate in a for loop take tuples (or lists)",
        "args": "zip takes two tuples or more, enumerate one; found {count}",
    },
)

E0967 = _code(
    "E0967",
    "index past the end of a list",
    "{name}[{index}]: the list has {length} elements",
    """
    A list whose length the checker knows (one append per round of
    `for t in range(T)` gives `T`; a number of appends outside loops, that
    number) is indexed with an integer literal within it: from 0 to the
    length minus 1, or from -1 back to minus the length, as in Python.
    """,
    """
    fn f(x: [4]) -> [4]:
        hs = []
        hs.append(x)
        return hs[1]
    """,
    """
    fn f(x: [4]) -> [4]:
        hs = []
        hs.append(x)
        return hs[0]
    """,
)

E0968 = _code(
    "E0968",
    "optional value used before it is narrowed",
    "{name} is {type}: {problem}",
    """
    A parameter written `top_k: Int | None = None` (Python's Optional) holds
    a value or None. It is used as its value only where a test has ruled
    None out: inside `if top_k is not None:`, in the `else` of `if top_k is
    None:`, or after `if top_k is None:` whose block returns (or assigns
    `top_k` a value). It may be passed on as it is to a parameter that is
    optional too, and compared with `is None` / `is not None`. A value that
    is never None is not tested with `is None`. A generic dim of an optional
    tensor (`mask: [L S] Bool | None`) is bound by another parameter too
    (`q: [L E]`, `k: [S E]`): given None, the optional one binds nothing.
    """,
    """
    fn f(x: [4], scale: Float | None = None) -> [4]:
        return x * scale
    """,
    """
    fn f(x: [4], scale: Float | None = None) -> [4]:
        if scale is not None:
            return x * scale
        return x
    """,
    variants={
        "unnarrowed": "it may be None here; test it first (if {name} is not None:)",
        "never": "it is never None, so `{op} None` is always {result}",
        "dim_only": "the dim {dim} is bound by this optional parameter only, and has no size when it is None; "
        "bind {dim} by another parameter too",
    },
)
