"""Functions of the Python array API standard (2024.12) built from the public ops.

Each one checks its arguments under its own name, then calls only the public (recorded)
functions (`P.`, bound by tensor/public.py), so autograd records every step and the function
needs no derivative rule of its own (public.py's COMPOSITE).

>>> import tensor as T
>>> T.diff(T.tensor([1, 4, 9, 16])).tolist()
[3, 5, 7]
>>> T.cumulative_sum(T.tensor([1, 2, 3]), include_initial=True).tolist()
[0, 1, 3, 6]
>>> [t.shape for t in T.meshgrid(T.arange(3), T.arange(2))]
[(2, 3), (2, 3)]
"""
from __future__ import annotations

import math
import operator

from . import dtypes as dt
from ._tensor import Tensor
from .axes import norm_axis
from .convert import asarray
from .creation import full
from .optable import T as P  # tensor's public (recorded) functions
from .views import broadcast_shapes


def _arr(x, device=None) -> Tensor:
    return x if isinstance(x, Tensor) else asarray(x, device=device)


def _along(axis: int, s) -> tuple:
    return (slice(None),) * axis + (s,)


# ---------------------------------------------------------------- manipulation

def permute_dims(x, /, axes) -> Tensor:
    """x with its axes permuted (a view), as NumPy's transpose(x, axes)."""
    x = _arr(x)
    try:
        axes = tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"permute_dims: axes must be a tuple of ints, got {axes!r}") from None
    if sorted(norm_axis(a, x.ndim, "permute_dims") for a in axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of the axes of a "
                         f"tensor of shape {x.shape}")
    return P.permute(x, axes)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple of views (NumPy 2.1's unstack)."""
    x = _arr(x)
    if x.ndim == 0:
        raise ValueError("unstack: needs a tensor of rank >= 1, got a 0-d tensor")
    return tuple(P.unbind(x, norm_axis(axis, x.ndim, "unstack")))


def broadcast_arrays(*arrays) -> list:
    """The arrays broadcast to one shape (read-only views where a shape changes)."""
    ts = [_arr(a) for a in arrays]
    shape = broadcast_shapes(*(t.shape for t in ts), op="broadcast_arrays")
    return [t if t.shape == shape else P.broadcast_to(t, shape) for t in ts]


def meshgrid(*arrays, indexing: str = "xy", sparse: bool = False, copy: bool = False) -> list:
    """Coordinate grids from 1-d arrays: read-only broadcast views (PyTorch's), or with
    copy=True writable arrays of their own (NumPy's default); sparse=True gives each input
    reshaped to its output axis (length 1 elsewhere) instead of broadcast. indexing="xy" swaps
    the first two output axes (Cartesian), "ij" keeps them (matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    dev = next((a.device for a in arrays if isinstance(a, Tensor)), None)   # array-likes join it
    ts = [_arr(a, dev) for a in arrays]
    for i, t in enumerate(ts):
        if t.ndim != 1:
            raise ValueError(f"meshgrid: every input must be 1-d, but input {i} has shape "
                             f"{t.shape}")
        if t.device != ts[0].device:   # as PyTorch's (and every op here): no mixed-device grids
            raise ValueError(f"meshgrid: all inputs must be on one device, but input 0 is on "
                             f"{ts[0].device} and input {i} on {t.device}")
    n = len(ts)
    where = list(range(n))            # output axis of each input
    if indexing == "xy" and n >= 2:
        where[0], where[1] = 1, 0
    shape = [0] * n
    for t, a in zip(ts, where):
        shape[a] = t.shape[0]
    out = []
    for t, a in zip(ts, where):
        one = [1] * n
        one[a] = t.shape[0]
        g = P.reshape(t, tuple(one))
        g = g if sparse else P.broadcast_to(g, tuple(shape))
        out.append(P.copy(g) if copy else g)
    return out


# ---------------------------------------------------------------- differences and scans

def _edge(v, x: Tensor, a: int, what: str) -> Tensor:
    """diff's prepend/append: a scalar (or 0-d) is broadcast to one slice along axis a."""
    v = _arr(v, x.device)
    if v.ndim == 0:
        return P.broadcast_to(v, x.shape[:a] + (1,) + x.shape[a + 1:])
    if v.ndim != x.ndim or any(v.shape[i] != x.shape[i] for i in range(x.ndim) if i != a):
        raise ValueError(f"diff: {what} of shape {v.shape} must match x's shape {x.shape} "
                         f"except along axis {a}")
    return v


def diff(x, /, n: int = 1, axis: int = -1, prepend=None, append=None, *, dim=None) -> Tensor:
    """The n-th forward difference along axis (x[i+1] - x[i], n times), as NumPy's diff (n and
    axis may be positional, in NumPy's and PyTorch's order; dim is PyTorch's axis); bool
    differences are not_equal (NumPy's)."""
    x = _arr(x)
    if dim is not None:
        if axis != -1:
            raise TypeError("diff: give axis or dim, not both")
        axis = dim
    if x.ndim == 0:
        raise ValueError("diff: needs a tensor of rank >= 1, got a 0-d tensor")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    a = norm_axis(axis, x.ndim, "diff")
    if prepend is not None or append is not None:
        parts = [_edge(prepend, x, a, "prepend")] if prepend is not None else []
        parts.append(x)
        if append is not None:
            parts.append(_edge(append, x, a, "append"))
        x = P.concatenate(parts, a)
    step = P.not_equal if x.dtype is dt.bool_ else P.subtract
    n = min(n, x.shape[a])   # (past the length the result is empty: no 2**62 passes)
    for _ in range(n):
        x = step(P.getitem(x, _along(a, slice(1, None))), P.getitem(x, _along(a, slice(None, -1))))
    return x


def _cumulative(name: str, scan, identity, x, axis, dtype, include_initial: bool) -> Tensor:
    x = _arr(x)
    if x.ndim == 0:   # the standard leaves 0-d open; NumPy scans it as one element
        x = P.reshape(x, (1,))
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{name}: axis may be omitted only for a 1-d tensor, got shape "
                             f"{x.shape}")
        axis = 0
    a = norm_axis(axis, x.ndim, name)
    r = scan(x, a, dtype)   # sum's dtype rule: floats keep theirs, integers and bool -> int64
    if not include_initial:
        return r
    first = full(r.shape[:a] + (1,) + r.shape[a + 1:], identity, dtype=r.dtype, device=r.device)
    return P.concatenate([first, r], a)


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None,
                   include_initial: bool = False) -> Tensor:
    """Inclusive cumulative sum along axis (NumPy 2.1's); include_initial prepends the zero."""
    return _cumulative("cumulative_sum", P.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None,
                    include_initial: bool = False) -> Tensor:
    """Inclusive cumulative product along axis (NumPy 2.1's); include_initial prepends the one."""
    return _cumulative("cumulative_prod", P.cumprod, 1, x, axis, dtype, include_initial)


# ---------------------------------------------------------------- linear algebra

def vecdot(x1, x2, /, *, axis: int = -1) -> Tensor:
    """Dot products of the vectors along axis, the other axes broadcast (real dtypes; NumPy's
    vecdot). The contracted axis must have the same length in both (it is not broadcast)."""
    x1, x2 = _arr(x1), _arr(x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot: operands must have at least one dimension, got shapes "
                         f"{x1.shape} and {x2.shape}")
    a1, a2 = norm_axis(axis, x1.ndim, "vecdot"), norm_axis(axis, x2.ndim, "vecdot")
    if x1.shape[a1] != x2.shape[a2]:
        raise ValueError(f"vecdot: shapes {x1.shape} and {x2.shape}: the vectors along axis "
                         f"{axis} have lengths {x1.shape[a1]} != {x2.shape[a2]}")
    v1, v2 = P.moveaxis(x1, a1, -1), P.moveaxis(x2, a2, -1)
    broadcast_shapes(v1.shape[:-1], v2.shape[:-1], op="vecdot")   # names the op on failure
    res = dt.result_type(x1, x2)
    if res.kind == "c":   # the standard's inner product: conj(x1) . x2
        v1 = P.conj(v1)
    if res.kind == "f" and (v1.ndim == 1 or v2.ndim == 1):
        # one operand is a single vector: a matrix-vector product (one gemm, no temporary)
        r = P.matmul(v1, v2) if v2.ndim == 1 else P.matmul(v2, v1)
    else:
        r = P.sum(P.multiply(v1, v2), axis=-1)
    return r if r.dtype is res else P.astype(r, res)


# ---------------------------------------------------------------- complex parts

def real(x, /) -> Tensor:
    """The real part: a view of a complex tensor (as NumPy's and PyTorch's); for a real tensor,
    a copy of it (the standard's 2024.12 rule)."""
    x = _arr(x)
    return P.view_as_real(x)[..., 0] if x.dtype.kind == "c" else P.copy(x)


def imag(x, /) -> Tensor:
    """The imaginary part: a view of a complex tensor; zeros for a real tensor (as np.imag)."""
    x = _arr(x)
    if x.dtype.kind == "c":
        return P.view_as_real(x)[..., 1]
    return full(x.shape, 0, dtype=x.dtype, device=x.device)


# ---------------------------------------------------------------- NumPy's and PyTorch's

def kron(a, b, /) -> Tensor:
    """The Kronecker product, as NumPy's kron: the blocks a[i, j, ...] * b, the shorter shape
    padded with leading ones.

    >>> import tensor as T
    >>> T.kron(T.tensor([1, 10]), T.tensor([1, 2, 3])).tolist()
    [1, 2, 3, 10, 20, 30]
    """
    a = _arr(a)
    b = _arr(b, device=a.device)
    nd = max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    a2 = P.reshape(a, tuple(v for n in sa for v in (n, 1)))
    b2 = P.reshape(b, tuple(v for n in sb for v in (1, n)))
    return P.reshape(P.multiply(a2, b2), tuple(m * n for m, n in zip(sa, sb)))


def lerp(start, end, weight, /) -> Tensor:
    """start + weight (end - start), as PyTorch's lerp: end - (end - start)(1 - weight) where
    |weight| >= 1/2, so that weight 1 gives end exactly."""
    s = _arr(start)
    e = _arr(end, device=s.device)
    d = P.subtract(e, s)
    if not isinstance(weight, Tensor):   # a Python number: one branch, 1 - weight in Python (a
        if abs(weight) < 0.5:            # tensor 1 - weight would be on the default device)
            return P.add(s, P.multiply(weight, d))
        return P.subtract(e, P.multiply(d, 1 - weight))
    lo = P.add(s, P.multiply(weight, d))
    hi = P.subtract(e, P.multiply(d, P.subtract(1, weight)))
    return P.where(P.less(P.abs(weight), 0.5), lo, hi)


def sinc(x, /) -> Tensor:
    """sin(pi x) / (pi x), and 1 at x == 0, as NumPy's sinc (integers give the default float).

    >>> import tensor as T
    >>> T.sinc(T.tensor([0.0, 0.5, 1.0])).tolist()[:2]
    [1.0, 0.6366197723675814]
    """
    x = _arr(x)
    if x.dtype.kind not in "fc":
        x = P.astype(x, dt.get_default_dtype())
    # near 0, the Taylor series sum_k (-z^2)^k / (2k+1)! in z = pi x (through z^14: exact in
    # float64 for |z| < 1/2): sin(z) / z there loses digits and a constant 1 at 0 had every
    # derivative 0 (sinc''(0) is -pi^2/3, which reverse mode over reverse mode must see); each
    # branch is evaluated at a harmless stand-in where it is not taken (no inf * 0 gradients)
    z = P.multiply(x, math.pi)
    near = P.less(P.abs(z), 0.5)
    zn = P.where(near, z, 0.0)
    z2 = P.multiply(zn, zn)
    series = _SINC_SERIES[-1]
    for c in reversed(_SINC_SERIES[:-1]):
        series = P.add(P.multiply(series, z2), c)
    zf = P.where(near, 1.0, z)
    return P.where(near, series, P.true_divide(P.sin(zf), zf))


_SINC_SERIES = [(-1) ** k / math.factorial(2 * k + 1) for k in range(8)]


FUNCS = {f.__name__: f for f in (permute_dims, unstack, broadcast_arrays, meshgrid, diff,
                                  cumulative_sum, cumulative_prod, vecdot, real, imag, kron, lerp,
                                  sinc)}
