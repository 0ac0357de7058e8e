"""Correctness of the CPU kernels' faster paths (hunt 7, performance): each case runs the layout
or size a new path serves and compares the values with NumPy exactly. No timings here
(benchmarks/bench_cpu.py times them).

- elementwise launches reorder the dims so the output's strides descend (tensor/cpu/launch.py
  `_out_order`): transposed, permuted, negative-stride and broadcast operands, casts;
- the LSD radix sort of long rows (tensor/cpu/csrc/sort.h `sx_radix_sort`): every key width,
  duplicates, NaN, signed zeros, descending, values and indices;
- the vectorisable NaN-propagating max / min fold (tensor/cpu/csrc/reduce.h).
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T


def _np(t) -> np.ndarray:
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


# ------------------------------------------------------------ elementwise on permuted layouts

@pytest.mark.parametrize("n", [37, 64])
def test_elementwise_on_permuted_layouts(n):
    # caught nothing wrong (the old order was correct) but a 56x cliff: a.T + b.T at 1024^2
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n + 3)).astype(np.float32)
    b = rng.standard_normal((n + 3, n)).astype(np.float32)
    ta, tb = T.from_numpy(a), T.from_numpy(b)
    np.testing.assert_array_equal(_np(ta.T + tb), a.T + b)
    np.testing.assert_array_equal(_np(-ta.T), -a.T)
    np.testing.assert_array_equal(_np(ta.T * ta.T), a.T * a.T)
    np.testing.assert_array_equal(_np(ta.T.astype(T.float64)), a.T.astype(np.float64))
    np.testing.assert_array_equal(_np(ta.T.astype(T.int32)), a.T.astype(np.int32))
    np.testing.assert_array_equal(_np(ta.T + tb[:, :1]), a.T + b[:, :1])
    np.testing.assert_array_equal(_np(T.flip(ta, 1).T - 1.5), a[:, ::-1].T - 1.5)
    np.testing.assert_array_equal(_np(ta[::2, ::-3].T + 2), a[::2, ::-3].T + 2)
    c = rng.integers(-50, 50, (4, n, 5)).astype(np.int16)
    tc = T.from_numpy(c)
    for perm in [(2, 0, 1), (1, 2, 0), (2, 1, 0), (0, 2, 1)]:
        got = tc.permute(*perm) * 3 - tc.permute(*perm)
        np.testing.assert_array_equal(_np(got), c.transpose(perm) * 3 - c.transpose(perm))
        np.testing.assert_array_equal(_np(tc.permute(*perm).contiguous()),
                                      np.ascontiguousarray(c.transpose(perm)))
    # in place into a transposed view: every element written once, at its own position
    d = np.array(a)
    td = T.from_numpy(np.array(a))
    td.T[...] = tb
    d.T[...] = b
    np.testing.assert_array_equal(_np(td), d)


# ------------------------------------------------------------ radix sort of long rows

def _desc_order(x: np.ndarray) -> np.ndarray:
    """Stable descending order with NaN greatest and -0.0 == 0.0 (ranks negated)."""
    rank = np.unique(x.ravel(), return_inverse=True)[1].reshape(x.shape)
    return np.argsort(-rank, axis=-1, kind="stable")


def _sample(dtype, shape, rng):
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.random(shape) > 0.5
    if d.kind in "iu":
        info = np.iinfo(d)
        x = rng.integers(max(info.min, -300), min(info.max, 300), shape).astype(d)
        x.flat[::97] = info.max
        x.flat[1::89] = info.min
        return x
    x = (rng.integers(-40, 40, shape) / 4).astype(d)   # many ties
    x.flat[::53] = np.nan
    x.flat[3::71] = -0.0
    x.flat[5::83] = np.inf
    x.flat[7::79] = -np.inf
    return x


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float16", "float32", "float64"])
def test_radix_sort_long_rows(dtype):
    # rows of 3000 (and 1 row of 9000) sort by the radix path; indices must equal the stable
    # sort's exactly (the merge sort's permutation)
    rng = np.random.default_rng(1)
    for shape in [(3, 3000), (9000,)]:
        x = _sample(dtype, shape, rng)
        tx = T.from_numpy(x)
        v, i = T.sort(tx, axis=-1), T.argsort(tx, axis=-1)
        want = np.argsort(x, axis=-1, kind="stable")
        np.testing.assert_array_equal(_np(i), want)
        np.testing.assert_array_equal(_np(v), np.take_along_axis(x, want, -1))
        di = T.argsort(tx, axis=-1, descending=True)
        np.testing.assert_array_equal(_np(di), _desc_order(x))


def test_radix_sort_bfloat16_and_sorted_results():
    rng = np.random.default_rng(2)
    x = (rng.integers(-64, 64, 5000) / 8).astype(np.float32)
    x[::41] = np.nan
    tx = T.from_numpy(x).astype(T.bfloat16)    # these values are exact in bfloat16
    np.testing.assert_array_equal(_np(T.argsort(tx)), np.argsort(x, kind="stable"))
    # topk / unique / median ride on the same sort
    y = rng.integers(-1000, 1000, 20000).astype(np.int32)
    ty = T.from_numpy(y)
    np.testing.assert_array_equal(_np(T.unique(ty)), np.unique(y))
    top = T.topk(ty, 7)
    np.testing.assert_array_equal(_np(top.indices), _desc_order(y)[:7])
    z = rng.standard_normal(4001).astype(np.float32)
    assert float(T.median(T.from_numpy(z))) == float(np.median(z))


# ------------------------------------------------------------ NaN-propagating max / min fold

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_min_fold_nan_and_signed_zero(dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 5000)).astype(dtype)
    x[2, 4321] = np.nan
    x[4, 17] = np.nan
    x[5, :] = 0.0
    x[5, ::2] = -0.0
    tx = T.from_numpy(x)
    for axis in (None, 0, 1):
        for name in ("amax", "amin"):
            got, want = _np(getattr(T, name)(tx, axis=axis)), getattr(np, name)(x, axis=axis)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("n", [5, 16, 31, 130, 515, 4096 * 3 + 77])
def test_vector_fold_max_min_argmax_argmin(dtype, n):
    # the vector folds (reduce.h sx_vfold_*) on contiguous rows: four parts folded side by
    # side must select the same element as the one scalar chain (ties: the first; NaN: first
    # NaN for the arg-reductions); strided rows (axis 0) take the scalar path
    rng = np.random.default_rng(n)
    x = rng.integers(-20, 20, (6, n)).astype(dtype)   # many ties of the best value
    if x.dtype.kind == "f":
        x[1, n // 2] = np.nan
        x[1, n - 1] = -np.nan          # another NaN: which one a max returns shows
        x[5, n // 4] = np.nan
        x[2, :] = 0.0
        x[2, n // 3::3] = -0.0
        x[3, n - 1] = np.inf
        x[4, :] = -np.inf
    else:
        info = np.iinfo(x.dtype)
        x[3, n - 1] = info.max
        x[4, :] = info.min
    tx = T.from_numpy(x)
    for axis in (None, 0, 1):
        for name in ("amax", "amin", "argmax", "argmin"):
            got = _np(getattr(T, name)(tx, axis=axis))
            want = getattr(np, name)(x, axis=axis)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} axis={axis}")
            if name in ("amax", "amin") and axis != 0:
                # bit for bit the scalar fold's choice: the same rows as strided views (the
                # scalar path; same lanes, same order) select the same NaN or signed zero
                pair = np.stack([x, x], -1)
                strided = _np(getattr(T, name)(T.from_numpy(pair)[..., 0], axis=axis))
                np.testing.assert_array_equal(_bits(got), _bits(strided), err_msg=name)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


@pytest.mark.parametrize("dtype", ["bool", "uint8"])
@pytest.mark.parametrize("n", [7, 16, 100, 4096 + 33])
def test_any_all_byte_folds(dtype, n):
    # any / all of bytes OR (min) the groups of a contiguous row (reduce.h sx_vfold_any_u8)
    rng = np.random.default_rng(n)
    x = np.zeros((8, n), dtype)
    x[1, n - 1] = 1                  # one nonzero, last
    x[2, :] = 1
    x[3, :] = 1
    x[3, n // 2] = 0                 # one zero in the middle
    x[4] = rng.random(n) > 0.5
    if dtype == "uint8":
        x[5, :] = 2                  # nonzero bytes whose AND is not
        x[5, ::2] = 1
        x[6, n // 3] = 128
    tx = T.from_numpy(x)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(_np(T.any(tx, axis=axis)), np.any(x, axis=axis))
        np.testing.assert_array_equal(_np(T.all(tx, axis=axis)), np.all(x, axis=axis))


_FOLDS = {"sum": (np.add, 0), "prod": (np.multiply, 1),
          "amax": (lambda a, b: np.where(np.isnan(b) | (b > a), b, a), -np.inf),
          "amin": (lambda a, b: np.where(np.isnan(b) | (b < a), b, a), np.inf)}


def _lane_tree(rows: np.ndarray, name: str) -> np.ndarray:
    """reduce.h's chunk on rows of <= 16 elements: element j folds into lane j (from the
    identity), the lanes into the chunk's (identity) accumulators, then the tree 8, 4, 2, 1."""
    fold, init = _FOLDS[name]
    ident = np.full(len(rows), init, rows.dtype)
    lanes = [fold(ident, fold(ident, rows[:, j])) if j < rows.shape[1] else fold(ident, ident)
             for j in range(16)]
    for w in (8, 4, 2, 1):
        for j in range(w):
            lanes[j] = fold(lanes[j], lanes[j + w])
    return lanes[0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "any"])
def test_short_row_reductions_bits(dtype, name):
    # rows of <= 16 elements reduce in registers (reduce.h, the chunk's short-row path): the
    # same folds and tree as the general loop, so the same bits (signed zeros, NaNs, rounding)
    rng = np.random.default_rng(7)
    for r in (1, 2, 3, 5, 9, 16):
        x = (rng.standard_normal((40, r)) * 3).astype(dtype)
        if x.dtype.kind == "f":
            x[3] = -0.0
            x[4, r // 2] = np.nan
            x[5, r - 1] = -np.inf
            x[6, 0] = -0.0
        got = _np(getattr(T, name)(T.from_numpy(x), axis=1))
        strided = _np(getattr(T, name)(T.from_numpy(np.stack([x, x], -1))[..., 0], axis=1))
        np.testing.assert_array_equal(_bits(got), _bits(strided))
        with np.errstate(all="ignore"):
            if x.dtype.kind == "f" and name in _FOLDS:
                np.testing.assert_array_equal(_bits(got), _bits(_lane_tree(x, name)))
            else:
                np.testing.assert_array_equal(got, getattr(np, name)(x, axis=1))


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 9])
def test_short_last_dim_runs_along_the_longer_dim(k):
    # a last dim of <= 8 elements runs along the dim before it (launch.py _layout): broadcasts
    # against (n, k), repeat along the last axis, flips, casts, in-place writes
    rng = np.random.default_rng(k)
    x = rng.standard_normal((333, k)).astype(np.float32)
    v = rng.standard_normal((k,)).astype(np.float32)
    c = rng.standard_normal((333, 1)).astype(np.float32)
    tx, tv, tc = T.from_numpy(x), T.from_numpy(v), T.from_numpy(c)
    np.testing.assert_array_equal(_np(tx - tv), x - v)
    np.testing.assert_array_equal(_np(tx * tc), x * c)
    np.testing.assert_array_equal(_np(T.repeat(tx, 3, 1)), np.repeat(x, 3, 1))
    np.testing.assert_array_equal(_np(T.repeat(tx.T, k, 1)), np.repeat(x.T, k, 1))
    np.testing.assert_array_equal(_np(T.flip(tx, 1).contiguous()), x[:, ::-1])
    np.testing.assert_array_equal(_np(tx.astype(T.float16)), x.astype(np.float16))
    y, ty = np.array(x), T.from_numpy(np.array(x))
    ty[...] = tv
    y[...] = v
    np.testing.assert_array_equal(_np(ty), y)


@pytest.mark.parametrize("n", [10, 3000])
def test_sort_of_presorted_rows(n):
    # rows whose keys are already in order skip the sort (sort.h): sorted with ties and NaNs
    # last, constant, -0.0 next to 0.0; descending and reversed inputs take the sorts
    x = np.sort(np.round(np.random.default_rng(n).standard_normal(n), 1)).astype(np.float32)
    x[-3:] = np.nan
    x[n // 2:n // 2 + 2] = [-0.0, 0.0]
    for a in (x, np.zeros(n, np.float32), x[::-1].copy(), np.arange(n, dtype=np.int16)):
        ta = T.from_numpy(a)
        np.testing.assert_array_equal(_np(T.argsort(ta)), np.argsort(a, kind="stable"))
        np.testing.assert_array_equal(_np(T.argsort(ta, descending=True)), _desc_order(a))
        np.testing.assert_array_equal(_bits(_np(T.sort(ta))), _bits(np.sort(a, kind="stable")))
