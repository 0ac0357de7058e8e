"""tensor.fft: the array API standard's FFT extension (NumPy's and PyTorch's names and
arguments): fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft, ihfft, fftfreq, rfftfreq,
fftshift, ifftshift; NumPy's two-axis forms fft2, ifft2, rfft2, irfft2; PyTorch's hfftn,
ihfftn, hfft2, ihfft2. Every transform also takes PyTorch's keyword `dim` for axis / axes.

>>> import tensor as T
>>> T.fft.fft(T.asarray([1.0, 0.0, 0.0, 0.0])).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
>>> x = T.fft.irfft(T.fft.rfft(T.asarray([1.0, 2.0, 3.0])), n=3)   # default n: 2 (2 bins - 1)
>>> [round(v, 12) for v in x.tolist()]
[1.0, 2.0, 3.0]

One recorded op does the work, `fft_c2c`: a complex transform along the last axis (the
backends' kernels, tensor/cpu/csrc/fft.h and cuda_src/fft.cuh: Stockham mixed radix with
Bluestein for lengths with prime factors past 16, in double precision). Everything else is
composed from differentiable public ops around it (moving the axis, padding or cropping to n,
casts, the Hermitian extension of irfft), so every function here has gradients in both modes;
fft_c2c's rule is its adjoint: the opposite transform with the same scale. Real inputs of
float32 (or 16 bits) give complex64, other reals and integers complex128, as NumPy.
"""
from __future__ import annotations

import functools
import math
import operator

from . import dtypes as dt
from . import elementwise as ew
from ._hook import differentiable
from ._tensor import Tensor
from .axes import as_int
from .backend import backend_for
from .optable import T as P  # tensor's public (recorded) functions

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2", "hfftn",
           "ihfftn", "hfft2", "ihfft2"]


def _pub(name: str):
    return getattr(P, name)


# ---------------------------------------------------------------- the one recorded op

def _c2c_raw(x: Tensor, inverse: bool, scale: float) -> Tensor:
    """scale * the DFT of x along its last axis (inverse: the conjugate roots), a new
    contiguous tensor of x's complex dtype."""
    xc = ew.contiguous(x)
    y = ew.empty_tensor(xc.shape, xc.dtype, xc.device)
    backend_for(xc.device).fft_c2c(xc, y, inverse, scale)
    return y


fft_c2c = differentiable("fft_c2c", _c2c_raw)


# ---------------------------------------------------------------- helpers

def _norm(norm, op: str) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"{op}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _scale(norm: str, n: int, inverse: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def _tensor(x, op: str) -> Tensor:
    """x, or NumPy's array-like (a list, a NumPy array, a scalar) as a tensor."""
    if isinstance(x, Tensor):
        return x
    try:
        from .convert import asarray
        return asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: expected a Tensor or an array-like, got {type(x).__name__} "
                        f"({e})") from None


def _complex_of(d: dt.DType) -> dt.DType:
    if d.kind == "c":
        return d
    return dt.complex64 if d in (dt.float32, dt.float16, dt.bfloat16) else dt.complex128


def _axis(x: Tensor, axis, op: str) -> int:
    from .axes import norm_axis
    return norm_axis(axis, x.ndim, op)


def _points(n, default: int, op: str) -> int:
    n = default if n is None else n
    k = as_int(n, "the number of data points", op)   # NumPy's TypeError for a float or bool
    if k < 1:
        raise ValueError(f"{op}: invalid number of data points ({k}) specified")
    return k


def _resize_last(x: Tensor, n: int) -> Tensor:
    """x cropped or zero-padded to n along its last axis."""
    m = x.shape[-1]
    if n < m:
        return x[..., :n]
    if n > m:
        return _pub("pad")(x, ((0, 0),) * (x.ndim - 1) + ((0, n - m),))
    return x


def _c2c_along(x: Tensor, n: int, axis: int, inverse: bool, norm: str) -> Tensor:
    move = _pub("moveaxis")
    xm = _resize_last(move(x, axis, -1), n)
    return move(fft_c2c(xm, inverse, _scale(norm, n, inverse)), -1, axis)


def _as_complex(x: Tensor) -> Tensor:
    return x if x.dtype.kind == "c" else x.astype(_complex_of(x.dtype))


_COMPLEX_FORM = {"rfft": "fft", "rfftn": "fftn", "rfft2": "fft2", "ihfft": "ifft"}


def _real_input(x: Tensor, op: str) -> Tensor:
    if x.dtype.kind == "c":
        raise TypeError(f"{op}: expects a real input, got {x.dtype.name} (take .real, or use "
                        f"{_COMPLEX_FORM.get(op, 'fft')})")
    return x


# ---------------------------------------------------------------- one axis

def fft(x, n=None, axis: int = -1, norm=None) -> Tensor:
    """The discrete Fourier transform along axis, of length n (x cropped or zero-padded)."""
    x = _tensor(x, "fft")
    ax = _axis(x, axis, "fft")
    return _c2c_along(_as_complex(x), _points(n, x.shape[ax], "fft"), ax, False,
                      _norm(norm, "fft"))


def ifft(x, n=None, axis: int = -1, norm=None) -> Tensor:
    """The inverse transform of fft (1/n scaling with the default norm)."""
    x = _tensor(x, "ifft")
    ax = _axis(x, axis, "ifft")
    return _c2c_along(_as_complex(x), _points(n, x.shape[ax], "ifft"), ax, True,
                      _norm(norm, "ifft"))


def rfft(x, n=None, axis: int = -1, norm=None) -> Tensor:
    """fft of a real input, keeping the n // 2 + 1 non-negative frequencies."""
    return _rfft(x, n, axis, norm, "rfft")


def _rfft(x, n, axis, norm, op: str) -> Tensor:
    x = _real_input(_tensor(x, op), op)
    ax = _axis(x, axis, op)
    n = _points(n, x.shape[ax], op)
    y = _c2c_along(_as_complex(x), n, ax, False, _norm(norm, op))
    return y[(slice(None),) * ax + (slice(0, n // 2 + 1),)]


def irfft(x, n=None, axis: int = -1, norm=None) -> Tensor:
    """The real signal of length n (default 2 (m - 1)) whose rfft is x's m frequencies (x
    cropped or zero-padded to n // 2 + 1; imaginary parts that a real signal cannot have, at
    frequency 0 and n / 2, are ignored, as NumPy)."""
    x = _tensor(x, "irfft")
    ax = _axis(x, axis, "irfft")
    n = _points(n, 2 * (x.shape[ax] - 1), "irfft")
    move = _pub("moveaxis")
    half = _resize_last(move(_as_complex(x), ax, -1), n // 2 + 1)
    mirror = _pub("conj")(_pub("flip")(half[..., 1:n - n // 2], axis=-1))
    full = _pub("concatenate")([half, mirror], axis=-1)
    y = fft_c2c(full, True, _scale(_norm(norm, "irfft"), n, True))
    return move(_pub("real")(y), -1, ax)


def hfft(x, n=None, axis: int = -1, norm=None) -> Tensor:
    """The real spectrum of a signal with Hermitian symmetry given by its first half x."""
    x = _tensor(x, "hfft")
    n = _points(n, 2 * (x.shape[_axis(x, axis, "hfft")] - 1), "hfft")
    return irfft(_pub("conj")(_as_complex(x)), n, axis, _SWAP[_norm(norm, "hfft")])


def ihfft(x, n=None, axis: int = -1, norm=None) -> Tensor:
    """The inverse of hfft: the first half of the Hermitian spectrum of the real x."""
    return _pub("conj")(_rfft(x, n, axis, _SWAP[_norm(norm, "ihfft")], "ihfft"))


# ---------------------------------------------------------------- several axes

def _shape_axes(x: Tensor, s, axes, op: str):
    """NumPy's and the standard's rules: axes default to the last len(s) (all without s); s to
    the lengths along axes, an entry -1 to the whole axis (NumPy 2)."""
    if axes is None:
        if s is not None and len(tuple(s)) > x.ndim:
            raise ValueError(f"{op}: s {tuple(s)} has more entries than x has dimensions "
                             f"({x.ndim}, shape {x.shape})")
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(tuple(s)), x.ndim))
    axes = tuple(_axis(x, a, op) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axes {axes} repeat an axis")
    if s is None:
        s = tuple(x.shape[a] for a in axes)
    s = tuple(s)
    if len(s) != len(axes):
        raise ValueError(f"{op}: s {s} and axes {axes} must have the same length")
    return tuple(x.shape[a] if n == -1 else n for n, a in zip(s, axes)), axes


def _some_axes(x: Tensor, s, axes, op: str):
    """_shape_axes, refusing an empty axes (the real transforms need a last axis)."""
    s, axes = _shape_axes(x, s, axes, op)
    if not axes:
        raise ValueError(f"{op}: needs at least one axis (its last one is the real axis), got "
                         "axes=()")
    return s, axes


def _nd(x, s, axes, norm, op, inverse):
    x = _tensor(x, op)
    s, axes = _shape_axes(x, s, axes, op)
    norm = _norm(norm, op)
    if not axes:   # no axis to transform: x itself, as NumPy
        return x
    y = _as_complex(x)
    for a, n in reversed(list(zip(axes, s))):
        y = _c2c_along(y, _points(n, None, op), a, inverse, norm)
    return y


def fftn(x, s=None, axes=None, norm=None) -> Tensor:
    """fft over several axes (all by default)."""
    return _nd(x, s, axes, norm, "fftn", False)


def ifftn(x, s=None, axes=None, norm=None) -> Tensor:
    """ifft over several axes (all by default)."""
    return _nd(x, s, axes, norm, "ifftn", True)


def rfftn(x, s=None, axes=None, norm=None) -> Tensor:
    """rfft over the last of axes, then fft over the others."""
    x = _real_input(_tensor(x, "rfftn"), "rfftn")
    s, axes = _some_axes(x, s, axes, "rfftn")
    norm = _norm(norm, "rfftn")
    y = rfft(x, s[-1], axes[-1], norm)
    return fftn(y, s[:-1], axes[:-1], norm) if axes[:-1] else y


def irfftn(x, s=None, axes=None, norm=None) -> Tensor:
    """The inverse of rfftn: ifft over all of axes but the last, then irfft over the last
    (its length s[-1], by default 2 (m - 1))."""
    x = _tensor(x, "irfftn")
    given = s is not None   # (an entry -1 is the axis's length m, as NumPy's, not 2 (m - 1))
    s, axes = _some_axes(x, s, axes, "irfftn")
    norm = _norm(norm, "irfftn")
    y = ifftn(x, s[:-1], axes[:-1], norm) if axes[:-1] else _as_complex(x)
    return irfft(y, s[-1] if given else None, axes[-1], norm)


# ---------------------------------------------------------------- two axes (NumPy's)

def fft2(x, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """fftn over two axes (the last two by default)."""
    return _nd(x, s, axes, norm, "fft2", False)


def ifft2(x, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """ifftn over two axes (the last two by default)."""
    return _nd(x, s, axes, norm, "ifft2", True)


def rfft2(x, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """rfftn over two axes (the last two by default)."""
    return rfftn(x, s, axes, norm)


def irfft2(x, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """irfftn over two axes (the last two by default)."""
    return irfftn(x, s, axes, norm)


def hfftn(x, s=None, axes=None, norm=None) -> Tensor:
    """The real spectrum over several axes (all by default) of a signal with Hermitian symmetry
    given by its first half x along the last of axes (its length s[-1], by default 2 (m - 1)):
    PyTorch's hfftn, irfftn of conj(x) with the normalisation's direction swapped."""
    x = _tensor(x, "hfftn")
    norm = _SWAP[_norm(norm, "hfftn")]
    return irfftn(_pub("conj")(_as_complex(x)), s, axes, norm)


def ihfftn(x, s=None, axes=None, norm=None) -> Tensor:
    """The inverse of hfftn: the half Hermitian spectrum (n // 2 + 1 along the last of axes)
    of the real x."""
    x = _tensor(x, "ihfftn")
    norm = _SWAP[_norm(norm, "ihfftn")]
    return _pub("conj")(rfftn(x, s, axes, norm))


def hfft2(x, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """hfftn over two axes (the last two by default)."""
    return hfftn(x, s, axes, norm)


def ihfft2(x, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """ihfftn over two axes (the last two by default)."""
    return ihfftn(x, s, axes, norm)


# ---------------------------------------------------------------- frequencies and shifts

def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an n-point fft with spacing d: 0, 1, ..., then the negative
    ones, over (d n)."""
    from .creation import arange
    n = _points(n, None, "fftfreq")
    if d == 0:
        raise ZeroDivisionError("fftfreq: the sample spacing d must not be 0")
    k = arange(n, dtype=_freq_dtype(dtype, "fftfreq"), device=device)
    return _pub("where")(k < (n + 1) // 2, k, k - n) / (d * n)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """The n // 2 + 1 non-negative sample frequencies of an n-point rfft."""
    from .creation import arange
    n = _points(n, None, "rfftfreq")
    if d == 0:
        raise ZeroDivisionError("rfftfreq: the sample spacing d must not be 0")
    return arange(n // 2 + 1, dtype=_freq_dtype(dtype, "rfftfreq"), device=device) / (d * n)


def _freq_dtype(dtype, op: str) -> dt.DType:
    """A floating dtype for the frequencies (the default one for None); others refused, as
    PyTorch (the frequencies are fractions)."""
    d = dt.get_default_dtype() if dtype is None else dt.dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"{op}: dtype must be a floating-point dtype, got {d.name}")
    return d


def _shift(x, axes, op: str, sign: int) -> Tensor:
    x = _tensor(x, op)
    if axes is None:
        axes = tuple(range(x.ndim))
    else:
        try:
            axes = (operator.index(axes),)   # one axis: an int, a NumPy integer...
        except TypeError:
            axes = tuple(axes)
    axes = tuple(_axis(x, a, op) for a in axes)
    return _pub("roll")(x, tuple(sign * (x.shape[a] // 2) for a in axes), axes)


def fftshift(x, axes=None) -> Tensor:
    """The zero frequency moved to the middle (roll by n // 2 along axes; all by default)."""
    return _shift(x, axes, "fftshift", 1)


def ifftshift(x, axes=None) -> Tensor:
    """The inverse of fftshift."""
    return _shift(x, axes, "ifftshift", -1)


# ---------------------------------------------------------------- PyTorch's keyword

def _torch_dim(fn, name: str):
    """fn also taking PyTorch's keyword `dim` for its axis (axes): torch.fft.fft(x, dim=0)."""
    @functools.wraps(fn)
    def with_dim(*args, dim=_UNSET, **kwargs):
        if dim is not _UNSET:
            if name in kwargs:
                raise TypeError(f"{fn.__name__}: got both {name}= and dim= (the same argument)")
            kwargs[name] = dim
        return fn(*args, **kwargs)
    return with_dim


_UNSET = object()
for _f in (fft, ifft, rfft, irfft, hfft, ihfft):
    globals()[_f.__name__] = _torch_dim(_f, "axis")
for _f in (fftn, ifftn, rfftn, irfftn, hfftn, ihfftn, fft2, ifft2, rfft2, irfft2, hfft2, ihfft2,
           fftshift, ifftshift):
    globals()[_f.__name__] = _torch_dim(_f, "axes")
del _f
