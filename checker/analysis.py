"""The incremental analysis of one document.

`Analyzer.update(text)` runs, in order:

1. parse — items cut out of the text and parsed, each cached by its text
   (checker/items.py);
2. declare — each item's signature or fields resolved, cached per item and per
   naming environment (dim values, model names);
3. check bodies — each function body checked, cached per item and revalidated
   by the interfaces of the global names it looked up (its `deps`);
4. read analysis — summaries recomputed from the bodies' facts (cheap: sets);
   each `value_and_grad` site's E1107/W1101 cached by the site and the
   summary of its f;
5. assemble — every diagnostic made absolute, related locations found.

Editing inside one function body without changing its signature or reads
re-runs step 3 for that function only; a change to what it reads re-runs the
step-4 diagnostics of the sites that differentiate it. `Analyzer.stats`
counts the work done, for tests.

Nothing here does I/O, and nothing raises for any input: an internal error in
one item is recorded in `Analysis.internal_errors` and that item is skipped.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

from . import ast as A
from . import catalog as C
from . import suppressions
from .body.core import check_body
from .buffer_exprs import computed_result
from .declarations import (
    ALL_NAMES,
    Declared,
    DimInfo,
    FnInfo,
    Globals,
    ModelInfo,
    Names,
    declare_item,
    item_name,
    model_closure,
    model_cycles,
)
from .deep import deep
from .diagnostics import Diagnostic, Fix, LocalDiagnostic, LocalRelated, RelatedInfo, Severity, SymbolRef, TextEdit
from .items import ItemSlot, ParseCache, ParsedDocument, parse_document
from .modules import ModuleExports, Resolved, collect_names
from .reads import ReadAnalysis, site_diagnostics
from .results import BodyResult, shared_if_empty
from .source import DecodeProblem, LineIndex, decode_source, refusal
from .traits import unmet_obligations


@dataclass
class Stats:
    """Work done by the last update (for tests and benchmarks)."""

    parsed: int = 0
    declared: int = 0
    bodies_checked: list[str] = field(default_factory=list)
    sites_checked: list[str] = field(default_factory=list)


class Cancelled(Exception):
    """`Analyzer.update` stopped because its caller said the result is no
    longer wanted (a newer version of the text exists)."""


def _never() -> bool:
    return False


_IDE_CACHE_LIMIT = 8192
K = TypeVar("K")
R = TypeVar("R")
V = TypeVar("V")


@dataclass(slots=True)
class _Entry(Generic[R]):
    """A cached declaration or body result, with what it was computed from.

    `valid_at` is the last update at which the entry was known to be valid.
    If no global name changed its meaning since then, it still is, and the
    check of its dependencies one by one can be skipped: a shortcut that
    gives the same answer as the full check, not a key of its own."""

    inputs: object  # the item's own inputs: parse state, signature
    deps: dict[str, object]  # global name -> the meaning it had
    result: R
    valid_at: int


class _Generational(Generic[K, V]):
    """A cache that forgets what the last two updates did not use."""

    def __init__(self) -> None:
        self.current: dict[K, V] = {}
        self.previous: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        hit = self.current.get(key)
        if hit is None:
            hit = self.previous.get(key)
            if hit is not None:
                self.current[key] = hit
        return hit

    def put(self, key: K, value: V) -> None:
        self.current[key] = value

    def end_version(self) -> None:
        self.previous = self.current
        self.current = {}


@dataclass
class Analysis:
    """Everything known about one version of a document. Read-only."""

    text: str
    lines: LineIndex
    parsed: ParsedDocument
    globals: Globals
    declared: Mapping[A.Node, Declared]
    bodies: Mapping[A.Node, BodyResult]
    reads: ReadAnalysis
    diagnostics: list[Diagnostic]
    slot_of_item: dict[A.Node, ItemSlot]
    internal_errors: list[str]
    # For the IDE queries (checker/ide/): a cache shared by the analyses
    # of one document, and a token that is the same object for as long as
    # the global names and their kinds stay the same.
    ide_cache: dict = field(default_factory=dict)
    names_token: object = None
    # the modules the file imports (checker/modules.py), each once
    modules: tuple[ModuleExports, ...] = ()

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    def fn(self, name: str) -> FnInfo | None:
        return self.globals.fns.get(name)

    def functions(self, item: A.Node | None) -> list[tuple[A.FnDecl, FnInfo]]:
        """The functions an item holds: a fn itself, a model its methods."""
        return _functions(item, self.declared) if item is not None else []  # type: ignore[arg-type]

    def function_at(self, item: A.Node | None, rel: int) -> tuple[A.FnDecl, FnInfo] | None:
        """The function of `item` an offset (relative to the item) is in."""
        for decl, info in self.functions(item):
            if decl.span.start <= rel <= decl.span.end:
                return decl, info
        return None


class Analyzer:
    def __init__(self) -> None:
        self.parse_cache = ParseCache()
        self._decl_cache: _Generational[A.Item, _Entry[Declared]] = _Generational()
        self._body_cache: _Generational[A.Item, _Entry[BodyResult]] = _Generational()
        # (call, summary key, ids of the model and its sub-models) -> (E1107/W1101, those models kept alive)
        self._site_cache: _Generational[tuple, tuple[tuple[LocalDiagnostic, ...], tuple[ModelInfo | None, ...]]] = (
            _Generational()
        )
        self._fingerprints: dict[str, object] = {}
        self._names: Names | None = None
        self._update = 0  # the number of this update
        self._names_changed = 0  # the last update at which a name's kind or dim value changed
        self._fingerprints_changed = 0  # ... at which a name's fingerprint changed
        self._parsed: ParsedDocument | None = None
        self._reads: ReadAnalysis | None = None
        self._reads_fingerprints: dict[str, object] = {}  # the fingerprints `_reads` was built with
        # the imported modules `_reads` was built with, and their read summaries
        self._external_modules: tuple[ModuleExports, ...] = ()
        self._external: dict = {}
        self._ide_cache: dict = {}
        self.stats = Stats()

    def update(
        self,
        text: str,
        decode_problem: DecodeProblem | None = None,
        cancelled: Callable[[], bool] = _never,
        imports: Mapping[str, Resolved] | None = None,
        refused: str | None = None,
    ) -> Analysis:
        """The analysis of `text`. `cancelled` is asked between items (each
        parse, declaration, body and site); when it says True the update
        raises `Cancelled`. What a cancelled update computed stays in the
        caches only under keys that are complete (an item's text, what a
        result looked up), so the next update gives the same answer as a
        fresh one and reuses that work. `imports` maps each module name the
        text imports to its exports (or why there are none); a
        `checker.workspace.Workspace` finds them. `refused`: why the host
        could not read the file (the text is then empty); a text larger than
        MAX_SOURCE_BYTES is refused too. A refused text is one E0012."""
        if refused is None:
            refused = refusal(text)
        if refused is not None:
            return self._refused(text, refused)

        def check() -> None:
            if cancelled():
                raise Cancelled

        stats = Stats()
        before = self.parse_cache.parsed
        parsed = parse_document(text, self.parse_cache, self._parsed, check)
        self._parsed = parsed
        stats.parsed = self.parse_cache.parsed - before
        internal: list[str] = []

        slot_of_item: dict[A.Node, ItemSlot] = {s.item: s for s in parsed.slots if s.item is not None}
        items = cast(list[A.Item], list(slot_of_item))
        names = collect_names(items, imports)
        modules = names.exports
        self._update += 1
        now = self._update
        if not names.same_as(self._names):
            self._names_changed = now
        self._names = names

        declared: dict[A.Node, Declared] = {}
        names_changed = self._names_changed
        for item in items:
            check()
            partial = bool(slot_of_item[item].parse.diagnostics)
            entry = self._decl_cache.get(item)
            if entry is not None and entry.inputs == partial and entry.valid_at >= names_changed:
                d = entry.result
            elif entry is not None and entry.inputs == partial and _same(entry.deps, names.meaning):
                entry.valid_at = now
                d = entry.result
            else:
                try:
                    d = deep(lambda item=item, partial=partial: declare_item(item, names, partial))
                except Exception:  # pragma: no cover - a checker bug; never the user's problem
                    internal.append(traceback.format_exc())
                    d = Declared(None, ())
                deps = shared_if_empty({n: names.meaning(n) for n in d.lookups})
                self._decl_cache.put(item, _Entry(partial, deps, d, now))
                stats.declared += 1
            declared[item] = d

        glob = _globals(names, items, declared, modules)
        dup_diags = _duplicates(items, names)
        for item in items:  # the models given for model parameters, against their traits
            if declared[item].obligations:
                unmet = unmet_obligations(glob, declared[item].obligations)
                if unmet:
                    dup_diags.setdefault(item, []).extend(unmet)
        for model_name, cycle in model_cycles(glob).items():
            dup_diags.setdefault(names.first[model_name], []).extend(cycle)
        for item, diags in names.import_diagnostics.items():
            if diags:
                dup_diags.setdefault(item, []).extend(diags)
        # What each global name means to its users now; what changed since
        # the last update (for the read analysis).
        fingerprints = {name: glob.fingerprint(name) for name in names.kinds}
        for name in names.imported:
            fingerprints[name] = glob.fingerprint(name)
        fingerprints[ALL_NAMES] = glob.fingerprint(ALL_NAMES)
        old = self._fingerprints
        changed = {
            n
            for n in fingerprints.keys() | old.keys()
            if (now_fp := fingerprints.get(n)) is not (old_fp := old.get(n)) and now_fp != old_fp
        }
        if changed:  # always on the first update: ALL_NAMES is new
            self._fingerprints_changed = now
        self._fingerprints = fingerprints

        bodies: dict[A.Node, BodyResult] = {}  # keyed by A.FnDecl (a method's too)
        home: dict[A.Node, tuple[A.Item, FnInfo]] = {}  # each function's item (a method's: its model) and info
        facts = {}
        for item in items:
            for fn, info in _functions(item, declared):
                home[fn] = (item, info)
                check()
                parse = slot_of_item[item].parse
                result = self._body(
                    fn, info, glob, fingerprints, parse.recovered_names, bool(parse.diagnostics), stats, internal
                )
                if result is None:
                    continue
                if isinstance(fn, A.ComputedBuffer):
                    # E0928 compares with the buffer of the model now named so (which
                    # of two models of one name is first is no dependency of the
                    # body): after the cache, on every update
                    result = computed_result(info, result, glob.models)
                bodies[fn] = result
                if names.first.get(info.name if info.owner is None else info.owner) is item:
                    facts[info.name] = result.facts

        # Against the fingerprints the previous read analysis was built with:
        # an update cancelled after storing its fingerprints built none.
        base = self._reads_fingerprints
        since_reads = (
            changed
            if base is old
            else {n for n in fingerprints.keys() | base.keys() if fingerprints.get(n) != base.get(n)}
        )
        # A module's exports object stays the same while its summaries do
        # (modules.build_exports): the same objects, nothing to merge again.
        same_modules = len(modules) == len(self._external_modules) and all(
            a is b for a, b in zip(modules, self._external_modules, strict=True)
        )
        external = self._external
        if not same_modules:
            external = {}
            for ex in modules:
                external.update(ex.summaries)
        interfaces_changed = not same_modules or any(
            n == ALL_NAMES or names.kind(n) in ("model", "trait", "fn", "extern", None) for n in since_reads
        )
        erroneous = frozenset(
            home[fn][1].name
            for fn, result in bodies.items()
            if any(d.severity is Severity.ERROR for d in result.diagnostics)
            or any(d.severity is Severity.ERROR for d in declared[home[fn][0]].diagnostics)
            or slot_of_item[home[fn][0]].parse.diagnostics
        )
        reads = ReadAnalysis(glob, facts, self._reads, interfaces_changed, erroneous, external)
        self._reads = reads
        self._reads_fingerprints = fingerprints
        self._external_modules = tuple(modules)
        self._external = external
        site_diags: dict[A.Node, list[LocalDiagnostic]] = {}
        for fn, result in bodies.items():
            item = home[fn][0]
            if result.sites:
                check()
            for site in result.sites:
                info = glob.fns.get(site.f_name)
                if info is None or not info.params:
                    continue
                # (of a function generic over models: its trait methods as the site's model has them)
                summary = reads.for_model(reads.summary(site.f_name, info.params[0].name), site.model_type)
                # The model's declaration object stands for its fields: it is
                # the same object for as long as the model's text and names
                # are. The entry keeps it alive, so its id is not reused.
                # ... and its sub-models' (W1101 names their params by path)
                model = tuple(glob.model(n) for n in model_closure(glob, site.model_type))
                # (the instance as its type is written, which the messages name)
                skey = (
                    site.call,
                    summary.key() if summary is not None else None,
                    tuple(map(id, model)),
                    str(site.model_type),
                )
                cached = self._site_cache.get(skey)
                if cached is None:
                    cached = (site_diagnostics(site, summary, glob), model)
                    self._site_cache.put(skey, cached)
                    stats.sites_checked.append(home[fn][1].name)
                diags = cached[0]
                site_diags.setdefault(item, []).extend(diags)

        diagnostics: list[Diagnostic] = []
        if decode_problem is not None:
            span = A.Span(decode_problem.offset, decode_problem.offset + 1)
            diagnostics.append(_absolute(C.E0001.at(span, byte=f"{decode_problem.byte:02X}"), 0, glob, slot_of_item))
        for slot in parsed.slots:
            for d in (*slot.parse.diagnostics, *slot.lexical):
                diagnostics.append(_absolute(d, slot.start, glob, slot_of_item))
        # the functions a value_and_grad of this file differentiates: their
        # loss warnings hold (checker/body/lints/)
        differentiated = {site.f_name for body in bodies.values() for site in body.sites}
        for item in items:
            base = slot_of_item[item].start
            local = list(declared[item].diagnostics) + dup_diags.get(item, [])
            for fn, fn_info in _functions(item, declared):
                if fn in bodies:
                    local += list(bodies[fn].diagnostics)
                    if bodies[fn].loss_warnings and fn_info.name in differentiated:
                        local += list(bodies[fn].loss_warnings)
            local += site_diags.get(item, [])
            for d in local:
                diagnostics.append(_absolute(d, base, glob, slot_of_item))
        for item, d in _unused_imports(names, items, declared, bodies):
            diagnostics.append(_absolute(d, slot_of_item[item].start, glob, slot_of_item))
        diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code, d.message))
        diagnostics = suppressions.apply(text, diagnostics, parsed.lines)

        self._decl_cache.end_version()
        self._body_cache.end_version()
        self._site_cache.end_version()
        self.stats = stats
        if len(self._ide_cache) > _IDE_CACHE_LIMIT:
            self._ide_cache.clear()
        return Analysis(
            text,
            parsed.lines,
            parsed,
            glob,
            declared,
            bodies,
            reads,
            diagnostics,
            slot_of_item,
            internal,
            self._ide_cache,
            names.meaning(ALL_NAMES),
            tuple(modules),
        )

    def _refused(self, text: str, reason: str) -> Analysis:
        """The analysis of a text that is not checked: nothing parsed, one
        E0012 on its first line. What the caches held is dropped, so the
        memory of an earlier version goes back; the next update starts afresh."""
        self.__init__()
        empty = self.update("")
        first_line = text.find("\n", 0, 200)
        span = A.Span(0, first_line if first_line >= 0 else min(len(text), 200))
        diagnostic = _absolute(C.E0012.at(span, reason=reason), 0, empty.globals, {})
        self.__init__()  # the next update of a real text starts from nothing either
        return Analysis(
            text, LineIndex(text), empty.parsed, empty.globals, {}, {}, empty.reads, [diagnostic], {}, [], {}, None, ()
        )

    def _body(
        self,
        item: A.FnDecl,
        info: FnInfo,
        glob: Globals,
        fingerprints: dict[str, object],
        recovered: tuple[str, ...],
        partial: bool,
        stats: Stats,
        internal: list[str],
    ) -> BodyResult | None:
        # A body's result is a function of its text (the item), its own
        # signature and the fingerprints of the global names it looked up:
        # a cached result is reused only when all of these are equal now.
        entry = self._body_cache.get(item)
        interface = (info.interface, recovered, partial)
        if entry is not None and entry.inputs == interface:
            if entry.valid_at >= self._fingerprints_changed:
                return entry.result  # valid then, and nothing it could read changed since
            if _same(entry.deps, fingerprints.get):
                entry.valid_at = self._update
                return entry.result
        try:
            result = deep(lambda: check_body(info, glob, recovered, partial))
        except Exception:  # pragma: no cover - a checker bug; never the user's problem
            internal.append(traceback.format_exc())
            return None
        self._body_cache.put(item, _Entry(interface, result.deps, result, self._update))
        stats.bodies_checked.append(info.name)
        return result


def _same(deps: dict[str, object], meaning) -> bool:
    """Whether every recorded dependency still has the value it had."""
    for name, value in deps.items():  # noqa: SIM110 - a plain loop is faster than all() here
        if meaning(name) != value:
            return False
    return True


def _functions(item: A.Item, declared: Mapping[A.Node, Declared]) -> list[tuple[A.FnDecl, FnInfo]]:
    """The functions an item declares, with their infos: a fn itself, a
    model its methods."""
    d = declared.get(item)
    info = d.info if d is not None else None
    if isinstance(item, A.FnDecl) and isinstance(info, FnInfo):
        return [(item, info)]
    if isinstance(item, A.ModelDecl) and isinstance(info, ModelInfo) and (info.methods or info.computed):
        # (and the functions of its computed buffers: checker/buffer_exprs.py)
        return [(m.decl, m) for m in info.methods + info.computed if isinstance(m.decl, A.FnDecl)]
    return []


def _globals(names: Names, items: list, declared: dict[A.Node, Declared], modules: list[ModuleExports]) -> Globals:
    dims: dict[str, DimInfo] = {}
    models: dict[str, ModelInfo] = {}
    fns: dict[str, FnInfo] = {}
    for name, item in names.first.items():
        info = declared[item].info if item in declared else None
        if isinstance(info, DimInfo):
            dims[name] = info
        elif isinstance(info, ModelInfo):
            models[name] = info
        elif isinstance(info, FnInfo):
            fns[name] = info
    # Imported definitions under their qualified names, and under the names
    # the file wrote for them (`Mlp`, `layers.Mlp`).
    for ex in modules:
        dims.update(ex.dims)
        models.update(ex.models)
        fns.update(ex.fns)
    for written, q in names.aliases.items():
        if q in dims:
            dims[written] = dims[q]
        elif q in models:
            models[written] = models[q]
        elif q in fns:
            fns[written] = fns[q]
    # Methods are functions too (`Linear.forward`), under their model's qualified name.
    for model in list(models.values()):
        for m in model.methods:
            fns.setdefault(m.name, m)
    return Globals(names, dims, models, fns)


def _unused_imports(names: Names, items: list, declared: dict[A.Node, Declared], bodies: dict[A.Node, BodyResult]):
    """W0103 for each name an import binds that nothing in the file looks up
    (a module is used when a name through it is)."""
    imports = [i for i in items if isinstance(i, (A.ImportDecl, A.FromImport))]
    if not imports:
        return
    used: set[str] = set()
    for d in declared.values():
        used.update(d.lookups)
    for b in bodies.values():
        used.update(b.deps)
    for item in imports:
        if names.import_diagnostics.get(item):
            continue
        if isinstance(item, A.ImportDecl):
            m = item.module.text
            if m not in used and not any(u.startswith(m + ".") for u in used):
                yield item, C.W0103.at(item.module.span, what=f"module '{m}'")
            continue
        for imp in item.names:
            if imp.bound.text not in used:
                yield item, C.W0103.at(imp.span, what=f"'{imp.bound.text}'")


def _duplicates(items: list, names: Names) -> dict[A.Node, list[LocalDiagnostic]]:
    out: dict[A.Node, list[LocalDiagnostic]] = {}
    for item in items:
        ident = item_name(item)
        if ident is None:
            continue
        first = names.first.get(ident.text)
        if first is not None and first is not item:
            kind = names.kinds[ident.text].removeprefix("broken-")
            ref = SymbolRef((kind if kind in ("dim", "model", "fn", "extern") else "fn", ident.text))
            out.setdefault(item, []).append(
                C.E0104.at(
                    ident.span,
                    name=ident.text,
                    related=(LocalRelated(f"'{ident.text}' is first defined here", symbol=ref),),
                )
            )
    return out


def _absolute(d: LocalDiagnostic, base: int, glob: Globals, slot_of_item: dict) -> Diagnostic:
    related = []
    for r in d.related:
        if r.span is not None:
            related.append(RelatedInfo(r.message, A.Span(r.span.start + base, r.span.end + base)))
        elif r.symbol is not None:
            found = glob.symbol_span(r.symbol)
            if found is not None:
                item, span = found
                slot = slot_of_item.get(item)
                if slot is not None:
                    related.append(RelatedInfo(r.message, A.Span(span.start + slot.start, span.end + slot.start)))
    fix = d.fix
    if fix is not None:
        fix = Fix(
            fix.title, tuple(TextEdit(A.Span(e.span.start + base, e.span.end + base), e.new_text) for e in fix.edits)
        )
    return Diagnostic(
        d.code,
        d.severity,
        d.message,
        A.Span(d.span.start + base, d.span.end + base),
        tuple(related),
        fix,
        d.unnecessary,
    )


def check_text(text: str) -> Analysis:
    """Analyse a document from scratch."""
    return Analyzer().update(text)


def check_bytes(data: bytes) -> Analysis:
    """Analyse a file's bytes: invalid UTF-8 is reported (E0001), not fatal."""
    text, problem = decode_source(data)
    return Analyzer().update(text, problem)
