"""Running a recursive pass over a tree that may be deep.

The parser refuses nesting past MAX_NESTING as the user sees it (E0009), but
some chains read flat and are deep in the tree all the same: `a + a + ... + a`
is left-nested, as are `x.a.b.c`, `f(x)(y)` and `x as A as B`. A program may
hold any number of terms in such a chain. The passes over the tree (the body
checker, the IDE queries, the compiler) are recursive, which is natural for
everything else; `deep` runs one normally and, only where that runs out of
Python's recursion limit, once more in a thread of its own with a stack and a
recursion limit large enough for any chain that fits in memory. Whatever still
fails raises as before (the callers record it as an internal error).

A chain is bounded all the same: a statement holds at most MAX_CHAIN links
(binary operators, `.`, `as`, `|>`, calls' and indexes' brackets after an
operand; the parser reports E0015 past it and skips the statement), so one
statement's recursion costs bounded time and memory, and a file costs what
its statements cost, whatever is written in 10 MiB.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Python frames live on the interpreter's own stack from 3.11 on; the thread's
# C stack serves the calls that go through C (comparisons, hashing, ...).
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 2_000_000

_lock = threading.Lock()

# The most links in a chain of one statement (parser.py counts them).
MAX_CHAIN = 100_000


def deep(fn: Callable[[], T]) -> T:
    """fn(), retried with room for deep recursion if it runs out of it."""
    try:
        return fn()
    except RecursionError:
        pass
    return _in_deep_thread(fn)


def _in_deep_thread(fn: Callable[[], T]) -> T:
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(fn())
        except BaseException as e:  # handed to the caller's thread
            error.append(e)

    with _lock:  # one at a time: the limit and the stack size are global
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        try:
            threading.stack_size(_STACK_BYTES)
            sys.setrecursionlimit(_RECURSION_LIMIT)
            thread = threading.Thread(target=target, name="quiver-deep", daemon=True)
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
            threading.stack_size(old_stack)
    if error:
        raise error[0]
    return result[0]
