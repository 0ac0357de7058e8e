"""The CUDA row sort's two paths (cuda_src/sort.cuh, tensor/cuda/sort.py) against the CPU.

Rows of up to SHORT_MAX elements are sorted in shared memory (a bitonic network over
(key, position) pairs, several short rows per block); longer rows by two global radix sorts.
Both must give the unique stable order, so on the cuda device (a GPU, or the CPU emulator)
every case compares the indices and the values' bits exactly with the CPU backend's and with
NumPy's stable argsort: every real dtype, rows of length 1, 2, odd, powers of two, the
threshold and one past it, many rows (more tiles than the grid has blocks: grid-stride),
values full of ties, NaN, +-inf and -0.0 / +0.0, both directions. The short path is also
forced onto lengths the radix path takes and the other way round, on the same data.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CUDA_OK, CUDA_WHAT
from helpers import ALL_DTYPES, make_tensor, sort_values, to_np

import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.skipif(not CUDA_OK, reason=f"cuda: {CUDA_WHAT}")

REAL = [d for d in ALL_DTYPES if d.kind != "c"]


def _short():
    from tensor.cuda import sort as S
    return S


def _ref(a: np.ndarray, descending: bool) -> np.ndarray:
    """The stable argsort along the last axis; descending: by negated ranks (NaN greatest,
    -0.0 == 0.0), as NumPy has no stable descending sort."""
    if not descending:
        return np.argsort(a, axis=-1, kind="stable")
    rank = np.unique(a.ravel(), return_inverse=True)[1].reshape(a.shape)
    return np.argsort(-rank, axis=-1, kind="stable")


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _check(a: np.ndarray, d: dt.DType, what: str) -> None:
    """cuda == cpu == NumPy: argsort indices and sorted values, both directions."""
    xc, xg = make_tensor(a, d, "cpu"), make_tensor(a, d, "cuda")
    for desc in (False, True):
        w = f"{what} descending={desc}"
        ig, vg = T.argsort(xg, descending=desc), T.sort(xg, descending=desc)
        assert ig.device.type == "cuda" and ig.dtype is dt.int64 and ig.shape == a.shape, w
        ic, vc = to_np(T.argsort(xc, descending=desc)), to_np(T.sort(xc, descending=desc))
        ref = _ref(a, desc)
        np.testing.assert_array_equal(to_np(ig), ref, err_msg=w)
        np.testing.assert_array_equal(ic, ref, err_msg=w)
        np.testing.assert_array_equal(_bits(to_np(vg)), _bits(vc), err_msg=w)
        np.testing.assert_array_equal(_bits(to_np(vg)), _bits(np.take_along_axis(a, ref, -1)), err_msg=w)


@pytest.mark.parametrize("d", REAL, ids=str)
def test_short_rows_equal_cpu(d):
    """Lengths the shared-memory path takes, from one element to a few rows per block."""
    rng = np.random.default_rng(1)
    for L, rows in ((1, 5), (2, 33), (3, 7), (5, 1), (17, 9), (32, 70), (33, 3), (64, 2), (255, 5),
                    (256, 3)):
        _check(sort_values(rng, d, (rows, L)), d, f"{d} rows={rows} L={L}")


@pytest.mark.parametrize("d", REAL, ids=str)
def test_threshold_rows_equal_cpu(d):
    """SHORT_MAX - 1 and SHORT_MAX (shared memory, one row per block) and SHORT_MAX + 1
    (the radix path)."""
    S = _short()
    rng = np.random.default_rng(2)
    for L in (S.SHORT_MAX - 1, S.SHORT_MAX, S.SHORT_MAX + 1):
        _check(sort_values(rng, d, (2, L)), d, f"{d} L={L}")


def test_paths_are_chosen_by_length(monkeypatch):
    S = _short()
    calls, real = [], S._sort_short

    def spy(x, v, i, rows, L, desc):
        calls.append(L)
        real(x, v, i, rows, L, desc)
    monkeypatch.setattr(S, "_sort_short", spy)
    for L in (S.SHORT_MAX, S.SHORT_MAX + 1):
        a = np.arange(2 * L, 0, -1, dtype=np.float32).reshape(2, L)
        got = to_np(T.argsort(T.asarray(a, device="cuda")))
        np.testing.assert_array_equal(got, np.broadcast_to(np.arange(L - 1, -1, -1), (2, L)))
    assert calls == [S.SHORT_MAX]


@pytest.mark.parametrize("d", [dt.bool_, dt.uint8, dt.int16, dt.bfloat16, dt.float32, dt.int64,
                               dt.uint64, dt.float64], ids=str)
def test_both_paths_agree_on_the_same_rows(monkeypatch, d):
    """One set of rows through each path (the threshold moved), around the moved threshold."""
    S = _short()
    rng = np.random.default_rng(3)
    a = sort_values(rng, d, (6, 40))
    x = make_tensor(a, d, "cuda")
    for L in (15, 16, 17, 40):
        sub = x[:, :L]
        got = {}
        for limit in (0, S.SHORT_MAX):   # 0: every length goes to the radix path
            monkeypatch.setattr(S, "SHORT_MAX", limit)
            got[limit] = [(to_np(T.argsort(sub, descending=desc)), _bits(to_np(T.sort(sub, descending=desc))))
                          for desc in (False, True)]
        for (i0, v0), (i1, v1), desc in zip(got[0], got[S.SHORT_MAX], (False, True)):
            np.testing.assert_array_equal(i0, i1, err_msg=f"{d} L={L} descending={desc}")
            np.testing.assert_array_equal(v0, v1, err_msg=f"{d} L={L} descending={desc}")
            np.testing.assert_array_equal(i1, _ref(a[:, :L], desc))


@pytest.mark.parametrize("waves", [0, None], ids=["one block", "default grid"])
def test_many_rows_go_grid_stride(monkeypatch, waves):
    """More tiles of rows than the grid has blocks (waves 0: a grid of one block, on any device;
    the emulator's default grid, 2 SMs x SHORT_WAVES, is smaller than the 38 tiles too): each
    block sorts several tiles in turn."""
    S = _short()
    if waves is not None:
        monkeypatch.setattr(S, "SHORT_WAVES", waves)
    rows, L = 300, 200
    lgP, lgR, threads, smem = S.short_plan(rows, L, 4)
    assert (lgP, lgR, threads, smem) == (8, 3, 256, 2048 * 8)   # 8 rows of 256 per block
    rng = np.random.default_rng(4)
    a = rng.standard_normal((rows, L)).astype(np.float32)
    a[rng.random(a.shape) < 0.1] = np.nan
    a[rng.random(a.shape) < 0.2] = 0.5            # ties
    a[rng.random(a.shape) < 0.05] = -0.0          # equal to +0.0 below
    a[rng.random(a.shape) < 0.05] = 0.0
    _check(a, dt.float32, f"rows={rows} L={L}")


def test_short_plan_fits_shared_memory():
    """Every planned launch fits the 48 KiB a launch gets without opting in; short rows share
    a block."""
    S = _short()
    for L in range(1, S.SHORT_MAX + 1, 97):
        for rows in (1, 3, 1000):
            for size in (1, 2, 4, 8):
                lgP, lgR, threads, smem = S.short_plan(rows, L, size)
                P, R, E = 1 << lgP, 1 << lgR, 1 << (lgP + lgR)
                assert P >= L > P // 2 or L == 1
                assert smem == E * (10 if size == 8 else 8) <= 48 * 1024
                assert 32 <= threads <= S.BLOCK and threads <= max(32, E // 2)
                assert E <= max(S.SHORT_TILE, P) and R < 2 * rows   # no more rows than needed
                assert R >= rows or E >= S.SHORT_TILE                # else blocks are full
