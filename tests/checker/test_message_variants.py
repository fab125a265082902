"""Every word of a diagnostic stands in the catalog (checker/catalog.py).

A message's free detail ({reason}, {problem}) is one of the code's named
variants, picked at the call site with `C.E0409.say("a_model", written=...)`.
A literal text for a detail at a call site is counted here: none is left
(BUDGET 0), and a new one fails the test; name a variant instead.
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from quiver.checker import catalog as C
from quiver.checker.diagnostics import Severity

CHECKER = Path(__file__).resolve().parents[2] / "checker"
SLOTS = {"problem", "reason"}
# Literal texts for a {reason} / {problem} at call sites in checker/: none.
BUDGET = 0


def _literal(v: ast.expr) -> bool:
    if isinstance(v, ast.Constant):
        return isinstance(v.value, str)
    if isinstance(v, ast.JoinedStr):
        return True
    if isinstance(v, ast.BinOp):
        return _literal(v.left) or _literal(v.right)
    if isinstance(v, ast.IfExp):
        return _literal(v.body) or _literal(v.orelse)
    return False


def _modules():
    for path in sorted(CHECKER.rglob("*.py")):
        if path.name != "catalog.py":
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def literal_details() -> list[str]:
    """`reason="..."` / `problem=f"..."` arguments and `reason = "..."`
    assignments in checker/, as file:line."""
    out = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg in SLOTS and _literal(node.value):
                out.append(f"{path.relative_to(CHECKER)}:{node.value.lineno}")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id in SLOTS for t in targets) and _literal(node.value):
                    out.append(f"{path.relative_to(CHECKER)}:{node.lineno}")
    return out


def said() -> set[tuple[str, str]]:
    """(code, variant) of every `C.Exxxx.say("variant", ...)` in checker/."""
    out = set()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "say"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr in C.CODES
            ):
                first = node.args[0] if node.args else None
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), ast.dump(node)
                out.add((node.func.value.attr, first.value))
    return out


def test_literal_details_at_call_sites_only_go_down():
    found = literal_details()
    assert len(found) <= BUDGET, f"{len(found)} literal details (budget {BUDGET}); new ones: name a variant"
    assert len(found) == BUDGET, f"{len(found)} literal details left: lower BUDGET to {len(found)}"


def test_every_variant_is_said_and_every_said_variant_exists():
    declared = {(c.code, name) for c in C.CODES.values() for name, _ in c.variants}
    used = said()
    assert not used - declared, f"said but not in the catalog: {sorted(used - declared)}"
    assert not declared - used, f"in the catalog but never said: {sorted(declared - used)}"


def test_a_variant_names_its_placeholders_and_fills_them():
    for code in C.CODES.values():
        names = [name for name, _ in code.variants]
        assert len(names) == len(set(names)), code.code
        for name, template in code.variants:
            fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
            text = code.say(name, **{f: f"<{f}>" for f in fields})
            assert "{" not in text.replace("{{", ""), (code.code, name, text)
            assert name.isidentifier() and name == name.lower(), (code.code, name)


def test_say_refuses_missing_or_extra_placeholders():
    code = C.Code("E9999", "t", Severity.ERROR, "{reason}", "", "", None, variants=(("v", "of {x}"),))
    assert code.say("v", x=3) == "of 3"
    with pytest.raises(TypeError):
        code.say("v")
    with pytest.raises(TypeError):
        code.say("v", x=1, y=2)
