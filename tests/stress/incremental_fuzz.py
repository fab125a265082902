"""Differential fuzz: incremental analysis against a fresh check, edit by edit.

Each run starts from a program of the corpus (every example, every program in
docs/, every diagnostic fixture and catalog example), applies random *semantic* edits — the kind a
person makes, which change what names mean rather than a few characters — and
after each edit compares `Analyzer.update(text)` (with all the caches built by
the edits before) with `check_text(text)` (nothing cached):

- every diagnostic: code, message, span, related locations, fix, tags;
- the parse structure of every item;
- internal errors (there must be none);
- IDE answers that read the caches: hover and go to definition at identifiers,
  completion and signature help right after them, inlay hints, code lenses
  (the param reads) and document symbols.

The edits: swap an identifier for another name of the program; change an
item's or member's keyword (`dim C = 3` -> `fn C = 3`); rename an item at its
header; change a number; delete, duplicate or swap lines; indent or dedent a
line; insert a snippet (an item, a statement, stray punctuation); undo back to
an earlier text of the same session (which revives cached entries).

With `--workspace`, sessions edit a project of three files that import each
other (checker/workspace.py) and Quiver's library (`import nn`, not edited)
with the same edits and import-specific snippets, and after each edit compare
every file against a fresh workspace.

With `--cancel P`, an update is, with probability P, first started and
cancelled after a random number of items (`Analyzer.update(cancelled=...)`,
as the language server does when a newer version arrives); half of those
texts are then never analysed in full, so the next update follows an update
of another text that stopped part way.

    python tests/stress/incremental_fuzz.py --edits 100000 --seed 1 --jobs 2

prints each mismatch (the seed, the session and the edit that reproduce it,
the two answers) and a summary; exit 1 when any mismatch or internal error was
found. tests/checker/test_incremental_fuzz.py runs a short seeded slice in CI.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from quiver.checker import (  # noqa: E402
    Analyzer,
    check_text,
    ide,
)
from quiver.checker import ast as A  # noqa: E402
from quiver.checker.analysis import Cancelled  # noqa: E402

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?<![A-Za-z_0-9.])\d+(\.\d+)?(?![A-Za-z_0-9.])")
_HEADER = re.compile(r"^(\s*)(dim|model|trait|fn|extern fn|extern|param|buffer)\b", re.M)
_ITEM_NAME = re.compile(r"^(dim|model|trait|fn|extern fn)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)

KEYWORDS = ["dim", "model", "fn", "extern fn", "param", "buffer", "return", "mut", "for", "if", "while", "trait"]
NUMBERS = ["0", "1", "2", "3", "4", "10", "784", "0.5", "1.0", "-1"]
# the forms of issue 39 (models built from model types, traits, generic
# functions), in both the one-file and the workspace snippets
GENERIC_SNIPPETS = [
    # models built from model types (issue 39)
    "trait Blk[I, O]:\n    fn forward(self, x: [b I]) -> [b O]\n",
    "trait Blk[I, O, s = 1]:\n    fn forward(self, x: [b I]) -> [b I]\n",
    "model Pl[I, O]:\n    param w: [I O] = 0.0\n\n    fn forward(self, x: [b I]) -> [b O]:\n        return x @ self.w\n",
    "model Nt[B: Blk, H = 3]:\n    param l1: B[D, H]\n    param l2: B[H, C]\n\n"
    "    fn forward(self, x: [b D]) -> [b C]:\n        return self.l2(self.l1(x))\n",
    "    print(Nt[Pl].init(seed=0)(x))\n",
    "type NP = Nt[Pl, 4]\n",
    "Nt[Lin]",
    "[B: Blk]",
    # traits and functions generic over models (issue 39)
    "trait Fwd:\n    fn forward(self, x: [b D]) -> [b C]\n",
    "trait Fwd:\n    fn forward(self, x: [b D]) -> [b D]\n    fn size(self) -> []\n",
    "fn run[M: Fwd](m: M, x: [b D]) -> [b C]:\n    return m(x)\n",
    "fn step[M: Fwd](mut m: M, mut opt: AdamW[M], x: [b D]) -> [] Float:\n"
    "    l, g = value_and_grad(lossg, m, x)\n    opt.step(m, g)\n    return l\n",
    "fn lossg[M: Fwd](m: M, x: [b D]) -> [] Float:\n    return sum(m.forward(x))\n",
    "fn twice[N: Fwd + Fwd](m: N, x: [b D]) -> [b C]:\n    return run(m, x)\n",
    "    print(run(m, x), lossg(m, x))\n",
    "    acc = zeros(Grad[M])\n",
    "[M: Fwd]",
]
SNIPPETS = [
    # lists built in a loop, loops over tuples, optional parameters (issue 40)
    "fn rl(xs: [T b D]) -> [b T D]:\n    hs = []\n    for t in range(T):\n        h = xs[t]\n"
    "        hs.append(h)\n        hs += [h]\n    return stack(hs, over=1)\n",
    "    hs = []\n    for y in (x, x):\n        hs.append(y)\n    print(len(hs), hs[0])\n",
    "fn tk(x: [D], top_k: Int | None = None) -> [D]:\n    if top_k is not None:\n        print(min(top_k, D))\n"
    "    return x\n",
    " | None = None",
    "    for p, q in zip((x, x), (x, x)):\n        print(p * q)\n",
    " is not None",
    # floor division (issue 40)
    " // 2",
    "dim P = D // 2\n",
    "[(D//2)]",
    *GENERIC_SNIPPETS,
    # type aliases and fns generic over a model's options (issue 39)
    "type A = Mlp\n",
    "type A = [b D]\n",
    "type T2[i] = [i C] f32\n",
    "type B = A\n",
    "type A = B\n",
    "fn ua(m: A, g: Grad[A], x: T2[D]) -> [D C]:\n    return x\n",
    "A.init(seed=0)",
    "    z = A.init(seed=0).w1\n",
    " as T2[D]",
    "T2[D]",
    "fn fo(m: Lin[D, C, bias=fl]) -> [C]:\n    if fl:\n        return m.b\n    return zeros([C])\n",
    ", bias=fl",
    # constants, parameter defaults and f-strings (issue 26)
    "const LR = 3e-4\n",
    "const C = 2.5\n",
    "const N: Int = C * 2\n",
    "const K = N + 1\n",
    'fn h(x: Float, k: Int = N, s: Str = "a") -> Float:\n    return x * LR\n',
    " = LR",
    " = C",
    ": Float = 1",
    '    print(f"{x:.4f} {LR:.2e} {k!t} {{b}}")\n',
    'f"{C:d} {m.w1!t}"',
    "h(1.0, k=3)",
    "    z = zeros([N D])\n",  # an Int constant sizing a shape
    "const N = 0\n",
    "[N C]",
    "    log(x)\n",  # W0104
    "    x + 1.0\n",
    "dim C = 3\n",
    "dim E = 4\n",
    "dim D = 2\n",
    "dim b = 5\n",
    "fn C = 3\n",
    "model C:\n    param w: [C] = zeros\n",
    "fn f(m: Mlp) -> [] NonNeg:\n    return sum(relu(m.w1))\n",
    "fn g(x: [b D]) -> [b D]:\n    return relu(x)\n",
    "model M:\n    param w: [D C] = zeros\n    buffer n: [] i64 = 0\n",
    'extern fn e(x: [b D]) -> [b] from "m:f"\n',
    "    x = 1\n",
    "    return x\n",
    "    l, g = value_and_grad(loss, m, x, y)\n",
    "    m.w1 = m.w1 - 0.1 * g.w1\n",
    "    param w3: [H C] = zeros\n",
    "    buffer k: [C] = zeros\n",
    "(",
    ")",
    ":",
    ",",
    " as [C] f64",
    "mut ",
    "Grad[",
    "dim HD = E / NH\n",
    "dim E = C * 4\n",
    "(C*2)",
    " [1.0, -2.0]",
    "[1:]",
    "reshape(x, [b 2 2])",
    " m.w1[y]",
    "over=-1",
    ", keep=True",
    " (t+1)",
    "fn grow(x: [b t]) -> [b (t+1)]:\n    return zeros([b (t+1)])\n",
    "]",
    " @ m.w1",
    ".w2",
    " |> relu()",
    "stop_grad(",
    "over=C",
    "\n",
    "    ",
    "#",
    "    param enc: Encoder\n",
    "    param blocks: [2] Block\n",
    "model Block:\n    param w: [D D] = zeros\n",
    ", wrt=[w1, b1]",
    ", batch=b",
    "    opt.step(m, g)\n",
    "    opt = Adam(m, lr=0.1)\n",
    "Grad[Mlp, wrt=[w1]]",
    "m.enc.",
    ".blocks[0]",
    # models that take dims and options (issue 23): headers with dims, options
    # and defaults, members under options, methods, layer calls, stacks of
    # instances and loops over them, `import nn` (unresolved in one file)
    "model Lin[I, O, bias: Bool = True]:\n    param w: [I O] = zeros\n    param b: [O] = zeros if bias\n\n"
    "    fn forward(self, x: [.. I]) -> [.. O]:\n        y = x @ self.w\n        if bias:\n            y = y + self.b\n"
    "        return y\n",
    "model Conv[Ci, Co, K, stride = 1, padding = 0]:\n    param w: [Co Ci K K] = zeros\n",
    "model Norm[E, eps: Float = 1e-5, affine: Bool = True]:\n    param g: [E] = ones if affine\n\n"
    "    fn forward(self, x: [.. E]) -> [.. E]:\n        if affine:\n            return x * self.g\n        return x + eps\n",
    "model Two:\n    param fc: Lin[D, C]\n    param layers: [2] Lin[C, C, bias=False]\n\n"
    "    fn forward(self, x: [b D]) -> [b C]:\n        h = self.fc(x)\n        for blk in self.layers:\n"
    "            h = blk(h)\n        return h\n",
    "    param fc: Lin[D, C]\n",
    "    param fc2: Lin[C, D, bias=False]\n",
    "    param layers: [2] Lin[D, D]\n",
    "    fn forward(self, x: [b D]) -> [b C]:\n        return self.fc(x)\n",
    "    fn twice(self, x: [.. I]) -> [.. O]:\n        return self.forward(x)\n",
    "    param b: [O] = zeros if not bias\n",
    "        for blk in self.layers:\n            x = blk(x)\n",
    "fn apply(l: Lin[i, o], x: [b i]) -> [b o]:\n    return l(x)\n",
    "fn rms(x: [.. d], g: [d]) -> [.. d]:\n    return x * g\n",
    "    l = Lin[D, C].init(seed=0)\n",
    "    y = l(x)\n",
    "    y = l.forward(x)\n",
    "    l, g = value_and_grad(loss, Lin[D, C].init(seed=0), x, y)\n",
    "Lin[D, C]",
    "Lin[D, C, bias=False]",
    "Conv[C, 8, 3, stride=2]",
    "Norm[D, eps=1e-6]",
    "Grad[Lin[D, C]]",
    "[2] Lin[D, D]",
    ", bias=False",
    " if bias",
    "self.",
    "self.fc(",
    ".forward(x)",
    "import nn\n",
    "nn.Linear[D, C]",
    # members under conditions over dims, same-name members (issue 39)
    "model Blk[Ci, Co, stride = 1]:\n    param w: [Ci Co] = zeros\n    param skip: [Co Ci] = zeros if stride != 1 or Ci != Co\n\n"
    "    fn forward(self, x: [b Ci]) -> [b Co]:\n        if stride != 1 or Ci != Co:\n"
    "            return x @ transpose(self.skip)\n        return x as [b Co]\n",
    "    param w: [I (2*O)] = zeros if not bias\n",
    " if stride != 1 or Ci != Co",
    "Blk[D, C, stride=2]",
    # lists of sub-models, walks, tied params, computed buffers (issue 39)
    "    param layers: (Lin[D, D], Lin[D, C])\n",
    "    param main: (nn.Linear[D, D], nn.ReLU, nn.Linear[D, C])\n",
    "        for layer in self.layers:\n            x = layer(x)\n",
    "self.main(x)",
    "    for name, p in named_params(m, seed=1):\n        if ndim(p) >= 2:\n            p.init(xavier_uniform())\n",
    "    for layer in modules(m, Lin, seed=2):\n        layer.w.init(normal(0.0, 0.02))\n",
    "num_params(m)",
    "    param head: [D C] = tied(w)\n",
    " = tied(w)",
    "    buffer mask: [D D] Bool = tril(ones([D D] Bool)), persistent=False\n",
    ", persistent=False",
    # dims known only at run time (issue 25): readers that bind them, casts
    # that name them, Ints as sizes, Int parameters that size a fn's types,
    # subscripts anywhere and index assignment
    '    x = load_npz("d.npz", "x", [n D])\n',
    '    y = load_npz("d.npz", "y", [n] Index[C])\n',
    '    z = load_npy("d.npy", [k D])\n',
    "    w = x[1:] as [k D]\n",
    "    n = 5\n",
    "    a = zeros([n D])\n",
    "    print(x + z)\n",
    "    print(arange(n), randperm(n, seed=0))\n",
    "fn mask(size: Int) -> [size size] Bool:\n    return tril(ones([size size] Bool))\n",
    "    q = mask(n)\n",
    '    ids, vocab = load_chars("t.txt", [t] Index[C])\n    print(decode(vocab, ids))\n',
    " as [k D]",
    "[n D]",
    "[:, 1:]",
    "[..., -1]",
    "[:, ::2]",
    "    x[0] = 1.0\n",
    "    for xb, yb in batches(x, y, size=4, shuffle=0):\n        print(xb, yb)\n",
]


# ------------------------------------------------------------------ corpus


def corpus() -> list[tuple[str, str]]:
    """(name, text) of every program the edits start from."""
    from test_docs import EXAMPLES as DOC_EXAMPLES

    from quiver.checker.catalog import CODES

    out = [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted((ROOT / "examples").glob("*.qv"))]
    out += [(e.id, e.source) for e in DOC_EXAMPLES]
    for folder in ("diagnostics", "training_forms"):
        fixtures = ROOT / "tests" / "checker" / folder
        out += [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted(fixtures.glob("*.qv"))]
    # the catalog's examples: most codes' diagnostic fixture is its example
    out += [
        (f"catalog {c.code} example", c.example)
        for c in CODES.values()
        if c.example_language == "quiver" and not c.example_stands_for
    ]
    return out


# ------------------------------------------------------------------- edits


def _code_spans(text: str, pattern: re.Pattern) -> list[re.Match]:
    """Matches of `pattern` outside comments and strings."""
    found = []
    for line_match in re.finditer(r"[^\n]*\n?", text):
        line = line_match.group()
        cut = len(line)
        for i, ch in enumerate(line):
            if ch in '#"':
                cut = i
                break
        base = line_match.start()
        for m in pattern.finditer(line[:cut]):
            found.append((base + m.start(), base + m.end(), m.group()))
    return found


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def edit(text: str, rng: random.Random, history: list[str], names: list[str]) -> tuple[str, str]:
    """One random edit: (new text, a description)."""
    kind = rng.choice(
        [
            "swap",
            "swap",
            "swap",
            "keyword",
            "keyword",
            "keyword",
            "rename",
            "rename",
            "number",
            "delete",
            "duplicate",
            "lines",
            "indent",
            "snippet",
            "snippet",
            "undo",
            "undo",
        ]
    )
    if kind in ("swap", "rename"):
        if kind == "rename":
            spans = [(m.start(2), m.end(2), m.group(2)) for m in _ITEM_NAME.finditer(text)]
        else:
            spans = _code_spans(text, _IDENT)
        if spans and names:
            start, end, old = rng.choice(spans)
            new = rng.choice(names + KEYWORDS[:3] if kind == "swap" else names + [old + "2", old[:-1] or "x"])
            return text[:start] + new + text[end:], f"{kind} {old!r}->{new!r} at {start}"
    if kind == "keyword":
        spans = [(m.start(2), m.end(2), m.group(2)) for m in _HEADER.finditer(text)]
        if spans:
            start, end, old = rng.choice(spans)
            new = rng.choice([k for k in KEYWORDS if k != old])
            return text[:start] + new + text[end:], f"keyword {old!r}->{new!r} at {start}"
    if kind == "number":
        spans = _code_spans(text, _NUMBER)
        if spans:
            start, end, old = rng.choice(spans)
            new = rng.choice(NUMBERS)
            return text[:start] + new + text[end:], f"number {old!r}->{new!r} at {start}"
    lines = _lines(text)
    if kind in ("delete", "duplicate", "lines", "indent") and lines:
        i = rng.randrange(len(lines))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i] if lines[i].endswith("\n") else lines[i] + "\n")
        elif kind == "lines":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            if not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            kind = f"swap lines {j + 1}"
        else:
            lines[i] = ("    " + lines[i]) if rng.random() < 0.5 or not lines[i].startswith("    ") else lines[i][4:]
        return "".join(lines), f"{kind} line {i + 1}"
    if kind == "undo" and len(history) > 1:
        k = rng.randrange(1, min(len(history), 6))
        return history[-1 - k], f"undo {k}"
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.6:  # snippets that are lines go at the start of a line
        at = text.rfind("\n", 0, at) + 1
    snippet = rng.choice(SNIPPETS)
    return text[:at] + snippet + text[at:], f"insert {snippet!r} at {at}"


# ----------------------------------------------------------------- answers


def _structure(analysis) -> list:
    return [
        (s.start, A.dump(s.item) if s.item is not None else None, s.parse.diagnostics) for s in analysis.parsed.slots
    ]


def _diagnostics(analysis) -> list:
    return [(d.code, d.severity, d.message, d.span, d.related, d.fix, d.unnecessary) for d in analysis.diagnostics]


def answers(analysis, offsets: list[int]) -> dict:
    """Everything compared between the incremental and the fresh analysis."""
    return {
        "diagnostics": _diagnostics(analysis),
        "structure": _structure(analysis),
        "internal errors": list(analysis.internal_errors),
        "hover": [(o, ide.hover(analysis, o)) for o in offsets],
        "definition": [(o, ide.definition(analysis, o)) for o in offsets],
        "code lenses": ide.code_lenses(analysis),
        "symbols": ide.document_symbols(analysis),
        "inlay hints": ide.inlay_hints(analysis),
        # completion and signature help right after each name (a receiver
        # such as `self.fc1`, a callee), which read the bodies' types
        "completion": [(o, ide.completions(analysis, _name_end(analysis.text, o))) for o in offsets],
        "signature help": [(o, ide.signature_help(analysis, _name_end(analysis.text, o))) for o in offsets],
    }


def _name_end(text: str, offset: int) -> int:
    m = _IDENT.match(text, offset)
    return m.end() if m is not None else offset


def _show(value) -> str:
    if isinstance(value, list):
        return "\n".join(f"      {v!r}" for v in value) or "      (none)"
    return f"      {value!r}"


# -------------------------------------------------------------------- runs


@dataclasses.dataclass
class Result:
    edits: int = 0
    mismatches: list = dataclasses.field(default_factory=list)

    def compare(self, incremental: dict, fresh: dict, seed: int, program: str, done: list[str], text: str) -> bool:
        """Count one comparison; record it and say True when the answers differ."""
        self.edits += 1
        if incremental == fresh:
            return False
        diff = [k for k in fresh if incremental[k] != fresh[k]]
        self.mismatches.append(
            {
                "seed": seed,
                "program": program,
                "edits": list(done),
                "text": text,
                "differ": diff,
                "incremental": {k: incremental[k] for k in diff},
                "fresh": {k: fresh[k] for k in diff},
            }
        )
        return True


def _cancelled_after(n: int):
    """A `cancelled` callable that says True from its (n+1)th call on."""
    calls = iter(range(n + 1))
    return lambda: next(calls, None) is None


def session(seed: int, programs: list[tuple[str, str]], length: int, cancel: float = 0.0) -> Result:
    """One editing session: a program, then `length` edits, each compared."""
    rng = random.Random(seed)
    name, text = rng.choice(programs)
    names = sorted({m.group() for _, t in programs[:40] for m in _IDENT.finditer(t)} | set(_IDENT.findall(text)))
    names = [n for n in names if len(n) < 12]
    analyzer = Analyzer()
    analyzer.update(text)
    history = [text]
    done: list[str] = []
    result = Result()
    for _ in range(length):
        text, what = edit(text, rng, history, names)
        history.append(text)
        done.append(what)
        if cancel and rng.random() < cancel:
            n = rng.randrange(0, 60)
            try:
                analyzer.update(text, cancelled=_cancelled_after(n))
                done.append(f"(an update that was not cancelled after {n} items)")
            except Cancelled:
                done.append(f"(an update cancelled after {n} items)")
            if rng.random() < 0.5:
                continue  # this text is never analysed in full
        idents = [s for s, _, _ in _code_spans(text, _IDENT)]
        offsets = sorted(rng.sample(idents, min(4, len(idents))))
        incremental = answers(analyzer.update(text), offsets)
        fresh = answers(check_text(text), offsets)
        if result.compare(incremental, fresh, seed, name, done, text):
            # Start over from this text: later edits would only repeat it.
            analyzer = Analyzer()
            analyzer.update(text)
    return result


# ------------------------------------------------------------ several files

# A project of three files; edits go to any of them, and every file is
# compared after each edit: its analysis in the workspace that saw every
# edit against a fresh workspace over the same texts.
PROJECT = {
    "/p/layers.qv": (
        "dim H = 8\ndim C = 3\n\nmodel Mlp:\n    param w1: [4 H] = normal(0, 0.1)\n    param b1: [H] = zeros\n"
        "    param w2: [H C] = normal(0, 0.1)\n\nfn forward(m: Mlp, x: [b 4]) -> [b C]:\n"
        "    return relu(x @ m.w1 + m.b1) @ m.w2\n\nfn loss(m: Mlp, x: [b 4], y: [b] Index[C]) -> [] NonNeg:\n"
        "    return cross_entropy(forward(m, x), y, over=C)\n\nfn _scale(x: [4]) -> [4]:\n    return 2.0 * x\n"
        "\nmodel Lin[I, O, bias: Bool = True]:\n    param w: [I O] = zeros\n    param b: [O] = zeros if bias\n\n"
        "    fn forward(self, x: [.. I]) -> [.. O]:\n        y = x @ self.w\n        if bias:\n            y = y + self.b\n"
        "        return y\n"
    ),
    "/p/main.qv": (
        "import layers\nfrom layers import Mlp, forward as fwd, C\n\nfn predict(m: Mlp, x: [b 4]) -> [b C]:\n"
        "    return fwd(m, x)\n\nfn step(mut m: layers.Mlp, x: [b 4], y: [b] Index[layers.C]):\n"
        "    l, g = value_and_grad(layers.loss, m, x, y)\n    m -= 0.1 * g\n"
    ),
    "/p/extra.qv": (
        "import main\nimport layers\nimport nn\n\nfn twice(m: layers.Mlp, x: [b 4]) -> [b layers.C]:\n"
        "    return main.predict(m, x) * 2.0\n\nmodel Head:\n    param fc: layers.Lin[4, layers.H]\n"
        "    param out: nn.Linear[layers.H, layers.C, bias=False]\n\n    fn forward(self, x: [b 4]) -> [b layers.C]:\n"
        "        return self.out(relu(self.fc(x)))\n"
    ),
}
PROJECT_SNIPPETS = [
    *GENERIC_SNIPPETS,
    "type L4 = Lin[4, H, bias=False]\n",
    "fn ul(l: layers.L4) -> [layers.H]:\n    return zeros([layers.H])\n",
    "from layers import L4\n",
    "const H = 6\n",
    "from layers import H\n",
    "layers.LR",
    '    print(f"{layers.LR:.2e}")\n',
    "import nn\n",
    "    param fc: nn.Linear[4, H]\n",
    "    l = nn.Linear[4, H].init(seed=0)\n",
    "nn.Linear[H, C, bias=False]",
    "    param lin: layers.Lin[4, H]\n",
    "layers.Lin[4, H]",
    "    y = layers.Lin[4, H].init(seed=0)(x)\n",
    "fn use(l: layers.Lin[i, o], x: [b i]) -> [b o]:\n    return l(x)\n",
    "import layers\n",
    "import main\n",
    "import extra\n",
    "import nothing\n",
    "from layers import Mlp\n",
    "from layers import forward as fwd\n",
    "from layers import _scale\n",
    "from main import predict, step\n",
    "layers.",
    "layers.H",
    "layers.Mlp",
    "layers.forward(m, x)",
    "main.predict(m, x)",
    "fwd(m, x)",
    "    param w3: [layers.H] = zeros\n",
    "dim H = 9\n",
    "model Mlp:\n    param w: [4] = zeros\n",
]


LIBRARY_ROOT = "/quiver-library"


def _host(files: dict[str, str]):
    """The project's files, and Quiver's own library (`import nn`), which is not edited."""
    from nn_library import LIBRARY

    from quiver.checker.workspace import MemoryHost

    host = MemoryHost({**files, **{f"{LIBRARY_ROOT}/{n}": t for n, t in LIBRARY.items()}})
    host.libraries = (LIBRARY_ROOT,)
    return host


def workspace_session(seed: int, length: int) -> Result:
    from quiver.checker.workspace import Workspace

    rng = random.Random(seed)
    files = dict(PROJECT)
    names = sorted({m.group() for t in files.values() for m in _IDENT.finditer(t)})
    ws = Workspace(_host(files), ["/p"])
    histories = {p: [t] for p, t in files.items()}
    done: list[str] = []
    result = Result()
    for _ in range(length):
        path = rng.choice(sorted(files))
        if rng.random() < 0.3:
            text = files[path]
            at = (
                text.rfind("\n", 0, rng.randrange(len(text) + 1)) + 1
                if rng.random() < 0.6
                else rng.randrange(len(text) + 1)
            )
            snippet = rng.choice(PROJECT_SNIPPETS)
            text, what = text[:at] + snippet + text[at:], f"insert {snippet!r} at {at}"
        else:
            text, what = edit(files[path], rng, histories[path], names)
        files[path] = text
        histories[path].append(text)
        ws.set_overlay(path, text)
        done.append(f"{path}: {what}")
        fresh_ws = Workspace(_host(files), ["/p"])
        for p in sorted(files):
            a = ws.analyze(p)
            b = fresh_ws.analyze(p)
            assert a is not None and b is not None
            idents = [s for s, _, _ in _code_spans(files[p], _IDENT)]
            offsets = sorted(rng.sample(idents, min(3, len(idents))))
            incremental, fresh = answers(a, offsets), answers(b, offsets)
            if result.compare(incremental, fresh, seed, p, done, files[p]):
                ws = Workspace(_host(files), ["/p"])
    return result


def _run_chunk(args) -> Result:
    seeds, length, cancel, several = args
    programs = corpus()
    total = Result()
    for s in seeds:
        r = workspace_session(s, length) if several else session(s, programs, length, cancel)
        total.edits += r.edits
        total.mismatches += r.mismatches
    return total


def run(
    edits: int, seed: int = 0, jobs: int = 1, length: int = 40, cancel: float = 0.0, several: bool = False
) -> Result:
    """`edits` edits in sessions of `length`, seeded: the same arguments give
    the same edits. With `several`, sessions edit the three files of PROJECT
    (each edit compares every file, and counts once per file)."""
    n_sessions = max(1, edits // (length * (len(PROJECT) if several else 1)))
    seeds = [seed * 1_000_003 + i for i in range(n_sessions)]
    chunks = [(seeds[i::jobs], length, cancel, several) for i in range(jobs)]
    if jobs == 1:
        results = [_run_chunk(chunks[0])]
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_run_chunk, chunks)
    total = Result()
    for r in results:
        total.edits += r.edits
        total.mismatches += r.mismatches
    return total


def report(m: dict) -> str:
    rows = [
        f"mismatch: session seed {m['seed']}, program {m['program']}, after {len(m['edits'])} edits "
        f"(last: {m['edits'][-1]}); differ: {', '.join(m['differ'])}"
    ]
    for k in m["differ"]:
        rows.append(f"  {k}:\n    incremental:\n{_show(m['incremental'][k])}\n    fresh:\n{_show(m['fresh'][k])}")
    rows.append("  text:\n" + "".join(f"    | {line}" for line in _lines(m["text"])))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edits", type=int, default=10_000, help="number of edits (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the whole run (default 0)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--length", type=int, default=40, help="edits per session (default 40)")
    ap.add_argument("--cancel", type=float, default=0.0, help="share of updates first cancelled part way (0..1)")
    ap.add_argument("--show", type=int, default=5, help="mismatches printed in full (default 5)")
    ap.add_argument("--workspace", action="store_true", help="edit a project of three files that import each other")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    result = run(args.edits, args.seed, args.jobs, args.length, args.cancel, args.workspace)
    for m in result.mismatches[: args.show]:
        print(report(m), end="\n\n")
    kinds: dict[str, int] = {}
    for m in result.mismatches:
        for k in m["differ"]:
            kinds[k] = kinds.get(k, 0) + 1
    print(
        f"{result.edits} edits, {len(result.mismatches)} mismatches"
        + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(kinds.items()))})" if kinds else "")
        + f", {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 1 if result.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
