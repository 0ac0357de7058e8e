"""NumPy's ufunc methods on tensor's binary elementwise functions: `T.add.at(a, idx, b)`,
`T.maximum.accumulate(x)`, `T.multiply.outer(a, b)`, `T.add.reduce(x, axis)`,
`T.add.reduceat(x, starts)`.

NumPy code calls them as attributes of the ufunc (np.add.at, np.maximum.accumulate, ...); here the
public functions are plain functions, so `attach` gives each binary one these five attributes. They
are compositions of public ops (device-agnostic): sum/prod/amax/amin/all/any, cumsum/cumprod/
cummax/cummin, index_add_/scatter_reduce and the segment reductions where the op has one, else a
generic form built from the op itself (a pairwise tree for the associative ops, a loop otherwise).

>>> import tensor as T
>>> a = T.zeros(3)
>>> T.add.at(a, T.tensor([0, 0, 2]), 1.0)
>>> a.tolist(), T.maximum.accumulate(T.tensor([1, 3, 2])).tolist()
([2.0, 0.0, 1.0], [1, 3, 3])
"""
from __future__ import annotations

import sys

_ASSOCIATIVE = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and",
                          "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
                          "gcd", "lcm", "hypot", "logaddexp", "logaddexp2"})
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "amax", "minimum": "amin",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}   # (maximum: the values-only scan below
# is several times faster than cummax, which also tracks the indices)
_SCATTER = {"multiply": "prod", "maximum": "amax", "minimum": "amin"}
_SEGMENT = {"add": "segment_sum", "multiply": "segment_prod", "maximum": "segment_max",
            "minimum": "segment_min"}
BINARY = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "float_power",
          "remainder", "mod", "fmod", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
          "hypot", "arctan2", "logaddexp", "logaddexp2", "copysign", "nextafter", "ldexp", "gcd", "lcm",
          "heaviside", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_NO = object()


def _T():
    return sys.modules[__package__]


def _arg(x, like=None):
    T = _T()
    if isinstance(x, T.Tensor):
        return x
    return T.asarray(x, device=like.device) if like is not None else T.asarray(x)


def _axis_first(x, axis, op: str):
    """x with the reduced axes (axis: int, tuple or None = all) merged into a leading one, the
    shape of the kept axes, and the reduced axes (normalised)."""
    T = _T()
    nd = x.ndim
    axes = tuple(range(nd)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    norm = []
    for a in axes:
        if not isinstance(a, int) or isinstance(a, bool) or not -nd <= a < max(nd, 1):
            raise T.AxisError(f"{op}: axis {a!r} is out of bounds for a {nd}-d tensor")
        norm.append(a % max(nd, 1))
    if len(set(norm)) != len(norm):
        raise ValueError(f"{op}: duplicate axis in {axis!r}")
    kept = [d for d in range(nd) if d not in norm]
    xm = T.permute_dims(x, tuple(norm) + tuple(kept)) if nd else T.reshape(x, (1,))
    kshape = tuple(x.shape[d] for d in kept)
    return T.reshape(xm, (-1,) + kshape), kshape, tuple(norm)


def _tree(fn, x):
    """fn folded over x's leading axis by pairwise halving (associative fn): log2(n) calls."""
    while x.shape[0] > 1:
        n = x.shape[0]
        h = n // 2
        y = fn(x[0:2 * h:2], x[1:2 * h:2])
        x = _T().concat([y, x[2 * h:]], axis=0) if n % 2 else y
    return x[0]


def _reduce(name, fn):
    def reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
        T = _T()
        op = f"{name}.reduce"
        if where is not True:
            raise NotImplementedError(f"{op}: where= is not supported")
        x = _cast(_arg(array), dtype, name)
        if name not in _ASSOCIATIVE and (axis is None and x.ndim > 1 or isinstance(axis, tuple)
                                         and len(axis) > 1):
            raise ValueError(f"{op}: {name} is not reorderable, so at most one axis may be given, "
                             f"got axis={axis!r} for a {x.ndim}-d tensor")
        if name in _REDUCE and initial is _NO:
            r = getattr(T, _REDUCE[name])(x, axis=axis, keepdims=keepdims)
        else:
            xm, kshape, axes = _axis_first(x, axis, op)
            if xm.shape[0] == 0:
                if initial is _NO:
                    raise ValueError(f"{op}: zero-size reduction of shape {tuple(x.shape)} has no "
                                     "identity here; give initial=")
                r = T.full(kshape, initial, dtype=x.dtype, device=x.device)
            else:
                if name in _REDUCE:
                    r = getattr(T, _REDUCE[name])(xm, axis=0)
                elif name in _ASSOCIATIVE:
                    r = _tree(fn, xm)
                elif name == "subtract":
                    r = fn(xm[0], T.astype(T.sum(xm[1:], axis=0), xm.dtype))
                elif name in ("divide", "true_divide"):
                    xm = T.astype(xm, T.float64) if xm.dtype.kind in "biu" else xm
                    r = fn(xm[0], T.prod(xm[1:], axis=0))
                else:
                    r = xm[0]
                    for i in range(1, xm.shape[0]):
                        r = fn(r, xm[i])
                if initial is not _NO:
                    r = fn(T.asarray(initial, dtype=r.dtype, device=r.device), r)
            if keepdims:
                full_shape = list(x.shape)
                for a in axes:
                    full_shape[a] = 1
                r = T.reshape(r, tuple(full_shape))
        return _to_out(r, out)
    reduce.__name__ = reduce.__qualname__ = f"{name}.reduce"
    reduce.__doc__ = f"NumPy's {name}.reduce: {name} folded over axis (int, tuple or None)."
    return reduce


def _cast(x, dtype, name: str):
    """x in the dtype the method computes in: dtype when given; bool for the logical ops."""
    T = _T()
    if dtype is not None:
        return T.astype(x, dtype)
    return T.astype(x, T.bool_) if name.startswith("logical_") and x.dtype != T.bool_ else x


def _to_out(r, out):
    if out is None:
        return r
    if isinstance(out, tuple):
        (out,) = out
    out[...] = r
    return out


def _accumulate(name, fn):
    def accumulate(array, axis=0, dtype=None, out=None):
        T = _T()
        x = _cast(_arg(array), dtype, name)
        if x.ndim == 0:
            raise ValueError(f"{name}.accumulate: a 0-d tensor has no axis to accumulate along")
        if name in _ACCUMULATE:
            r = getattr(T, _ACCUMULATE[name])(x, axis=axis)
            r = r.values if hasattr(r, "values") else r
        else:
            xm = T.moveaxis(x, axis, 0)
            n = xm.shape[0]
            if name in _ASSOCIATIVE:   # Hillis-Steele scan: log2(n) steps
                r, k = xm, 1
                while k < n:
                    r = T.concat([r[:k], fn(r[:-k], r[k:])], axis=0)
                    k *= 2
            elif name == "subtract" and n:   # x0, x0 - x1, x0 - x1 - x2, ... (ints wrap as NumPy's)
                c = T.astype(T.cumsum(xm[1:], axis=0), xm.dtype)
                r = T.concat([xm[:1], fn(xm[:1], c)], axis=0)
            elif name in ("divide", "true_divide") and n:
                if xm.dtype.kind in "biu":
                    xm = T.astype(xm, T.float64)
                r = T.concat([xm[:1], fn(xm[:1], T.cumprod(xm[1:], axis=0))], axis=0)
            else:
                rows = [xm[0]] if n else []
                for i in range(1, n):
                    rows.append(fn(rows[-1], xm[i]))
                r = T.stack(rows, axis=0) if n else xm
            r = T.moveaxis(r, 0, axis)
        return _to_out(r, out)
    accumulate.__name__ = accumulate.__qualname__ = f"{name}.accumulate"
    accumulate.__doc__ = f"NumPy's {name}.accumulate: the running {name} along axis."
    return accumulate


def _outer(name, fn):
    def outer(a, b, /, **kwargs):
        T = _T()
        a, b = _arg(a), _arg(b)
        a = _arg(a, b) if not isinstance(a, T.Tensor) else a
        return fn(T.reshape(a, tuple(a.shape) + (1,) * b.ndim), b, **kwargs)
    outer.__name__ = outer.__qualname__ = f"{name}.outer"
    outer.__doc__ = f"NumPy's {name}.outer: {name}(a[..., None, ...], b), shape a.shape + b.shape."
    return outer


def _at(name, fn):
    def at(a, indices, b=None, /):
        """In place, unbuffered: a[indices] = op(a[indices], b), each repeated index applied
        once per occurrence (in index order), as NumPy's ufunc.at."""
        T = _T()
        op = f"{name}.at"
        if not isinstance(a, T.Tensor):
            raise TypeError(f"{op}: the first argument must be a tensor (it is updated in place), "
                            f"got {type(a).__name__}")
        if b is None:
            raise TypeError(f"{op}: {name} takes two operands; give b")
        target = T.reshape(T.arange(a.numel(), device=a.device), a.shape)[indices]
        lin = T.reshape(target, (-1,))
        bt = T.reshape(T.broadcast_to(_arg(b, a), tuple(target.shape)), (-1,))
        flat = T.reshape(a, (-1,)) if a.is_contiguous() else T.reshape(T.asarray(a, copy=True), (-1,))
        if name in ("add", "subtract"):
            v = T.astype(bt if name == "add" else T.negative(bt), a.dtype)
            T.index_add_(flat, 0, lin, v)
        elif name in _SCATTER and a.dtype.kind != "b":
            flat[...] = T.scatter_reduce(flat, 0, lin, T.astype(bt, a.dtype), _SCATTER[name])
        else:
            _at_generic(fn, flat, lin, bt)
        if not a.is_contiguous():
            a[...] = T.reshape(flat, a.shape)
    at.__name__ = at.__qualname__ = f"{name}.at"
    return at


def _at_generic(fn, flat, lin, bt):
    """flat[lin] = fn(flat[lin], bt), repeated positions applied in turn: pass r updates each
    position's r-th occurrence (positions are distinct within a pass)."""
    T = _T()
    n = lin.shape[0]
    if n == 0:
        return
    order = T.argsort(lin)
    ls = lin[order]
    start = T.concat([T.asarray([True], device=lin.device), ls[1:] != ls[:-1]])
    pos = T.arange(n, device=lin.device)
    first = T.cummax(T.where(start, pos, 0), axis=0).values
    rank = T.empty_like(pos)
    rank[order] = pos - first
    for r in range(int(T.amax(rank).item()) + 1):
        sel = rank == r
        idx = lin[sel]
        flat[idx] = fn(flat[idx], bt[sel])


def _reduceat(name, fn):
    def reduceat(array, indices, axis=0, dtype=None, out=None):
        T = _T()
        op = f"{name}.reduceat"
        x = _cast(_arg(array), dtype, name)
        idx = T.astype(_arg(indices, x), T.int64)
        if idx.ndim != 1:
            raise ValueError(f"{op}: indices must be 1-d, got shape {tuple(idx.shape)}")
        xm = T.moveaxis(x, axis, 0)
        n = xm.shape[0]
        k = idx.shape[0]
        if k and (bool(T.any(idx < 0)) or bool(T.any(idx >= n))):
            raise IndexError(f"{op}: indices must lie in [0, {n}) along axis {axis}")
        nxt = T.concat([idx[1:], T.asarray([n], device=x.device)])
        end = T.where(nxt > idx, nxt, idx + 1)   # a non-increasing pair: just x[idx[i]]
        lens = end - idx
        seg = T.repeat(T.arange(k, device=x.device), lens)
        starts = T.cumsum(lens, axis=0) - lens
        elem = T.arange(seg.shape[0], device=x.device) - starts[seg] + idx[seg]
        g = xm[elem]
        if name in _SEGMENT:
            r = getattr(T, _SEGMENT[name])(g, seg, k)
            if name == "add" and r.dtype != g.dtype:
                r = T.astype(r, g.dtype)
        else:
            rows = []
            for i in range(k):
                s, e = int(idx[i].item()), int(end[i].item())
                rows.append(_reduce(name, fn)(xm[s:e], axis=0))
            r = T.stack(rows, axis=0) if rows else g[:0]
        return _to_out(T.moveaxis(r, 0, axis), out)
    reduceat.__name__ = reduceat.__qualname__ = f"{name}.reduceat"
    reduceat.__doc__ = f"NumPy's {name}.reduceat: {name}.reduce of each slice indices[i]:indices[i+1]."
    return reduceat


def attach(namespace: dict) -> None:
    """Give each binary elementwise function in namespace NumPy's ufunc methods."""
    for name in BINARY:
        fn = namespace.get(name)
        if fn is None or hasattr(fn, "reduce"):
            continue
        fn.reduce = _reduce(name, fn)
        fn.accumulate = _accumulate(name, fn)
        fn.outer = _outer(name, fn)
        fn.at = _at(name, fn)
        fn.reduceat = _reduceat(name, fn)
