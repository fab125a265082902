"""The language's features outside the engine: gradient sites, optimizers and
their param groups, schedules, checkpoints. Each module is plain functions of
`RuleContext` (checker/body/context.py), the one interface they see of the
body checker; none imports the engine (body.core, body.calls, ...). The
built-ins' typing rules that use them are in checker/builtins/<family>.py."""
