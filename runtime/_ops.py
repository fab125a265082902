"""The builtins that compiled code calls.  Axes are computed by the compiler
(``over=C`` becomes the position of dim C); ``None`` means all dims."""

from __future__ import annotations

import builtins
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F

from . import _device, _dist, _patterns, _progress, _traced_rng
from ._checks import checks, deferred, seed_problem, transforms
from ._elems import Elem, elem_of, f32, tensor_text
from ._errors import ModeError, QuiverError, ValueCheckError
from ._grad_ops import norm_of_grad
from ._grad_value import Grad
from ._model import Model
from ._modes import EvalMode, Mode, Train

_IMPORTED = frozenset(globals())  # (what __all__, at the end, leaves out)

# --- elementwise: torch's own functions, no wrapper in between ----------------
relu = torch.relu
tanh = torch.tanh
sigmoid = torch.sigmoid
log1p = torch.log1p
softplus = F.softplus
gelu = F.gelu  # the exact form (erf), torch's default
silu = F.silu
abs = torch.abs  # the Quiver builtin's name: shadows abs on purpose
softmax = torch.softmax  # softmax(x, axis)
log_softmax = torch.log_softmax  # log_softmax(x, axis)
where = torch.where  # where(cond, a, b)
clamp = torch.clamp  # clamp(x, min=a, max=b), either bound left out
leaky_relu = F.leaky_relu  # leaky_relu(x, negative_slope)
elu = F.elu  # elu(x, alpha)

# Numbers the language names: `-inf` as a mask's fill, `sqrt(2.0 * pi)`.
inf = math.inf
pi = math.pi


def maximum(a, b):
    """The larger of a and b, elementwise; one of them may be a Python number."""
    if isinstance(b, torch.Tensor):
        if isinstance(a, torch.Tensor):
            return torch.maximum(a, b)
        a, b = b, a
    return torch.clamp(a, min=b)


def minimum(a, b):
    """The smaller of a and b, elementwise; one of them may be a Python number."""
    if isinstance(b, torch.Tensor):
        if isinstance(a, torch.Tensor):
            return torch.minimum(a, b)
        a, b = b, a
    return torch.clamp(a, max=b)


# --- elementwise that also take a plain number -------------------------------------
# The compiler calls torch's function on a tensor and these on a number (it
# knows which statically), so the tensor path has no check in front. A number
# gives a Python float, with IEEE results where math raises: sqrt(-1.0) and
# log(-1.0) are nan, log(0.0) is -inf, exp(1000.0) is inf.
exp = torch.exp
log = torch.log
sqrt = torch.sqrt
sin = torch.sin
cos = torch.cos


def exp_of_number(x) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def log_of_number(x) -> float:
    x = float(x)
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


def sqrt_of_number(x) -> float:
    x = float(x)
    return math.sqrt(x) if x >= 0 else math.nan


def sin_of_number(x) -> float:
    x = float(x)
    return math.sin(x) if math.isfinite(x) else math.nan


def cos_of_number(x) -> float:
    x = float(x)
    return math.cos(x) if math.isfinite(x) else math.nan


# --- reductions ------------------------------------------------------------------


def _keep_all(x, r):
    """A reduction over all dims with keep=True: every dim of x becomes 1."""
    return r.reshape((1,) * x.dim())


def sum(x, axis=None, keep=False):  # the Quiver builtin's name: shadows sum on purpose
    """Sum over ``axis`` (an int or a tuple of ints), or over all dims; keep:
    the reduced dims stay, of size 1 (torch's keepdim=True)."""
    if axis is None:
        return _keep_all(x, torch.sum(x)) if keep else torch.sum(x)
    return torch.sum(x, axis, keepdim=keep)


def mean(x, axis=None, keep=False):
    """Mean over ``axis``, or over all dims; keep as for sum."""
    if axis is None:
        return _keep_all(x, torch.mean(x)) if keep else torch.mean(x)
    return torch.mean(x, axis, keepdim=keep)


def max_of_numbers(*xs):
    """Python's max of two numbers or more (Quiver's max(a, b) of Ints or
    Floats): a float when any is one, as the checker types it."""
    m = builtins.max(xs)
    return float(m) if any(isinstance(x, float) for x in xs) else m


def min_of_numbers(*xs):
    """Python's min of two numbers or more: a float when any is one."""
    m = builtins.min(xs)
    return float(m) if any(isinstance(x, float) for x in xs) else m


def max(x, axis=None, keep=False):  # the Quiver builtin's name: shadows max on purpose
    """Largest value over ``axis``, or over all dims (values only); keep as
    for sum.  Where several elements tie, the gradient is shared among them."""
    if axis is None:
        return _keep_all(x, torch.amax(x)) if keep else torch.amax(x)
    return torch.amax(x, axis, keepdim=keep)


def min(x, axis=None, keep=False):  # the Quiver builtin's name: shadows min on purpose
    """Smallest value over ``axis``, or over all dims (values only); keep as for sum."""
    if axis is None:
        return _keep_all(x, torch.amin(x)) if keep else torch.amin(x)
    return torch.amin(x, axis, keepdim=keep)


def argmax(x, axis=None, keep=False):
    """Position of the largest value along ``axis`` (int64); None: flat index.
    keep: the dim stays, of size 1."""
    if axis is None:
        return _keep_all(x, torch.argmax(x)) if keep else torch.argmax(x)
    return torch.argmax(x, axis, keepdim=keep)


def std(x, axis=None, correction=1, keep=False):
    """Standard deviation over ``axis`` (an int or a tuple), or over all dims;
    ``correction`` as torch's (1: divided by n - 1); keep as for sum."""
    if axis is None:
        r = torch.std(x, correction=correction)
        return _keep_all(x, r) if keep else r
    return torch.std(x, dim=axis, correction=correction, keepdim=keep)


def var(x, axis=None, correction=1, keep=False):
    """Variance over ``axis``, or over all dims; ``correction`` as for std."""
    if axis is None:
        r = torch.var(x, correction=correction)
        return _keep_all(x, r) if keep else r
    return torch.var(x, dim=axis, correction=correction, keepdim=keep)


def logsumexp(x, axis, keep=False):
    """log(sum(exp(x))) over ``axis`` (an int or a tuple): torch's logsumexp."""
    return torch.logsumexp(x, axis, keepdim=keep)


def topk(x, k, axis, largest=True):
    """The ``k`` largest (smallest) values along ``axis``, sorted, and their
    int64 positions: torch.topk as a plain tuple."""
    values, indices = torch.topk(x, int(k), dim=axis, largest=bool(largest), sorted=True)
    return values, indices


def sort(x, axis, descending=False):
    """The values along ``axis`` in order and the int64 positions they came
    from: torch.sort as a plain tuple."""
    values, indices = torch.sort(x, dim=axis, descending=bool(descending))
    return values, indices


# --- normalisation (no weights: those are the caller's params) ----------------------


def linear(x, weight, bias=None):
    """``x @ weight + bias`` in one kernel: torch's ``F.linear``, whose weight
    is ``[O I]``, given the transpose (a view) of Quiver's ``[I O]``."""
    return F.linear(x, weight.t(), bias)


def layer_norm(x, axis=-1, eps=1e-5, weight=None, bias=None):
    """(x - mean) / sqrt(var + eps) along ``axis``, var the biased variance,
    then ``* weight + bias`` (each optional, of the axis' size): torch's
    ``F.layer_norm`` over the last dim (x's axis moved there and back), which
    applies weight and bias in the same kernel."""
    if axis < 0:
        axis += x.dim()
    if axis == x.dim() - 1:
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
    return F.layer_norm(x.movedim(axis, -1), (x.shape[axis],), weight, bias, eps).movedim(-1, axis)


def rms_norm(x, axis=-1, eps=None):
    """x / sqrt(mean(x * x) + eps) along ``axis``: torch's ``F.rms_norm``
    (eps None: the machine epsilon of x's dtype, torch's default)."""
    if axis < 0:
        axis += x.dim()
    if axis == x.dim() - 1:
        return F.rms_norm(x, (x.shape[-1],), eps=eps)
    return F.rms_norm(x.movedim(axis, -1), (x.shape[axis],), eps=eps).movedim(-1, axis)


def batch_norm(
    x, running_mean, running_var, weight, bias, mode, axis=1, momentum=0.1, eps=1e-5, num_batches_tracked=None
):
    """torch's ``F.batch_norm`` with the channel dim at ``axis`` (moved to 1
    and back).  ``Train(...)``: normalised with the batch's mean and biased
    variance over every other dim, and ``running_mean`` / ``running_var``
    updated in place by the kernel, outside autograd, as
    ``(1 - momentum) * running + momentum * batch`` with the unbiased batch
    variance; ``num_batches_tracked`` (a 0-dim int64 tensor, optional) is
    then counted up by one, under ``torch.no_grad()``.  ``Eval``: normalised
    with the running statistics, which stay as they are."""
    training = _training(mode, "batch_norm") is not None
    if axis < 0:
        axis += x.dim()
    moved = x.movedim(axis, 1) if axis != 1 else x
    try:
        out = F.batch_norm(moved, running_mean, running_var, weight, bias, training, momentum, eps)
    except RuntimeError as e:
        if training and transforms.depth and "batched tensor" in str(e):
            raise QuiverError(
                "batch_norm under Train(...) cannot update its running statistics inside per-example "
                "gradients (value_and_grad with batch=), which see one example at a time; pass Eval there"
            ) from None
        raise
    if training and num_batches_tracked is not None:
        if deferred.counts is not None:  # a traced gradient: counted when it returns
            deferred.counts.append(num_batches_tracked)
        else:
            with torch.no_grad():
                num_batches_tracked.add_(1)
    return out.movedim(1, axis) if axis != 1 else out


def group_norm(x, groups, weight=None, bias=None, eps=1e-5):
    """torch's ``F.group_norm``: the channels (dim 1) in ``groups`` groups."""
    return F.group_norm(x, int(groups), weight, bias, eps)


def instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, mode=None, momentum=0.1, eps=1e-5):
    """torch's ``F.instance_norm``: each channel (dim 1) of each example
    normalised over the dims after it.  With running statistics, under
    ``Train(...)`` the instance statistics are used and the running ones
    updated in place (their mean over the batch, the unbiased variance), as
    torch's kernel does; under ``Eval`` the running ones are used."""
    use_input_stats = running_mean is None or _training(mode, "instance_norm") is not None
    try:
        return F.instance_norm(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)
    except RuntimeError as e:
        if running_mean is not None and use_input_stats and transforms.depth and "batched tensor" in str(e):
            raise QuiverError(
                "instance_norm under Train(...) cannot update its running statistics inside per-example "
                "gradients (value_and_grad with batch=), which see one example at a time; pass Eval there"
            ) from None
        raise


def scaled_dot_product_attention(q, k, v, mask=None, is_causal=False, dropout_p=0.0, scale=None, mode=None):
    """torch's ``F.scaled_dot_product_attention``: ``mask`` Bool (True where
    to attend) or float (added), ``scale`` 1/sqrt(E) when None.  Dropout of
    the attention weights happens only under ``Train(...)`` with
    ``dropout_p > 0``, drawn as ``dropout`` draws from the mode's stream
    (torch's own function would draw from the global generator); the
    weights are then computed as torch's reference implementation computes
    them."""
    p = float(dropout_p)
    train = _training(mode, "scaled_dot_product_attention") if mode is not None else None
    if p == 0.0 or train is None:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=bool(is_causal), scale=scale)
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    w = q @ k.transpose(-2, -1) * factor
    if is_causal:
        causal = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        w = w.masked_fill(causal.logical_not(), -math.inf)
    if mask is not None:
        w = w.masked_fill(mask.logical_not(), -math.inf) if mask.dtype is torch.bool else w + mask
    return dropout(torch.softmax(w, -1), p, train) @ v


# --- losses ---------------------------------------------------------------------


def _class_axis(x, labels, axis):
    """x (and probability labels) with the class dim at 1, as torch's losses want it."""
    nd = x.dim()
    if axis < 0:
        axis += nd
    if nd >= 2 and axis != 1:
        x = x.movedim(axis, 1)
        if labels.dim() == nd:
            labels = labels.movedim(axis, 1)
    return x, labels


def _ignored_labels(fn, labels, classes, ignore_index):
    """With checks on: every label is a class (0..classes-1) or the ignored value."""
    if not checks.enabled or labels.is_floating_point():
        return
    bad = (labels != ignore_index) & ((labels < 0) | (labels >= classes))
    if bool(bad.any()):
        found = int(labels[bad][0])
        raise ValueCheckError(
            f"{fn}: label {found} is neither a class (0..{classes - 1}) nor the ignored value {ignore_index}"
        )


def cross_entropy(logits, labels, axis=-1, ignore_index=None, reduction="mean", label_smoothing=0.0):
    """Cross-entropy of ``logits`` whose class dim is ``axis`` against
    ``labels`` (class indices, int64, the logits' shape without the class dim;
    or class probabilities of the logits' shape): torch's F.cross_entropy.
    ``ignore_index``: labels equal to it are left out (of the mean too); with
    checks on, every other label must be a class."""
    logits, labels = _class_axis(logits, labels, axis)
    if ignore_index is None:
        return F.cross_entropy(logits, labels, reduction=reduction, label_smoothing=label_smoothing)
    classes = logits.shape[1] if logits.dim() >= 2 else logits.shape[0]
    _ignored_labels("cross_entropy", labels, classes, int(ignore_index))
    return F.cross_entropy(
        logits, labels, ignore_index=int(ignore_index), reduction=reduction, label_smoothing=label_smoothing
    )


def nll(logp, labels, axis=-1, ignore_index=None, reduction="mean"):
    """Negative log-likelihood of ``labels`` (class indices, int64, the shape
    of ``logp`` without its class dim ``axis``) under the log-probabilities
    ``logp``: torch's nll_loss; ``ignore_index`` as for cross_entropy."""
    logp, labels = _class_axis(logp, labels, axis)
    if ignore_index is None:
        return F.nll_loss(logp, labels, reduction=reduction)
    classes = logp.shape[1] if logp.dim() >= 2 else logp.shape[0]
    _ignored_labels("nll", labels, classes, int(ignore_index))
    return F.nll_loss(logp, labels, ignore_index=int(ignore_index), reduction=reduction)


def binary_cross_entropy(p, y, reduction="mean"):
    """Binary cross-entropy of targets ``y`` under probabilities ``p``, each
    log clamped at -100: torch's F.binary_cross_entropy."""
    return F.binary_cross_entropy(p, y, reduction=reduction)


def smooth_l1(input, target, beta=1.0, reduction="mean"):
    """torch's F.smooth_l1_loss."""
    return F.smooth_l1_loss(input, target, reduction=reduction, beta=beta)


def huber(input, target, delta=1.0, reduction="mean"):
    """torch's F.huber_loss."""
    return F.huber_loss(input, target, reduction=reduction, delta=delta)


binary_cross_entropy_with_logits = F.binary_cross_entropy_with_logits  # (z, y): mean over every value


def kl_div(logp, q):
    """KL(q || p) of probabilities ``q`` from log-probabilities ``logp`` (one
    shape): the sum of q * (log q - logp) over every value (0 where q is 0),
    divided by the size of the first dim when there are two dims or more
    (torch's kl_div with reduction="batchmean"; "sum" for 0 or 1 dims)."""
    return F.kl_div(logp, q, reduction="batchmean" if logp.dim() >= 2 else "sum")


def mse(a, b):
    """Mean squared error over all elements (0-dim); a and b broadcast."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
        return F.mse_loss(a, b)
    d = a - b
    return torch.mean(d * d)


# --- randomness and modes ---------------------------------------------------------


def _training(mode, fn):
    """The ``Train`` value of a mode, or None for ``Eval``; anything else is a ModeError."""
    if type(mode) is Train:
        return mode
    if isinstance(mode, EvalMode):
        return None
    if isinstance(mode, Train):
        return mode
    raise ModeError(f"{fn} needs a mode (Train(seed=...) or Eval), found {type(mode).__name__}")


def dropout2d(x, p, mode):
    """Channel dropout, as torch's ``F.dropout2d`` on ``[b C H W]``:
    ``Eval`` (or p = 0): ``x`` itself.  ``Train(seed=s)``: a mask of shape
    ``[b C 1 1]`` in x's dtype, drawn with ``bernoulli_(1 - p)`` from the
    mode's stream on x's device and divided by ``1 - p``, multiplies x, so
    each channel is kept whole or zeroed whole (torch's feature dropout, with
    the mode's generator instead of the global one)."""
    train = _training(mode, "dropout2d")
    if train is None:
        return x
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise QuiverError(f"dropout2d probability must be in [0, 1], found {p}")
    if p == 0.0 or x.numel() == 0:
        return x
    if p == 1.0:
        return x * torch.zeros((), dtype=x.dtype, device=x.device)
    shape = (x.shape[0], x.shape[1]) + (1,) * (x.dim() - 2)
    if torch.compiler.is_compiling():  # no generator in a graph: runtime/_traced_rng.py
        return x * _traced_rng.keep_mask(shape, p, train.seed, train.traced_draw(), x.device, x.dtype)
    noise = torch.empty(shape, dtype=x.dtype, device=x.device)
    noise.bernoulli_(1.0 - p, generator=train.generator(x.device))
    noise.div_(1.0 - p)
    return x * noise


def dropout(x, p, mode):
    """Inverted dropout.  ``Eval`` (or p = 0): ``x`` itself.  ``Train(seed=s)``:
    each element is kept with probability 1 - p and scaled by 1 / (1 - p), the
    mask being drawn with ``bernoulli_(1 - p)`` from the mode's stream on x's
    device (see Train).  p must be in [0, 1]."""
    if type(mode) is EvalMode:
        return x
    if type(mode) is not Train:
        if isinstance(mode, EvalMode):
            return x
        if not isinstance(mode, Train):
            raise ModeError(f"dropout needs a mode (Train(seed=...) or Eval), found {type(mode).__name__}")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise QuiverError(f"dropout probability must be in [0, 1], found {p}")
    if p == 0.0:
        return x
    if p == 1.0:
        return x * torch.zeros_like(x)
    if torch.compiler.is_compiling():  # no generator in a graph: runtime/_traced_rng.py
        return x * _traced_rng.keep_mask(x.shape, p, mode.seed, mode.traced_draw(), x.device, x.dtype)
    keep = torch.empty_like(x, memory_format=torch.contiguous_format)
    keep.bernoulli_(1.0 - p, generator=mode.generator(x.device))
    keep.div_(1.0 - p)
    return x * keep


def _shape(shape):
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


def _seed(seed) -> int:
    seed = int(seed)
    problem = seed_problem(seed)
    if problem is not None:
        raise QuiverError(problem)
    return seed


def _moved(t, dtype):
    """A tensor drawn on the CPU, in ``dtype`` on the current device (the
    same values on every device for a seed)."""
    device = _device._state.current
    if device.type == "cpu":
        return t if t.dtype is dtype else t.to(dtype)
    return t.to(dtype=dtype, device=device)


def _generator(seed):
    if seed is None:
        return None
    gen = torch.Generator()
    gen.manual_seed(_seed(seed))
    return gen


def randn(shape, seed=None, dtype=f32):
    """Standard normal draws on the CPU from a generator seeded with ``seed``
    (torch's global generator when seed is None), moved to the current
    device.  Drawn in f64 for f64, else in f32 and converted."""
    elem = elem_of(dtype)
    if not elem.is_float:
        raise QuiverError(f"randn needs a float element type, found {elem.name}")
    draw = torch.float64 if elem.dtype is torch.float64 else torch.float32
    t = torch.randn(_shape(shape), generator=_generator(seed), dtype=draw)
    return _moved(t, elem.dtype)


def randint(shape, high, seed=None):
    """Uniform int64 draws in ``0..high-1`` (an ``Index[high]`` tensor), drawn on the CPU
    and moved to the current device."""
    if isinstance(high, Elem):
        if high.size is None:
            raise TypeError(f"randint needs an Index[C] element type or an Int, found {high.name}")
        high = high.size
    high = int(high)
    if high < 1:
        raise QuiverError(f"randint needs high >= 1, found {high}")
    return _moved(torch.randint(0, high, _shape(shape), generator=_generator(seed), dtype=torch.int64), torch.int64)


def tensor(values, dtype=f32):
    """A tensor literal: ``[1.0, -2.0]``, nested lists for more dims."""
    return torch.tensor(values, dtype=elem_of(dtype).dtype, device=_device._state.current)


def zeros(shape, dtype=f32):
    """A tensor of zeros, on the current device."""
    return torch.zeros(_shape(shape), dtype=elem_of(dtype).dtype, device=_device._state.current)


def ones(shape, dtype=f32):
    """A tensor of ones, on the current device."""
    return torch.ones(_shape(shape), dtype=elem_of(dtype).dtype, device=_device._state.current)


def rand(shape, seed=None, dtype=f32):
    """Uniform draws in [0, 1) on the CPU from a generator seeded with ``seed``,
    moved to the current device (as randn: drawn in f64 for f64, else in f32
    and converted)."""
    elem = elem_of(dtype)
    if not elem.is_float:
        raise QuiverError(f"rand needs a float element type, found {elem.name}")
    draw = torch.float64 if elem.dtype is torch.float64 else torch.float32
    t = torch.rand(_shape(shape), generator=_generator(seed), dtype=draw)
    return _moved(t, elem.dtype)


def multinomial(p, axis=-1, seed=None):
    """One index drawn along ``axis`` for every slice of ``p`` (weights >= 0),
    with torch.multinomial and a generator seeded with ``seed`` on p's device:
    ``p`` loses that dim and the result is int64."""
    q = p.detach().movedim(axis, -1)
    gen = None
    if seed is not None:
        gen = torch.Generator(device=q.device)
        gen.manual_seed(_seed(seed))
    drawn = torch.multinomial(q.reshape(-1, q.shape[-1]), 1, generator=gen)
    return drawn.reshape(q.shape[:-1])


def full(shape, dtype=f32, value=0):
    """A tensor of one value, on the current device."""
    return torch.full(_shape(shape), value, dtype=elem_of(dtype).dtype, device=_device._state.current)


def eye(n):
    """``eye(N)``: the N by N identity matrix, float32, on the current device."""
    return torch.eye(n, device=_device._state.current)


tril = torch.tril  # tril(x, diagonal=k)
triu = torch.triu

# --- convolutions and pools ----------------------------------------------------------
conv2d = F.conv2d  # conv2d(x, w, bias, stride=s, padding=p, dilation=d, groups=g)
conv1d = F.conv1d  # conv1d(x, w, bias, stride=s, padding=p, dilation=d, groups=g)
# conv_transpose2d(x, w, bias, stride=s, padding=p, output_padding=op, groups=g, dilation=d)
conv_transpose2d = F.conv_transpose2d
max_pool2d = F.max_pool2d  # max_pool2d(x, k, stride=s, padding=p): windows k apart unless stride= says
avg_pool2d = F.avg_pool2d


# --- misc ---------------------------------------------------------------------------


def stop_grad(x):
    """``x`` cut off from autograd: no gradient flows through it."""
    return x.detach()


def reshape(x, shape):
    """``reshape(x, [b T NH HD])``: the compiler passes the sizes."""
    return x.reshape(shape)


def permute(x, order):
    """``permute(x, [b H T D])``: the compiler passes the positions."""
    return x.permute(order)


def concat(a, b, *rest):
    """``concat(a, b, c, over=D)`` (the compiler passes ``a, b, axis, c``):
    torch.cat of the tensors along ``axis``; ``concat(parts, over=D)`` of a
    tuple or a list (``parts, axis``)."""
    if isinstance(a, (tuple, list)):
        return torch.cat(a, b)
    return torch.cat((a, b, *rest[1:]), rest[0])


def stack(*xs, over=0):
    """``stack(a, b, over=1)``: torch.stack, the new dim at position ``over``;
    ``stack(parts)`` of a tuple or a list of tensors."""
    if len(xs) == 1 and isinstance(xs[0], (tuple, list)):
        xs = xs[0]
    return torch.stack(xs, over)


def pad(x, sizes, mode="constant", value=0):
    """torch's ``F.pad``: the first pair of ``sizes`` pads the last dim, the
    next pair the one before it, ...; ``mode`` "constant" (with ``value``),
    "reflect", "replicate" or "circular"."""
    sizes = tuple(int(n) for n in sizes)
    if mode == "reflect":
        # torch's own message names no line; the sizes of a generic image
        # are known only here
        for i, n in enumerate(sizes):
            size = x.shape[x.dim() - 1 - i // 2]
            if n >= size:
                raise QuiverError(
                    f"pad: a reflection of {n} needs a dim larger than {n}; dim {x.dim() - 1 - i // 2} of "
                    f"[{' '.join(str(d) for d in x.shape)}] is {size}"
                )
    if mode != "constant":
        return F.pad(x, sizes, mode=mode)
    return F.pad(x, sizes, value=value)


def adaptive_avg_pool2d(x, output_size):
    """torch's ``F.adaptive_avg_pool2d``: one size or a pair (h, w)."""
    return F.adaptive_avg_pool2d(x, _pair(output_size))


def adaptive_max_pool2d(x, output_size):
    """torch's ``F.adaptive_max_pool2d``: one size or a pair (h, w)."""
    return F.adaptive_max_pool2d(x, _pair(output_size))


def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """torch's ``F.interpolate``: to ``size`` (one size or one per dim) or by
    ``scale_factor``, in ``mode``."""
    size = _size(size) if size is not None else None
    return F.interpolate(x, size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners)


def _pair(s):
    """(h, w) of one size or a pair."""
    h, w = (s, s) if not isinstance(s, (tuple, list)) else s
    return int(h), int(w)


def _size(s):
    """An int, or a tuple of ints, from sizes that may be 0-dim tensors."""
    return tuple(int(n) for n in s) if isinstance(s, (tuple, list)) else int(s)


def flip(x, axis):
    """The values reversed along ``axis`` (an int or a tuple of ints)."""
    return torch.flip(x, (axis,) if isinstance(axis, int) else tuple(axis))


pixel_shuffle = F.pixel_shuffle  # pixel_shuffle(x, r)
pixel_unshuffle = F.pixel_unshuffle


def chunk(x, n, axis):
    """n equal parts along ``axis`` (a size that n does not divide is an error,
    not torch's uneven last part)."""
    size = x.shape[axis]
    if size % n:
        raise QuiverError(f"chunk: {n} parts do not divide a dim of size {size}")
    return torch.chunk(x, n, axis)


def arange(n, stop=None, step=1):
    """``arange(T)``: the positions 0..T-1 of a dim, as int64 labels, on the
    current device; ``arange(start, stop, step)`` as torch's."""
    if stop is None:
        return torch.arange(n, device=_device._state.current)
    return torch.arange(n, stop, step, device=_device._state.current)


def linspace(start, end, steps):
    """``linspace(start, end, N)``: torch.linspace in float32, on the current device."""
    return torch.linspace(float(start), float(end), int(steps), device=_device._state.current)


def cumsum(x, axis):
    """The running sums along ``axis`` (of integers or Bools: int64, as torch)."""
    return torch.cumsum(x, axis)


def cumprod(x, axis):
    """The running products along ``axis`` (of integers or Bools: int64, as torch)."""
    return torch.cumprod(x, axis)


def roll(x, shifts, axis):
    """The values shifted ``shifts`` places round ``axis`` (torch.roll)."""
    return torch.roll(x, int(shifts), axis)


def expand(x, shape):
    """``expand(x, [b T D])``: torch's Tensor.expand (a view; the compiler passes the sizes)."""
    return x.expand(*shape)


def repeat(x, counts):
    """``repeat(x, (2, 1))``: torch's Tensor.repeat."""
    return x.repeat(*(int(n) for n in counts))


def unbind(x, axis):
    """The slices along ``axis``, a tuple (torch.unbind)."""
    return torch.unbind(x, axis)


def split(x, sizes, axis):
    """``split(x, (2, 3), over=D)`` or ``split(x, 2, over=D)``: torch.split."""
    if isinstance(sizes, (tuple, list)):
        return torch.split(x, [int(s) for s in sizes], axis)
    return torch.split(x, int(sizes), axis)


def repeat_interleave(x, repeats, axis):
    """Each value repeated ``repeats`` times in place along ``axis``."""
    return torch.repeat_interleave(x, int(repeats), axis)


def one_hot(labels, over):
    """``one_hot(y, over=C)``: float32, a new last dim of size C."""
    return F.one_hot(labels, over).to(torch.float32)


def norm(x, axis=None, p=2, keep=False):
    """The 2-norm of all values of a tensor or of a Grad together (0-dim; for a
    batched Grad one norm per example, ``[b]``).  Of a tensor also along
    ``axis`` (an int or a tuple), and the ``p``-norm: torch's
    ``linalg.vector_norm``; keep as for sum."""
    if type(x) is Grad:
        return norm_of_grad(x)
    if axis is None:
        r = torch.linalg.vector_norm(x, ord=p)
        return _keep_all(x, r) if keep else r
    return torch.linalg.vector_norm(x, ord=p, dim=axis, keepdim=keep)


def transpose(x):
    """Swap the last two dims."""
    if x.dim() < 2:
        raise QuiverError(f"transpose needs at least 2 dims, found {tensor_text(x)}")
    return x.transpose(-2, -1)


def cast(x, elem):
    """``x as [..] T``: convert to T's dtype (float to int truncates toward
    zero).  A Python number (``n as []``) or nested list of numbers (a tensor
    literal cast at once, ``[0.8, 0.1] as [2] f64``) is made in T's dtype
    directly, never through float32, so an f64 or i64 holds the number
    exactly.  With checks on, a cast to Index[C], NonNeg or Prob verifies the
    values and raises ValueCheckError when they do not fit."""
    elem = elem_of(elem)
    number = not isinstance(x, torch.Tensor)
    if number:  # a number or a literal: made in the target dtype itself
        out = torch.tensor(x, dtype=elem.dtype, device=_device._state.current)
    else:
        out = x.to(elem.dtype)
    if elem.refinement is not None and checks.enabled:
        problem = elem.value_problem(out)
        if problem is not None:
            source = _number_text(x, out) if number else tensor_text(x)
            raise ValueCheckError(f"cannot cast {source} to {elem.name}: found {problem}")
    return out


def _number_text(x, made: torch.Tensor) -> str:
    """A cast's Python source in a message: `Float -1.0`, `the literal [2 3]`."""
    if isinstance(x, bool):
        return f"Bool {x}"
    if isinstance(x, int):
        return f"Int {x}"
    if isinstance(x, float):
        return f"Float {x!r}"
    return "the literal [" + " ".join(str(n) for n in made.shape) + "]"


def item(x):
    """A ``[]`` tensor as a Python number."""
    if not isinstance(x, torch.Tensor) or x.dim() != 0:
        found = tensor_text(x) if isinstance(x, torch.Tensor) else type(x).__name__
        raise QuiverError(f"item() needs a [] tensor, found {found}")
    return x.item()


# --- printing --------------------------------------------------------------------------


def _float_text(v: float | np.floating) -> str:
    if math.isnan(v) or math.isinf(v):
        return str(v)
    a = builtins.abs(v)
    if a == 0 or 1e-4 <= a < 1e8:
        return f"{v:.4f}"
    return f"{v:.4e}"


def format_value(v) -> str:
    """How ``rt.print`` shows one value."""
    if isinstance(v, torch.Tensor) and not isinstance(v, Grad):
        t = v.detach()
        if t.dim() == 0:
            x = t.item()
            return _float_text(x) if isinstance(x, float) else str(x)
        if t.is_floating_point():
            t = t.to(torch.float64 if t.dtype is torch.float64 else torch.float32)
        arr = t.cpu().numpy()
        if arr.dtype.kind == "f":
            return np.array2string(
                arr, separator=", ", threshold=1000, edgeitems=3, formatter={"float_kind": _float_text}
            )
        return np.array2string(arr, separator=", ", threshold=1000, edgeitems=3)
    if isinstance(v, (Grad, Model, Mode)):
        return repr(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(format_value(x) for x in v) + ")"
    return str(v)


def _print(*values, file=None, all_ranks=False) -> None:
    """Print values separated by spaces: ``[]`` tensors as plain numbers (floats
    with 4 decimals), larger tensors as nested lists, gradients and models by
    their repr.  In a process group only rank 0 prints, unless ``all_ranks``
    (each line then starts with ``[rank r] ``)."""
    if not _dist.prints_here(all_ranks):
        return
    out = sys.stdout if file is None else file
    prefix = _dist.print_prefix() if all_ranks else ""
    text = prefix + " ".join(format_value(v) for v in values) + "\n"
    with _progress.writing():  # a progress bar on the terminal is lifted off while the line is written
        out.write(text)
        out.flush()


# einsum and rearrange, the built-ins of dim-name patterns: see _patterns.
einsum = _patterns.einsum
rearrange = _patterns.rearrange

# rank() and world_size(): see _dist.
rank = _dist.rank
world_size = _dist.world_size


# The ops rt exports (runtime/__init__.py re-exports exactly these): every
# public name defined in this module, none of the names it imports. A new
# built-in's run-time function is defined here and listed nowhere. (pyright
# reads only a literal __all__; it then takes the module's public names.)
__all__ = sorted(  # pyright: ignore[reportUnsupportedDunderAll]
    name for name in globals() if not name.startswith("_") and name not in _IMPORTED
)
