"""Host side of the CPU elementwise, reduction and scan kernels (tensor/cpu/csrc/elementwise.h,
reduce.h): the argument arrays. Same decisions as the CUDA twin (tensor/cuda/launch.py):
broadcast operands arrive with stride 0, dimensions contiguous across all operands are
merged, and a contiguous launch is one flat loop.
"""
from __future__ import annotations

import cffi

from .._tensor import Tensor
from ..views import coalesce
from . import kernels as K

_ffi = cffi.FFI()
_META: dict = {}


def meta_array(meta):
    """Kernel shape/stride arguments as a cached int64 C array (list conversion costs ~1 us)."""
    key = tuple(meta)
    m = _META.get(key)
    if m is None:
        if len(_META) > 4096:
            _META.clear()
        m = _META[key] = _ffi.new("int64_t[]", key)
    return m


def kernel(family: str, d, name: str):
    """kernels.kernel(family, d, name), cached by d's suffix (which names its module): a DType's
    hash is a Python call, and every launch looks its kernel up."""
    key = (family, name, None if d is None else d.sfx)
    fn = _KERNELS.get(key)
    if fn is None:
        fn = _KERNELS[key] = K.kernel(family, d, name)
    return fn


_KERNELS: dict = {}


def elementwise_call(d, name: str, out: Tensor, ins: list):
    """(kernel, its arguments but the thread count) of elementwise(...); None: nothing to do."""
    shape = out._shape
    key = [shape, out._strides, out._dtype.itemsize]
    ptrs = [out.data_ptr()]
    for x in ins:
        if type(x) is Tensor:
            key += (x._shape, x._strides, x._dtype.itemsize)
            ptrs.append(x.data_ptr())
        else:
            key.append(None)
            ptrs.append(x.ptr)
    key = tuple(key)
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = _layout(shape, out, ins)
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        _LAYOUTS[key] = layout
    if layout is False:
        return None
    return kernel("ew", d, name), (layout[0], layout[1], *ptrs)


_LAYOUTS: dict = {}   # (shape, strides and itemsizes of out and ins) -> (nd, meta) or False


def _layout(shape, out: Tensor, ins: list):
    """(nd, meta) of an elementwise launch: shape and byte strides, dimensions contiguous across
    all operands merged (one flat loop when all are contiguous); False when empty."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return False
    fast = out.is_contiguous()
    for x in ins:
        fast = fast and type(x) is Tensor and x._shape == shape and x.is_contiguous()
    if fast:
        return 1, meta_array([n, out.itemsize] + [x.itemsize for x in ins])
    strides = [[s * out.itemsize for s in out._strides]]
    for x in ins:
        if type(x) is Tensor:
            strides.append([s * x.itemsize for s in x._strides])
        else:
            strides.append([0] * len(shape))
    shape, strides = _out_order(shape, strides)
    sh, st = coalesce(shape, strides)
    if not sh:
        sh, st = [1], [[0] for _ in strides]
    if len(sh) >= 2 and sh[-1] <= _SHORT_RUN and sh[-2] >= 4 * sh[-1]:
        # a short last dim (x + y[:, None] on (n, 3), repeat(x, 3, 1)): each run of the
        # kernel's loop costs ~6 ns, so run along the longer dim before it instead (its
        # elements stay in cache for the short dim's next pass): 6 ms -> ~1 ms for 3M elements
        sh[-1], sh[-2] = sh[-2], sh[-1]
        for s in st:
            s[-1], s[-2] = s[-2], s[-1]
    return len(sh), meta_array(sh + [v for s in st for v in s])


_SHORT_RUN = 8   # last dims this short run along the dim before them (see _layout)


def _out_order(shape, strides):
    """The dims reordered so the output's byte strides descend (its densest dim last), as
    NumPy's iterator does: an elementwise kernel may visit elements in any order, and a
    permuted output (a transposed operand's result keeps its layout: elementwise._out_like)
    otherwise runs down a column per run, each element a cache line of its own (at a
    power-of-two row stride, 1024 lines of one cache set: 15-50x slower than NumPy). Ties and
    zero strides (an output that repeats elements) keep the given order."""
    so = [abs(v) for v in strides[0]]
    dims = [i for i in range(len(shape)) if shape[i] != 1]
    if len(dims) < 2 or all(so[i] >= so[j] for i, j in zip(dims, dims[1:])):
        return shape, strides
    if 0 in (so[i] for i in dims) or len({so[i] for i in dims}) < len(dims):
        return shape, strides
    dims.sort(key=lambda i: -so[i])
    return [shape[i] for i in dims], [[s[i] for i in dims] for s in strides]


def elementwise(d, name: str, out: Tensor, ins: list) -> None:
    """out[...] = kernel `name` of module ("ew", d) over ins (Tensors broadcast to out.shape,
    or _Scalars: one host element read with stride 0)."""
    c = elementwise_call(d, name, out, ins)
    if c is not None:
        c[0](*c[1], K._num_threads)


_EW: dict = {}   # kernel name (dtype suffix included) -> cffi function


def contiguous_op(d, name: str, out: Tensor, n: int, a: Tensor, b=None) -> None:
    """Fast path: out = kernel(a[, b]) with out, a (and a tensor b) contiguous of one shape;
    b is an exact Tensor or a _Scalar (read with stride 0). The same arguments as
    _contiguous_call's, written out: going through it costs this hottest path ~5%."""
    if n == 0:
        return
    fn = _EW.get(name)
    if fn is None:
        fn = _EW[name] = K.kernel("ew", d, name)
    if b is None:
        fn(1, meta_array((n, out._dtype.itemsize, a._dtype.itemsize)), out._storage.ptr,
           a.data_ptr(), K._num_threads)
    elif type(b) is Tensor:
        isz = a._dtype.itemsize
        fn(1, meta_array((n, out._dtype.itemsize, isz, isz)), out._storage.ptr, a.data_ptr(),
           b.data_ptr(), K._num_threads)
    else:
        fn(1, meta_array((n, out._dtype.itemsize, a._dtype.itemsize, 0)), out._storage.ptr,
           a.data_ptr(), b.ptr, K._num_threads)


def reduce(d, name: str, x: Tensor, out: Tensor, ks, kin, kout, rs, rin) -> None:
    """Reduce x (kept dims ks with byte strides kin/kout, reduced dims rs/rin) into out."""
    fn, a = _reduce_call(d, name, x, out, ks, kin, kout, rs, rin)
    fn(*a, K._num_threads)


def scan(d, name: str, x: Tensor, out: Tensor, sh, si, so) -> None:
    """Inclusive scan along the last of dims `sh` (byte strides si for x, so for out)."""
    fn, a = _scan_call(d, name, x, out, sh, si, so)
    fn(*a, K._num_threads)


# ---------------------------------------------------------------- prepared calls (replays)

def _contiguous_call(d, name: str, out: Tensor, n: int, a: Tensor, b=None):
    """(kernel, its arguments but the thread count) of contiguous_op(...); None: no elements."""
    if n == 0:
        return None
    fn = _EW.get(name)
    if fn is None:
        fn = _EW[name] = K.kernel("ew", d, name)
    osz, isz = out._dtype.itemsize, a._dtype.itemsize
    if b is None:
        return fn, (1, meta_array((n, osz, isz)), out._storage.ptr, a.data_ptr())
    if type(b) is Tensor:
        return fn, (1, meta_array((n, osz, isz, isz)), out._storage.ptr, a.data_ptr(), b.data_ptr())
    return fn, (1, meta_array((n, osz, isz, 0)), out._storage.ptr, a.data_ptr(), b.ptr)


def red_meta(ks, kin, kout, rs, rin):
    """A reduction kernel's meta array (reduce.h's sx_red_parse) of a layout."""
    return meta_array((len(ks), len(rs), *ks, *kin, *kout, *rs, *rin))


def _reduce_call(d, name: str, x: Tensor, out: Tensor, ks, kin, kout, rs, rin):
    return kernel("red", d, name), (red_meta(ks, kin, kout, rs, rin), x.data_ptr(), out.data_ptr())


def _scan_call(d, name: str, x: Tensor, out: Tensor, sh, si, so):
    meta = meta_array((len(sh), *sh, *si, *so))
    return kernel("red", d, name), (meta, x.data_ptr(), out.data_ptr())


_CALLS = {"elementwise": elementwise_call, "contiguous_op": _contiguous_call,
          "reduce": _reduce_call, "scan": _scan_call}


def prepare(name: str, args: tuple, kwargs: dict):
    """A callable that makes backend call `name` again with its host work (kernel lookup,
    dimension merging, argument arrays) done now: a captured step's replay (tensor/capture.py).
    None for a call it does not prepare. The thread count is read at each call."""
    make = _CALLS.get(name)
    if make is None:
        return None
    c = make(*args, **kwargs)
    if c is None:
        return Prepared(_nothing, ())
    return Prepared(*c)


def _nothing(nthreads):
    return None


class Prepared:
    """A kernel call made again: fn(*args, thread count). Its int arguments at or past 2**32
    are addresses; rebase() moves those within a range (a captured step's input buffer, when a
    replay reads the caller's tensor in place instead: tensor/capture.py)."""

    __slots__ = ("fn", "args", "orig")

    def __init__(self, fn, args):
        self.fn, self.args, self.orig = fn, list(args), tuple(args)

    def __call__(self):
        return self.fn(*self.args, K._num_threads)

    def addresses(self) -> list:
        return [v for v in self.orig if type(v) is int and v >= 1 << 32]

    def rebase(self, lo: int, hi: int, delta: int) -> None:
        for i, v in enumerate(self.orig):
            if type(v) is int and lo <= v < hi:
                self.args[i] = v + delta
