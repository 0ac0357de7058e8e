"""Reductions and scans: sum, prod, mean, var, std, max, min, argmax, argmin, any, all,
logsumexp, cumsum, cumprod. NumPy's `axis` (None, int, tuple, negative) and `keepdims`;
PyTorch's `dim` is accepted as an alias. Results are bitwise identical on every call.

>>> import tensor as T
>>> x = T.arange(6.0).reshape(2, 3)
>>> x.sum(axis=0).tolist(), x.mean(), x.argmax(axis=1).tolist()
([3.0, 5.0, 7.0], tensor(2.5, dtype=float64, device=cpu), [2, 2])
"""
from __future__ import annotations

import builtins
import functools
import math

from . import dtypes as dt
from . import elementwise as ew
from . import views
from ._tensor import Tensor, contiguous_strides
from .axes import norm_axes, norm_axis
from .backend import backend_for
from .redtable import RED
from .views import coalesce


def axis_arg(axis, dim, op: str = "reduction"):
    """NumPy's axis, or PyTorch's dim for it (not both: TypeError naming op)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{op}: give axis or dim, not both")
        return dim
    return axis


def _axes(axis, dim, nd: int, op: str) -> tuple:
    """norm_axes of NumPy's axis (or PyTorch's dim): None and one int in range without its
    calls (they run on every reduction)."""
    if dim is not None:
        axis = axis_arg(axis, dim)
    if axis is None:
        return _ALL[nd] if nd < len(_ALL) else tuple(range(nd))
    if type(axis) is int and -nd <= axis < nd:
        return (axis + nd if axis < 0 else axis,)
    return norm_axes(axis, nd, op)


_ALL = tuple(tuple(range(n)) for n in range(33))


def _run(name: str, x: Tensor, axes: tuple, out_dtype: dt.DType) -> Tensor:
    """Reduce x over `axes` with kernel `name` into a new tensor of the kept shape."""
    if x._dtype.kind == "c":
        return _complex_run(name, x, axes)
    # (the dtypes' suffixes name them: a DType's hash is a Python call, ~0.2 us each)
    key = (name, x._shape, x._strides, x._dtype.sfx, axes, out_dtype.sfx)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _plan(name, x, axes, out_dtype)
        if len(_PLANS) > 4096:
            _PLANS.clear()
        _PLANS[key] = plan
    shape, ks, kin, kout, rs, rin = plan
    dev = x._storage.device
    out = ew.empty_tensor(shape, out_dtype, dev)
    (dev._be or backend_for(dev)).reduce(x._dtype, f"{name}_{x._dtype.sfx}", x, out, ks, kin, kout,
                                         rs, rin)
    return out


_PLANS: dict = {}   # (name, shape, strides, dtype, axes, out dtype) -> _plan(...)


def _plan(name: str, x: Tensor, axes: tuple, out_dtype: dt.DType) -> tuple:
    """(out shape, kept dims and their byte strides in x and out, reduced dims and their byte
    strides in x) of reducing x over axes into a fresh contiguous tensor."""
    kept = [i for i in range(x.ndim) if i not in axes]
    shape = tuple(x._shape[i] for i in kept)
    isz, osz = x.itemsize, out_dtype.itemsize
    kin = [x._strides[i] * isz for i in kept]
    kout = [s * osz for s in contiguous_strides(shape)]
    ks, (kin, kout) = coalesce([x._shape[i] for i in kept], [kin, kout])
    red = list(axes)
    if RED[name].order_free:  # visit memory in order: largest stride outermost
        red.sort(key=lambda i: -abs(x._strides[i]))
    rs, (rin,) = coalesce([x._shape[i] for i in red], [[x._strides[i] * isz for i in red]])
    if not rs:
        rs, rin = [1], [0]
    if 0 in (x._shape[i] for i in red):
        rs, rin = [0], [0]
    return shape, ks, kin, kout, rs, rin


def _complex_run(name: str, x: Tensor, axes: tuple) -> Tensor:
    """The reductions of a complex tensor, composed of the real kernels and elementwise complex
    arithmetic (no complex reduction kernels): sum adds the parts (a reduction of the real
    view, whose last axis holds them), any / all test x != 0, prod multiplies halves pairwise
    (log2(n) elementwise launches). Orderings (max, argmax...) are not defined on complex."""
    if name == "sum":
        return views.view_as_complex(_run("sum", views.view_as_real(x), axes, dt.real_of(x._dtype)))
    if name in ("any", "all"):
        return _run(name, ew.binary("not_equal", x, 0), axes, dt.bool_)
    if name != "prod":
        raise TypeError(f"{name}: not defined for complex tensors ({x._dtype.name}, shape {x.shape}): "
                        "complex numbers have no order")
    kept = [i for i in range(x.ndim) if i not in axes]
    n = _count(x, axes)
    if n == 0:   # the empty product
        from .creation import ones
        return ones(tuple(x._shape[i] for i in kept), dtype=x._dtype, device=x.device)
    y = views.reshape(views.permute(x, kept + list(axes)), tuple(x._shape[i] for i in kept) + (n,))

    def last(s: slice) -> Tensor:
        return views.basic_index(y, (Ellipsis, s))
    while n > 1:   # halves multiplied pairwise; an odd one out joins the first product
        h = n // 2
        p = ew.binary("multiply", last(slice(None, h)), last(slice(h, 2 * h)))
        if n % 2:
            first = views.basic_index(p, (Ellipsis, slice(None, 1)))
            ew.binary("multiply", first, last(slice(n - 1, None)), out=first)
        y, n = p, h
    return last(0)


def _keep(out: Tensor, x: Tensor, axes: tuple, keepdims: bool) -> Tensor:
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else n for i, n in enumerate(x._shape))
    # out is a result made here (not recorded apart: the reduction's own node covers it)
    return views.reshape(out, shape)


def _sum_like(name, x, axis=None, dtype=None, keepdims=False, dim=None):
    if not isinstance(x, Tensor):
        x = ew.as_tensor(x)
    axes = _axes(axis, dim, len(x._shape), name)
    if dtype is not None:
        x = ew.astype(x, dtype, False)
    out = _run(name, x, axes, RED[name].out_dtype(x._dtype))
    if dtype is not None and out._dtype is not dt.dtype(dtype):
        out = ew.astype(out, dtype)
    return _keep(out, x, axes, keepdims) if keepdims else out


def sum(x, axis=None, dtype=None, keepdims: bool = False, *, dim=None) -> Tensor:  # noqa: A001
    """Sum over axes; bool and signed inputs sum in int64, unsigned ones in uint64 (as NumPy)."""
    return _sum_like("sum", x, axis, dtype, keepdims, dim)


def prod(x, axis=None, dtype=None, keepdims: bool = False, *, dim=None) -> Tensor:
    return _sum_like("prod", x, axis, dtype, keepdims, dim)


def _count(x: Tensor, axes) -> int:
    return math.prod(x._shape[i] for i in axes)


def _divide_fresh(s: Tensor, n) -> Tensor:
    """ew.binary("true_divide", s, n) for a fresh contiguous tensor s that only the caller holds
    (a reduction's result) and a Python int or float n: for a float or complex s, the same
    kernel written into s itself (it reads each element where it writes it)."""
    d = s._dtype
    if d.kind not in "fc" or not s.is_contiguous() or type(n) not in (int, float) or s._base is not None:
        return ew.binary("true_divide", s, n)
    dev = s._storage.device
    k = 1
    for m in s._shape:
        k *= m
    (dev._be or backend_for(dev)).contiguous_op(d, f"true_divide_{d.sfx}", s, k, s, ew._scalar_operand(n, d))
    return s


def mean(x, axis=None, dtype=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """Arithmetic mean; integer inputs give float64, 16-bit floats accumulate in float32."""
    if not isinstance(x, Tensor):
        x = ew.as_tensor(x)
    axes = _axes(axis, dim, len(x._shape), "mean")
    xd = x._dtype
    od = dt.dtype(dtype) if dtype is not None else (xd if xd.kind in "fc" else dt.float64)
    n = _count(x, axes)
    if od.kind in "iub":    # NumPy's: the sum in od (wrapping), the quotient cast to od
        s = _int_sum(x, axes, od)
        r = ew.astype(ew.binary("true_divide", s, n if n else float("nan")), od)
        return _keep(r, x, axes, keepdims)
    acc = dt.float32 if od is dt.float16 or od is dt.bfloat16 else od
    s = _run("sum", ew.astype(x, acc, False), axes, acc)
    r = _divide_fresh(s, n if n else float("nan"))
    if r._dtype is not od:
        r = ew.astype(r, od)
    return _keep(r, x, axes, keepdims) if keepdims else r


def var(x, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False, *, correction=None,
        dim=None) -> Tensor:
    """Variance with `ddof` (NumPy) or `correction` (PyTorch) degrees of freedom removed; a
    complex x gives the real mean of |x - mean|^2 (NumPy's and PyTorch's)."""
    return _var(x, axis, dtype, ddof, keepdims, correction, dim, root=False)


def _var(x, axis, dtype, ddof, keepdims, correction, dim, root: bool) -> Tensor:
    """var, or its square root (std) taken before the one rounding to a 16-bit dtype: the
    float32 variance rounded to float16 and then square-rooted rounded twice (1 ulp off)."""
    x = ew.as_tensor(x)
    if correction is not None:
        ddof = correction
    axes = norm_axes(axis_arg(axis, dim), x.ndim, "var")
    od = dt.dtype(dtype) if dtype is not None else (x.dtype if x.dtype.kind in "fc" else dt.float64)
    if od.kind in "iub":   # (std refuses an integer dtype before this)
        return _keep(_int_var(x, axes, ddof, od).astype(od), x, axes, keepdims)
    acc = dt.float32 if od in (dt.float16, dt.bfloat16) else od
    xa = x.astype(acc, copy=False)
    m = _keep(_run("sum", xa, axes, acc), x, axes, True)
    n = _count(x, axes)
    m = ew.binary("true_divide", m, n if n else float("nan"))
    dev = ew.binary("subtract", xa, m)
    if acc.kind == "c":     # |d|^2 as re^2 + im^2 (squaring abs(d) rounded twice)
        parts = ew.unary("square", views.view_as_real(dev))
        ss = _run("sum", parts, axes + (parts.ndim - 1,), dt.real_of(acc))
        od = dt.real_of(od)
    else:
        ss = _run("sum", ew.unary("square", dev), axes, acc)
    denom = n - ddof
    # n <= ddof divides by zero: inf (nan where ss is 0), as NumPy and PyTorch
    r = ew.binary("true_divide", ss, float(denom if denom > 0 else 0))
    if root:
        r = ew.unary("sqrt", r)
    if r.dtype is not od:
        r = r.astype(od)
    return _keep(r, x, axes, keepdims)


def _int_sum(x: Tensor, axes: tuple, od: dt.DType) -> Tensor:
    """The sum of x cast to the integer dtype od, as NumPy's sum with dtype=od accumulates it:
    wrapping in od (the int64 / uint64 sum cast to od). A bool od is int64's."""
    x = x.astype(od, copy=False)
    s = _run("sum", x, axes, RED["sum"].out_dtype(x.dtype))
    return s if od.kind == "b" else s.astype(od, copy=False)


def _int_var(x: Tensor, axes: tuple, ddof, od: dt.DType) -> Tensor:
    """NumPy's var with an integer dtype od: the mean (sum in od) truncated to od, x's
    deviations from it in their promoted dtype, squared, cast to od and summed in od; the
    quotient (float64) is the caller's to cast."""
    n = _count(x, axes)
    s = _int_sum(x, axes, od)
    m = _keep(ew.binary("true_divide", s, n if n else float("nan")).astype(s.dtype), x, axes,
              True)
    dev = ew.binary("subtract", x, m)
    ss = _int_sum(ew.binary("multiply", dev, dev), axes, od)
    denom = n - ddof
    return ew.binary("true_divide", ss, float(denom if denom > 0 else 0))


def std(x, axis=None, dtype=None, ddof: int = 0, keepdims: bool = False, *, correction=None,
        dim=None) -> Tensor:
    x = ew.as_tensor(x)
    norm_axes(axis_arg(axis, dim), x.ndim, "std")  # so a bad axis is reported for std, not var
    if dtype is not None and dt.dtype(dtype).kind in "iub":
        raise TypeError(f"std: dtype must be a floating or complex type (the square root is not "
                        f"an integer), got {dt.dtype(dtype).name}")
    return _var(x, axis, dtype, ddof, keepdims, correction, dim, root=True)


def _minmax(name, x, axis, keepdims, dim):
    if not isinstance(x, Tensor):
        x = ew.as_tensor(x)
    axes = _axes(axis, dim, len(x._shape), name)
    if 0 in x._shape and builtins.any(x._shape[i] == 0 for i in axes):
        raise ValueError(f"{name}: zero-size reduction over axes {axes} of shape {x.shape} has no "
                         "identity")
    out = _run(name, x, axes, RED[name].out_dtype(x._dtype))
    return _keep(out, x, axes, keepdims) if keepdims else out


def max(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:  # noqa: A001
    """Largest element (NaN propagates, as NumPy's max)."""
    return _minmax("max", x, axis, keepdims, dim)


def min(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:  # noqa: A001
    return _minmax("min", x, axis, keepdims, dim)


amax, amin = max, min


def _arg(name, x, axis, keepdims, dim):
    x = ew.as_tensor(x)
    axis = axis_arg(axis, dim)
    if axis is None:
        if x.numel() == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence (shape {x.shape})")
        flat = x.reshape(-1)
        out = _run(name, flat, (0,), RED[name].out_dtype(x.dtype))
        return out.reshape((1,) * x.ndim) if keepdims else out
    a = norm_axis(axis, x.ndim, name)
    if x._shape[a] == 0:  # an empty result (another axis is empty) is fine: NumPy's rule
        raise ValueError(f"{name}: attempt to get {name} of an empty axis {a} (shape {x.shape})")
    return _keep(_run(name, x, (a,), RED[name].out_dtype(x.dtype)), x, (a,), keepdims)


def argmax(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """Index of the first largest element (flat index when axis is None; NaN counts as largest)."""
    return _arg("argmax", x, axis, keepdims, dim)


def argmin(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    return _arg("argmin", x, axis, keepdims, dim)


def _logical(name, x, axis, keepdims, dim):
    x = ew.as_tensor(x)
    axes = norm_axes(axis_arg(axis, dim), x.ndim, name)
    return _keep(_run(name, x, axes, RED[name].out_dtype(x.dtype)), x, axes, keepdims)


def any(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:  # noqa: A001
    return _logical("any", x, axis, keepdims, dim)


def all(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:  # noqa: A001
    return _logical("all", x, axis, keepdims, dim)


def logsumexp(x, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """log(sum(exp(x))) computed stably (the max is subtracted first)."""
    x = ew.as_tensor(x)
    if x.dtype.kind not in "fc":
        x = x.astype(dt.float_of(x.dtype))
    axes = norm_axes(axis_arg(axis, dim), x.ndim, "logsumexp")
    if builtins.any(x._shape[i] == 0 for i in axes):  # empty sum: log(0) = -inf, as PyTorch/SciPy
        from .creation import zeros
        m = zeros(tuple(1 if i in axes else n for i, n in enumerate(x._shape)), dtype=x.dtype,
                  device=x.device)
    else:   # (complex: the largest real part is subtracted, as PyTorch's)
        re = x if x.dtype.kind != "c" else ew.contiguous(views.complex_part(x, 0))
        m = _keep(_minmax("max", re, axes, False, None), re, axes, True)
        m = ew.where(ew.unary("isfinite", m), m, 0.0)
    s = _run("sum", ew.unary("exp", ew.binary("subtract", x, m)), axes, x.dtype)
    r = ew.binary("add", ew.unary("log", s), m.reshape(s.shape))
    return _keep(r, x, axes, keepdims)


def _scan(name, x, axis, dtype, dim):
    x = ew.as_tensor(x)
    axis = axis_arg(axis, dim)
    if dtype is not None:
        x = x.astype(dtype, copy=False)
    if axis is None:
        x, a = x.reshape(-1), 0
    else:
        a = norm_axis(axis, x.ndim, name)
    if x._dtype.kind == "c":
        return _complex_scan(name, x, a)
    out = ew.empty_tensor(x.shape, RED[name].out_dtype(x.dtype), x.device)
    rest = [i for i in range(x.ndim) if i != a]   # the other axes: size-1 ones dropped and
    sh, (si, so) = coalesce([x._shape[i] for i in rest],   # contiguous ones merged (a CUDA
                            [[x._strides[i] * x.itemsize for i in rest],   # scan takes 16 dims)
                             [out._strides[i] * out.itemsize for i in rest]])
    sh, si, so = sh + [x._shape[a]], si + [x._strides[a] * x.itemsize], so + [out._strides[a] * out.itemsize]
    backend_for(x.device).scan(x.dtype, f"{name}_{x.dtype.sfx}", x, out, sh, si, so)
    if dtype is not None and out.dtype is not dt.dtype(dtype):
        out = out.astype(dtype)
    return out


def _complex_scan(name: str, x: Tensor, a: int) -> Tensor:
    """cumsum of a complex tensor: the real view's (parts separately); cumprod: log2(n) rounds
    of elementwise products, each element taking its partial product from 2**k places back."""
    if name == "cumsum":
        return views.view_as_complex(_scan("cumsum", views.view_as_real(x), a, None, None))
    y = ew.copy(x)
    n, d = x._shape[a], 1
    while d < n:
        lo = (slice(None),) * a + (slice(d, None),)
        hi = (slice(None),) * a + (slice(None, n - d),)
        p = ew.binary("multiply", views.basic_index(y, lo), views.basic_index(y, hi))
        ew.copy_into(views.basic_index(y, lo), p)
        d *= 2
    return y


def cumsum(x, axis=None, dtype=None, *, dim=None) -> Tensor:
    """Inclusive cumulative sum (flattened when axis is None, as NumPy)."""
    return _scan("cumsum", x, axis, dtype, dim)


def cumprod(x, axis=None, dtype=None, *, dim=None) -> Tensor:
    return _scan("cumprod", x, axis, dtype, dim)


# NumPy's ufunc reductions / scans (add.reduce, multiply.accumulate...) compute in out's dtype
# when dtype is not given: a float16 x summed into a float32 out is the float32 sum, not the
# float16 sum widened (5000 x 1.1: 5498.047, not 5500), as PyTorch's out= too
_IN_OUT_DTYPE = {"sum", "prod", "cumsum", "cumprod"}


def _with_out(fn):
    """Accept NumPy's `out=` (np.sum(t) calls t.sum(axis=None, dtype=None, out=None))."""
    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        if (out is not None and fn.__name__ in _IN_OUT_DTYPE and isinstance(out, Tensor)
                and out.dtype.kind in "fc"
                and len(args) < 3 and kwargs.get("dtype") is None
                and (out.dtype.kind == "c" or getattr(getattr(args[0] if args else None, "dtype", None),
                                                      "kind", "f") != "c")):
            kwargs["dtype"] = out.dtype   # (a complex x into a real out stays refused below)
        r = fn(*args, **kwargs)
        if out is None:
            return r
        ew._prepare_out(fn.__name__, out, r.shape, r.dtype)
        ew.copy_into(out, r)
        return out
    return f


FUNCS = {name: _with_out(f) for name, f in {
    "sum": sum, "prod": prod, "mean": mean, "var": var, "std": std, "max": max, "min": min,
    "amax": amax, "amin": amin, "argmax": argmax, "argmin": argmin, "any": any, "all": all,
    "logsumexp": logsumexp, "cumsum": cumsum, "cumprod": cumprod}.items()}
