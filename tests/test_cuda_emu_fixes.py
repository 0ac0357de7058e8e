"""Fixes of the CUDA launch planning (tensor/cuda/launch.py) found by differential tests on the
emulator (hunt 6): layouts that keep more dims than one launch takes, and short reduced ranges
of many outputs. Every case runs on "cpu" and "cuda" and compares the values with NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT
from helpers import to_np

import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def _unmergeable(nd: int, device):
    """(tensor, NumPy twin): (2,) * nd float64 whose strides merge with no neighbour (the even
    dims of a contiguous tensor, then the odd ones)."""
    perm = list(range(0, nd, 2)) + list(range(1, nd, 2))
    a = np.arange(2.0 ** nd).reshape((2,) * nd)
    x = T.permute(T.asarray(a, device=device), perm)
    return x, np.transpose(a, perm)


@pytest.mark.parametrize("nd", [17, 18])
def test_layouts_past_sixteen_dims(device, nd):
    """Caught: with more than 16 dims left after merging, every CUDA elementwise op, reduction
    over a few of them and scan raised ValueError ("a CUDA launch takes at most 16
    dimensions"), where the CPU takes any rank. Now they split into launches of fewer dims."""
    x, a = _unmergeable(nd, device)
    np.testing.assert_array_equal(to_np(T.contiguous(x)), a)
    np.testing.assert_array_equal(to_np(x * 2.0 + x.contiguous()), 3 * a)
    np.testing.assert_array_equal(to_np(x.sum(0)), a.sum(0))
    np.testing.assert_array_equal(to_np(x.sum(-1)), a.sum(-1))
    np.testing.assert_array_equal(to_np(T.argmax(x, 0)), a.argmax(0))
    np.testing.assert_array_equal(to_np(T.max(x, axis=(0, 2))), a.max((0, 2)))
    np.testing.assert_array_equal(to_np(T.cumsum(x, -1)), np.cumsum(a, -1))
    np.testing.assert_array_equal(to_np(T.cumsum(x, 3)), np.cumsum(a, 3))


@pytest.mark.parametrize("shape,axis", [((4000, 1), 1), ((4000, 3), 1), ((3, 4000), 0), ((37, 32), 1),
                                        ((300, 33), 1), ((40, 5, 7), (1, 2)), ((1000, 2, 2), 0)])
def test_short_reduced_ranges_of_many_outputs(device, shape, axis):
    """Short ranges go a thread per output (the column path): the same values as NumPy for
    every reduction, ties to the first index for argmax / argmin, NaN wins max."""
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, shape).astype(np.float64)
    a.flat[::97] = np.nan
    x = T.asarray(a, device=device)
    np.testing.assert_allclose(to_np(x.sum(axis)), a.sum(axis), rtol=1e-12)
    np.testing.assert_array_equal(to_np(T.max(x, axis=axis)), a.max(axis))
    np.testing.assert_array_equal(to_np(T.min(x, axis=axis, keepdims=True)), a.min(axis, keepdims=True))
    ai = rng.integers(0, 3, shape)
    xi = T.asarray(ai, device=device)
    np.testing.assert_array_equal(to_np(xi.sum(axis)), ai.sum(axis))
    np.testing.assert_array_equal(to_np(xi.prod(axis)), ai.prod(axis))
    np.testing.assert_array_equal(to_np(T.any(xi > 1, axis=axis)), (ai > 1).any(axis))
    if isinstance(axis, int):
        np.testing.assert_array_equal(to_np(T.argmax(xi, axis)), ai.argmax(axis))
        np.testing.assert_array_equal(to_np(T.argmin(xi, axis)), ai.argmin(axis))
        first_nan = np.nanargmax(np.where(np.isnan(a), np.inf, a), axis)   # a NaN wins, the first
        np.testing.assert_array_equal(to_np(T.argmax(x, axis)), first_nan)


@pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")
def test_short_reduced_range_is_one_thread_per_output():
    """Caught: x.sum(1) of a (70000, 1) tensor launched 70,000 blocks of 256 threads, each
    folding one element through a block tree (8 s on the emulator, 256 times the work on a GPU);
    the plan is now the column path's, a thread per output."""
    from tensor.cuda import launch as L
    x = T.asarray(np.random.default_rng(1).random((70000, 1), dtype=np.float32), device="cuda")
    plan = L._reduce_plan("sum", x, [70000], [4], [4], [1], [0], x.device)
    assert [m for m, _ in plan[1]] == [3]
    np.testing.assert_array_equal(to_np(x.sum(1)), to_np(x)[:, 0])


@pytest.mark.parametrize("shape,axis", [((5000, 3), 1), ((3, 5000), 0), ((64, 32), 1), ((40, 33), 1),
                                        ((2, 20, 1), 2), ((31, 4), 1), ((6, 7, 5), 1)])
def test_scans_of_short_rows(device, shape, axis):
    """Caught (performance): a scan launched a block of 256 threads per row however short, 2 s
    on the emulator for T.cumsum of a (20000, 3) tensor along its rows; rows of at most 32
    elements (32 rows or more) now take a thread each, folding in order (values checked here;
    speed is the benchmarks' business, never a timed assertion)."""
    rng = np.random.default_rng(2)
    ai = rng.integers(-3, 4, shape)
    xi = T.asarray(ai, device=device)
    np.testing.assert_array_equal(to_np(T.cumsum(xi, axis)), np.cumsum(ai, axis))
    np.testing.assert_array_equal(to_np(T.cumprod(xi, axis)), np.cumprod(ai, axis))
    a = rng.standard_normal(shape).astype(np.float32)
    x = T.asarray(a, device=device)
    np.testing.assert_allclose(to_np(T.cumsum(x, axis)), np.cumsum(a, axis), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(T.cumprod(T.flip(x, (0,)), axis)), np.cumprod(a[::-1], axis),
                               rtol=1e-5, atol=1e-6)
    b = (a > 0)
    np.testing.assert_array_equal(to_np(T.cumsum(T.asarray(b, device=device), axis)), np.cumsum(b, axis))
