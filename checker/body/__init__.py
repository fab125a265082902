"""Checking one function body: names, types, shapes, gradients, mutability.

The checker walks the body once (loops until their variables' types settle),
with a flow-sensitive environment: each assignment gives a variable its type
from then on, branches join, a variable assigned on some paths only is
"maybe unassigned". Every expression's type is recorded for hovers and inlay
hints, every name's meaning for navigation, and the facts the param-read
analysis needs (field reads, calls that pass a model on, escapes,
`value_and_grad` sites) are collected for checker/reads.py.

The result depends only on the body's own text and on the interfaces of the
global names it looked up (`deps`), which is what lets the analysis reuse it
while other items change.

The package imports nothing itself: the built-in families import the rule
interface (body.context) without pulling in the engine (body.core).
"""
