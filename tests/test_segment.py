"""tensor/segment.py against NumPy (ufunc.at and loops): scatter_reduce with every reduction,
include_self both ways, dims 0/1/-1, duplicates and untouched targets, index smaller than src,
non-contiguous src; segment_sum/prod/max/min/mean with empty segments; gather; gradients
(gradcheck in float64, ties split as the dense amax, zeros in prod, forward mode against
finite differences); PyTorch's scatter_reduce where torch is installed; errors. On both devices
(CUDA: cuda_src/segment.cuh, on the emulator or a GPU).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import autograd
import tensor as T

pytestmark = pytest.mark.usefixtures("device")
REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _cpu():
    return T.get_default_device().type == "cpu"


def _ref_scatter(x, dim, idx, src, reduce, include_self):
    """NumPy: ufunc.at in index order (np.add.at's sequential sums)."""
    dim = dim % x.ndim
    grid = np.indices(idx.shape)
    key = tuple(idx if d == dim else grid[d] for d in range(x.ndim))
    vals = src[tuple(slice(0, n) for n in idx.shape)]
    out = x.copy()
    hit = np.zeros(x.shape, bool)
    hit[key] = True
    cnt = np.zeros(x.shape, np.int64)
    np.add.at(cnt, key, 1)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    if not include_self:
        if reduce in ("amax", "amin"):
            big = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max
            ident = -big if reduce == "amax" else big
        else:
            ident = 1 if reduce == "prod" else 0
        out[hit] = ident
    ufunc.at(out, key, vals)
    if reduce == "mean":
        n = np.maximum(cnt + int(include_self), 1)
        out = out // n if x.dtype.kind in "iu" else (out / n).astype(x.dtype)
        if not include_self:
            out[~hit] = x[~hit]
    return out


def _rand_case(rng, shape, dim, dtype, small_index=True):
    x = rng.standard_normal(shape)
    src_shape = list(shape)
    src_shape[dim] = shape[dim] + 3          # more sources than targets: duplicates
    src = rng.standard_normal(src_shape)
    ishape = list(src_shape)
    if small_index:                          # index smaller than src (and input) elsewhere
        ishape = [n - (1 if d != dim and n > 1 else 0) for d, n in enumerate(ishape)]
    idx = rng.integers(0, max(shape[dim] - 1, 1), ishape)   # the last target stays empty
    if np.dtype(dtype).kind in "iu":
        x, src = np.round(x * 5), np.round(src * 5)
    return x.astype(dtype), idx, src.astype(dtype)


def _check(got, want, exact):
    got = got.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.dtype)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype == np.float32 else 1e-12,
                                   atol=1e-6)


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_matches_numpy(reduce):
    rng = np.random.default_rng(1)
    dtypes = ["float64", "float32", "int64"] if _cpu() else ["float64", "int64"]
    if reduce in ("mean", "prod"):
        dtypes = [d for d in dtypes if d != "int64"] + ([] if reduce == "prod" else ["int64"])
    for dtype in dtypes:
        for shape, dim in (((5,), 0), ((4, 3), 0), ((3, 5), 1), ((2, 3, 4), -1), ((2, 3, 4), 1)):
            for include_self in (True, False):
                x, idx, src = _rand_case(rng, shape, dim % len(shape), dtype)
                want = _ref_scatter(x, dim, idx, src, reduce, include_self)
                got = T.scatter_reduce(T.asarray(x), dim, T.asarray(idx), T.asarray(src), reduce,
                                       include_self=include_self)
                # sums, maxima and minima in index order: the bits of np.add.at / maximum.at
                _check(got, want, exact=reduce in ("sum", "amax", "amin") or dtype == "int64")


def test_scatter_reduce_noncontiguous_nan_empty_and_methods():
    rng = np.random.default_rng(2)
    base = rng.standard_normal((6, 4))
    src = T.asarray(base).T                              # (4, 6), strides transposed
    idx = rng.integers(0, 3, (4, 6))
    x = rng.standard_normal((4, 3))
    for reduce in ("sum", "amax"):
        got = T.scatter_reduce(T.asarray(x), 1, T.asarray(idx), src, reduce)
        _check(got, _ref_scatter(x, 1, idx, base.T.copy(), reduce, True), exact=True)
    # NaN wins in amax / amin
    s = np.array([1.0, np.nan, 3.0])
    got = T.scatter_reduce(T.zeros(2, dtype="float64"), 0, T.tensor([0, 0, 1]), T.asarray(s), "amax")
    assert np.isnan(got.numpy()[0]) and got.numpy()[1] == 3.0
    # an empty index: a copy of input
    xe = T.asarray(x)
    e = T.scatter_reduce(xe, 0, T.zeros((0, 3), dtype="int64"), T.zeros((0, 3), dtype="float64"), "sum")
    _check(e, x, exact=True)
    # methods and the in-place form
    y = T.asarray(x.copy())
    r = y.scatter_reduce_(1, T.asarray(idx), src, "amin", include_self=False)
    assert r is y
    _check(y, _ref_scatter(x, 1, idx, base.T.copy(), "amin", False), exact=True)
    _check(T.asarray(x).scatter_reduce(1, T.asarray(idx), src, "prod"),
           _ref_scatter(x, 1, idx, base.T.copy(), "prod", True), exact=False)
    if os.environ.get("CI"):   # spares a cold cache the 16-bit modules
        return
    # 16-bit floats: reduced in float32
    h = T.scatter_reduce(T.zeros(3, dtype="float16"), 0, T.tensor([0, 0, 2]),
                         T.tensor([1.5, 2.0, 3.0], dtype="float16"), "sum")
    assert h.dtype == T.float16 and h.tolist() == [3.5, 0.0, 3.0]


def test_scatter_reduce_expanded_index_rows():
    """An index repeated along the other dims (index.expand: the graph case) reduces whole
    slices per target; the same results as the elementwise path."""
    rng = np.random.default_rng(7)
    for dim, xshape, n in ((0, (4, 3), 7), (1, (2, 5, 3), 8)):
        x = rng.standard_normal(xshape)
        sshape = list(xshape)
        sshape[dim] = n
        src = rng.standard_normal(sshape)
        i1 = rng.integers(0, xshape[dim] - 1, n)
        ishape = [1] * len(xshape)
        ishape[dim] = n
        idx = T.expand(T.reshape(T.asarray(i1), tuple(ishape)), tuple(sshape))
        assert idx.strides[dim - 1] == 0
        # the same index made contiguous (detected and taken as expanded), and one that
        # differs in a single element (the elementwise path)
        dense = T.asarray(np.ascontiguousarray(idx.numpy()))
        odd = idx.numpy().copy()
        odd.flat[odd.size // 2] = xshape[dim] - 1
        for reduce in REDUCES:
            for include_self in (True, False):
                for ix in (idx, dense, T.asarray(odd)):
                    want = _ref_scatter(x, dim, ix.numpy(), src, reduce, include_self)
                    got = T.scatter_reduce(T.asarray(x), dim, ix, T.asarray(src), reduce,
                                           include_self=include_self)
                    _check(got, want, exact=reduce in ("sum", "amax", "amin"))
    xg = T.asarray(rng.standard_normal((3, 2))).requires_grad_()
    sg = T.asarray(rng.standard_normal((5, 2))).requires_grad_()
    ig = T.expand(T.reshape(T.tensor([0, 2, 0, 0, 2]), (5, 1)), (5, 2))
    for reduce in ("prod", "amax", "mean"):
        for i in (ig, T.contiguous(ig)):
            assert autograd.gradcheck(lambda a, b, r=reduce, i=i: T.scatter_reduce(a, 0, i, b, r),
                                      (xg, sg))


def _ref_segment(data, ids, m, reduce):
    out = np.zeros((m,) + data.shape[1:], data.dtype)
    for s in range(m):
        rows = data[ids == s]
        if len(rows) == 0:
            out[s] = 1 if reduce == "prod" else 0
        elif reduce == "mean":
            out[s] = rows.sum(0) // len(rows) if data.dtype.kind in "iu" else rows.mean(0)
        else:
            out[s] = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[reduce](rows, 0)
    return out


@pytest.mark.parametrize("reduce", ("sum", "prod", "max", "min", "mean"))
def test_segment_ops_match_numpy(reduce):
    rng = np.random.default_rng(3)
    fn = getattr(T, f"segment_{reduce}")
    dtypes = ("float64", "int64") if _cpu() else ("float64",)
    for dtype in dtypes:
        for shape in ((9,), (9, 3), (7, 2, 2)):
            ids = np.sort(rng.integers(0, 5, shape[0]))
            ids[ids == 2] = 3                          # segment 2 empty
            data = (rng.standard_normal(shape) * 4).astype(dtype)
            for m in (None, 7):                        # trailing empty segments
                got = fn(T.asarray(data), T.asarray(ids), m)
                want = _ref_segment(data, ids, int(ids[-1]) + 1 if m is None else m, reduce)
                _check(got, want, exact=dtype == "int64")
    # no rows
    z = fn(T.zeros((0, 2), dtype="float64"), T.zeros(0, dtype="int64"), 3)
    _check(z, _ref_segment(np.zeros((0, 2)), np.zeros(0, np.int64), 3, reduce), exact=True)


def test_gather_matches_numpy_and_torch_scatter_reduce():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 5))
    for dim, ishape in ((0, (6, 3)), (1, (3, 7)), (-1, (4, 2))):
        idx = rng.integers(0, x.shape[dim], ishape)
        sub = x[tuple(slice(0, n) if d != dim % 2 else slice(None) for d, n in enumerate(ishape))]
        want = np.take_along_axis(sub, idx, dim)
        _check(T.gather(T.asarray(x), dim, T.asarray(idx)), want, exact=True)
        _check(T.asarray(x).gather(dim, T.asarray(idx)), want, exact=True)
    torch = pytest.importorskip("torch")
    for reduce in REDUCES:
        for include_self in (True, False):
            xs, idx, src = _rand_case(rng, (3, 4), 1, "float64")
            want = torch.scatter_reduce(torch.tensor(xs), 1, torch.tensor(idx), torch.tensor(src), reduce,
                                        include_self=include_self).numpy()
            got = T.scatter_reduce(T.asarray(xs), 1, T.asarray(idx), T.asarray(src), reduce,
                                   include_self=include_self)
            _check(got, want, exact=False)
        d = np.sort(rng.integers(0, 4, 8))
        v = rng.standard_normal((8, 2))
        tr = torch.zeros(5, 2, dtype=torch.float64).index_reduce(
            0, torch.tensor(d), torch.tensor(v), {"sum": "prod", "prod": "prod", "mean": "mean",
                                                  "amax": "amax", "amin": "amin"}[reduce],
            include_self=False) if reduce != "sum" else None
        if tr is not None and reduce in ("amax", "amin", "mean"):
            fn = {"amax": T.segment_max, "amin": T.segment_min, "mean": T.segment_mean}[reduce]
            _check(fn(T.asarray(v), T.asarray(d), 5), tr.numpy(), exact=False)


def _distinct(rng, shape):
    """Values with no ties (finite differences at a tie are one-sided)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) + rng.uniform(0.1, 0.4, n)).reshape(shape) / n


GRAD_CASES = {
    **{f"scatter_{r}_{s}": (r, s) for r in REDUCES for s in (True, False)},
    **{f"segment_{r}": (r, None) for r in ("sum", "prod", "max", "min", "mean")},
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name):
    """gradcheck (float64) in reverse mode, forward mode against central differences."""
    if not _cpu() and not name.endswith(("amax_True", "prod_False", "segment_max", "mean_True")):
        pytest.skip("emulator: a few cases")
    reduce, include_self = GRAD_CASES[name]
    rng = np.random.default_rng(5)
    if include_self is None:
        ids = T.asarray(np.array([0, 0, 0, 2, 2, 3]))
        fn = getattr(T, f"segment_{reduce}")

        def f(d):
            return fn(d, ids, 5)
        args = (_distinct(rng, (6, 2)),)
    else:
        idx = T.asarray(rng.integers(0, 3, (2, 5)))

        def f(x, s):
            return T.scatter_reduce(x, 1, idx, s.T, reduce, include_self=include_self)
        args = (_distinct(rng, (2, 4)), _distinct(rng, (5, 2)))
    if reduce == "prod":   # one zero and two zeros in a segment
        a = args[-1].reshape(-1)
        a[0] = 0.0
        a[1] = 0.0 if include_self is None else a[1]
        a[3] = 0.0
    inputs = tuple(T.asarray(a).requires_grad_() for a in args)
    assert autograd.gradcheck(f, inputs)
    tans = tuple(T.asarray(rng.standard_normal(a.shape)) for a in args)
    _, tan = autograd.jvp(f, tuple(T.asarray(a) for a in args), tans)
    eps = 1e-6
    hi = f(*(T.asarray(a) + eps * t for a, t in zip(args, tans)))
    lo = f(*(T.asarray(a) - eps * t for a, t in zip(args, tans)))
    np.testing.assert_allclose(tan.numpy(), ((hi - lo) / (2 * eps)).numpy(), atol=1e-6)
    if _cpu() and name in ("scatter_prod_True", "segment_prod", "segment_max", "scatter_mean_False"):
        assert autograd.gradgradcheck(f, inputs)


def test_ties_split_as_dense_max_and_gather_gradient():
    x = T.tensor([1.0, 5.0], dtype="float64", requires_grad=True)
    s = T.tensor([2.0, 2.0, 5.0, 1.0], dtype="float64", requires_grad=True)
    y = T.scatter_reduce(x, 0, T.tensor([0, 0, 1, 1]), s, "amax")
    assert y.tolist() == [2.0, 5.0]
    y.backward(T.tensor([1.0, 1.0], dtype="float64"))
    # target 0: two sources tie at 2 (x's 1 loses): half each; target 1: x and a source tie at 5
    assert s.grad.tolist() == [0.5, 0.5, 0.5, 0.0] and x.grad.tolist() == [0.0, 0.5]
    d = T.tensor([[3.0, 3.0], [1.0, 3.0]], dtype="float64", requires_grad=True)
    T.segment_max(d, T.tensor([0, 0])).sum().backward()
    dense = T.tensor([[3.0, 3.0], [1.0, 3.0]], dtype="float64", requires_grad=True)
    T.amax(dense, axis=0).sum().backward()
    assert d.grad.tolist() == dense.grad.tolist()
    g = T.asarray(np.arange(6.0).reshape(2, 3)).requires_grad_()
    assert autograd.gradcheck(lambda t: T.gather(t, 1, T.tensor([[2, 2], [0, 1]])), (g,))


def test_deterministic_and_large_segments():
    """Bitwise the same on a repeat and the sequential order's sum (np.add.at), with one huge
    target and many small ones (the OpenMP path on the CPU)."""
    rng = np.random.default_rng(6)
    n = 40000 if _cpu() else 3000
    idx = np.where(rng.random(n) < 0.5, 0, rng.integers(0, 500, n))
    src = rng.standard_normal(n).astype(np.float32)
    x = np.zeros(500, np.float32)
    a = T.scatter_reduce(T.asarray(x), 0, T.asarray(idx), T.asarray(src), "sum").numpy()
    b = T.scatter_reduce(T.asarray(x), 0, T.asarray(idx), T.asarray(src), "sum").numpy()
    want = x.copy()
    np.add.at(want, idx, src)
    assert a.tobytes() == b.tobytes() == want.tobytes()
    if _cpu():   # wide rows: threads own ranges of output rows; bitwise the 1-thread result
        from tensor.cpu import kernels as K
        rows = T.broadcast_to(T.reshape(T.asarray(idx[:4000]), (-1, 1)), (4000, 16))
        srows, base = T.asarray(rng.standard_normal((4000, 16))), T.zeros((500, 16), dtype="float64")
        was = K._num_threads
        try:
            got = []
            for nt in (1, 2, 3):
                K.set_num_threads(nt)
                got.append([T.scatter_reduce(base, 0, rows, srows, r, include_self=False).numpy()
                            for r in ("sum", "prod", "amax", "mean")])
        finally:
            K.set_num_threads(was)
        ref = np.zeros((500, 16))
        np.add.at(ref, idx[:4000], srows.numpy())
        assert got[0][0].tobytes() == ref.tobytes()
        assert all(a.tobytes() == b.tobytes() for g in got[1:] for a, b in zip(g, got[0]))


def test_errors():
    x = T.zeros((3, 4), dtype="float64")
    i = T.tensor([[0, 1], [2, 1]])
    s = T.ones((2, 2))
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be one of"):
        T.scatter_reduce(x, 0, i, s, "max")
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3$"):
        T.scatter_reduce(x, 0, T.tensor([[3, 0]]), s, "sum")
    with pytest.raises(IndexError, match="scatter_reduce: index -1 is out of bounds"):
        T.scatter_reduce(x, 1, T.tensor([[-1, 0]]), s, "sum")
    with pytest.raises(ValueError, match="scatter_reduce: index of shape .* is larger than src"):
        T.scatter_reduce(x, 0, T.zeros((3, 3), dtype="int64"), s, "sum")
    with pytest.raises(ValueError, match="scatter_reduce: index, input and src must have the same number"):
        T.scatter_reduce(x, 0, T.tensor([0, 1]), s, "sum")
    with pytest.raises(TypeError, match="scatter_reduce: src .* must have the dtype of input"):
        T.scatter_reduce(x, 0, i, T.ones((2, 2), dtype="float32"), "sum")
    with pytest.raises(TypeError, match="scatter_reduce: index must have an integer dtype"):
        T.scatter_reduce(x, 0, T.ones((2, 2)), s, "sum")
    with pytest.raises(ValueError, match="segment_sum: segment_ids must be sorted"):
        T.segment_sum(T.ones(3), T.tensor([0, 2, 1]))
    with pytest.raises(IndexError, match="segment_max: segment id 4 is out of bounds with size 3"):
        T.segment_max(T.ones(3), T.tensor([0, 1, 4]), 3)
    with pytest.raises(IndexError, match="segment_min: segment id -1 is negative"):
        T.segment_min(T.ones(2), T.tensor([-1, 0]))
    with pytest.raises(ValueError, match="segment_mean: segment_ids must be 1-d with one id per row"):
        T.segment_mean(T.ones((3, 2)), T.tensor([0, 1]))
    with pytest.raises(IndexError, match="gather: index 5 is out of bounds for dimension 1 with size 4"):
        T.gather(x, 1, T.tensor([[5]]))
    with pytest.raises(ValueError, match="gather: index of shape .* is larger than input"):
        T.gather(x, 1, T.zeros((4, 1), dtype="int64"))


def test_scatter_reduce_in_place_on_a_tracked_tensor_has_the_out_of_place_gradient():
    """scatter_reduce_ into a non-leaf (its reduction had saved x, which the write then changed:
    backward raised a version error)."""
    w = T.asarray([1.0, 2.0, 3.0])
    for red in ("amax", "sum", "prod", "mean"):
        grads = []
        for in_place in (True, False):
            x = T.ones(3, dtype=T.float64, requires_grad=True)
            s = T.asarray([2.0, 3.0]).requires_grad_()
            y = x * w
            idx = T.asarray([0, 0])
            y = y.scatter_reduce_(0, idx, s, red) if in_place else T.scatter_reduce(y, 0, idx, s, red)
            grads.append(autograd.grad((y * w).sum(), [x, s]))
        for a, b in zip(*grads):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-15)
