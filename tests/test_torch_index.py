"""tensor/torch_index.py: PyTorch's index_select, masked_select, narrow, Tensor.unfold,
scatter(_), index_copy(_), index_fill(_), masked_scatter(_), take_along_dim, put(_),
index_reduce(_), diagonal/select/slice_scatter and nonzero_static, against NumPy and plain
loops (random shapes, non-contiguous and broadcast inputs, negative dims, 0-d and empty
tensors, several dtypes), in-place forms writing through non-contiguous views, error messages,
gradients (gradcheck in float64), and PyTorch's values and gradients where torch is
installed. On both devices (the `device` fixture: CUDA on the emulator or a GPU).
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import make_tensor, make_view, to_np

import autograd
import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")
DTYPES = (dt.int64, dt.int32, dt.bool_, dt.float16, dt.float32, dt.float64, dt.complex64)
NUM = (dt.int64, dt.float16, dt.float32, dt.float64)   # index_reduce / reduce=: real numbers


def _vals(rng, shape, d):
    a = rng.integers(-5, 6, size=shape)
    if d is dt.bool_:
        return a > 0
    if d.kind == "c":
        return (a + 1j * rng.integers(-3, 4, size=shape)).astype(d.np)
    return a.astype(d.np)


def _long(a):
    return T.asarray(np.asarray(a, dtype=np.int64))


def _wview(rng, a, d):
    """A writable non-contiguous view holding a: transposed, and stepped along axis 0."""
    a = np.asarray(a)
    if a.ndim == 0:
        return make_tensor(a, d)
    big = np.zeros((2 * a.shape[0] + 1,) + a.shape[1:], dtype=a.dtype)
    big[1::2] = a
    t = make_tensor(np.ascontiguousarray(np.moveaxis(big, 0, -1)), d)
    return T.moveaxis(t, -1, 0)[1::2]


def _eq(t, want):
    got = to_np(t)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- NumPy / loop references

def _ref_scatter(x, dim, idx, src, reduce=None):
    out = x.copy()
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[dim] = idx[p]
        v = src[p] if isinstance(src, np.ndarray) else src
        q = tuple(q)
        out[q] = v if reduce is None else out[q] + v if reduce == "add" else out[q] * v
    return out


def _ref_index_reduce(x, dim, idx, src, reduce, include_self):
    out = x.astype(np.float64)
    xm, sm, om = np.moveaxis(x, dim, 0), np.moveaxis(src, dim, 0), np.moveaxis(out, dim, 0)
    for j in set(idx.tolist()):
        rows = [sm[i] for i in range(len(idx)) if idx[i] == j]
        if include_self:
            rows = [xm[j]] + rows
        f = {"prod": np.prod, "amax": np.max, "amin": np.min, "mean": np.mean}[reduce]
        om[j] = f(np.stack(rows).astype(np.float64), axis=0)
        if reduce == "mean" and x.dtype.kind in "iu":
            om[j] = np.floor_divide(np.sum(rows, axis=0), len(rows))
    return out.astype(x.dtype)


def _ref_put(x, idx, src, accumulate):
    flat = x.reshape(-1).copy()
    for i, v in zip(idx.reshape(-1), src.reshape(-1)):
        flat[i] = flat[i] + v if accumulate else v
    return flat.reshape(x.shape)


def _ref_unfold(x, d, size, step):
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=d)
    return w[(slice(None),) * d + (slice(None, None, step),)]


# ---------------------------------------------------------------- reads

@pytest.mark.parametrize("d", DTYPES)
def test_index_select_take_along_dim_masked_select(d):
    rng = np.random.default_rng(1)
    for shape in [(3, 4), (2, 3, 2), (5,), (0, 3)]:
        a, x = make_view(rng, _vals(rng, shape, d), d) if rng.random() < 0.7 else (
            _vals(rng, shape, d), make_tensor(_vals(rng, shape, d), d))
        a = to_np(x)
        for dim in range(-len(shape), len(shape)):
            n = shape[dim]
            idx = rng.integers(0, max(n, 1), size=4 if n else 0)
            _eq(T.index_select(x, dim, _long(idx)), np.take(a, idx, axis=dim))
            _eq(x.index_select(dim, T.asarray(idx.astype(np.int32))), np.take(a, idx, axis=dim))
            ishape = list(shape)
            ishape[dim] = 3 if n else 0
            ti = rng.integers(-n, max(n, 1), size=ishape) if n else np.zeros(ishape, np.int64)
            _eq(T.take_along_dim(x, _long(ti), dim), np.take_along_axis(a, ti, dim))
        m = rng.random(shape[-1:]) < 0.5             # broadcast against x
        want = np.broadcast_to(a, shape)[np.broadcast_to(m, shape)]
        _eq(T.masked_select(x, T.asarray(m)), want)
        _eq(x.masked_select(T.asarray(m)), want)
    flat = rng.integers(-12, 12, size=(2, 3))
    a = _vals(rng, (3, 4), d)
    _eq(T.take_along_dim(make_tensor(a, d), _long(flat)), a.reshape(-1)[flat.reshape(-1)])


def test_reads_broadcast_and_0d():
    x = T.arange(4.0).reshape(1, 4)
    _eq(T.take_along_dim(x, _long([[0], [3], [-1]]), 1), np.array([[0.0], [3.0], [3.0]]))
    _eq(T.masked_select(T.arange(3), T.asarray([[True], [False]])), np.array([0, 1, 2]))
    s = T.tensor(5.0)
    _eq(T.index_select(s, 0, _long([0])), np.array(5.0))
    _eq(T.index_select(s, -1, T.tensor(0)), np.array(5.0))
    _eq(T.masked_select(s, T.tensor(True)), np.array([5.0]))
    _eq(T.masked_select(s, T.tensor(False)), np.zeros(0))
    _eq(T.take_along_dim(s, _long([0, 0])), np.array([5.0, 5.0]))
    _eq(T.index_select(T.zeros((2, 0)), 1, _long([])), np.zeros((2, 0)))


def test_narrow_is_a_view():
    rng = np.random.default_rng(2)
    a, x = make_view(rng, np.arange(24.0).reshape(4, 6), dt.float64)
    for dim, start, length in [(0, 1, 2), (-1, -4, 3), (1, 6, 0), (0, 0, 4), (1, T.tensor(2), 1)]:
        s = int(start.item()) if isinstance(start, T.Tensor) else start
        s %= a.shape[dim]
        want = np.take(a, range(s, s + length), axis=dim)
        _eq(T.narrow(x, dim, start, length), want)
        _eq(x.narrow(dim, start, length), want)
    y = T.zeros((3, 4))
    y.narrow(1, 1, 2).fill_(1.0)
    assert T.shares_memory(y.narrow(0, 1, 1), y)
    _eq(y, np.array([[0, 1, 1, 0]] * 3, float))


@pytest.mark.parametrize("d", (dt.int64, dt.bool_, dt.float32))
def test_unfold_windows_are_views(d):
    rng = np.random.default_rng(3)
    for shape in [(7,), (3, 8), (2, 5, 3), (0,), (4, 0)]:
        a, x = make_view(rng, _vals(rng, shape, d), d)
        for dim in range(-len(shape), len(shape)):
            n = shape[dim]
            for size, step in [(min(2, n), 1), (min(3, n), 2), (n, 1), (0, 3)]:
                r = x.unfold(dim, size, step)
                _eq(r, _ref_unfold(a, dim % len(shape), size, step))
                if r.numel():
                    assert T.shares_memory(r, x)
    s = T.tensor(4)
    _eq(s.unfold(0, 1, 1), np.array([4]))
    _eq(s.unfold(-1, 0, 2), np.zeros(0, np.int64))
    assert not hasattr(T, "unfold")   # a method only (nn.functional.unfold is im2col)


def test_nonzero_static():
    rng = np.random.default_rng(4)
    for shape in [(5,), (3, 4), (2, 0, 3), ()]:
        for d in (dt.float32, dt.bool_, dt.int64):
            a = _vals(rng, shape, d) * (rng.random(shape) < 0.5)
            x = make_view(rng, a, d)[1] if a.ndim else make_tensor(a, d)
            full = np.argwhere(to_np(x))
            for size in (0, 1, len(full), len(full) + 3):
                for fill in (-1, 7):
                    want = np.concatenate([full[:size], np.full((max(size - len(full), 0),
                                                                  a.ndim), fill)])
                    got = T.nonzero_static(x, size=size, fill_value=fill)
                    assert got.dtype is dt.int64
                    _eq(got, want.astype(np.int64).reshape(size, a.ndim))
    _eq(T.tensor([0, 2]).nonzero_static(size=1), np.array([[1]]))


# ---------------------------------------------------------------- scatter

@pytest.mark.parametrize("d", DTYPES)
def test_scatter_src_and_value(d):
    rng = np.random.default_rng(5)
    for shape in [(4, 3), (3, 2, 4), (6,), (3, 0)]:
        nd = len(shape)
        for dim in (0, -1):
            a, xv = make_view(rng, _vals(rng, shape, d), d)
            ishape = [int(rng.integers(0, n + 1)) for n in shape]
            ishape[dim] = int(rng.integers(0, shape[dim] + 2)) if shape[dim] else 0
            sshape = [n + int(rng.integers(0, 2)) for n in ishape]
            idx = rng.integers(0, max(shape[dim], 1), size=ishape)
            src = _vals(rng, sshape, d)
            want = _ref_scatter(a, dim % nd, idx, src)
            _eq(T.scatter(xv, dim, _long(idx), make_tensor(src, d)), want)
            x = _wview(rng, a, d)          # in place through a non-contiguous view
            assert x.scatter_(dim, T.asarray(idx.astype(np.int32)), make_tensor(src, d)) is x
            _eq(x, want)
            v = complex(2, 1) if d.kind == "c" else True if d is dt.bool_ else 3
            want = _ref_scatter(a, dim % nd, idx, v)
            _eq(make_tensor(a, d).scatter(dim, _long(idx), value=v), want)
            _eq(T.scatter(make_tensor(a, d), dim, _long(idx), v), want)


@pytest.mark.parametrize("d", NUM)
@pytest.mark.parametrize("reduce", ("add", "multiply"))
def test_scatter_reduce_argument(d, reduce):
    rng = np.random.default_rng(6)
    a = _vals(rng, (3, 4), d)
    idx = rng.integers(0, 3, size=(5, 4))        # repeated targets combine
    src = _vals(rng, (5, 4), d)
    want = _ref_scatter(a, 0, idx, src, reduce)
    _eq(T.scatter(make_tensor(a, d), 0, _long(idx), make_tensor(src, d), reduce=reduce), want)
    x = _wview(rng, a, d)
    x.scatter_(-2, _long(idx), 2, reduce=reduce)
    _eq(x, _ref_scatter(a, 0, idx, 2, reduce))


def test_scatter_0d():
    _eq(T.tensor(5.0).scatter(0, T.tensor(0), 1.0), np.array(1.0))
    _eq(T.tensor(5.0).scatter(-1, _long([0]), T.tensor([2.0])), np.array(2.0))
    _eq(T.zeros(3).scatter_(0, _long([2]), T.tensor(4.0)), np.array([0, 0, 4.0]))


# ---------------------------------------------------------------- index_copy / index_fill

@pytest.mark.parametrize("d", DTYPES)
def test_index_copy_and_fill(d):
    rng = np.random.default_rng(7)
    for shape in [(4, 3), (2, 5, 3), (6,), (0, 2)]:
        nd = len(shape)
        for dim in range(-nd, nd):
            n = shape[dim]
            a, xv = make_view(rng, _vals(rng, shape, d), d)
            k = min(n, 3)
            idx = rng.permutation(n)[:k]
            sshape = list(shape)
            sshape[dim] = k
            src = _vals(rng, sshape, d)
            want = a.copy()
            for i in range(k):
                want[(slice(None),) * (dim % nd) + (idx[i],)] = np.take(src, i, axis=dim)
            _eq(T.index_copy(xv, dim, _long(idx), make_tensor(src, d)),
                want)
            x = _wview(rng, a, d)
            assert x.index_copy_(dim, _long(idx), make_tensor(src, d)) is x
            _eq(x, want)
            fi = rng.integers(-n, n, size=4) if n else np.zeros(0, np.int64)
            v = complex(1, 2) if d.kind == "c" else False if d is dt.bool_ else 2
            want = a.copy()
            want[(slice(None),) * (dim % nd) + (fi,)] = v
            _eq(make_tensor(a, d).index_fill(dim, _long(fi), v), want)
            x = _wview(rng, a, d)
            x.index_fill_(dim, _long(fi), T.tensor(v))
            _eq(x, want)


def test_index_copy_fill_0d_and_repeats():
    _eq(T.tensor(5.0).index_copy(0, _long([0]), T.tensor([2.0])), np.array(2.0))
    _eq(T.tensor(5.0).index_copy(0, T.tensor(0), T.tensor(3.0)), np.array(3.0))
    _eq(T.zeros((3, 2)).index_copy(0, T.tensor(1), T.ones((1, 2))), np.array([[0, 0], [1, 1], [0, 0.0]]))
    _eq(T.tensor(5.0).index_fill(0, _long([-1]), 1.0), np.array(1.0))
    # repeated indices: the last write wins (PyTorch's CPU order)
    _eq(T.zeros(3).index_copy(0, _long([1, 1]), T.tensor([4.0, 5.0])), np.array([0, 5.0, 0]))
    _eq(T.zeros(3, dtype="int64").index_fill(0, _long([0]), 2.7), np.array([2, 0, 0]))


# ---------------------------------------------------------------- masked_scatter / put

@pytest.mark.parametrize("d", DTYPES)
def test_masked_scatter(d):
    rng = np.random.default_rng(8)
    for shape, mshape in [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 2), (3, 1)), ((0, 3), (3,)),
                          ((3,), (2, 3))]:
        a, xv = make_view(rng, _vals(rng, shape, d), d)
        m = rng.random(mshape) < 0.5
        out = np.broadcast_to(a, np.broadcast_shapes(shape, mshape)).copy()
        mb = np.broadcast_to(m, out.shape)
        src = _vals(rng, (int(mb.sum()) + 2,), d)
        out[mb] = src[:mb.sum()]
        got = T.masked_scatter(xv, T.asarray(m), make_tensor(src, d))
        _eq(got, out)
        if out.shape == a.shape:
            x = _wview(rng, a, d)
            assert x.masked_scatter_(T.asarray(m), make_tensor(src.reshape(1, -1), d)) is x
            _eq(x, out)
    _eq(T.tensor(1.0).masked_scatter(T.tensor(True), T.tensor([5.0, 6.0])), np.array(5.0))
    _eq(T.tensor(1.0).masked_scatter(T.tensor(False), T.zeros(0)), np.array(1.0))


@pytest.mark.parametrize("d", DTYPES)
def test_put(d):
    rng = np.random.default_rng(9)
    for shape in [(3, 4), (2, 3, 2), (5,), ()]:
        a, xv = make_view(rng, _vals(rng, shape, d), d)
        n = a.size
        for ishape in [(4,), (2, 3), (0,)]:
            idx = rng.integers(-n, n, size=ishape)
            src = _vals(rng, ishape, d)
            acc = d is not dt.bool_ and bool(rng.random() < 0.5)
            if not acc:   # unique targets: PyTorch leaves the order of repeated writes open
                idx = (rng.permutation(n)[:min(n, int(np.prod(ishape)))] - n)[:np.prod(ishape)]
                if idx.size < np.prod(ishape):
                    continue
                idx = idx.reshape(ishape)
            want = _ref_put(a, idx, src, acc)
            _eq(T.put(xv, _long(idx), make_tensor(src, d), accumulate=acc),
                want)
            x = _wview(rng, a, d)
            assert x.put_(_long(idx), make_tensor(src, d), acc) is x
            _eq(x, want)


# ---------------------------------------------------------------- index_reduce

@pytest.mark.parametrize("d", NUM)
@pytest.mark.parametrize("reduce", ("prod", "mean", "amax", "amin"))
def test_index_reduce(d, reduce):
    rng = np.random.default_rng(10)
    for shape, dim in [((4, 3), 0), ((2, 5, 3), -2), ((6,), 0), ((3, 0), 1)]:
        a, xv = make_view(rng, _vals(rng, shape, d), d)
        n = shape[dim]
        k = 5 if n else 0
        idx = rng.integers(0, max(n, 1), size=k)
        sshape = list(shape)
        sshape[dim] = k
        src = _vals(rng, sshape, d)
        for inc in (True, False):
            want = _ref_index_reduce(a, dim % len(shape), idx, src, reduce, inc)
            got = T.index_reduce(xv, dim, _long(idx), make_tensor(src, d),
                                 reduce, include_self=inc)
            tol = 1e-2 if d is dt.float16 else 1e-6
            np.testing.assert_allclose(to_np(got).astype(float), want.astype(float), rtol=tol)
            x = _wview(rng, a, d)
            assert x.index_reduce_(dim, T.asarray(idx.astype(np.int32)), make_tensor(src, d),
                                   reduce, include_self=inc) is x
            np.testing.assert_allclose(to_np(x).astype(float), want.astype(float), rtol=tol)
    _eq(T.tensor(5.0).index_reduce(0, _long([0]), T.tensor(2.0), "prod"), np.array(10.0))


# ---------------------------------------------------------------- *_scatter

@pytest.mark.parametrize("d", DTYPES)
def test_diagonal_select_slice_scatter(d):
    rng = np.random.default_rng(11)
    for shape in [(3, 4), (2, 3, 4), (4,), (0, 3)]:
        a, x = make_view(rng, _vals(rng, shape, d), d)
        nd = len(shape)
        if nd >= 2:
            for off, d1, d2 in [(0, 0, 1), (1, -1, 0), (-1, 0, -1), (5, 0, 1)]:
                diag = np.diagonal(a, off, d1, d2)
                src = _vals(rng, diag.shape, d)
                want = a.copy()
                i = np.arange(diag.shape[-1])
                r, c = (i, i + off) if off >= 0 else (i - off, i)
                w = np.moveaxis(want, (d1 % nd, d2 % nd), (-2, -1))
                w[..., r, c] = src
                _eq(T.diagonal_scatter(x, make_tensor(src, d), off, d1, d2), want)
                _eq(x.diagonal_scatter(make_tensor(src, d), offset=off, dim1=d1, dim2=d2), want)
        for dim in range(-nd, nd):
            n = shape[dim]
            for k in ([0, n - 1, -1] if n else []):
                sl = np.take(a, k, axis=dim)
                src = _vals(rng, sl.shape, d)
                want = a.copy()
                want[(slice(None),) * (dim % nd) + (k,)] = src
                _eq(T.select_scatter(x, make_tensor(src, d), dim, k), want)
            for start, end, step in [(None, None, 1), (1, None, 2), (-2, None, 1), (0, 9, 3),
                                     (5, 7, 1)]:
                key = (slice(None),) * (dim % nd) + (slice(start, end, step),)
                src = _vals(rng, a[key].shape, d)
                want = a.copy()
                want[key] = src
                _eq(T.slice_scatter(x, make_tensor(src, d), dim, start, end, step), want)
                _eq(x.slice_scatter(make_tensor(src, d), dim=dim, start=start, end=end, step=step),
                    want)


def test_scatter_family_casts_src():
    _eq(T.select_scatter(T.zeros((2, 2)), T.tensor([1, 2]), 0, 0), np.array([[1, 2], [0, 0.0]]))
    _eq(T.slice_scatter(T.zeros(3, dtype="int64"), T.tensor([1.5]), 0, 1, 2), np.array([0, 1, 0]))
    _eq(T.diagonal_scatter(T.zeros((2, 2), dtype="float32"), T.ones(2, dtype="float64")),
        np.eye(2, dtype=np.float32))


# ---------------------------------------------------------------- errors


def _errors():
    x, f = T.zeros((3, 4)), T.zeros((3, 4), dtype="float32")   # float64: the default
    i1 = _long([0, 1])
    return [
        (lambda: T.index_select(x, 0, T.tensor([0.0])),
         TypeError, "index_select: index must have dtype int32 or int64"),
        (lambda: T.index_select(x, 0, _long([[0]])), IndexError, "index_select: index must be 0-d or 1-d"),
        (lambda: T.index_select(x, 0, _long([3])),
         IndexError, "index_select: index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: T.index_select(x, 1, _long([-1])), IndexError, "index_select: index -1 is out of bounds"),
        (lambda: T.index_select(x, 2, i1), Exception, "index_select"),
        (lambda: T.masked_select(x, T.zeros(4)), TypeError, "masked_select: mask must be bool"),
        (lambda: T.masked_select(x, T.zeros(2, dtype="bool")), ValueError, "masked_select"),
        (lambda: T.narrow(x, 0, 2, 2), ValueError, r"narrow: start \(2\) \+ length \(2\) exceeds"),
        (lambda: T.narrow(x, 0, 4, 0), IndexError, "narrow: start 4 is out of range"),
        (lambda: T.narrow(x, 0, 3, 1), ValueError, r"narrow: start \(3\) \+ length \(1\)"),
        (lambda: T.narrow(x, 0, 0, -1), ValueError, "narrow: length must be non-negative"),
        (lambda: T.narrow(T.tensor(1.0), 0, 0, 1), ValueError, "narrow: cannot be applied to a 0-d"),
        (lambda: x.unfold(0, 4, 1), ValueError, r"unfold: size 4 must be in \[0, 3\]"),
        (lambda: x.unfold(0, 1, 0), ValueError, "unfold: step must be positive"),
        (lambda: x.scatter_(0, _long([[3]]), 1.0),
         IndexError, "scatter_: index 3 is out of bounds for dimension 0"),
        (lambda: x.scatter_(0, _long([[-1]]), 1.0), IndexError, "scatter_: index -1"),
        (lambda: x.scatter_(0, _long([0]), 1.0), ValueError, "scatter_: index .* same number of dimensions"),
        (lambda: x.scatter(0, _long([[0, 1]]), T.ones((1, 1))),
         ValueError, "scatter: index of shape .* is larger than src"),
        (lambda: x.scatter(1, _long([[0]] * 4), 1.0), ValueError, "along dimension 0"),
        (lambda: x.scatter(0, _long([[0]]), f[:1, :1]),
         TypeError, r"scatter: src \(float32\) must have the dtype of self \(float64\)"),
        (lambda: x.scatter(0, T.tensor([[0.0]]), 1.0), TypeError, "scatter: index must have dtype"),
        (lambda: x.scatter(0, _long([[0]]), 1j), TypeError, "scatter: cannot write complex"),
        (lambda: x.scatter(0, _long([[0]])), TypeError, "scatter: give exactly one of src"),
        (lambda: x.scatter(0, _long([[0]]), 1.0, reduce="max"),
         ValueError, "reduce must be 'add' or 'multiply'"),
        (lambda: x.index_copy_(0, T.asarray(np.array([0], np.int32)), T.ones((1, 4))),
         TypeError, "index_copy_: index must have dtype int64"),
        (lambda: x.index_copy(0, _long([-1]), T.ones((1, 4))),
         IndexError, "index_copy: index -1 is out of bounds"),
        (lambda: x.index_copy_(0, i1, T.ones((1, 4))),
         ValueError, r"index_copy_: source of shape \(1, 4\) does not match \(2, 4\)"),
        (lambda: x.index_copy_(0, i1, f[:2]), TypeError, "index_copy_: source"),
        (lambda: x.index_fill_(0, _long([3]), 1.0), IndexError, "index_fill_: index 3 is out of bounds"),
        (lambda: x.index_fill_(0, _long([-4]), 1.0), IndexError, "index_fill_: index -4"),
        (lambda: x.index_fill_(0, i1, T.ones(2)), ValueError, "index_fill_: a value tensor must be 0-d"),
        (lambda: x.index_fill_(0, i1, 1j), TypeError, "index_fill_: cannot write complex"),
        (lambda: x.masked_scatter_(T.ones((3, 4), dtype="bool"), T.ones(11)),
         ValueError, "masked_scatter_: source has 11 elements, fewer than the mask's 12"),
        (lambda: x.masked_scatter_(T.ones((3, 4)), T.ones(12)),
         TypeError, "masked_scatter_: mask must be bool"),
        (lambda: x.masked_scatter_(T.ones((3, 4), dtype="bool"), f.reshape(-1)),
         TypeError, "masked_scatter_: source"),
        (lambda: T.ones(4).masked_scatter_(T.ones((2, 4), dtype="bool"), T.ones(8)),
         ValueError, "masked_scatter_: mask of shape"),
        (lambda: T.take_along_dim(x, _long([[3]]), 0),
         IndexError, "take_along_dim: index 3 is out of bounds"),
        (lambda: T.take_along_dim(x, _long([12])), IndexError, "take_along_dim: index 12 is out of bounds"),
        (lambda: T.take_along_dim(x, _long([0]), 0),
         ValueError, "take_along_dim: input .* same number of dimensions"),
        (lambda: T.take_along_dim(x, T.asarray(np.zeros((1, 1), np.int32)), 0),
         TypeError, "take_along_dim: index must have dtype int64"),
        (lambda: x.put_(_long([12]), T.ones(1)), IndexError, "put_: index 12 is out of bounds with size 12"),
        (lambda: x.put_(_long([-13]), T.ones(1)), IndexError, "put_: index -13"),
        (lambda: x.put_(i1, T.ones(3)), ValueError, "put_: source .* same number of elements"),
        (lambda: x.put_(i1, f[0, :2]), TypeError, "put_: source"),
        (lambda: x.index_reduce_(0, i1, T.ones((2, 4)), "sum"),
         ValueError, "index_reduce_: reduce must be one of"),
        (lambda: x.index_reduce(0, _long([3, 0]), T.ones((2, 4)), "prod"),
         IndexError, "index_reduce: index 3 is out of bounds"),
        (lambda: x.index_reduce_(0, i1, T.ones((2, 3)), "amax"),
         ValueError, "index_reduce_: source of shape"),
        (lambda: x.index_reduce_(0, i1, f[:2], "amax"), TypeError, "index_reduce_: source"),
        (lambda: T.zeros(2, dtype="bool").index_reduce_(0, _long([0]), T.ones(1, dtype="bool"), "amax"),
         TypeError, "index_reduce_: bool"),
        (lambda: T.diagonal_scatter(x, T.ones(4)), ValueError, r"diagonal_scatter: src of shape \(4,\)"),
        (lambda: T.diagonal_scatter(x, T.ones(3, dtype="complex64")),
         TypeError, "diagonal_scatter: cannot write complex64"),
        (lambda: T.select_scatter(x, T.ones(3), 0, 0), ValueError, "select_scatter: src of shape"),
        (lambda: T.select_scatter(x, T.ones(4), 0, 3), IndexError, "select_scatter: index 3 is out of range"),
        (lambda: T.slice_scatter(x, T.ones((2, 4)), 0, 0, 1), ValueError, "slice_scatter: src of shape"),
        (lambda: T.slice_scatter(x, T.ones((1, 4)), 0, 0, 1, 0),
         ValueError, "slice_scatter: step must be positive"),
        (lambda: T.nonzero_static(x, size=-1), ValueError, "nonzero_static: size must be a non-negative"),
        (lambda: T.index_select([1, 2], 0, i1), TypeError, "index_select: input must be a Tensor"),
    ]


def test_errors_name_the_op_and_write_nothing():
    for fn, exc, match in _errors():
        with pytest.raises(exc, match=match):
            fn()
    x = T.arange(6.0)
    with pytest.raises(IndexError):
        x.scatter_(0, _long([0, 9]), T.ones(2))
    with pytest.raises(IndexError):
        x.put_(_long([1, 6]), T.ones(2))
    _eq(x, np.arange(6.0))


# ---------------------------------------------------------------- gradients

def _cases(N=T, L=None):
    """(name, function, input shapes); N: the namespace (tensor, or torch for the reference),
    L: its int64 tensor from a list."""
    L = L or _long
    rng = np.random.default_rng(12)
    idx = L([[0, 2, 1, 0], [2, 0, 0, 1]])
    m = N.asarray(rng.random((3, 4)) < 0.5)

    def inplace(f):
        def g(x, *a):
            y = x * 1
            f(y, *a)
            return y
        return g

    return [
        ("index_select", lambda x: N.index_select(x, 1, L([0, 3, 0])), [(3, 4)]),
        ("masked_select", lambda x: N.masked_select(x, m[0]), [(3, 4)]),
        ("narrow", lambda x: N.narrow(x, -1, 1, 2), [(3, 4)]),
        ("unfold", lambda x: x.T.unfold(0, 3, 1), [(3, 4)]),
        ("take_along_dim", lambda x: N.take_along_dim(x, L([[0], [-1]]), 1), [(1, 4)]),
        ("take_along_dim None", lambda x: N.take_along_dim(x, L([[0, 11], [3, 3]])), [(3, 4)]),
        ("scatter", lambda x, s: N.scatter(x, 0, idx, s), [(3, 4), (2, 5)]),
        ("scatter value", lambda x: N.scatter(x, 0, idx, value=2.0), [(3, 4)]),
        ("scatter_ add", inplace(lambda y, s: y.scatter_(0, idx, s, reduce="add")), [(3, 4), (2, 4)]),
        ("scatter_ multiply", inplace(lambda y, s: y.scatter_(0, idx, s, reduce="multiply")),
         [(3, 4), (2, 4)]),
        ("index_copy", lambda x, s: N.index_copy(x, 1, L([3, 0]), s), [(3, 4), (3, 2)]),
        ("index_fill", lambda x, v: N.index_fill(x, 1, L([1, 3, 1]), v), [(3, 4), ()]),
        ("masked_scatter", lambda x, s: N.masked_scatter(x, m, s), [(3, 4), (13,)]),
        ("masked_scatter_", inplace(lambda y, s: y.masked_scatter_(m, s)), [(3, 4), (13,)]),
        ("put accumulate", lambda x, s: N.put(x, L([5, -1, 5]), s, accumulate=True),
         [(3, 4), (3,)]),
        ("put", lambda x, s: N.put(x.T, L([[5, -1], [0, 2]]), s), [(3, 4), (4,)]),
        ("diagonal_scatter", lambda x, s: N.diagonal_scatter(x, s, 1), [(3, 4), (3,)]),
        ("select_scatter", lambda x, s: N.select_scatter(x, s, 1, -1), [(3, 4), (3,)]),
        ("slice_scatter", lambda x, s: N.slice_scatter(x, s, 1, 0, None, 2), [(3, 4), (3, 2)]),
    ] + [(f"index_reduce {r} {inc}", lambda x, s, r=r, inc=inc: N.index_reduce(
        x, 1, L([1, 3, 1]), s, r, include_self=inc), [(3, 4), (3, 3)])
        for r in ("prod", "mean", "amax", "amin") for inc in (True, False)] + [
        ("index_reduce_", inplace(lambda y, s: y.index_reduce_(0, L([2, 0]), s, "amax")),
         [(3, 4), (2, 4)])]


_CHUNK = 4


@pytest.mark.parametrize("first", range(0, len(_cases()), _CHUNK))
def test_gradcheck(first):
    """Every case on the CPU; on CUDA (the emulator is slow) one case of each chunk: the
    compositions are the same code on both devices, only their primitives' kernels differ."""
    cases = list(enumerate(_cases()))[first:first + _CHUNK]
    if T.get_default_device().type != "cpu":
        cases = cases[(first // _CHUNK) % len(cases):][:1]
    for case, (name, fn, shapes) in cases:
        rng = np.random.default_rng(13 + case)
        # distinct values: amax/amin ties and prod zeros have their own subgradients
        ins = tuple(T.asarray(rng.permutation(40)[:int(np.prod(s))].reshape(s) / 7.0 + 0.5,
                              dtype="float64").requires_grad_() for s in shapes)
        assert autograd.gradcheck(fn, ins), name


def test_forward_mode_matches_central_differences():
    cases = list(enumerate(_cases()))
    if T.get_default_device().type != "cpu":
        cases = cases[::7]
    for case, (name, fn, shapes) in cases:
        rng = np.random.default_rng(40 + case)
        ins = tuple(T.asarray(rng.permutation(40)[:int(np.prod(s))].reshape(s) / 7.0 + 0.5,
                              dtype="float64") for s in shapes)
        tans = tuple(T.asarray(rng.standard_normal(s)) for s in shapes)
        _, got = autograd.jvp(fn, ins, tans)
        eps = 1e-6
        up = fn(*(a + eps * t for a, t in zip(ins, tans)))
        down = fn(*(a - eps * t for a, t in zip(ins, tans)))
        np.testing.assert_allclose(to_np(got), (to_np(up) - to_np(down)) / (2 * eps), atol=1e-6,
                                   err_msg=name)


def test_index_fill_value_tensor_gets_the_sum():
    v = T.tensor(2.0, dtype="float64", requires_grad=True)
    x = T.ones((2, 3), dtype="float64", requires_grad=True)
    T.index_fill(x, 1, _long([0, 2, 0]), v).sum().backward()
    assert v.grad.item() == 4.0    # each filled element once, repeats counted once (PyTorch's)
    _eq(x.grad, np.array([[0, 1, 0], [0, 1, 0.0]]))


# ---------------------------------------------------------------- PyTorch

@pytest.mark.filterwarnings("ignore:index_reduce")
def test_against_torch_values_and_gradients():
    torch = pytest.importorskip("torch")
    ref_cases = _cases(torch, lambda a: torch.tensor(np.asarray(a, dtype=np.int64)))
    for (name, fn, shapes), (_, tfn, _) in zip(_cases(), ref_cases):
        if name.startswith("scatter_ ") or name == "scatter":
            continue   # PyTorch: no derivative for reduce=; its src grad fails for a larger src
        rng = np.random.default_rng(7)
        arrs = [rng.standard_normal(s) for s in shapes]
        ours = [T.asarray(a).requires_grad_() for a in arrs]
        ref = [torch.tensor(a, requires_grad=True) for a in arrs]
        r, q = fn(*ours), tfn(*ref)
        g = rng.standard_normal(tuple(q.shape))
        r.backward(T.asarray(g))
        q.backward(torch.tensor(g))
        np.testing.assert_allclose(to_np(r.detach()), q.detach().numpy(), err_msg=name)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(to_np(a.grad), b.grad.numpy(), err_msg=name)
    idx = torch.tensor([[0, 2, 1, 0], [2, 0, 0, 1]])
    src = torch.arange(8.0, dtype=torch.float64).reshape(2, 4)
    np.testing.assert_array_equal(
        to_np(T.scatter(T.zeros((3, 4)), 0, _long(idx.numpy()), T.asarray(src.numpy()))),
        torch.scatter(torch.zeros((3, 4), dtype=torch.float64), 0, idx, src).numpy())
    np.testing.assert_array_equal(
        to_np(T.nonzero_static(T.asarray([[0, 1], [2, 0]]), size=4)),
        torch.nonzero_static(torch.tensor([[0, 1], [2, 0]]), size=4).numpy())


def test_docstring_examples():
    import doctest

    from tensor import torch_index
    assert doctest.testmod(torch_index).failed == 0


def test_public_names_functions_and_methods():
    from tensor import scatter as S  # still the module of index writes (tensor/scatter.py)
    from tensor.public import COMPOSITE
    fns = ("index_select masked_select narrow scatter index_copy index_fill masked_scatter "
           "take_along_dim put index_reduce diagonal_scatter select_scatter slice_scatter "
           "nonzero_static").split()
    x = T.zeros(2)
    for n in fns:
        assert callable(getattr(T, n)) and hasattr(x, n), n
        assert n in COMPOSITE, n
    for n in ("scatter_", "index_copy_", "index_fill_", "masked_scatter_", "put_",
              "index_reduce_", "unfold"):
        assert hasattr(x, n) and not hasattr(T, n), n
    assert hasattr(S, "index_put_") and S.__name__ == "tensor.scatter"
    _eq(T.scatter(T.zeros(3), 0, _long([1]), 2.0), np.array([0, 2.0, 0]))
