"""The workspace's reverse import maps (issue 37): `dependents` and
`importers_of_name` cost what they return, and always equal what a pass over
every file's imports finds, whatever the history of edits, new files and
deleted ones."""

from __future__ import annotations

import random

from quiver.checker.workspace import MemoryHost, Workspace


def brute_dependents(ws: Workspace, path: str) -> set[str]:
    """What `dependents` answered before the reverse maps: a pass over every file."""
    importers: dict[str, set[str]] = {}
    for f in ws.files():
        for target in ws.imports_of(f).values():
            if target is not None:
                importers.setdefault(target, set()).add(f)
    out: set[str] = set()
    todo = [path]
    while todo:
        for p in importers.get(todo.pop(), ()):
            if p not in out:
                out.add(p)
                todo.append(p)
    out.discard(path)
    return out


def brute_by_name(ws: Workspace, name: str) -> set[str]:
    return {f for f in ws.files() if any(s.rsplit(".", 1)[-1] == name for s in ws.imports_of(f))}


def module(imports: list[str], n: int) -> str:
    head = "".join(f"import {m}\n" for m in imports)
    return head + f"\ndim D{n} = {n + 1}\n"


def test_dependents_follow_only_the_import_edges_into_them() -> None:
    files = {"/p/base.qv": module([], 0)}
    for i in range(10):
        files[f"/p/user{i}.qv"] = module(["base"], i)
    for i in range(200):
        files[f"/p/alone{i}.qv"] = module([], i)
    files["/p/top.qv"] = module(["user0", "user1"], 99)
    ws = Workspace(MemoryHost(files), ["/p"])
    for path in files:
        ws.analyze(path)
    before = ws.stats["dependents"]
    assert ws.dependents("/p/alone7.qv") == set()
    assert ws.stats["dependents"] == before  # nothing imports it: nothing looked at
    want = {f"/p/user{i}.qv" for i in range(10)} | {"/p/top.qv"}
    assert ws.dependents("/p/base.qv") == want
    # ten edges into base, two into top (from user0 and user1)
    assert ws.stats["dependents"] - before == 12
    assert ws.importers_of_name("base") == {f"/p/user{i}.qv" for i in range(10)}
    assert ws.importers_of_name("nothing") == set()


def test_reverse_maps_follow_edits_and_forgotten_files() -> None:
    host = MemoryHost({"/p/a.qv": module(["b"], 0), "/p/b.qv": module([], 1), "/p/c.qv": module(["b", "nn.x"], 2)})
    ws = Workspace(host, ["/p"])
    for p in list(host.files):
        ws.analyze(p)
    assert ws.dependents("/p/b.qv") == {"/p/a.qv", "/p/c.qv"}
    assert ws.importers_of_name("x") == {"/p/c.qv"}  # found nothing: still an importer of the name
    ws.set_overlay("/p/a.qv", module([], 0))  # a no longer imports b
    ws.analyze("/p/a.qv")
    assert ws.dependents("/p/b.qv") == {"/p/c.qv"}
    assert ws.importers_of_name("b") == {"/p/c.qv"}
    ws.forget("/p/c.qv")
    assert ws.dependents("/p/b.qv") == set() and ws.importers_of_name("x") == set()


def test_reverse_maps_equal_a_pass_over_every_file_after_random_edits() -> None:
    """A differential fuzz: random import graphs edited, files created and
    deleted; after each step the reverse lookups equal the brute-force ones."""
    rng = random.Random(37)
    names = [f"m{i}" for i in range(25)] + ["sub.m3", "sub.m7"]
    paths = {n: "/p/" + n.replace(".", "/") + ".qv" for n in names}
    host = MemoryHost()
    ws = Workspace(host, ["/p"])
    for step in range(400):
        name = rng.choice(names)
        path = paths[name]
        action = rng.random()
        if action < 0.15 and path in host.files:
            del host.files[path]
            ws.file_changed(path)
            ws.forget(path)
        else:
            others = [m for m in names if m != name]
            host.files[path] = module(rng.sample(others, rng.randint(0, 3)), step)
            ws.file_changed(path)
        for p in rng.sample(sorted(host.files), min(4, len(host.files))):
            ws.analyze(p)
        for n in names:
            assert ws.dependents(paths[n]) == brute_dependents(ws, paths[n]), (step, n)
            stem = n.rsplit(".", 1)[-1]
            assert ws.importers_of_name(stem) == brute_by_name(ws, stem), (step, n)


def test_a_long_chain_of_imports_is_analysed() -> None:
    """500 modules, each importing the one before: analysed one level of
    recursion per module, which ran out of Python's limit (RecursionError,
    no analysis) past a few hundred."""
    n = 500
    files = {"/p/m0.qv": "dim D = 4\n"}
    for i in range(1, n):
        files[f"/p/m{i}.qv"] = f"import m{i - 1}\n\ndim D = 4\n\nfn f(x: [m{i - 1}.D]) -> [D]:\n    return x\n"
    files[f"/p/m{n}.qv"] = f"import m{n - 1}\n\nfn main():\n    x = zeros([m{n - 1}.D])\n    print(x, totl)\n"
    ws = Workspace(MemoryHost(files), ["/p"])
    a = ws.analyze(f"/p/m{n}.qv")
    assert a is not None and not a.internal_errors
    assert [d.code for d in a.diagnostics] == ["E0101"]
    assert ws.dependents("/p/m0.qv") == {f"/p/m{i}.qv" for i in range(1, n + 1)}
