"""The optimizers and learning-rate schedules as data: their names,
hyper-parameters and defaults (torch.optim's, PyTorch 2.13) and their state.
Read by checker/types (the fields of `Adam[M]`, `StepLR`), the builtins table,
the typing rules (checker/builtins/optim.py, schedules.py, checker/body/features/) and hover."""

from __future__ import annotations

# The optimizers: their hyper-parameters (name, type word, default as written)
# and their state (name -> "grad" for a Grad[M]-shaped moment, "int" a count).
OPTIMIZERS: dict[str, tuple[tuple[tuple[str, str, str], ...], dict[str, str]]] = {
    "SGD": (
        (
            ("lr", "Float", "0.001"),
            ("momentum", "Float", "0.0"),
            ("dampening", "Float", "0.0"),
            ("weight_decay", "Float", "0.0"),
            ("nesterov", "Bool", "False"),
        ),
        {"momentum_buffer": "grad", "steps": "int"},
    ),
    "Adam": (
        (
            ("lr", "Float", "0.001"),
            ("betas", "(Float, Float)", "(0.9, 0.999)"),
            ("eps", "Float", "1e-08"),
            ("weight_decay", "Float", "0.0"),
            ("amsgrad", "Bool", "False"),
        ),
        {"exp_avg": "grad", "exp_avg_sq": "grad", "steps": "int"},
    ),
    "AdamW": (
        (
            ("lr", "Float", "0.001"),
            ("betas", "(Float, Float)", "(0.9, 0.999)"),
            ("eps", "Float", "1e-08"),
            ("weight_decay", "Float", "0.01"),
            ("amsgrad", "Bool", "False"),
        ),
        {"exp_avg": "grad", "exp_avg_sq": "grad", "steps": "int"},
    ),
    # issue 26: the other torch.optim algorithms (runtime/_optim_more.py)
    "RMSprop": (
        (
            ("lr", "Float", "0.01"),
            ("alpha", "Float", "0.99"),
            ("eps", "Float", "1e-08"),
            ("weight_decay", "Float", "0.0"),
            ("momentum", "Float", "0.0"),
            ("centered", "Bool", "False"),
        ),
        {"square_avg": "grad", "momentum_buffer": "grad", "steps": "int"},
    ),
    "Adagrad": (
        (
            ("lr", "Float", "0.01"),
            ("lr_decay", "Float", "0.0"),
            ("weight_decay", "Float", "0.0"),
            ("initial_accumulator_value", "Float", "0.0"),
            ("eps", "Float", "1e-10"),
        ),
        {"sum": "grad", "steps": "int"},
    ),
    "Adadelta": (
        (
            ("lr", "Float", "1.0"),
            ("rho", "Float", "0.9"),
            ("eps", "Float", "1e-06"),
            ("weight_decay", "Float", "0.0"),
        ),
        {"square_avg": "grad", "acc_delta": "grad", "steps": "int"},
    ),
    "LBFGS": (
        (
            ("lr", "Float", "1.0"),
            ("max_iter", "Int", "20"),
            ("max_eval", "Int", "None"),
            ("tolerance_grad", "Float", "1e-07"),
            ("tolerance_change", "Float", "1e-09"),
            ("history_size", "Int", "100"),
            ("line_search_fn", "Str", "None"),
        ),
        {"func_evals": "int", "n_iter": "int", "steps": "int"},
    ),
}

# The optimizers whose params can be split into groups (`groups=Group(...)`);
# LBFGS has one group, as torch.optim.LBFGS.
GROUPED_OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta")
# The hyper-parameters a Group may set (numbers; flags change an optimizer's state).
GROUP_OVERRIDABLE = ("lr", "momentum", "dampening", "weight_decay", "eps", "betas", "alpha", "rho", "lr_decay")

# The learning-rate schedules (runtime/_schedules.py), torch.optim.lr_scheduler's
# names: hyper-parameters (name, type word, default as written; "required" for
# none). "Ints" is a tuple of Ints (MultiStepLR's milestones).
SCHEDULES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "StepLR": (("step_size", "Int", "required"), ("gamma", "Float", "0.1")),
    "MultiStepLR": (("milestones", "Ints", "required"), ("gamma", "Float", "0.1")),
    "ExponentialLR": (("gamma", "Float", "required"),),
    "CosineAnnealingLR": (("T_max", "Int", "required"), ("eta_min", "Float", "0.0")),
    "LinearLR": (
        ("start_factor", "Float", "1.0 / 3"),
        ("end_factor", "Float", "1.0"),
        ("total_iters", "Int", "5"),
    ),
    "OneCycleLR": (
        ("max_lr", "Float", "required"),
        ("total_steps", "Int", "required"),
        ("pct_start", "Float", "0.3"),
        ("anneal_strategy", "Str", '"cos"'),
        ("cycle_momentum", "Bool", "True"),
        ("base_momentum", "Float", "0.85"),
        ("max_momentum", "Float", "0.95"),
        ("div_factor", "Float", "25.0"),
        ("final_div_factor", "Float", "10000.0"),
        ("three_phase", "Bool", "False"),
    ),
    "WarmupCosineLR": (
        ("warmup_steps", "Int", "required"),
        ("total_steps", "Int", "required"),
        ("start_factor", "Float", "1.0 / 3"),
        ("eta_min", "Float", "0.0"),
    ),
}
