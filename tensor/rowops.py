"""softmax, log_softmax and relu as one recorded op (one graph node) each, shared by tensor's
public functions (T.softmax, T.log_softmax, T.relu and their Tensor methods: torch_extra.py)
and nn.functional. Their derivative rules are autograd/rules_rowops.py's.

softmax / log_softmax along the last axis (or of a small tensor along any axis, made rows by a
transposing copy) run the backend's fused row kernel: one pass per row, float32 arithmetic for
16-bit inputs, rounded once. Along another axis of a larger tensor the transposing copy would
cost more than the kernel, so the stable composition max, exp, sum runs there, on the raw
kernels (not recorded: the op is still one node). A slice that is all -inf, or holds +inf or
NaN, gives NaN, as PyTorch's. relu is max(x, 0): NaN stays NaN; integers keep their dtype.

>>> import tensor as T
>>> from tensor import rowops
>>> rowops.softmax(T.tensor([[0.0, 0.0, 0.0, 0.0]]), -1).tolist()
[[0.25, 0.25, 0.25, 0.25]]
"""
from __future__ import annotations

from . import dtypes as dt
from . import elementwise as ew
from . import reductions as red
from ._hook import differentiable
from ._tensor import Tensor
from .axes import norm_axis
from .backend import backend_for

# a tensor of at most this many bytes is made rows (a transposing copy) for the kernel when the
# axis is not the last; above it (out of the caches) the copy costs more than the composition:
# float32 along dim 0, one thread: 256x256 rows 0.20 ms vs composed 0.39; 512x512 1.7 vs 0.92,
# 256x1024 2.0 vs 0.85 (the composition has ~0.1 ms of fixed cost: 8x8 0.02 vs 0.11)
_TRANSPOSE_MAX = 1 << 18


def _floating(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: expected a floating-point tensor, got {x.dtype.name}")


def _moved_last(x: Tensor, a: int) -> Tensor:
    """The view of x with axis a moved last (no copy)."""
    sh, st = x._shape, x._strides
    return x._view(sh[:a] + sh[a + 1:] + sh[a:a + 1], st[:a] + st[a + 1:] + st[a:a + 1])


def _moved_back(y: Tensor, a: int) -> Tensor:
    """The fresh y (axis a moved last) with that axis back at a: a view no caller can write
    through another way, so not marked as one."""
    shape, strides = y._shape, y._strides
    r = y._view(shape[:a] + shape[-1:] + shape[a:-1], strides[:a] + strides[-1:] + strides[a:-1])
    r._base = None
    return r


def _scalar(y: Tensor) -> Tensor:
    """The fresh one-element y as a 0-d tensor."""
    r = y._view((), ())
    r._base = None
    return r


def _by_rows(x: Tensor, a: int) -> bool:
    """Whether softmax along axis a runs the row kernel (else the composition)."""
    return a == x.ndim - 1 or x.numel() * x.dtype.itemsize <= _TRANSPOSE_MAX


def _wide(x: Tensor) -> Tensor:
    """x in float32 when it is a 16-bit float (the composition computes there, as the kernel)."""
    return ew.astype(x, dt.float32, copy=False) if x.dtype.itemsize == 2 else x


def _softmax_run(x: Tensor, axis: int, log: bool, dtype=None) -> Tensor:
    """softmax (log=True: log_softmax) of x along axis, not recorded. dtype: x is cast to it
    first (PyTorch's dtype=; it also tells autocast to leave the op alone)."""
    op = "log_softmax" if log else "softmax"
    if dtype is not None and isinstance(x, Tensor):
        x = ew.astype(x, dt.dtype(dtype), copy=False)
    _floating(x, op)
    a = norm_axis(axis, max(x.ndim, 1), op)
    if x.ndim == 0:   # one element: softmax 1, log_softmax 0 (NaN and inf give NaN)
        return _scalar(_softmax_run(x._view((1,), (0,)), 0, log))
    if not x.numel():
        return ew.empty_tensor(x.shape, x.dtype, x.device)
    if not _by_rows(x, a):
        return _composed(x, a, log)
    last = a == x.ndim - 1
    xc = ew.contiguous(x if last else _moved_last(x, a))
    y = ew.empty_tensor(xc._shape, xc.dtype, xc.device)
    n = xc._shape[-1]
    backend_for(xc.device).softmax_fwd(xc, y, xc.numel() // n, n, log)
    return y if last else _moved_back(y, a)


def _composed(x: Tensor, a: int, log: bool) -> Tensor:
    """The stable composition along a non-last axis a, on the raw kernels (x nonempty)."""
    w = _wide(x)
    z = ew.binary("subtract", w, red.max(w, a, keepdims=True))
    if log:
        s = red.sum(ew.unary("exp", z), a, keepdims=True)
        y = ew.binary("subtract", z, ew.unary("log", s, out=s), out=z)
    else:
        ew.unary("exp", z, out=z)
        y = ew.binary("true_divide", z, red.sum(z, a, keepdims=True), out=z)
    return y if y.dtype is x.dtype else ew.astype(y, x.dtype)


def softmax_backward(y: Tensor, g: Tensor, axis: int, log: bool) -> Tensor:
    """The gradient of softmax (log=True: log_softmax) with output y for the cotangent g, not
    recorded (the backward pass when it is not itself differentiated)."""
    a = norm_axis(axis, max(y.ndim, 1), "softmax")
    g = ew.astype(g, y.dtype, copy=False)
    if y.ndim == 0:
        return _scalar(softmax_backward(y._view((1,), (0,)), g._view((1,), (0,)), 0, log))
    if not y.numel():
        return ew.empty_tensor(y.shape, y.dtype, y.device)
    if not _by_rows(y, a):
        yw, gw = _wide(y), _wide(g)
        if log:
            e = ew.unary("exp", yw)
            gx = ew.binary("subtract", gw, ew.binary("multiply", e, red.sum(gw, a, keepdims=True), out=e))
        else:
            s = red.sum(ew.binary("multiply", gw, yw), a, keepdims=True)
            gx = ew.binary("multiply", yw, ew.binary("subtract", gw, s))
        return gx if gx.dtype is y.dtype else ew.astype(gx, y.dtype)
    last = a == y.ndim - 1
    yc = ew.contiguous(y if last else _moved_last(y, a))
    gc = ew.contiguous(g if last else _moved_last(g, a))
    gx = ew.empty_tensor(yc._shape, yc.dtype, yc.device)
    n = yc._shape[-1]
    backend_for(yc.device).softmax_bwd(yc, gc, gx, yc.numel() // n, n, log)
    return gx if last else _moved_back(gx, a)


def _softmax(x: Tensor, axis: int, dtype=None) -> Tensor:
    return _softmax_run(x, axis, False, dtype)


def _log_softmax(x: Tensor, axis: int, dtype=None) -> Tensor:
    return _softmax_run(x, axis, True, dtype)


def _relu(x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"relu: expected a Tensor, got {type(x).__name__}")
    if x.dtype.kind in "bc":
        raise TypeError(f"relu: not supported for {x.dtype.name}")
    return ew.binary("maximum", x, 0)   # NaN stays NaN; an integer x keeps its dtype


softmax = differentiable("softmax", _softmax)
log_softmax = differentiable("log_softmax", _log_softmax)
relu = differentiable("relu", _relu)

__all__ = ["softmax", "log_softmax", "relu", "softmax_backward"]
