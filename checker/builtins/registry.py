"""The table of built-ins, filled as the family modules are imported.

`@builtin(spec, ...)` on a typing rule registers the specs it checks and the
rule itself: a family module (checker/builtins/<family>.py) reads top to
bottom as spec, rule, spec, rule. Several built-ins share a rule by naming it
in one decorator, or by `builtin(spec)(rule)` for a rule declared elsewhere.

This module imports nothing of the checker's engine: the engine looks rules
up here, and the families (which read arguments through the engine's
RuleContext) register into it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .spec import Builtin


@dataclass(frozen=True)
class Rule:
    check: Callable[..., Any]
    raw: bool  # gets the arguments unbound: (c, node, b, args, env, paren)


# rule key -> rule; a spec names its rule by key (`Builtin.rule`)
RULES: dict[str, Rule] = {}
# name -> spec, in the order of registration
BUILTINS: dict[str, Builtin] = {}


def builtin(*specs: Builtin, raw: bool = False):
    """Registers `specs` and the decorated function as their typing rule."""

    def register(fn):
        key = f"{fn.__module__}.{fn.__qualname__}"
        known = RULES.get(key)
        assert known is None or known.check is fn, key
        RULES[key] = Rule(fn, raw)
        for spec in specs:
            assert spec.name not in BUILTINS, spec.name
            BUILTINS[spec.name] = dataclasses.replace(spec, rule=key)
        return fn

    return register
