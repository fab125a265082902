"""The shared torch runtime that compiled Quiver code imports as ``rt``.

See docs/runtime.md for the contract between the compiler and this package.
"""

from . import _metrics as metrics
from . import _ops, init
from ._batches import Batches, batches, randperm
from ._checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from ._checks import Checks, checks
from ._data import Vocab, VocabArg, decode, encode, load_chars, load_csv, load_npy, load_npz, load_safetensors
from ._device import current_device, set_device
from ._device import placed as placed_device
from ._device import use_program as use_program_device
from ._distributions import Bernoulli, Categorical, Normal, kl_divergence
from ._elems import Elem, ElemVar, bf16, bool_, dtype_name, elem_of, f16, f32, f64, i32, i64, index, nonneg, prob
from ._errors import (
    CheckError,
    ExternError,
    GradError,
    ModeError,
    ModelError,
    OptimError,
    QuiverError,
    ValueCheckError,
)
from ._extern import Extern, extern
from ._field_add import field_add
from ._format import f_format, f_show, f_type, fstring
from ._grad import grad, jvp, value_and_grad
from ._grad_ops import mean_grad, model_update, randn_grad, sum_grad, zeros_grad
from ._grad_value import Grad
from ._index import at, field_index_set, index_set
from ._losses import l1_loss, mse_loss
from ._metrics import log_metrics
from ._model import Field, GenericModel, Model, ModelStack, SubModel, add_methods
from ._model_texts import applied_name, name_imported
from ._modes import Eval, EvalMode, Mode, Train
from ._ops import *  # noqa: F403 - every op (_ops.__all__: each public function of _ops)
from ._ops import _print as print  # the Quiver builtin's name: shadows print on purpose
from ._optim import SGD, Adam, AdamW, Optimizer
from ._optim_groups import Group
from ._optim_more import LBFGS, Adadelta, Adagrad, RMSprop, clip_grad_norm
from ._program import Program, python_view
from ._progress import progress
from ._run_dims import bind_dims, expect_count, expect_dims
from ._schedules import (
    CosineAnnealingLR,
    ExponentialLR,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    Schedule,
    ScheduleArg,
    StepLR,
    WarmupCosineLR,
)
from ._source import (
    Loc,
    QvFrame,
    SourceFile,
    compiled_filename,
    error_message,
    format_error,
    imported,
    load_compiled,
    mapped_filename,
    qv_location,
    qv_traceback,
    run_main,
)
from ._specs import (
    ArgSpec,
    DimExpr,
    GradArg,
    ModeArg,
    ModelArg,
    NumberArg,
    OptimArg,
    OptionalArg,
    ResultCheck,
    Signature,
    TensorArg,
    TupleArg,
)
from ._tokenizer import MissingExtraError, Tokenizer, load_tokenizer
from ._type_params import TypeParamArg
from ._walks import init_param, modules, named_params, ndim, num_params, numel
from ._weights import WeightsError, load_weights, read_state_dict

__all__ = [
    "f_format",
    "f_show",
    "f_type",
    "fstring",
    "CheckpointError",
    "load_checkpoint",
    "save_checkpoint",
    "WeightsError",
    "load_weights",
    "read_state_dict",
    "Tokenizer",
    "MissingExtraError",
    "load_tokenizer",
    "init",
    "metrics",
    "log_metrics",
    "progress",
    "Checks",
    "checks",
    "current_device",
    "placed_device",
    "set_device",
    "use_program_device",
    "Elem",
    "ElemVar",
    "bf16",
    "bool_",
    "dtype_name",
    "elem_of",
    "f16",
    "f32",
    "f64",
    "i32",
    "i64",
    "index",
    "nonneg",
    "prob",
    "CheckError",
    "ExternError",
    "GradError",
    "ModeError",
    "ModelError",
    "OptimError",
    "QuiverError",
    "ValueCheckError",
    "Extern",
    "extern",
    "Grad",
    "value_and_grad",
    "grad",
    "model_update",
    "jvp",
    "mean_grad",
    "sum_grad",
    "zeros_grad",
    "randn_grad",
    "SubModel",
    "ModelStack",
    "Field",
    "GenericModel",
    "add_methods",
    "applied_name",
    "name_imported",
    "Model",
    "field_add",
    "at",
    "index_set",
    "field_index_set",
    "Eval",
    "EvalMode",
    "Mode",
    "Train",
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "LBFGS",
    "Group",
    "clip_grad_norm",
    "Schedule",
    "ScheduleArg",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LinearLR",
    "OneCycleLR",
    "WarmupCosineLR",
    "print",
    "Loc",
    "QvFrame",
    "SourceFile",
    "compiled_filename",
    "mapped_filename",
    "error_message",
    "format_error",
    "imported",
    "load_compiled",
    "Program",
    "python_view",
    "qv_location",
    "qv_traceback",
    "run_main",
    "ArgSpec",
    "DimExpr",
    "GradArg",
    "ModeArg",
    "ModelArg",
    "NumberArg",
    "OptimArg",
    "ResultCheck",
    "Signature",
    "TensorArg",
    "TupleArg",
    "OptionalArg",
    "TypeParamArg",
    "bind_dims",
    "expect_count",
    "expect_dims",
    "Batches",
    "batches",
    "randperm",
    "Vocab",
    "VocabArg",
    "decode",
    "encode",
    "load_chars",
    "load_csv",
    "load_npy",
    "load_npz",
    "load_safetensors",
]
__all__ += _ops.__all__
__all__ += ["l1_loss", "mse_loss"]
__all__ += ["init_param", "modules", "named_params", "ndim", "num_params", "numel"]  # walks
__all__ += ["Bernoulli", "Categorical", "Normal", "kl_divergence"]  # distributions

# ---- PyTorch interop (docs/torch-interop.md): sys.modules, nn.Module, torch.compile
from ._registry import register as register_compiled  # noqa: E402
from ._torch_compile import CompileFailed, compile_train_steps  # noqa: E402
from ._torch_module import QuiverModule, to_module  # noqa: E402

__all__ += ["register_compiled", "QuiverModule", "to_module", "CompileFailed", "compile_train_steps"]
