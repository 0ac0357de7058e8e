"""NumPy's window functions, log- and geometric ranges, multi-dimensional histograms, 1-d
convolution and correlation, identity, fromfunction and the inspection helpers (shape, size,
ndim, iscomplexobj, isrealobj, isscalar, may_share_memory), and the registries that
tensor/array_extra.py shares (it publishes this module's functions with its own).

Compositions of the public (recorded) ops: convolve and correlate are differentiable with
respect to both inputs, histogram2d and histogramdd with respect to the weights. Bin counts and
edges are sized on the host (a synchronisation on a GPU, as in NumPy and PyTorch). The windows
are float64, as NumPy's; kaiser's modified Bessel function I0 is a power series of public ops.

>>> import tensor as T
>>> T.convolve(T.tensor([1, 2, 3]), T.tensor([0, 1, 0.5])).tolist()
[0.0, 1.0, 2.5, 4.0, 1.5]
>>> T.logspace(0, 2, 3).tolist()
[1.0, 10.0, 100.0]
>>> T.hanning(3).tolist()
[0.0, 1.0, 0.0]
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator

from . import dtypes as dt
from ._tensor import Tensor
from .aliasing import may_overlap
from .axes import norm_axes, norm_axis
from .creation import arange, eye, full, ones, zeros
from .device import device as parse_device
from .numpy_extra2 import as_int, cast, is_scalar, publisher
from .optable import T as P  # tensor's public (recorded) functions
from .sorting import tensor_arg
from .views import broadcast_shapes

COMPOSITES: dict = {}   # name -> function, published by tensor/public.py as T.name
NOT_METHODS: set = set()   # names that are functions only (no Tensor method), as NumPy / PyTorch


pub = publisher(COMPOSITES, NOT_METHODS)


def arg(x, op: str, device=None) -> Tensor:
    """x as a tensor (array-likes made on device); a TypeError naming op when it is none."""
    t = tensor_arg(x, op, device)
    if device is not None and t.device != device and not isinstance(x, Tensor):
        t = P.to_device(t, device)   # asarray may build on the default device; a tensor given
    return t                         # on another device stays there (the op's check refuses it)


def dev_of(*xs, device=None):
    """The device given, else the first tensor's, else None (the default device)."""
    if device is not None:
        return parse_device(device)
    return next((x.device for x in xs if isinstance(x, Tensor)), None)


# ---------------------------------------------------------------- windows

def _window_len(M, op: str) -> int:
    return as_int(M, "M", op)


def _sym_n(M: int, device) -> Tensor:
    """NumPy's n = arange(1 - M, M, 2) for the cosine windows, float64."""
    return arange(1 - M, M, 2, dtype=dt.float64, device=device)


def _short(M: int, device) -> Tensor | None:
    """The windows of length 0 and 1 (NumPy's special cases), else None."""
    if M < 1:
        return zeros(0, dtype=dt.float64, device=device)
    if M == 1:
        return ones(1, dtype=dt.float64, device=device)
    return None


@pub()
def bartlett(M, *, device=None) -> Tensor:
    """NumPy's Bartlett (triangular) window of M points, float64 (device: our addition).

    >>> import tensor as T
    >>> T.bartlett(5).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    M, device = _window_len(M, "bartlett"), dev_of(device=device)
    if (w := _short(M, device)) is not None:
        return w
    n = _sym_n(M, device)
    return P.where(P.less_equal(n, 0), 1 + n / (M - 1), 1 - n / (M - 1))


def _cosine_window(op: str, M, coeffs, device) -> Tensor:
    M, device = _window_len(M, op), dev_of(device=device)
    if (w := _short(M, device)) is not None:
        return w
    n = _sym_n(M, device)
    out = P.add(coeffs[0], coeffs[1] * P.cos(math.pi * n / (M - 1)))
    if len(coeffs) > 2:
        out = out + coeffs[2] * P.cos(2.0 * math.pi * n / (M - 1))
    return out


@pub()
def blackman(M, *, device=None) -> Tensor:
    """NumPy's Blackman window of M points, float64 (device: our addition)."""
    return _cosine_window("blackman", M, (0.42, 0.5, 0.08), device)


@pub()
def hamming(M, *, device=None) -> Tensor:
    """NumPy's Hamming window of M points, float64 (device: our addition)."""
    return _cosine_window("hamming", M, (0.54, 0.46), device)


@pub()
def hanning(M, *, device=None) -> Tensor:
    """NumPy's Hann window of M points, float64 (device: our addition)."""
    return _cosine_window("hanning", M, (0.5, 0.5), device)


@pub()
def kaiser(M, beta, *, device=None) -> Tensor:
    """NumPy's Kaiser window of M points with shape parameter beta, float64 (device: our
    addition): I0(beta sqrt(1 - ((n - alpha) / alpha)^2)) / I0(beta), alpha = (M - 1) / 2.

    >>> import tensor as T
    >>> [round(v, 6) for v in T.kaiser(3, 0.0).tolist()]
    [1.0, 1.0, 1.0]
    """
    op = "kaiser"
    M, device = _window_len(M, op), dev_of(device=device)
    if not is_scalar(beta) or isinstance(beta, complex):
        raise TypeError(f"{op}: beta must be a real number, got {type(beta).__name__}")
    beta = float(beta)
    if not math.isfinite(beta):
        raise ValueError(f"{op}: beta must be finite, got {beta}")
    if (w := _short(M, device)) is not None:
        return w
    n = arange(0, M, dtype=dt.float64, device=device)
    alpha = (M - 1) / 2.0
    x = beta * P.sqrt(1 - P.square((n - alpha) / alpha))
    return P.i0(x) / P.i0(full((), beta, dtype=dt.float64, device=device))


# ---------------------------------------------------------------- log and geometric ranges

def _spaced(start: Tensor, stop: Tensor, num: int, endpoint: bool, axis: int) -> Tensor:
    """NumPy's linspace of broadcast tensors start and stop (of one float dtype): arange(num) *
    step + start along a new axis 0 (its last value set to stop), moved to axis."""
    delta = P.subtract(stop, start)
    div = (num - 1) if endpoint else num
    idx = arange(num, dtype=delta.dtype, device=delta.device)
    idx = P.reshape(idx, (num,) + (1,) * delta.ndim)
    if div > 0:
        y = P.add(P.multiply(idx, P.divide(delta, div)), start)
    else:
        y = P.add(P.multiply(idx, delta), start)
    if endpoint and num > 1:
        y = P.concatenate([y[:-1], P.expand_dims(P.broadcast_to(stop, y.shape[1:]), 0)], 0)
    return P.moveaxis(y, 0, norm_axis(axis, y.ndim, "linspace")) if axis else y


def _range_args(op: str, num, endpoint, axis, device, *xs) -> tuple:
    num = as_int(num, "num", op)
    if num < 0:
        raise ValueError(f"{op}: num must be non-negative, got {num}")
    if not isinstance(endpoint, bool):
        raise TypeError(f"{op}: endpoint must be a bool, got {type(endpoint).__name__}")
    as_int(axis, "axis", op)
    device = dev_of(*xs, device=device)
    ts = [arg(x, op, device) for x in xs]
    if len({t.device for t in ts}) > 1:
        raise ValueError(f"{op}: tensors on different devices: {[str(t.device) for t in ts]}")
    return num, ts


@pub()
def logspace(start, stop=None, num=50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0,
             *, device=None, end=None, steps=None) -> Tensor:
    """base ** linspace(start, stop, num), as NumPy's logspace (its positional order: num, then
    endpoint, then base; PyTorch's keywords end= and steps= are accepted). start, stop and base
    broadcast; the result is float64 for Python numbers (NumPy's dtype rule), then cast to
    dtype when given.

    >>> import tensor as T
    >>> T.logspace(0, 3, 4, base=2).tolist()
    [1.0, 2.0, 4.0, 8.0]
    """
    op = "logspace"
    if end is not None:
        if stop is not None:
            raise TypeError(f"{op}: give stop or end, not both")
        stop = end
    if steps is not None:
        num = steps
    if stop is None:
        raise TypeError(f"{op}: missing the stop argument")
    weak = is_scalar(base) and not isinstance(base, Tensor)   # a Python number keeps y's dtype
    num, ts = _range_args(op, num, endpoint, axis, device, start, stop, *(() if weak else (base,)))
    s0, s1 = ts[:2]
    # NumPy's linspace dtype: Python numbers are weak (a float32 start and stop=3: float32)
    fd = dt.result_type(*(x if isinstance(x, Tensor) or is_scalar(x) else t
                          for x, t in zip((start, stop), ts)))
    fd = fd if fd.kind in "fc" else dt.float64
    b = base if weak or ts[2].ndim == 0 else ts[2]
    shape = broadcast_shapes(s0.shape, s1.shape, () if weak else b.shape, op=op)
    y = _spaced(P.broadcast_to(cast(s0, fd), shape), P.broadcast_to(cast(s1, fd), shape), num,
                endpoint, axis)
    if not weak and b.ndim:
        b = P.expand_dims(P.broadcast_to(b, shape), norm_axis(axis, y.ndim, op))
    r = P.power(b, y)
    return r if dtype is None else cast(r, dt.dtype(dtype))


@pub()
def geomspace(start, stop, num=50, endpoint: bool = True, dtype=None, axis: int = 0, *,
              device=None) -> Tensor:
    """Numbers spaced evenly on a log scale from start to stop (its end points exact), as
    NumPy's geomspace: negative and complex end points allowed (the sequence is rotated onto
    the positive reals and back), zero is a ValueError. float64 (complex128 for complex end
    points) unless dtype is given.

    >>> import tensor as T
    >>> T.geomspace(1, 1000, 4).tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    op = "geomspace"
    num, (s0, s1) = _range_args(op, num, endpoint, axis, device, start, stop)
    if bool(P.any(P.equal(s0, 0))) or bool(P.any(P.equal(s1, 0))):
        raise ValueError(f"{op}: a geometric sequence cannot include zero")
    want = dt.float64 if dtype is None else dt.dtype(dtype)
    fd = dt.promote_types(dt.result_type(s0, s1), want)
    fd = dt.promote_types(fd, dt.float64) if fd.kind not in "fc" else fd
    shape = broadcast_shapes(s0.shape, s1.shape, op=op)
    s0, s1 = (P.broadcast_to(cast(s, fd), shape) for s in (s0, s1))
    sign = P.sign(s0)
    s0, s1 = P.divide(s0, sign), P.divide(s1, sign)
    r = cast(P.power(10.0, _spaced(P.log10(s0), P.log10(s1), num, endpoint, 0)), fd)
    if num > 0:   # the end points exactly (10 ** log10(x) need not be x)
        parts = [P.expand_dims(s0, 0), r[1:]]
        if num > 1 and endpoint:
            parts = [parts[0], r[1:-1], P.expand_dims(s1, 0)]
        r = P.concatenate(parts, 0)
    r = P.multiply(r, sign)
    if axis:
        r = P.moveaxis(r, 0, norm_axis(axis, r.ndim, op))
    return cast(r, want if dtype is not None else r.dtype)


# ---------------------------------------------------------------- convolution and correlation

_MODES = ("full", "same", "valid")


def _vector(x, op: str, what: str, device) -> Tensor:
    t = arg(x, op, device)
    if t.ndim > 1:
        raise ValueError(f"{op}: {what} must be 1-d, got shape {t.shape}")
    t = P.reshape(t, (-1,))
    if t.shape[0] == 0:
        raise ValueError(f"{op}: {what} cannot be empty")
    return t


def _conv_slice(long: Tensor, short: Tensor, start: int, length: int) -> Tensor:
    """Entries [start, start + length) of the full convolution of long with the shorter short,
    as direct sums: row t is sum_i longpad[t + i] * short[m - 1 - i] (longpad: long with m - 1
    zeros on each side), the rows formed as windows (a strided view) of the padded segment they
    read, a block of rows at a time so a long input needs no (length, m) temporary."""
    n, m = long.shape[0], short.shape[0]
    if length <= 0:
        return zeros(0, dtype=dt.result_type(long, short), device=long.device)
    kernel = P.flip(short, 0)
    rows = max(1, _BLOCK // m)
    out = []
    for s0 in range(start, start + length, rows):
        k = min(rows, start + length - s0)
        lo, hi = max(0, s0 - (m - 1)), min(n, s0 + k)
        pad_l, pad_r = (m - 1) - (s0 - lo), s0 + k - hi
        seg = long[lo:hi] if hi > lo else zeros(0, dtype=long.dtype, device=long.device)
        seg = P.contiguous(P.pad(seg, ((pad_l, pad_r),)))
        out.append(P.matmul(P.as_strided(seg, (k, m), (1, 1)), kernel))
    return out[0] if len(out) == 1 else P.concatenate(out, 0)


_BLOCK = 1 << 20   # window entries formed at once by convolve and correlate


def _mode(mode, op: str) -> str:
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    return mode


def _correlate(a: Tensor, v: Tensor, mode: str) -> Tensor:
    """NumPy's correlation core: sum_n a[n + k] v[n] for the k that mode keeps (the inputs
    swapped when a is the shorter, and the result then reversed, as NumPy's C loop does)."""
    inverted = a.shape[0] < v.shape[0]
    if inverted:
        a, v = v, a
    n1, n2 = a.shape[0], v.shape[0]
    left = {"valid": 0, "same": n2 // 2, "full": n2 - 1}[mode]
    length = {"valid": n1 - n2 + 1, "same": n1, "full": n1 + n2 - 1}[mode]
    # the correlation at k is the full convolution of a with v reversed at k + n2 - 1
    r = _conv_slice(a, P.flip(v, 0), n2 - 1 - left, length)
    return P.flip(r, 0) if inverted else r


@pub()
def convolve(a, v, mode: str = "full") -> Tensor:
    """The discrete linear convolution of the 1-d a and v, as NumPy's convolve: mode 'full'
    (length n + m - 1), 'same' (max(n, m), centred as NumPy) or 'valid' (max(n, m) - min(n, m)
    + 1); the result type of a and v. Direct sums (O(n m), as NumPy's). Differentiable with
    respect to a and v.

    >>> import tensor as T
    >>> T.convolve(T.tensor([1.0, 2.0, 3.0]), T.tensor([0.0, 1.0, 0.5]), "same").tolist()
    [1.0, 2.5, 4.0]
    """
    op = "convolve"
    mode = _mode(mode, op)
    device = dev_of(a, v)
    a, v = _vector(a, op, "a", device), _vector(v, op, "v", device)
    _same_device(op, a, v)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return _correlate(a, P.flip(v, 0), mode)


@pub()
def correlate(a, v, mode: str = "valid") -> Tensor:
    """The cross-correlation of the 1-d a and v, as NumPy's correlate: c[k] = sum_n a[n + k]
    conj(v[n]), mode 'valid' (the default), 'same' or 'full' as for convolve. Differentiable
    with respect to a and v.

    >>> import tensor as T
    >>> T.correlate(T.tensor([1.0, 2.0, 3.0]), T.tensor([0.0, 1.0, 0.5]), "full").tolist()
    [0.5, 2.0, 3.5, 3.0, 0.0]
    """
    op = "correlate"
    mode = _mode(mode, op)
    device = dev_of(a, v)
    a, v = _vector(a, op, "a", device), _vector(v, op, "v", device)
    _same_device(op, a, v)
    return _correlate(a, P.conj(v) if v.dtype.kind == "c" else v, mode)


def _same_device(op: str, *ts) -> None:
    if len({t.device for t in ts}) > 1:
        raise ValueError(f"{op}: tensors on different devices: {[str(t.device) for t in ts]}")


# ---------------------------------------------------------------- multi-dimensional histograms

def _sample(sample, op: str) -> Tensor:
    """histogramdd's sample as an (N, D) tensor: an (N, D) tensor, a 1-d one (D = 1), or a
    sequence of D 1-d arrays of one length (NumPy's atleast_2d(sample).T)."""
    if isinstance(sample, Tensor):
        t = sample
    else:
        if isinstance(sample, list | tuple) and any(isinstance(s, Tensor) for s in sample):
            ts = [arg(s, op, dev_of(*sample)) for s in sample]
            if any(s.ndim != 1 for s in ts) or len({s.shape for s in ts}) > 1:
                raise ValueError(f"{op}: a sequence sample must hold 1-d arrays of one length, "
                                 f"got shapes {[s.shape for s in ts]}")
            _same_device(op, *ts)
            return P.stack(ts, axis=1)
        t = arg(sample, op)
        if t.ndim == 2:   # a nested list: D rows of N values
            return P.transpose(t)
    if t.ndim == 1:
        return P.reshape(t, (-1, 1))
    if t.ndim != 2:
        raise ValueError(f"{op}: sample must be an (N, D) array or a sequence of D 1-d arrays, "
                         f"got shape {t.shape}")
    return t


def _linspace_like(first, last, n: int, d: dt.DType, device) -> Tensor:
    """NumPy's linspace(first, last, n + 1) computed in d (edges in the sample's float dtype,
    as NumPy: arange * ((last - first) / n) + first, the last edge exact)."""
    lo, hi = (full((), v, dtype=d, device=device) for v in (first, last))
    return _spaced(lo, hi, n + 1, True, 0)


def _dim_edges(col: Tensor, bins, rng, i: int, op: str) -> Tensor:
    if is_scalar(bins) or (isinstance(bins, Tensor) and bins.ndim == 0):
        try:
            n = operator.index(bins.item() if isinstance(bins, Tensor) else bins)
        except TypeError:
            raise TypeError(f"{op}: bins[{i}] must be an integer, when a scalar") from None
        if n < 1:
            raise ValueError(f"{op}: bins[{i}] must be positive, when an integer, got {n}")
        if rng is not None:
            try:
                first, last = (float(r.item() if isinstance(r, Tensor) else r) for r in rng)
            except (TypeError, ValueError):
                raise ValueError(f"{op}: range[{i}] must be a pair (min, max), got {rng!r}") \
                    from None
            if first > last:
                raise ValueError(f"{op}: max must be larger than min in range[{i}], got {rng!r}")
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"{op}: range[{i}] of [{first}, {last}] is not finite")
            d = col.dtype if col.dtype.kind == "f" else dt.float64
            d = dt.float64 if rng is not None else d   # NumPy: Python numbers, float64 edges
        elif col.shape[0] == 0:
            first, last, d = 0.0, 1.0, dt.float64
        else:
            first, last = (v.item() for v in (P.min(col), P.max(col)))
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"{op}: autodetected range of [{first}, {last}] is not finite")
            d = col.dtype if col.dtype.kind == "f" else dt.float64
        if first == last:
            first, last = first - 0.5, last + 0.5
        return _linspace_like(first, last, n, d, col.device)
    e = arg(bins, op, col.device)
    if e.ndim != 1:
        raise ValueError(f"{op}: bins[{i}] must be a scalar or 1d array, got shape {e.shape}")
    if e.dtype.kind == "c":
        raise TypeError(f"{op}: complex bin edges ({e.dtype}) have no order")
    if e.shape[0] > 1 and bool(P.any(P.greater(e[:-1], e[1:]))):
        raise ValueError(f"{op}: bins[{i}] must be monotonically increasing, when an array")
    return e.detach()


def _ranges(range_, D: int, op: str) -> list:  # noqa: A002
    """One (min, max) or None per dimension: NumPy's D pairs, or PyTorch's flat 2D numbers."""
    if range_ is None:
        return [None] * D
    flat = list(range_)
    if len(flat) == 2 * D and all(is_scalar(r) or isinstance(r, Tensor) and r.ndim == 0
                                  for r in flat):
        return [flat[2 * i:2 * i + 2] for i in range(D)]
    if len(flat) != D:
        raise ValueError(f"{op}: range must have one (min, max) entry per dimension ({D}), got "
                         f"{len(flat)}")
    return flat


@pub()
def histogramdd(sample, bins=10, range=None, density=None, weights=None, *, weight=None):  # noqa: A002
    """NumPy's histogramdd of the (N, D) sample: (hist, edges), hist float64 of shape (number of
    bins per dimension), edges a list of D 1-d tensors. bins: an integer for every dimension, a
    sequence of D integers or edge arrays; range: D (min, max) pairs or None (PyTorch's flat
    [min0, max0, min1, ...] and weight= are accepted too). A value on a dimension's last edge
    counts in its last bin; values outside (and NaN) are dropped. Differentiable with respect
    to the weights.

    >>> import tensor as T
    >>> h, e = T.histogramdd(T.tensor([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> h.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    op = "histogramdd"
    if weight is not None:
        if weights is not None:
            raise TypeError(f"{op}: give weights or weight, not both")
        weights = weight
    s = _sample(sample, op)
    if s.dtype.kind == "c":
        raise TypeError(f"{op}: complex sample ({s.dtype}) has no order")
    if s.dtype is dt.bool_:
        s = P.astype(s, dt.uint8)
    N, D = s.shape
    if isinstance(bins, list | tuple) or (isinstance(bins, Tensor) and bins.ndim == 1):
        if len(bins) != D:
            raise ValueError(f"{op}: the dimension of bins ({len(bins)}) must be equal to the "
                             f"dimension of the sample ({D})")
        per_dim = list(bins)
    else:
        per_dim = [bins] * D
    rngs = _ranges(range, D, op)
    edges = [_dim_edges(s[:, i].detach(), per_dim[i], rngs[i], i, op) for i in builtins.range(D)]
    w = None
    if weights is not None:
        w = arg(weights, op, s.device)
        if w.shape != (N,):
            raise ValueError(f"{op}: weights of shape {w.shape} must have shape ({N},)")
        if w.dtype.kind == "c":
            raise TypeError(f"{op}: complex weights ({w.dtype}) are not supported (NumPy's "
                            "bincount adds them as float64)")
        w = cast(w, dt.float64)
    nbin = [e.shape[0] + 1 for e in edges]   # an outlier bin at each end
    flat = zeros(N, dtype=dt.int64, device=s.device)
    for i, e in enumerate(edges):
        col = s[:, i].detach()
        common = dt.result_type(col, e)
        c, ec = cast(col, common), cast(e, common)
        idx = P.searchsorted(ec, c, side="right")
        if e.shape[0]:
            idx = P.where(P.equal(c, ec[-1]), idx - 1, idx)   # the last edge is inside
        flat = flat * nbin[i] + idx
    size = math.prod(nbin)
    hist = cast(P.bincount(flat, weights=w, minlength=size), dt.float64)
    hist = P.reshape(hist, tuple(nbin))[(slice(1, -1),) * D]
    if density:
        total = P.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * D
            shape[i] = nbin[i] - 2
            hist = P.divide(hist, P.reshape(cast(P.diff(e), dt.float64), tuple(shape)))
        hist = P.divide(hist, total)
    return hist, edges



@pub()
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """NumPy's histogram2d of the points (x, y): (hist, xedges, yedges), hist float64 of shape
    (nx, ny). bins: an integer, [nx, ny], one edge array for both, or [xedges, yedges]; range:
    [[xmin, xmax], [ymin, ymax]]. Differentiable with respect to the weights.

    >>> import tensor as T
    >>> h, xe, ye = T.histogram2d(T.tensor([0.0, 1.0]), T.tensor([0.0, 1.0]), bins=2)
    >>> h.tolist(), xe.tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [0.0, 0.5, 1.0])
    """
    op = "histogram2d"
    dev = dev_of(x, y)
    x, y = arg(x, op, dev), arg(y, op, dev)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}: x and y must be 1-d, got shapes {x.shape} and {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"{op}: x and y must have the same length, got {x.shape[0]} and "
                         f"{y.shape[0]}")
    _same_device(op, x, y)
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb not in (1, 2):   # one array of edges, for both axes
        bins = [bins, bins]
    d = dt.result_type(x, y)   # NumPy stacks x and y into one array
    hist, edges = histogramdd(P.stack([cast(x, d), cast(y, d)], axis=1), bins, range, density,
                              weights)
    return hist, edges[0], edges[1]


# ---------------------------------------------------------------- creation from indices

@pub()
def identity(n, dtype=None, *, device=None) -> Tensor:
    """The n x n identity matrix (float64 by default), as NumPy's identity (device: ours).

    >>> import tensor as T
    >>> T.identity(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    n = as_int(n, "n", "identity")
    if n < 0:
        raise ValueError(f"identity: n must be non-negative, got {n}")
    return eye(n, dtype=dt.float64 if dtype is None else dtype, device=device)


@pub()
def fromfunction(function, shape, *, dtype=dt.float64, device=None, **kwargs):
    """function(*index grids) for an array of shape `shape`, as NumPy's fromfunction: each
    grid is a tensor of shape `shape` (dtype float64 by default, on device) holding its axis'
    index; the remaining keywords go to function.

    >>> import tensor as T
    >>> T.fromfunction(lambda i, j: i + 2 * j, (2, 2), dtype=T.int64).tolist()
    [[0, 2], [1, 3]]
    """
    if not callable(function):
        raise TypeError(f"fromfunction: function must be callable, got "
                        f"{type(function).__name__}")
    grids = P.indices(shape, dtype=dt.dtype(dtype), device=device)
    return function(*P.unbind(grids, 0), **kwargs) if grids.ndim > 1 else function(**kwargs)


# ---------------------------------------------------------------- inspection

@pub()
def shape(a) -> tuple:
    """The shape of a (an array-like is converted first), as NumPy's shape."""
    return a.shape if isinstance(a, Tensor) else arg(a, "shape").shape


@pub()
def size(a, axis=None) -> int:
    """The number of elements of a, or its length along axis, as NumPy's size."""
    s = shape(a)
    if axis is None:
        return math.prod(s)
    if isinstance(axis, tuple):   # (a repeated axis is an error, as NumPy's)
        return math.prod(s[i] for i in norm_axes(axis, len(s), "size"))
    return s[norm_axis(axis, len(s), "size")]


@pub()
def ndim(a) -> int:
    """The number of dimensions of a, as NumPy's ndim."""
    return len(shape(a))


def _is_complex(x) -> bool:
    if isinstance(x, Tensor):
        return x.dtype.kind == "c"
    d = getattr(x, "dtype", None)
    if d is not None and hasattr(d, "kind"):
        return d.kind == "c"
    return arg(x, "iscomplexobj").dtype.kind == "c"


@pub()
def iscomplexobj(x) -> bool:
    """Whether x has a complex dtype (whatever its values), as NumPy's iscomplexobj."""
    return _is_complex(x)


@pub()
def isrealobj(x) -> bool:
    """Whether x has no complex dtype, as NumPy's isrealobj."""
    return not _is_complex(x)


@pub()
def isscalar(element) -> bool:
    """Whether element is a scalar: a Python or NumPy number, str or bytes (a tensor, even a
    0-d one, is not), as NumPy's isscalar."""
    if isinstance(element, Tensor):
        return False
    return isinstance(element, numbers.Number | str | bytes | memoryview) or _np_scalar(element)


def _np_scalar(x) -> bool:
    import numpy as np  # a type test only: tensor never computes with NumPy
    return isinstance(x, np.generic)


@pub()
def may_share_memory(a, b, max_work=None) -> bool:
    """Whether the memory ranges of tensors a and b overlap (they might share elements), as
    NumPy's may_share_memory; tensors on different devices, and anything that is not a
    tensor, share nothing."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a.device != b.device:
        return False
    return may_overlap(a, b)
