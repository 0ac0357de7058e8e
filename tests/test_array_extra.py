"""NumPy's array construction and manipulation functions (tensor/array_extra.py, array_extra2.py)
against NumPy 2 (PyTorch's CPU build where it has the name), on cpu and cuda: dtypes, 0-d and
empty shapes, non-contiguous views, errors naming the function, float64 gradients."""
from __future__ import annotations

import math
import warnings

import helpers
import numpy as np
import pytest

import autograd
import tensor as T

pytestmark = pytest.mark.usefixtures("device")

DTYPES = ["bool", "int8", "int64", "float16", "float32", "float64", "complex128"]


def rnd(shape, d="float64", seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if d == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(d).kind in "iu":
        return rng.integers(-9, 10, shape).astype(d)
    a = rng.standard_normal(shape) * 3
    if np.dtype(d).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(d)


def ours(a) -> T.Tensor:
    return T.tensor(a)


def views(a: np.ndarray):
    """a, its transpose and a stepped slice of a bigger array, all equal to a (or a.T)."""
    yield a, ours(a)
    if a.ndim >= 2:
        yield a.T, ours(np.ascontiguousarray(a)).T
    if a.ndim >= 1:
        big = np.repeat(a, 2, axis=-1)
        yield big[..., ::2], ours(big)[..., ::2]


def check(got, want, rtol=None, atol=0.0) -> None:
    """got (a tensor on the test's device) equals NumPy's want: dtype, shape and values."""
    want = np.asarray(want)
    assert isinstance(got, T.Tensor), type(got)
    assert got.device == T.device(helpers.DEVICE), got.device
    assert str(got.dtype).split(".")[-1] == str(want.dtype), (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    g = got.numpy()
    if rtol is None:
        rtol = {"float16": 2e-3, "float32": 2e-6, "complex64": 2e-6}.get(str(want.dtype), 1e-12)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def gradcheck(fn, *arrays) -> None:
    assert autograd.gradcheck(fn, tuple(T.tensor(a, requires_grad=True) for a in arrays))


# ---------------------------------------------------------------- diagonals and trace

@pytest.mark.parametrize("d", DTYPES)
def test_diag_diagflat(d):
    for shape in [(0,), (1,), (4,), (3, 4), (0, 2), (4, 2)]:
        for a, t in views(rnd(shape, d)):
            for k in (-2, 0, 1, 5):
                check(T.diag(t, k), np.diag(a, k))
                check(T.diagflat(t, k), np.diagflat(a, k))
    with pytest.raises(ValueError, match="diag: input must be 1-d or 2-d"):
        T.diag(ours(rnd((), d)))
    with pytest.raises(ValueError, match="diag: input must be 1-d or 2-d"):
        T.diag(ours(rnd((2, 2, 2), d)))
    check(T.diagflat(ours(rnd((), d))), np.diagflat(rnd((), d)))


def test_diag_copies_and_torch():
    a = rnd((3, 4))
    t = ours(a)
    r = T.diag(t, diagonal=1)
    assert not T.shares_memory(r, t)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(r.numpy(), torch.diag(torch.tensor(a), diagonal=1).numpy())
    np.testing.assert_array_equal(t.diag(-1).numpy(), torch.tensor(a).diag(-1).numpy())
    np.testing.assert_array_equal(T.diagflat(t, offset=2).numpy(),
                                  torch.diagflat(torch.tensor(a), offset=2).numpy())


@pytest.mark.parametrize("d", DTYPES)
def test_trace(d):
    for shape, args in [((3, 4), ()), ((0, 3), ()), ((2, 3, 4), (1, 2, 0)), ((3, 3), (-1,)),
                        ((4, 2, 3), (0, -1, 0))]:
        for a, t in views(rnd(shape, d)):
            if a.ndim == 3 and len(args) == 3:
                args = (args[0], args[1] % a.ndim, args[2] % a.ndim)
            check(T.trace(t, *args), np.trace(a, *args))
    a = rnd((3, 3), d)
    if d not in ("bool", "complex128"):
        check(T.trace(ours(a), dtype=T.float64), np.trace(a, dtype=np.float64))
    check(ours(a).trace(), np.trace(a))
    with pytest.raises(ValueError, match="trace: needs a tensor of rank >= 2"):
        T.trace(ours(rnd((3,), d)))
    with pytest.raises(ValueError, match="trace: axis1 and axis2 must differ"):
        T.trace(ours(a), axis1=1, axis2=-1)


# ---------------------------------------------------------------- cross and ptp

CROSS_SHAPES = [((3,), (3,)), ((4, 3), (3,)), ((2,), (2,)), ((5, 2), (5, 2)), ((2,), (4, 3)),
                ((4, 3), (2,)), ((0, 3), (3,)), ((2, 1, 3), (4, 3))]


@pytest.mark.parametrize("d", ["int8", "int64", "float32", "float64", "complex128"])
def test_cross(d):
    for i, (sa, sb) in enumerate(CROSS_SHAPES):
        a, b = rnd(sa, d, i), rnd(sb, d, i + 10)
        with warnings.catch_warnings():   # NumPy 2 deprecates 2-vectors
            warnings.simplefilter("ignore", DeprecationWarning)
            want = np.cross(a, b)
        check(T.cross(ours(a), ours(b)), want)
    a, b = rnd((3, 5), d), rnd((3, 5), d, 1)
    for kw in ({"axis": 0}, {"axisa": 0, "axisb": 0, "axisc": 0}, {"axisa": 0, "axisb": -2}):
        check(T.cross(ours(a), ours(b), **kw), np.cross(a, b, **kw))
    for (va, ta), (vb, tb) in zip(views(rnd((3, 3), d)), views(rnd((3, 3), d, 1))):
        check(T.cross(ta, tb), np.cross(va, vb))
        check(T.cross(ta, tb, axisa=0, axisb=0), np.cross(va, vb, axisa=0, axisb=0))


def test_cross_errors_and_torch():
    with pytest.raises(ValueError, match="cross: incompatible dimensions"):
        T.cross(ours(rnd((4,))), ours(rnd((3,))))
    with pytest.raises(ValueError, match="cross: both inputs need at least one dimension"):
        T.cross(ours(rnd(())), ours(rnd((3,))))
    with pytest.raises(TypeError, match="cross: not supported for bool"):
        T.cross(ours(rnd((3,), "bool")), ours(rnd((3,), "bool")))
    with pytest.raises(TypeError, match="cross: give axis or dim"):
        T.cross(ours(rnd((3,))), ours(rnd((3,))), axis=0, dim=0)
    torch = pytest.importorskip("torch")
    a, b = rnd((3, 4)), rnd((3, 4), seed=1)
    want = torch.cross(torch.tensor(a), torch.tensor(b), dim=0).numpy()
    np.testing.assert_allclose(T.cross(ours(a), ours(b), dim=0).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(ours(a).cross(ours(b), dim=0).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("d", ["int8", "int64", "float16", "float32", "float64"])
def test_ptp(d):
    for shape, axis in [((), None), ((5,), 0), ((3, 4), None), ((3, 4), 1), ((2, 3, 4), (0, 2)),
                        ((0, 3), 1)]:
        for a, t in views(rnd(shape, d)):
            if axis is not None and max(np.atleast_1d(axis)) >= a.ndim:
                continue
            for keepdims in (False, True):
                try:
                    want = np.ptp(a, axis=axis, keepdims=keepdims)
                except ValueError:
                    with pytest.raises(ValueError, match="ptp: zero-size"):
                        T.ptp(t, axis=axis, keepdims=keepdims)
                    continue
                check(T.ptp(t, axis=axis, keepdims=keepdims), want)
    with pytest.raises(TypeError, match="ptp: not supported for bool"):
        T.ptp(ours(rnd((3,), "bool")))
    with pytest.raises(TypeError, match="ptp: complex input"):
        T.ptp(ours(rnd((3,), "complex128")))


# ---------------------------------------------------------------- append, insert, delete

@pytest.mark.parametrize("d", DTYPES)
def test_append(d):
    for a, t in views(rnd((3, 4), d)):
        v = rnd((2, a.shape[1]), d, 1)
        check(T.append(t, ours(v), axis=0), np.append(a, v, axis=0))
        check(T.append(t, ours(v)), np.append(a, v))
        check(T.append(t, [1.5, 2]), np.append(a, [1.5, 2]))
    check(T.append(ours(rnd((), d)), ours(rnd((0,), d))), np.append(rnd((), d), rnd((0,), d)))
    with pytest.raises(ValueError, match=r"append: values of shape \(3,\) must match"):
        T.append(ours(rnd((2, 2), d)), ours(rnd((3,), d)), axis=0)


INSERT_OBJS = [0, 2, -1, [1], [0, 2, 2, -1], [3, 0], slice(0, 3, 2), slice(5, 9), [],
               np.array([True, False, True, False])]


@pytest.mark.parametrize("d", DTYPES)
def test_insert(d):
    for a, t in views(rnd((3, 4), d)):
        for obj in INSERT_OBJS:
            for axis, values in ((None, 7), (0, rnd((a.shape[1],), d, 2)), (1, 5),
                                 (1, rnd((a.shape[0], 1), d, 3)), (-1, [[1], [2], [3]][:a.shape[0]])):
                if isinstance(obj, np.ndarray) and axis is not None and len(obj) != a.shape[axis]:
                    continue
                try:
                    want = np.insert(a, obj, values, axis=axis)
                except (ValueError, IndexError) as e:
                    with pytest.raises(type(e), match="insert: "):
                        T.insert(t, obj, values, axis=axis)
                    continue
                check(T.insert(t, obj, values, axis=axis), want)
    scalar = rnd((), d)
    check(T.insert(ours(rnd((0,), d)), 0, scalar), np.insert(rnd((0,), d), 0, scalar))
    v = ours(rnd((2, 3), d))
    check(T.insert(v, 1, ours(rnd((2,), d, 1)), axis=1),
          np.insert(rnd((2, 3), d), 1, rnd((2,), d, 1), axis=1))


def test_insert_delete_errors():
    t = ours(rnd((2, 3)))
    with pytest.raises(IndexError, match="insert: index 4 is out of bounds for axis 1 with size 3"):
        T.insert(t, 4, 0, axis=1)
    with pytest.raises(IndexError, match="delete: index -4 is out of bounds"):
        T.delete(t, [-4], axis=1)
    with pytest.raises(ValueError, match="insert: obj must be 1-d or a scalar"):
        T.insert(t, [[0]], 0, axis=1)
    with pytest.raises(IndexError, match="delete: obj must be integers"):
        T.delete(t, [0.5], axis=1)
    with pytest.raises(ValueError, match="delete: a bool obj must have the axis' length 3"):
        T.delete(t, [True, False], axis=1)
    with pytest.raises(ValueError, match="insert: values of shape"):
        T.insert(t, [0, 1], ours(rnd((3,))), axis=1)
    with pytest.raises(ValueError, match="delete: axis 0 is out of bounds"):
        T.delete(ours(rnd(())), 0, axis=0)
    with pytest.raises(T.AxisError, match="insert"):
        T.insert(t, 0, 1, axis=2)


DELETE_OBJS = [0, -1, [0, 2, 2, -1], [], slice(None, None, 2), slice(1, 10), slice(3, 0),
               np.array([1]), 7, [True, False, True, True]]


@pytest.mark.parametrize("d", DTYPES)
def test_delete(d):
    for a, t in views(rnd((3, 4), d)):
        for obj in DELETE_OBJS:
            for axis in (None, 0, 1, -2):
                if isinstance(obj, list) and obj and isinstance(obj[0], bool):
                    n = a.size if axis is None else a.shape[axis]
                    obj = (obj * 4)[:n]
                try:
                    want = np.delete(a, obj, axis=axis)
                except (ValueError, IndexError) as e:
                    with pytest.raises(type(e), match="delete: "):
                        T.delete(t, obj, axis=axis)
                    continue
                check(T.delete(t, obj, axis=axis), want)
    check(T.delete(ours(rnd((0,), d)), []), np.delete(rnd((0,), d), []))


# ---------------------------------------------------------------- joining and reshaping

@pytest.mark.parametrize("d", DTYPES)
def test_column_row_stack_block(d):
    a, b, c = rnd((3,), d), rnd((3, 2), d, 1), rnd((), d, 2)
    check(T.column_stack([ours(a), ours(b)]), np.column_stack([a, b]))
    check(T.column_stack([ours(c)]), np.column_stack([c]))
    check(T.column_stack((ours(a)[::-1], [1, 2, 3])), np.column_stack((a[::-1], [1, 2, 3])))
    check(T.row_stack([ours(a), ours(b.T)]), np.vstack([a, b.T]))
    m = rnd((2, 2), d)
    for blocks in ([[ours(m), ours(b[:2])], [ours(a[None]), ours(c)[None, None]]],
                   [ours(a), ours(c)], [[[ours(c)]]], ours(m), [ours(m), ours(b.T)]):
        def to_np(x):
            return [to_np(y) for y in x] if isinstance(x, list) else x.numpy()
        check(T.block(blocks), np.block(to_np(blocks)))
    with pytest.raises(ValueError, match="block: list depths are mismatched"):
        T.block([ours(a), [ours(a)]])
    with pytest.raises(ValueError, match=r"block: lists cannot be empty \(arrays\[0\] is \[\]\)"):
        T.block([[]])
    with pytest.raises(TypeError, match="block: arrays is a tuple"):
        T.block((ours(a), ours(a)))
    with pytest.raises(ValueError, match="column_stack: need at least one array"):
        T.column_stack([])


@pytest.mark.parametrize("d", DTYPES)
def test_resize_vander_ediff1d(d):
    for shape in [(), (0,), (3,), (2, 3)]:
        for a, t in views(rnd(shape, d)):
            for new in [0, 5, (2, 4), (3, 0, 2), ()]:
                check(T.resize(t, new), np.resize(a, new))
            if d != "bool":
                check(T.ediff1d(t), np.ediff1d(a))
    a = rnd((4,), d)
    for N, inc in [(None, False), (3, True), (0, False), (1, True), (6, False)]:
        for v, t in views(a):
            want = np.vander(v, N, inc)
            check(T.vander(t, N, inc), want, rtol=1e-12 if want.dtype.kind in "fc" else None)
    with pytest.raises(ValueError, match="resize: all elements of new_shape must be non-negative"):
        T.resize(ours(a), (2, -1))
    with pytest.raises(ValueError, match="vander: x must be a one-dimensional array"):
        T.vander(ours(rnd((2, 2), d)))
    if d == "bool":
        with pytest.raises(TypeError, match="ediff1d: not supported for bool"):
            T.ediff1d(ours(a))
        return
    for kw in ({"to_begin": -1}, {"to_end": [[7, 8]]}, {"to_begin": ours(a)[:2], "to_end": 0}):
        want = np.ediff1d(a, **{k: (v.numpy() if isinstance(v, T.Tensor) else v)
                                for k, v in kw.items()})
        check(T.ediff1d(ours(a), **kw), want)
    if d in ("int8", "int64"):
        with pytest.raises(TypeError, match="ediff1d: the dtype of to_end"):
            T.ediff1d(ours(a), to_end=0.5)


def test_vander_torch():
    torch = pytest.importorskip("torch")
    x = rnd((4,))
    for N, inc in [(None, False), (3, True)]:
        np.testing.assert_allclose(T.vander(ours(x), N, inc).numpy(),
                                   torch.vander(torch.tensor(x), N, inc).numpy(), rtol=1e-12)
    a, b = rnd((3,)), rnd((3, 2))
    np.testing.assert_array_equal(T.column_stack([ours(a), ours(b)]).numpy(),
                                  torch.column_stack([torch.tensor(a), torch.tensor(b)]).numpy())


# ---------------------------------------------------------------- differences

@pytest.mark.parametrize("d", ["int8", "int64", "float16", "float32", "float64"])
def test_unwrap(d):
    rng = np.random.default_rng(3)
    p = (np.cumsum(rng.standard_normal((3, 8)) * 2.5, axis=1)).astype(d) if d[0] == "f" else \
        rng.integers(-20, 20, (3, 8)).astype(d)
    for a, t in views(p):
        check(T.unwrap(t), np.unwrap(a), rtol=1e-3 if d == "float16" else 1e-6)
        check(T.unwrap(t, axis=0, discont=4.0), np.unwrap(a, axis=0, discont=4.0),
              rtol=1e-3 if d == "float16" else 1e-6)
        check(T.unwrap(t, period=6), np.unwrap(a, period=6), rtol=1e-3 if d == "float16" else 1e-6)
    check(T.unwrap(ours(p[:, :0])), np.unwrap(p[:, :0]))
    with pytest.raises(ValueError, match="unwrap: needs a tensor of rank >= 1"):
        T.unwrap(ours(p[0, 0]))


@pytest.mark.parametrize("d", ["int8", "int64", "float16", "float32", "float64", "complex128"])
def test_gradient(d):
    f = rnd((4, 5), d)
    xs = np.cumsum(np.random.default_rng(1).random(5)) + 0.5
    rtol = 2e-2 if d == "float16" else 1e-5 if d == "float32" else 1e-12
    for a, t in views(f):
        for eo in (1, 2):
            want = np.gradient(a, edge_order=eo)
            got = T.gradient(t, edge_order=eo)
            for g, w in zip(got, want):
                check(g, w, rtol=rtol, atol=rtol)
            n1 = a.shape[1]
            for args in [(2.0,), (0.5, ours(xs[:n1])), (3, ours(np.arange(n1) * 2))]:
                npargs = [x.numpy() if isinstance(x, T.Tensor) else x for x in args]
                for g, w in zip(T.gradient(t, *args, edge_order=eo), np.gradient(a, *npargs, edge_order=eo)):
                    check(g, w, rtol=rtol, atol=rtol)
            check(T.gradient(t, ours(xs[:n1]), axis=-1, edge_order=eo),
                  np.gradient(a, xs[:n1], axis=-1, edge_order=eo), rtol=rtol, atol=rtol)
    with pytest.raises(ValueError, match="gradient: the shape of the array is too small"):
        T.gradient(ours(rnd((2,), d)), edge_order=2)
    with pytest.raises(ValueError, match="gradient: when 1d, distances must match"):
        T.gradient(ours(f), ours(xs), axis=0)
    with pytest.raises(TypeError, match="gradient: invalid number of spacing arguments"):
        T.gradient(ours(f), 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="gradient: edge_order must be 1 or 2"):
        T.gradient(ours(f), edge_order=3)
    with pytest.raises(TypeError, match="gradient: not supported for .*bool"):
        T.gradient(ours(rnd((3,), "bool")))


def test_gradient_torch():
    torch = pytest.importorskip("torch")
    f = rnd((4, 5))
    for kw in ({}, {"spacing": 2.0}, {"spacing": [2.0, 0.5], "edge_order": 2}, {"dim": 1}):
        want = torch.gradient(torch.tensor(f), **kw)
        got = T.gradient(ours(f), **kw)
        got = (got,) if isinstance(got, T.Tensor) else got
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- convolution

@pytest.mark.parametrize("d", ["bool", "int8", "int64", "float16", "float32", "float64", "complex128"])
def test_convolve_correlate(d):
    for n1, n2 in [(1, 1), (5, 3), (3, 5), (4, 4), (6, 1), (2, 7), (7, 4)]:
        a, v = rnd((n1,), d, n1), rnd((n2,), d, 10 + n2)
        for mode in ("full", "same", "valid"):
            tol = {"rtol": 5e-3, "atol": 1e-2} if d == "float16" else {}
            check(T.convolve(ours(a), ours(v), mode), np.convolve(a, v, mode), **tol)
            check(T.correlate(ours(a), ours(v), mode), np.correlate(a, v, mode), **tol)
    big = rnd((12,), d)
    check(T.convolve(ours(big)[::3], ours(big)[1::4]), np.convolve(big[::3], big[1::4]),
          rtol=5e-3 if d == "float16" else None, atol=1e-1 if d == "float16" else 0)
    check(T.convolve(ours(big[0]), ours(big[:3])), np.convolve(big[0], big[:3]),
          rtol=5e-3 if d == "float16" else None, atol=1e-2 if d == "float16" else 0)


@pytest.mark.parametrize("d", ["int64", "float32", "complex128"])
def test_convolve_in_blocks(d, monkeypatch):
    from tensor import array_extra2
    monkeypatch.setattr(array_extra2, "_BLOCK", 64)   # rows of windows a few at a time
    a, v = rnd((60,), d), rnd((25,), d, 1)
    for mode in ("full", "same", "valid"):
        check(T.convolve(ours(a), ours(v), mode), np.convolve(a, v, mode), rtol=1e-5)
        check(T.correlate(ours(v), ours(a), mode), np.correlate(v, a, mode), rtol=1e-5)
    if d == "complex128":
        gradcheck(lambda x, y: T.correlate(x, y, "same"), a[:9], v[:4])


def test_convolve_errors():
    a = ours(rnd((3,)))
    with pytest.raises(ValueError, match="convolve: v cannot be empty"):
        T.convolve(a, ours(rnd((0,))))
    with pytest.raises(ValueError, match="correlate: a must be 1-d"):
        T.correlate(ours(rnd((2, 2))), a)
    with pytest.raises(ValueError, match="convolve: mode must be 'full', 'same' or 'valid'"):
        T.convolve(a, a, "middle")


# ---------------------------------------------------------------- histograms

@pytest.mark.parametrize("d", ["bool", "int8", "int64", "float16", "float32", "float64"])
def test_histogramdd(d):
    s = rnd((40, 3), d)
    w = rnd((40,), "float64", 5)
    kws = [{}, {"bins": 4}, {"bins": (3, [-2, 0, 1, 2.5], 2)},
           {"bins": 5, "range": [(-2, 2), (0, 5), (-1, 1)], "density": True},
           {"bins": 3, "weights": w}, {"bins": [2, 3, 4], "density": True, "weights": w}]
    for kw in kws:
        with np.errstate(invalid="ignore"):   # density of an empty histogram: NaN
            want, wedges = np.histogramdd(s, **kw)
        for a, t in views(s):
            if a.shape != s.shape:
                continue
            got, edges = T.histogramdd(t, **{k: ours(v) if k == "weights" else v
                                             for k, v in kw.items()})
            check(got, want)
            for e, we in zip(edges, wedges):
                check(e, we, rtol=0)
    got, edges = T.histogramdd([ours(s[:, 0]), ours(s[:, 1])], bins=2)
    check(got, np.histogramdd([s[:, 0], s[:, 1]], bins=2)[0])
    check(T.histogramdd(ours(s[:0]), bins=2)[0], np.histogramdd(s[:0], bins=2)[0])
    check(T.histogramdd(ours(s[:, 0]), bins=3)[0], np.histogramdd(s[:, 0], bins=3)[0])


def test_histogram2d_and_errors():
    x, y = rnd((30,)), rnd((30,), "float32", 1)
    for kw in ({}, {"bins": 3}, {"bins": [3, 4]}, {"bins": [-2, 0, 0.5, 2]},
               {"bins": [[-1, 0, 1], [-3, 3]], "density": True},
               {"range": [[-1, 1], [0, 2]], "weights": rnd((30,), seed=4)}):
        want = np.histogram2d(x, y, **kw)
        got = T.histogram2d(ours(x), ours(y), **{k: ours(v) if k == "weights" else v
                                                  for k, v in kw.items()})
        for g, w in zip(got, want):
            check(g, w, rtol=1e-12)
    s = ours(rnd((5, 2)))
    with pytest.raises(ValueError, match="histogramdd: the dimension of bins"):
        T.histogramdd(s, bins=[2, 2, 2])
    with pytest.raises(ValueError, match=r"histogramdd: bins\[1\] must be positive"):
        T.histogramdd(s, bins=[2, 0])
    with pytest.raises(ValueError, match=r"histogramdd: bins\[0\] must be monotonically"):
        T.histogramdd(s, bins=[[1, 0], 2])
    with pytest.raises(ValueError, match="histogramdd: max must be larger than min"):
        T.histogramdd(s, range=[(1, 0), None])
    with pytest.raises(ValueError, match="histogramdd: weights of shape"):
        T.histogramdd(s, weights=ours(rnd((4,))))
    with pytest.raises(ValueError, match="histogram2d: x and y must have the same length"):
        T.histogram2d(ours(x), ours(x[:3]))
    with pytest.raises(ValueError, match="histogramdd: autodetected range of"):
        T.histogramdd(ours(np.array([[np.nan, 1.0]])))


def test_histogramdd_torch():
    torch = pytest.importorskip("torch")
    s, w = rnd((30, 2)), rnd((30,), seed=2)
    h, e = T.histogramdd(ours(s), bins=[3, 4], range=[-2.0, 2.0, -1.0, 1.0], weight=ours(w))
    th, te = torch.histogramdd(torch.tensor(s), bins=[3, 4], range=[-2.0, 2.0, -1.0, 1.0],
                               weight=torch.tensor(w))
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-12)
    for a, b in zip(e, te):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- creation

def test_ranges():
    for args, kw in [((0, 3, 4), {}), ((1, 2), {"num": 5, "endpoint": False}),
                     ((2, 5, 4), {"base": 2}), ((0, 2, 1), {}), ((0, 2, 0), {}),
                     (([0, 1], 3, 4), {"axis": -1}), ((0, [2, 3], 3), {"base": [2, 3], "axis": 1}),
                     ((0.5, -1, 5), {"dtype": "int64"}), ((1j, 2, 3), {})]:
        targs = [ours(np.asarray(a)) if isinstance(a, list) else a for a in args]
        tkw = {k: ours(np.asarray(v)) if isinstance(v, list) else
               (getattr(T, v) if k == "dtype" else v) for k, v in kw.items()}
        check(T.logspace(*targs, **tkw), np.logspace(*args, **kw))
    check(T.logspace(ours(np.float32([0, 1])), 3, 4), np.logspace(np.float32([0, 1]), 3, 4), rtol=1e-6)
    for args, kw in [((1, 1000, 4), {}), ((-1, -1000, 4), {}), ((2, 64, 3), {"endpoint": False}),
                     ((1j, 1000j, 4), {}), ((-1 + 0j, 1 + 0j, 5), {}), ((1, 2, 5), {"dtype": "float32"}),
                     (([1, 2], [8, 16], 4), {"axis": 1}), ((3, 5, 1), {}), ((3, 5, 0), {}),
                     ((1, 10, 3), {"dtype": "int64"})]:
        targs = [ours(np.asarray(a)) if isinstance(a, list) else a for a in args]
        tkw = {k: getattr(T, v) if k == "dtype" else v for k, v in kw.items()}
        check(T.geomspace(*targs, **tkw), np.geomspace(*args, **kw),
              rtol=1e-6 if kw.get("dtype") == "float32" else 1e-13)
    with pytest.raises(ValueError, match="geomspace: a geometric sequence cannot include zero"):
        T.geomspace(0, 10)
    with pytest.raises(ValueError, match="logspace: num must be non-negative"):
        T.logspace(0, 1, -1)
    torch = pytest.importorskip("torch")
    want = torch.logspace(0, 2, steps=5, base=3.0, dtype=torch.float64).numpy()
    np.testing.assert_allclose(T.logspace(0, end=2, steps=5, base=3.0).numpy(), want, rtol=1e-12)


def test_ranges_device():
    dev = T.device(helpers.DEVICE)
    for f in (T.logspace, T.geomspace):
        assert f(1, 2, 3, device="cpu").device == T.device("cpu")
        assert f(1, 2, 3).device == dev
    for f in (T.bartlett, T.blackman, T.hamming, T.hanning, T.identity):
        assert f(3, device="cpu").device == T.device("cpu")
    assert T.kaiser(3, 1.0, device="cpu").device == T.device("cpu")


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 5, 12])
def test_windows(M):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        check(getattr(T, name)(M), getattr(np, name)(M), rtol=0, atol=1e-15)
    for beta in (0.0, 0.5, 8.6, 40.0, -3.0):
        check(T.kaiser(M, beta), np.kaiser(M, beta), rtol=1e-13)
    torch = pytest.importorskip("torch")
    if M > 1:
        tw = torch.signal.windows
        for ours_w, theirs in ((T.hanning(M), tw.hann(M, dtype=torch.float64)),
                               (T.hamming(M), tw.hamming(M, dtype=torch.float64)),
                               (T.blackman(M), tw.blackman(M, dtype=torch.float64)),
                               (T.bartlett(M), tw.bartlett(M, dtype=torch.float64)),
                               (T.kaiser(M, 6.0), tw.kaiser(M, beta=6.0, dtype=torch.float64))):
            np.testing.assert_allclose(ours_w.numpy(), theirs.numpy(), atol=1e-12)


def test_window_errors():
    with pytest.raises(TypeError, match="hanning: M must be an integer"):
        T.hanning(2.5)
    with pytest.raises(TypeError, match="kaiser: beta must be a real number"):
        T.kaiser(4, "x")


@pytest.mark.parametrize("d", [None, "int8", "float32", "complex128"])
def test_identity_fromfunction(d):
    kw = {} if d is None else {"dtype": d}
    tkw = {} if d is None else {"dtype": getattr(T, d)}
    for n in (0, 1, 3):
        check(T.identity(n, **tkw), np.identity(n, **kw))
    check(T.fromfunction(lambda i, j: i * 10 + j, (2, 3), **tkw),
          np.fromfunction(lambda i, j: i * 10 + j, (2, 3), **kw))
    check(T.fromfunction(lambda i, k=2: i * k, (4,), k=3, **tkw),
          np.fromfunction(lambda i, k=2: i * k, (4,), k=3, **kw))
    with pytest.raises(ValueError, match="identity: n must be non-negative"):
        T.identity(-1)
    with pytest.raises(TypeError, match="fromfunction: function must be callable"):
        T.fromfunction(3, (2,))


# ---------------------------------------------------------------- inspection

def test_inspection():
    x = ours(rnd((2, 3)))
    for a in (x, [[1, 2, 3]], 5, x[:, ::2], ours(rnd(()))):
        na = a.numpy() if isinstance(a, T.Tensor) else a
        assert T.shape(a) == np.shape(na)
        assert T.size(a) == np.size(na)
        assert T.ndim(a) == np.ndim(na)
    assert T.size(x, 1) == 3 and T.size(x, -2) == 2
    for v in (x, ours(rnd((2,), "complex128")), [1j], 1.0, 2j, [True]):
        nv = v.numpy() if isinstance(v, T.Tensor) else v
        assert T.iscomplexobj(v) == np.iscomplexobj(nv)
        assert T.isrealobj(v) == np.isrealobj(nv)
    for v in (3, 2.5, 1j, True, "s", b"b", np.float32(1), np.int8(2), None, [1], x, ours(rnd(()))):
        assert T.isscalar(v) == (np.isscalar(v) if not isinstance(v, T.Tensor) else False), v
    assert T.may_share_memory(x, x.T) and T.may_share_memory(x, x[1:, 1:])
    assert not T.may_share_memory(x, x.copy()) and not T.may_share_memory(x, [1])
    y = T.zeros((4,))
    assert not T.may_share_memory(y[:2], y[2:])


def test_methods_and_namespace():
    x = ours(rnd((3, 3)))
    assert x.trace().item() == pytest.approx(np.trace(x.numpy()))
    np.testing.assert_array_equal(x.diagflat().numpy(), np.diagflat(x.numpy()))
    for name in ("ptp", "append", "insert", "delete", "block", "resize", "gradient", "convolve",
                 "kaiser", "histogramdd", "isscalar", "may_share_memory", "logspace"):
        assert not hasattr(T.Tensor, name), name
    assert x.shape == (3, 3) and x.ndim == 2   # the attributes are untouched


# ---------------------------------------------------------------- gradients

def test_gradchecks():
    rng = np.random.default_rng(7)
    r = rng.standard_normal
    gradcheck(lambda v: T.diag(v, 1), r(3))
    gradcheck(lambda m: T.diag(m, -1), r((3, 4)))
    gradcheck(lambda m: T.diagflat(m), r((2, 2)))
    gradcheck(lambda m: T.trace(m, 1, 0, 2), r((3, 2, 4)))
    gradcheck(lambda a, b: T.cross(a, b, axisa=0), r((3, 2)), r(3))
    gradcheck(lambda a, b: T.cross(a, b), r((2, 2)), r((2, 3)))
    gradcheck(lambda a: T.ptp(a, axis=1), r((3, 4)))
    gradcheck(lambda a, b: T.append(a, b, axis=0), r((2, 3)), r((1, 3)))
    gradcheck(lambda a, b: T.insert(a, [0, 2, 2], b, axis=1), r((2, 3)), r((2, 1)))
    gradcheck(lambda a, b: T.insert(a, 1, b), r(3), r(2))
    gradcheck(lambda a: T.delete(a, [0, -1], axis=1), r((2, 4)))
    gradcheck(lambda a, b: T.convolve(a, b, "same"), r(5), r(3))
    gradcheck(lambda a, b: T.correlate(a, b, "full"), r(3) + 1j * r(3), r(4) + 1j * r(4))
    x = np.cumsum(rng.random(5)) + np.arange(5)
    gradcheck(lambda f, h: T.gradient(f, h, edge_order=2), r(5), x)
    gradcheck(lambda f: T.gradient(f, 0.5, axis=0), r((4, 2)))
    gradcheck(lambda a: T.vander(a, 4), r(3))
    gradcheck(lambda a: T.unwrap(3 * a), r(6))
    gradcheck(lambda a, b: T.block([[a, b], [b, a]]), r((2, 2)), r((2, 2)))
    gradcheck(lambda a: T.resize(a, (2, 4)), r(3))
    gradcheck(lambda a, b: T.ediff1d(a, to_end=b), r((2, 3)), r(2))
    gradcheck(lambda a, b: T.column_stack([a, b]), r(3), r((3, 2)))
    s = ours(r((6, 2)))
    gradcheck(lambda w: T.histogramdd(s, bins=2, weights=w, density=True)[0], r(6))
    gradcheck(lambda a: T.geomspace(a, 8.0, 4), np.array(2.0))
    gradcheck(lambda a: T.logspace(a, 2.0, 4), np.array(0.3))
    assert math.isfinite(T.kaiser(4, 1.0).sum().item())


def test_copy_is_numpys():
    """T.copy(x) (np.copy): a new tensor with x's values, layout and device; writes stay apart."""
    x = T.asarray(np.arange(6.0).reshape(2, 3)).mT
    y = T.copy(x)
    assert y.device == x.device and y.shape == (3, 2) and not T.shares_memory(x, y)
    y[0, 0] = 9.0
    assert x[0, 0].item() == 0.0 and np.array_equal(T.copy(x).numpy(), x.numpy())
