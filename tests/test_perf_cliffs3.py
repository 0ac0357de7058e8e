"""Correctness of the faster paths of hunt 11 (CPU perf cliffs, round 3): each case runs the path a
change added and compares with NumPy exactly. No timings here (benchmarks/cpu_cliffs3.py).

- partition / argpartition by a selection (tensor/cpu/csrc/sort.h SX_PARTITION_DEF, host side
  tensor/cpu/sort.py partition_rows, op side tensor/sorting.py partition_along): NumPy's contract
  (kth positions as the stable sort, smaller-or-equal before, greater-or-equal after, NaN last)
  for every real dtype, kth lists, adversarial orders, any axis, views;
- nonzero / count_nonzero / boolean-mask indexing, 8 mask bytes at a time (index.h);
- float32 sin / cos gathering their reduction table (vmath.h), on views;
- float32 2-norm without abs (tensor/linalg/_norm.py), huge and tiny values.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T
from tensor import sorting
from tensor.backend import cpu as cpu_backend
from tensor.cpu import sort as cpu_sort

REAL = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
        "uint16", "uint32", "uint64", "bool"]


@pytest.fixture
def selecting(monkeypatch):
    """The CPU backend's partition_rows (tensor/backend/cpu.py binds it once the lead wires it)."""
    monkeypatch.setattr(cpu_backend, "partition_rows", cpu_sort.partition_rows, raising=False)


def _host(t) -> np.ndarray:
    if t.dtype == T.bfloat16:
        t = t.astype(T.float32)   # exact
    return np.ascontiguousarray(t.numpy())


def _data(rng, dtype: str, shape, pattern: str) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        v = rng.integers(0, 2, n).astype(bool)
    elif dtype.startswith(("float", "bfloat")):
        v = rng.standard_normal(n) * 10
        if pattern == "dups":
            v = np.round(v / 5)
        v[rng.random(n) < 0.1] = np.nan
        v[rng.random(n) < 0.05] = -0.0
        v[rng.random(n) < 0.05] = 0.0
        v[rng.random(n) < 0.02] = np.inf
        v[rng.random(n) < 0.02] = -np.inf
    else:
        info = np.iinfo(dtype)
        v = rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if info.min < 0 else np.uint64)
        if pattern == "dups":
            v = v % 3
    if pattern == "sorted":
        v = np.sort(v)
    elif pattern == "reversed":
        v = np.sort(v)[::-1]
    elif pattern == "organ":   # up then down: a median-of-3 killer shape
        v = np.sort(v)
        v = np.concatenate([v[::2], v[1::2][::-1]])
    elif pattern == "constant":
        v = np.full(n, v[0])
    return v.reshape(shape)


def _check_partition(a: np.ndarray, got: np.ndarray, idx: np.ndarray, kth, axis: int):
    """got / idx against NumPy's partition contract along axis (a: the input, float32 for bf16)."""
    a, got, idx = (np.moveaxis(t, axis, -1) for t in (a, got, idx))
    L = a.shape[-1]
    want = np.sort(a, axis=-1, kind="stable")
    np.testing.assert_array_equal(np.sort(idx, axis=-1), np.broadcast_to(np.arange(L), idx.shape))
    np.testing.assert_array_equal(np.take_along_axis(a, idx, -1), got)
    ks = sorted({k % L for k in kth})
    for k in ks:   # position k holds the sorted value; the multisets either side are the sort's
        np.testing.assert_array_equal(got[..., k], want[..., k])
        np.testing.assert_array_equal(np.sort(got[..., :k], axis=-1), want[..., :k])
        np.testing.assert_array_equal(np.sort(got[..., k + 1:], axis=-1), want[..., k + 1:])
    bounds = [0] + [b for k in ks for b in (k, k + 1)] + [L]
    for lo, hi in zip(bounds[::2], bounds[1::2]):   # each segment holds the sort's segment
        np.testing.assert_array_equal(np.sort(got[..., lo:hi], axis=-1), want[..., lo:hi])


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("pattern", ["random", "dups", "sorted", "reversed", "organ", "constant"])
def test_partition_selection_contract(selecting, dtype, pattern):
    rng = np.random.default_rng(len(dtype) * 7 + len(pattern))
    for shape, axis in [((5000,), 0), ((3, 257), 1), ((40, 3), 0), ((1,), 0), ((2, 2), -1)]:
        a = _data(rng, dtype, shape, pattern)
        x = T.asarray(a.astype(np.float32) if dtype == "bfloat16" else a).astype(getattr(T, dtype))
        ah = _host(x)
        n = shape[axis]
        for kth in ([0], [n - 1], [n // 2], [-1, 0], [n // 3, -(n // 4) - 1, n // 3]):
            got = sorting.partition_along(x, kth, axis, True)[0]
            idx = sorting.partition_along(x, kth, axis, False)[1]
            vals2, idx2 = sorting.partition_along(x, kth, axis, True)
            np.testing.assert_array_equal(_host(idx2), _host(idx))   # deterministic
            np.testing.assert_array_equal(_host(vals2), _host(got))
            _check_partition(ah, _host(got), _host(idx), kth, axis % len(shape))


def test_partition_selection_views_nan_and_empty(selecting):
    rng = np.random.default_rng(3)
    base = rng.standard_normal((60, 70)).astype(np.float64)
    base[rng.random(base.shape) < 0.2] = np.nan
    xb = T.asarray(base)
    for view, ref in [(xb.T, base.T), (xb[::-3, 5:], base[::-3, 5:]), (xb[:, ::2], base[:, ::2])]:
        for axis in (0, 1, -1):
            n = ref.shape[axis]
            kth = [1, n - 2]
            v, i = sorting.partition_along(view, kth, axis, True)
            _check_partition(ref, v.numpy(), i.numpy(), kth, axis % 2)
            np.testing.assert_array_equal(np.take(v.numpy(), kth, axis=axis),
                                          np.take(np.partition(ref, kth, axis=axis), kth, axis=axis))
    v, i = sorting.partition_along(T.asarray([np.nan, 1.0, np.nan, 0.5]), [3], 0, True)
    assert np.isnan(v.numpy()[3]) and v.numpy()[0] == 0.5   # NaN last
    for shape, axis in [((0,), 0), ((3, 0), 1), ((0, 4), 1)]:
        v, i = sorting.partition_along(T.zeros(shape), [0], axis, True)
        assert v.shape == shape and i.shape == shape and i.dtype == T.int64


def test_partition_selection_gradient(selecting):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 33))
    w = rng.standard_normal((4, 33))
    x = T.tensor(a, requires_grad=True)
    v, i = sorting.partition_along(x, [7, 20], 1, True)
    (v * T.asarray(w)).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    (torch.take_along_dim(xt, torch.from_numpy(i.numpy()), 1) * torch.from_numpy(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    _check_partition(a, v.detach().numpy(), i.numpy(), [7, 20], 1)


def test_partition_rows_kernel_large_rows_threads():
    # rows long enough for the introselect's recursion and several threads over rows
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 40000)).astype(np.float32)
    a[:, ::7] = a[:, 3:4]   # many equal keys
    x = T.asarray(a)
    idx = T.empty(a.shape, dtype=T.int64)
    vals = T.empty(a.shape, dtype=T.float32)
    old = T.get_num_threads()
    try:
        T.set_num_threads(2)
        cpu_sort.partition_rows(x, [0, 123, 39999], vals, idx, 6, 40000)
    finally:
        T.set_num_threads(old)
    _check_partition(a, vals.numpy(), idx.numpy(), [0, 123, 39999], 1)


# ---------------------------------------------------------------- nonzero / count_nonzero

@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 0.97, 1.0])
def test_nonzero_and_counts_by_words(density):
    rng = np.random.default_rng(int(density * 100))
    for shape in [(1,), (7,), (8,), (9,), (1031,), (3, 17), (5, 8, 13), (300001,)]:
        m = rng.random(shape) < density
        tm = T.asarray(m)
        for got, want in zip(T.nonzero(tm), np.nonzero(m)):
            np.testing.assert_array_equal(got.numpy(), want)
        assert int(T.count_nonzero(tm)) == np.count_nonzero(m)
        if len(shape) > 1:
            np.testing.assert_array_equal(T.count_nonzero(tm, axis=-1).numpy(), np.count_nonzero(m, axis=-1))
            np.testing.assert_array_equal(T.count_nonzero(tm, axis=0).numpy(), np.count_nonzero(m, axis=0))
        x = rng.standard_normal(shape)
        np.testing.assert_array_equal(T.asarray(x)[tm].numpy(), x[m])


def test_nonzero_threads_views_and_offsets():
    rng = np.random.default_rng(9)
    m = rng.random((700, 411)) < 0.3
    x = rng.standard_normal((700, 411))
    old = T.get_num_threads()
    try:
        for threads in (1, 2):
            T.set_num_threads(threads)
            tm = T.asarray(m)
            for got, want in zip(T.nonzero(tm.T), np.nonzero(m.T)):     # a transposed mask
                np.testing.assert_array_equal(got.numpy(), want)
            np.testing.assert_array_equal(T.asarray(x).T[tm.T].numpy(), x.T[m.T])   # strided offsets
            np.testing.assert_array_equal(T.asarray(x)[::-1][tm[::-1]].numpy(), x[::-1][m[::-1]])
            assert int(T.count_nonzero(tm[:, 1:])) == np.count_nonzero(m[:, 1:])
            np.testing.assert_array_equal(T.argwhere(tm).numpy(), np.argwhere(m))
    finally:
        T.set_num_threads(old)
    u = T.asarray(np.array([0, 1, 2, 255, 0, 0, 0, 0, 7], np.uint8))   # nonzero of non-bool bytes
    np.testing.assert_array_equal(T.nonzero(u)[0].numpy(), [1, 2, 3, 8])
    assert int(T.count_nonzero(u)) == 4


# ---------------------------------------------------------------- float32 sin / cos on views

@pytest.mark.parametrize("fn", ["sin", "cos"])
def test_float32_sin_cos_gathered_on_views(fn):
    rng = np.random.default_rng(21)
    bits = rng.integers(0, 2 ** 32, (300, 301), dtype=np.uint64).astype(np.uint32)
    a = bits.view(np.float32)
    a[:, :100] = rng.standard_normal((300, 100)).astype(np.float32) * 100
    x = T.from_numpy(a)
    for view, ref in [(x.T, a.T), (x[::-2, 3::5], a[::-2, 3::5]), (x, a)]:
        got = getattr(T, fn)(view).numpy()
        with np.errstate(invalid="ignore"):
            want = getattr(np, fn)(ref.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- float32 2-norm

def test_float32_two_norm_huge_tiny_and_axes():
    rng = np.random.default_rng(2)
    cases = [np.float32([2e38, 2e38, -1e38]), np.float32([3e38, 3e38, -3e38]),
             np.float32([1e-45, -1e-45, 3e-45]),
             np.float32([1e-30] * 1000), np.float32([]), np.float32([np.inf, np.nan]),
             np.float32([-np.inf, 1.0]), np.float32([np.nan, 1.0]), np.float32([-0.0, 0.0]),
             rng.standard_normal(100003).astype(np.float32)]
    for a in cases:
        with np.errstate(over="ignore"):   # 5.2e38 rounds to inf in float32, as it should
            want = np.float32(np.sqrt(np.sum(a.astype(np.float64) ** 2)))
        got = T.linalg.vector_norm(T.asarray(a))
        assert got.dtype == T.float32
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(T.linalg.norm(T.asarray(a)).numpy(), want)
    m = (rng.standard_normal((50, 60)) * 1e30).astype(np.float32)
    tm = T.asarray(m)
    for axis in (0, 1, (0, 1), None):
        for keep in (False, True):
            want = np.sqrt(np.sum(m.astype(np.float64) ** 2, axis=axis, keepdims=keep)).astype(np.float32)
            np.testing.assert_array_equal(T.linalg.vector_norm(tm, axis=axis, keepdims=keep).numpy(), want)
    np.testing.assert_array_equal(T.linalg.norm(tm.T[::2]).numpy(),
                                  np.float32(np.sqrt(np.sum(m.T[::2].astype(np.float64) ** 2))))


def test_float32_two_norm_gradient():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    a[0, 0] = 0.0
    x = T.tensor(a, requires_grad=True)
    T.linalg.vector_norm(x, axis=1).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.linalg.vector_norm(xt, dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-7)
