"""Data-parallel training: the process group a program runs in.

A Quiver program runs data-parallel when its process is one of a
``torch.distributed`` process group: ``quiver run --nproc N`` starts N
workers with torch's elastic launcher, an external ``torchrun`` does the
same across machines, and a Python user may call
``torch.distributed.init_process_group`` before driving a loaded program.
The runtime reads the group only through ``torch.distributed`` (no
communication of its own):

- ``rank()`` / ``world_size()``: the process's rank and the group's size,
  0 and 1 outside a group;
- :func:`average`: the one all-reduce of an outermost ``value_and_grad``
  call (its gradient and its value, averaged over the ranks, in one
  flat buffer), and of ``mean_grad`` / ``sum_grad`` of per-example
  gradients (the examples of every rank);
- ``print`` prints on rank 0 only unless ``all_ranks=True``.

:func:`join` is what a worker of ``quiver run`` calls: it joins the group
that the launcher's environment variables (``RANK``, ``WORLD_SIZE``,
``MASTER_ADDR``, ``MASTER_PORT``) describe, with the gloo backend for CPU
tensors and NCCL for CUDA tensors.
"""

from __future__ import annotations

import datetime
import os

import torch
import torch.distributed as dist

__all__ = ["rank", "world_size"]


class _State:
    """The group the runtime reduces over; ``size`` 1 means "not distributed"
    (no group, or a group of one), so the hot path is one attribute read."""

    size = 1
    rank = 0
    group_id: object = None  # the default group this state was read from


_state = _State()

ENV_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def launched() -> bool:
    """Whether this process was started by a launcher (torchrun, ``quiver run
    --nproc``): the environment describes a process group to join."""
    return all(v in os.environ for v in ENV_VARS)


def backend() -> str:
    """gloo for CPU tensors; where CUDA is available, NCCL for CUDA tensors too."""
    if torch.cuda.is_available() and dist.is_nccl_available():
        return "cpu:gloo,cuda:nccl"
    return "gloo"


def join(timeout_s: float = 300.0) -> None:
    """Join the process group the launcher's environment describes (idempotent)."""
    if not dist.is_initialized():
        dist.init_process_group(backend=backend(), init_method="env://", timeout=datetime.timedelta(seconds=timeout_s))
    refresh()


def leave() -> None:
    """Leave the process group joined by :func:`join` (a normal end of the run),
    once every rank has come to its end: a rank that tears its connections down
    while a peer still reads from them makes that peer's gloo abort."""
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
    refresh()


def refresh() -> _State:
    """Read the default group's rank and size into the runtime's state."""
    if dist.is_available() and dist.is_initialized():
        group = dist.group.WORLD
        _state.group_id = group
        _state.size = dist.get_world_size()
        _state.rank = dist.get_rank()
    else:
        _state.group_id = None
        _state.size = 1
        _state.rank = 0
    return _state


def _current() -> _State:
    """The state, re-read when a group was made or destroyed behind the
    runtime's back (a Python user's init_process_group)."""
    initialized = dist.is_available() and dist.is_initialized()
    if initialized != (_state.group_id is not None) or (initialized and _state.group_id is not dist.group.WORLD):
        refresh()
    return _state


def rank() -> int:
    """``rank()``: this process's rank in the process group, 0 outside one."""
    return _current().rank


def world_size() -> int:
    """``world_size()``: how many processes train together, 1 outside a group."""
    return _current().size


def local_rank() -> int:
    """The rank among the processes of this machine (the launcher's
    ``LOCAL_RANK``), which picks the CUDA device of a worker."""
    try:
        return int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError:
        return 0


def use_local_gpu() -> None:
    """Make the GPU of this worker's ``LOCAL_RANK`` the current CUDA device
    (where ``cuda`` without an index goes); NCCL needs one GPU per worker."""
    count = torch.cuda.device_count()
    workers = int(os.environ.get("LOCAL_WORLD_SIZE", "1") or 1)
    if count < workers:
        raise RuntimeError(
            f"{workers} workers on this machine but {count} CUDA device(s): NCCL needs a GPU for each worker "
            f"(run fewer workers, or --device cpu)"
        )
    torch.cuda.set_device(local_rank())


def average(tensors: list[torch.Tensor], value: torch.Tensor | None = None, *, divide: bool = True):
    """Average ``tensors`` (the floating leaves of a gradient) and ``value``
    (a loss) over the ranks of the group, with ONE all-reduce: everything is
    copied into one flat buffer of the widest floating dtype among them
    (f16/bf16 into f32, f32 into f64 are exact), summed across the ranks,
    divided by the world size and copied back in each tensor's dtype.

    Returns ``(tensors, value)`` new; the inputs are left alone. Outside a
    group of two or more, returns them as they are (no communication).
    ``divide=False``: the sum over the ranks instead of the mean.
    """
    state = _current()
    n = state.size
    if n == 1:
        return tensors, value
    parts = list(tensors) if value is None else [*tensors, value]
    if not parts:
        return tensors, value
    dtype = parts[0].dtype
    for p in parts[1:]:
        dtype = torch.promote_types(dtype, p.dtype)
    flat = torch.cat([p.detach().reshape(-1).to(dtype) for p in parts])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    if divide:
        flat.div_(n)
    out = []
    at = 0
    for p in parts:
        k = p.numel()
        out.append(flat[at : at + k].view(p.shape).to(p.dtype))
        at += k
    if value is None:
        return out, None
    # the value is copied out of the buffer: a loss kept for later must not keep a whole gradient alive
    return out[:-1], out[-1].clone()


def prints_here(all_ranks: bool) -> bool:
    """Whether ``print`` prints in this process: on rank 0, or on every rank
    with ``all_ranks=True``."""
    return all_ranks or _current().rank == 0


def print_prefix() -> str:
    """``[rank 1] `` before a line printed with all_ranks in a group of two or
    more (lines of several processes interleave), else nothing."""
    state = _current()
    return f"[rank {state.rank}] " if state.size > 1 else ""


def is_comm_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure of the process group itself (a peer died,
    a connection closed) rather than of the program: such a worker is
    reported as stopped, the first failure as the cause."""
    if isinstance(exc, getattr(dist, "DistError", ())):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and any(
        s in text for s in ("Connection closed by peer", "Connection reset by peer", "ProcessGroupGloo", "NCCL error")
    )
