"""Sorting and searching (tensor/sorting.py; kernels tensor/cpu/csrc/sort.h, cuda_src/sort.cuh).

Against NumPy on both devices (the CUDA cases run on the emulator without a GPU): sort and
argsort (np.sort / np.argsort kind="stable"; descending against a stable sort of the negated
ranks, since NumPy has no stable descending sort), every dtype, values full of duplicates,
NaN, +-inf and signed zeros, empty and 0-d tensors, non-contiguous views, every axis; rows
longer than one radix tile (2048) for the CUDA passes; searchsorted (np.searchsorted, sorter,
both sides); unique_* (NumPy 2's unique_all & co: NaNs distinct); topk; sort's gradient
(finite differences); errors that name the function. Indices are compared exactly: a stable
sort is unique, so equal indices on both devices are the bitwise agreement the design wants.
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import ALL_DTYPES, make_tensor, make_view, sort_values, to_np

import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")

SHAPES = [(), (0,), (1,), (9,), (3, 0), (4, 7), (2, 3, 5)]


def _desc_argsort(a: np.ndarray, axis: int) -> np.ndarray:
    """The stable descending argsort: ranks (NaN greatest, -0.0 == 0.0), negated, sorted stably."""
    rank = np.unique(a.ravel(), return_inverse=True)[1].reshape(a.shape)
    return np.argsort(-rank, axis=axis, kind="stable")


def _ref(a, axis, descending):
    if a.ndim == 0:
        return np.array(0)
    return _desc_argsort(a, axis) if descending else np.argsort(a, axis=axis, kind="stable")


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


@pytest.mark.parametrize("d", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort_match_numpy(d, descending):
    rng = np.random.default_rng(7)
    for shape in SHAPES:
        for axis in range(-max(len(shape), 1), max(len(shape), 1)):
            a = sort_values(rng, d, shape)
            if len(shape) and rng.random() < 0.5:
                a, x = make_view(rng, a, d)
            else:
                x = make_tensor(a, d)
            idx = T.argsort(x, axis=axis, descending=descending)
            vals = T.sort(x, axis=axis, descending=descending)
            ref = _ref(a, axis, descending)
            what = f"{d} {shape} axis={axis}"
            assert idx.dtype is dt.int64 and idx.shape == shape, what
            assert vals.dtype is d and vals.shape == shape, what
            np.testing.assert_array_equal(to_np(idx), ref, err_msg=what)
            want = a if a.ndim == 0 else np.take_along_axis(a, ref, axis)
            np.testing.assert_array_equal(_bits(to_np(vals)), _bits(want), err_msg=what)


@pytest.mark.parametrize("d", [dt.bool_, dt.int8, dt.int64, dt.float16, dt.bfloat16, dt.float64],
                         ids=str)
def test_long_rows_are_stable(d):
    """Rows longer than one CUDA radix tile, few distinct values: ties keep input order."""
    rng = np.random.default_rng(3)
    a = sort_values(rng, d, (3, 5000))
    x = make_tensor(a, d)
    for descending in (False, True):
        got = to_np(T.argsort(x, descending=descending))
        np.testing.assert_array_equal(got, _ref(a, -1, descending))
    one = make_tensor(a[0], d)   # one row: a single radix sort of the keys
    np.testing.assert_array_equal(to_np(T.argsort(one)), np.argsort(a[0], kind="stable"))


def test_nan_and_signed_zero_order():
    x = T.tensor([0.0, float("nan"), -0.0, -1.0, float("nan"), 0.0])
    assert T.argsort(x).tolist() == [3, 0, 2, 5, 1, 4]
    assert T.argsort(x, descending=True).tolist() == [1, 4, 0, 2, 5, 3]
    assert T.argsort(x, stable=False).tolist() == [3, 0, 2, 5, 1, 4]
    assert x.argsort().tolist() == [3, 0, 2, 5, 1, 4]   # the Tensor method (NumPy, PyTorch)


def _complex_with_nans(rng, n):
    re = rng.choice([0.0, 1.0, 2.0, np.nan, -0.5], n)
    im = rng.choice([0.0, 1.0, np.nan, -1.0], n)
    return re + 1j * np.where(np.isnan(im), 0, im) + np.where(np.isnan(im), complex(0, np.nan), 0)


@pytest.mark.parametrize("d", [dt.complex64, dt.complex128], ids=str)
def test_complex_sort_and_searchsorted_with_nans_match_numpy(d):
    """NumPy orders R+Rj < R+nanj < nan+Rj < nan+nanj; an R+nanj sorted among the finite values
    before, and searchsorted of complex failed with a KeyError."""
    rng = np.random.default_rng(4)
    for _ in range(30):
        a = _complex_with_nans(rng, int(rng.integers(0, 12))).astype(d.np)
        x = make_tensor(a, d)
        np.testing.assert_array_equal(to_np(T.argsort(x)), np.argsort(a, kind="stable"))
        re, im = a.real, a.imag   # descending: NaN classes first, equal keys in input order
        keys = sorted(set(zip(np.isnan(re) * 2 + np.isnan(im), np.nan_to_num(re), np.nan_to_num(im))))
        rank = np.array([keys.index(k) for k in zip(np.isnan(re) * 2 + np.isnan(im), np.nan_to_num(re),
                                                      np.nan_to_num(im))], dtype=np.int64)
        np.testing.assert_array_equal(to_np(T.argsort(x, descending=True)),
                                      np.argsort(-rank, kind="stable"))
        s = np.sort(a)
        v = _complex_with_nans(rng, int(rng.integers(0, 6))).astype(d.np)
        for side in ("left", "right"):
            got = T.searchsorted(make_tensor(s, d), make_tensor(v, d), side=side)
            np.testing.assert_array_equal(to_np(got), np.searchsorted(s, v, side=side))
    assert T.searchsorted(make_tensor(np.array([1 + 1j, 2]), dt.complex128), 1.5).tolist() == 1


@pytest.mark.parametrize("d", [dt.int16, dt.uint8, dt.float32, dt.bfloat16], ids=str)
def test_searchsorted_matches_numpy(d):
    rng = np.random.default_rng(5)
    for n, m in ((0, 4), (1, 3), (9, (2, 5)), (40, 0), (40, ())):
        a = np.sort(sort_values(rng, d, (n,)), kind="stable")
        v = sort_values(rng, d, m)
        for side in ("left", "right"):
            got = T.searchsorted(make_tensor(a, d), make_tensor(v, d), side=side)
            assert got.dtype is dt.int64 and got.shape == np.shape(v)
            np.testing.assert_array_equal(to_np(got), np.searchsorted(a, v, side=side))
        perm = rng.permutation(n)
        got = T.searchsorted(make_tensor(a[perm], d), make_tensor(v, d),
                             sorter=make_tensor(np.argsort(perm), dt.int64))
        np.testing.assert_array_equal(to_np(got), np.searchsorted(a, v))


def test_searchsorted_promotes_and_takes_scalars():
    x1 = T.tensor([1, 2, 2, 3])
    assert T.searchsorted(x1, T.tensor([2.5, 0.5])).tolist() == [3, 0]
    assert T.searchsorted(x1, 2, side="right").tolist() == 3


@pytest.mark.parametrize("d", [dt.bool_, dt.int32, dt.float16, dt.float64], ids=str)
def test_unique_match_numpy(d):
    rng = np.random.default_rng(11)
    for shape in ((), (0,), (7,), (3, 4), (2, 0, 3)):
        a = sort_values(rng, d, shape)
        if len(shape) and rng.random() < 0.5:
            a, x = make_view(rng, a, d)
        else:
            x = make_tensor(a, d)
        # np.unique sorted (NumPy 2.3's unique_values may not sort: the standard allows
        # either), NaNs distinct, the inverse shaped as x (NumPy 2's unique_all)
        ref = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                        equal_nan=False)
        ref = dict(zip(("values", "indices", "inverse_indices", "counts"), ref))
        ref["inverse_indices"] = ref["inverse_indices"].reshape(a.shape)
        r = T.unique_all(x)
        for f in ref:
            got, want = to_np(getattr(r, f)), ref[f]
            np.testing.assert_array_equal(got, want, err_msg=f"{d} {shape} {f}")
            assert got.shape == want.shape, f
        np.testing.assert_array_equal(to_np(T.unique_values(x)), ref["values"])
        c, ci = T.unique_counts(x), T.unique_inverse(x)
        np.testing.assert_array_equal(to_np(c.counts), ref["counts"])
        np.testing.assert_array_equal(to_np(ci.inverse_indices), ref["inverse_indices"])
        assert ci._fields == ("values", "inverse_indices")


def test_topk():
    rng = np.random.default_rng(2)
    a = sort_values(rng, dt.float32, (4, 9))
    x = make_tensor(a, dt.float32)
    for dim in (0, 1, -1):
        for largest in (True, False):
            k = 3
            v, i = T.topk(x, k, dim=dim, largest=largest)
            ref = _ref(a, dim, largest)
            ref = ref[:k] if dim == 0 else ref[:, :k]
            np.testing.assert_array_equal(to_np(i), ref)
            np.testing.assert_array_equal(to_np(v), np.take_along_axis(a, ref, dim))
    assert x.topk(0).values.shape == (4, 0)


def test_sort_gradient():
    import autograd
    rng = np.random.default_rng(1)
    a = rng.permutation(24).reshape(2, 3, 4) / 7.0   # distinct: sort is differentiable there
    x = T.asarray(a, dtype=T.float64).requires_grad_()
    for axis, desc in ((-1, False), (1, True), (0, False)):
        assert autograd.gradcheck(lambda t, ax=axis, dc=desc: T.sort(t, axis=ax, descending=dc), (x,))
    w = T.asarray(rng.random((2, 3, 4)))
    (T.sort(x, axis=1) * w).sum().backward()
    ref = np.empty_like(a)
    np.put_along_axis(ref, np.argsort(a, axis=1), to_np(w), axis=1)
    np.testing.assert_array_equal(to_np(x.grad), ref)


def test_integer_results_have_no_gradient():
    x = T.tensor([2.0, 1.0], requires_grad=True)
    assert not T.argsort(x).requires_grad
    assert not T.searchsorted(x, x).requires_grad


def test_errors_name_the_function():
    x = T.tensor([[1.0, 2.0]])
    with pytest.raises(IndexError, match="sort: axis 2"):
        T.sort(x, axis=2)
    with pytest.raises(TypeError, match="argsort: descending"):
        T.argsort(x, descending=1)
    with pytest.raises(ValueError, match="searchsorted: x1 must be 1-d"):
        T.searchsorted(x, x)
    with pytest.raises(ValueError, match="searchsorted: side"):
        T.searchsorted(x[0], x, side="middle")
    with pytest.raises(ValueError, match="searchsorted: sorter"):
        T.searchsorted(x[0], x, sorter=T.tensor([0]))
    with pytest.raises(ValueError, match="topk: k 3"):
        T.topk(x, 3)
