"""NumPy's protocols on Tensor: __array_ufunc__ and __format__.

`ndarray op tensor` and `np.exp(tensor)` call our function of the ufunc's name (a Tensor, on
the tensor's device, recorded by autograd), as CuPy's arrays do. A ufunc that writes into a
NumPy array (`ndarray += tensor`, `np.add(t, 1, out=arr)`), or one we have no function for, or
a call with NumPy-only arguments (dtype=, where=, casting=...) runs in NumPy on host copies, so
NumPy's own semantics hold there (an in-place write reaches the array; same_kind casting).

>>> import numpy as np, tensor as T
>>> a = np.zeros(2); a += T.ones(2); a.tolist()
[1.0, 1.0]
>>> type(np.exp(T.zeros(2))).__name__
'Tensor'
"""
from __future__ import annotations

import numpy as np

from ._tensor import Tensor
from .aliasing import check_writable
from .convert import asarray
from .public import PUB

_NAMES = {"divide": "true_divide", "absolute": "abs"}   # NumPy's ufunc names that differ


def _host(x):
    return x.numpy() if isinstance(x, Tensor) else x


def array_ufunc(self, ufunc, method, *inputs, out=None, **kwargs):
    fn = PUB.get(_NAMES.get(ufunc.__name__, ufunc.__name__))
    outs = out if isinstance(out, tuple) else (() if out is None else (out,))
    if method != "__call__" or fn is None or kwargs or outs:
        if any(isinstance(o, Tensor) for o in outs):
            return NotImplemented   # NumPy then raises: it cannot write into our memory
        if method == "at" and inputs and isinstance(inputs[0], Tensor):
            _check_at_target(ufunc, inputs[0])
        return getattr(ufunc, method)(*(_host(x) for x in inputs), **kwargs,
                                      **({"out": out} if out is not None else {}))
    device = next(x.device for x in inputs if isinstance(x, Tensor))
    # NumPy's arrays and scalars join the tensor's device (np.float64(2) * t on a GPU)
    return fn(*(asarray(x, device=device) if isinstance(x, np.ndarray | np.generic) else x
                for x in inputs))


def _check_at_target(ufunc, t: Tensor) -> None:
    """np.<ufunc>.at(t, ...) writes in place into the host view of t: refuse a read-only tensor
    (NumPy's ufunc.at does not check the flag itself) and a tensor that host memory cannot
    view (the write would reach a temporary copy and be lost silently)."""
    op = f"{ufunc.__name__}.at"
    check_writable(t, op, "output array")
    if t.numel() and t.numpy().__array_interface__["data"][0] != t.data_ptr():
        raise TypeError(f"{op}: cannot write into a tensor on {t.device} through NumPy (it would "
                        "write into a host copy); use the tensor's index_add_ / index_put_("
                        "accumulate=True) or scatter_reduce_")


def format_spec(self, spec: str) -> str:
    """format(t, spec): a 0-d tensor formats as its value (f"{loss:.3f}"), as NumPy's 0-d
    arrays and PyTorch's tensors; an empty spec gives str(t)."""
    if not spec:
        return str(self)
    if self.ndim == 0:
        return format(self.item(), spec)
    raise TypeError(f"unsupported format string {spec!r} for a tensor of shape {self.shape}: "
                    "only 0-d tensors take a format spec")
