"""Blocked right-looking LU and Cholesky for large matrices: the backend's unblocked kernels
factor a panel of NB columns (a strided view: the kernels read row and batch strides), la_trsm
solves the block row, and the trailing update, where the O(n^3) work is, is our GEMM
(tensor/products.py: the tensor-core / blocked kernels of each device).

Used where one block per matrix would leave a device idle: CUDA matrices of at least
MIN_N[device] rows (and few in the batch). The CPU kernels are panelled inside already
(tensor/cpu/csrc/linalg.h) and faster on their own, so the CPU uses this only when a test
lowers its threshold.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from .. import elementwise as ew
from .. import products
from ..backend import backend_for
from ._names import T

NB = 64
MIN_N = {"cuda": 256}
MAX_BATCH = 8


def wanted(a) -> bool:
    """Whether the work matrix a (B, m, n) takes the blocked path on its device."""
    lim = MIN_N.get(a.device.type)
    return lim is not None and a.shape[0] <= MAX_BATCH and min(a.shape[1:]) >= lim


def _sub_matmul(c, x, y) -> None:
    """c -= x @ y, in place (c a strided view)."""
    ew.binary("subtract", c, products.matmul(x, y), out=c)


def lu(a, piv, info) -> None:
    """The contract of the backend's la_lu, blocked: P A = L U in place, piv 0-based row swaps,
    info j + 1 for the first exactly zero pivot."""
    be = backend_for(a.device)
    B, m, n = a.shape
    k = min(m, n)
    codes = np.zeros(B, np.int64)
    swaps = np.zeros((B, k), np.int64)
    for j in range(0, k, NB):
        jb = min(NB, k - j)
        ppiv = T.zeros((B, jb), dtype=dt.int64, device=a.device)
        pinf = T.zeros((B,), dtype=dt.int64, device=a.device)
        be.la_lu(a[:, j:, j:j + jb], ppiv, pinf)
        p = ppiv.to_device("cpu").numpy()
        f = pinf.to_device("cpu").numpy()
        codes = np.where((codes == 0) & (f > 0), f + j, codes)
        swaps[:, j:j + jb] = p + j
        # the panel's row swaps on the columns left and right of it
        perm = np.broadcast_to(np.arange(m - j), (B, m - j)).copy()
        for b in range(B):
            for i, s in enumerate(p[b]):
                perm[b, [i, s]] = perm[b, [s, i]]
        if not (perm == np.arange(m - j)).all():
            idx = T.asarray(perm, device=a.device)
            for cols in (slice(0, j), slice(j + jb, n)):
                blk = a[:, j:, cols]
                if blk.numel():
                    ix = T.broadcast_to(T.expand_dims(idx, -1), blk.shape)
                    ew.copy_into(blk, T.take_along_axis(blk, ix, 1))
        if j + jb < n:
            be.la_trsm(a[:, j:j + jb, j:j + jb], a[:, j:j + jb, j + jb:], True, True, 0)
            if j + jb < m:
                _sub_matmul(a[:, j + jb:, j + jb:], a[:, j + jb:, j:j + jb], a[:, j:j + jb, j + jb:])
    ew.copy_into(piv, T.asarray(swaps, device=a.device))
    ew.copy_into(info, T.asarray(codes, device=a.device))


def cholesky(a, info) -> None:
    """The contract of the backend's la_cholesky, blocked: L into a's lower triangle (the upper
    zeroed), info j + 1 for the first pivot that is not > 0."""
    be = backend_for(a.device)
    B, n, _ = a.shape
    codes = np.zeros(B, np.int64)
    for j in range(0, n, NB):
        jb = min(NB, n - j)
        pinf = T.zeros((B,), dtype=dt.int64, device=a.device)
        be.la_cholesky(a[:, j:j + jb, j:j + jb], pinf)
        f = pinf.to_device("cpu").numpy()
        codes = np.where((codes == 0) & (f > 0), f + j, codes)
        if codes.any():
            break    # as LAPACK's potrf: the factorization stops at the first failure
        if j + jb < n:
            # L21 = A21 L11^-H: L11 X = A21^H, X = L21^H (a contiguous copy to solve in place)
            a21 = a[:, j + jb:, j:j + jb]
            x = ew.contiguous(a21.mT.conj())
            be.la_trsm(a[:, j:j + jb, j:j + jb], x, True, False, 0)
            ew.copy_into(a21, x.mT.conj())
            _sub_matmul(a[:, j + jb:, j + jb:], a21, x)     # A22 -= L21 L21^H
    ew.copy_into(a, T.tril(a))
    ew.copy_into(info, T.asarray(codes, device=a.device))
