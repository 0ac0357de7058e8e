"""LDL^T (LDL^H) factorization of symmetric / Hermitian indefinite matrices with Bunch-Kaufman
pivoting, in LAPACK's sytrf / hetrf compact format (PyTorch's ldl_factor, ldl_factor_ex,
ldl_solve), composed from batched tensor ops so it runs on every device without a kernel.

The format (lower triangle, as PyTorch asks LAPACK for): A = L D L^T (L D L^H when hermitian)
with L = P(1) L(1) P(2) L(2) ..., each P(k) a swap of two rows and columns and L(k) unit lower
with one block column. D is block diagonal with 1x1 and 2x2 blocks. LD holds D on its diagonal
and, for a 2x2 block at (k, k+1), its off-diagonal entry at LD[k+1, k]; the multipliers of L
below. pivots (int32, 1-based): pivots[k] = p > 0 for a 1x1 block at k after swapping rows and
columns k and p; pivots[k] = pivots[k+1] = -p for a 2x2 block at (k, k+1) after swapping k+1
and p. Only the lower triangle of A is read (for hermitian=True, the real part of its diagonal).

The factorization walks the n columns in lock step over the batch: column c of each matrix is
either a 1x1 step, the start of a 2x2 step (which also writes column c+1), or the column a 2x2
step already wrote; which one is decided per matrix with masks. Each step costs O(batch * m^2)
for the trailing m x m matrix (m = n - c) in about forty batched ops: O(batch * n^3) work in all,
n Python steps. It computes in float64 / complex128, as the other factorizations here.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import dtypes as dt
from .. import elementwise as ew
from .._hook import differentiable
from .._tensor import Tensor
from . import _core as C
from ._core import as_matrix
from ._funcs import _wants_grad
from ._names import T

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0   # Bunch-Kaufman's threshold (LAPACK's)


class LDLFactorResult(NamedTuple):
    LD: Tensor
    pivots: Tensor


class LDLFactorExResult(NamedTuple):
    LD: Tensor
    pivots: Tensor
    info: Tensor


def _mag(x: Tensor) -> Tensor:
    """LAPACK's magnitude for pivot search: |x|, or |Re x| + |Im x| for complex x."""
    return T.abs(T.real(x)) + T.abs(T.imag(x)) if x.dtype.kind == "c" else T.abs(x)


def _diag_mag(x: Tensor, herm: bool) -> Tensor:
    return T.abs(T.real(x)) if herm and x.dtype.kind == "c" else _mag(x)


def _adj(x: Tensor, herm: bool) -> Tensor:
    """x conjugated when the factorization is Hermitian (complex), else x."""
    return T.conj(x) if herm and x.dtype.kind == "c" else x


def _diag_value(x: Tensor, herm: bool) -> Tensor:
    """A diagonal entry as the factorization reads it: its real part when Hermitian."""
    return T.real(x).astype(x.dtype) if herm and x.dtype.kind == "c" else x


def _full(a: Tensor, herm: bool) -> Tensor:
    """The symmetric / Hermitian matrix whose lower triangle is a's (diagonal real when Hermitian)."""
    low = T.tril(a, -1)
    dg = _diag_value(T.diagonal(a, 0, -2, -1), herm)
    eye = T.eye(a.shape[-1], dtype=dt.bool_, device=a.device)
    return T.where(eye, dg[..., None, :], low + _adj(low, herm).swapaxes(-1, -2))   # (no inf * 0)


def _swap(S: Tensor, i: Tensor, j: Tensor) -> Tensor:
    """S (b, m, m) with rows and columns i and j (b,) exchanged, per matrix."""
    m = S.shape[-1]
    ar = T.arange(m, device=S.device)[None, :]
    i, j = i[:, None], j[:, None]
    p = T.where(ar == i, j, T.where(ar == j, i, ar))
    S = T.take_along_axis(S, p[:, :, None], axis=1)
    return T.take_along_axis(S, p[:, None, :], axis=2)


def _step(S: Tensor, c: int, herm: bool, skip: Tensor):
    """One column of the factorization of the trailing matrices S (b, m, m) (global column c).
    Returns (LD column c (b, m), pivot (b,), zero (b,), starts a 2x2 block (b,), next S)."""
    b, m = S.shape[0], S.shape[-1]
    dev, d = S.device, S.dtype
    rd = dt.real_of(d) if d.kind == "c" else d
    absakk = _diag_mag(S[:, 0, 0], herm)
    zeros_i = T.zeros((b,), dtype=dt.int64, device=dev)
    if m > 1:
        below = _mag(S[:, 1:, 0])
        imax = T.argmax(below, axis=-1) + 1
        colmax = T.take_along_axis(below, (imax - 1)[:, None], axis=1)[:, 0]
        srow = T.take_along_axis(S, imax[:, None, None], axis=1)[:, 0, :]
        row = _mag(srow)
        ar = T.arange(m, device=dev)[None, :]
        rowmax = T.max(T.where(ar == imax[:, None], T.zeros_like(row), row), axis=-1)
        amax = _diag_mag(T.take_along_axis(srow, imax[:, None], axis=1)[:, 0], herm)
    else:
        imax = zeros_i
        colmax = rowmax = amax = T.zeros((b,), dtype=rd, device=dev)
    # LAPACK: no step when the column is zero (or its diagonal NaN with a zero column)
    zero = ((absakk == 0) | T.isnan(absakk)) & (colmax == 0) & ~skip
    no_swap = (absakk >= _ALPHA * colmax)
    safe_row = T.where(rowmax == 0, T.ones_like(rowmax), rowmax)
    no_swap = no_swap | (absakk >= _ALPHA * colmax * (colmax / safe_row))
    swap1 = ~no_swap & (amax >= _ALPHA * rowmax)
    two = ~zero & ~skip & ~no_swap & ~swap1
    one = ~zero & ~skip & ~two
    kp = T.where(one & swap1 | two, imax, zeros_i)
    kk = T.where(two, T.ones_like(zeros_i), zeros_i)
    S = _swap(S, kk, kp)
    col0 = S[:, :, 0]
    piv_now = T.where(two, -(kp + c + 1), kp + c + 1)
    # 1x1: column [d, x / d]; the trailing matrix loses x x^T / d
    dd = _diag_value(S[:, 0, 0], herm)
    one_b = one[:, None]
    r = 1 / T.where(one, dd, T.ones_like(dd))
    x = S[:, 1:, 0]
    xr = x * r[:, None]
    S1 = S[:, 1:, 1:] - x[:, :, None] * _adj(xr, herm)[:, None, :]
    col1 = T.concatenate([dd[:, None], xr], axis=1)
    new = T.where(one_b[:, :, None], S1, S[:, 1:, 1:])
    col = T.where(one_b, col1, col0)
    if m > 1:   # 2x2: columns [a, b, W inv(D)] (this one) and [c, ...] (the next one)
        a, cc, bb = _diag_value(S[:, 0, 0], herm), _diag_value(S[:, 1, 1], herm), S[:, 1, 0]
        W = S[:, 2:, 0:2]
        u, v = W[:, :, 0], W[:, :, 1]
        bsafe = T.where(two, bb, T.ones_like(bb))
        if herm and d.kind == "c":   # zhetf2's formulas
            babs = T.abs(bsafe)
            d11, d22 = T.real(cc) / babs, T.real(a) / babs
            tt = 1 / (d11 * d22 - 1)
            d21 = bsafe / babs.astype(d)
            f = (tt / babs).astype(d)
            wk = f[:, None] * (d11.astype(d)[:, None] * u - d21[:, None] * v)
            wkp1 = f[:, None] * (d22.astype(d)[:, None] * v - T.conj(d21)[:, None] * u)
        else:                        # dsytf2's / zsytf2's
            d11, d22 = cc / bsafe, a / bsafe
            t = 1 / (d11 * d22 - 1)
            f = t / bsafe
            wk = f[:, None] * (d11[:, None] * u - v)
            wkp1 = f[:, None] * (d22[:, None] * v - u)
        S2 = S[:, 2:, 2:] - u[:, :, None] * _adj(wk, herm)[:, None, :] \
            - v[:, :, None] * _adj(wkp1, herm)[:, None, :]
        nxt = T.concatenate([cc[:, None], wkp1], axis=1)                 # column c+1, from row c+1
        top = T.concatenate([nxt[:, :, None], T.concatenate(
            [T.zeros((b, 1, m - 2), dtype=d, device=dev), S2], axis=1)], axis=2)
        two_b = two[:, None]
        new = T.where(two_b[:, :, None], top, new)
        col = T.where(two_b, T.concatenate([a[:, None], bb[:, None], wk], axis=1), col)
    return col, piv_now, zero, two, new


def _factor(a: Tensor, herm: bool):
    """(LD (b, n, n), pivots (b, n) int64, info (b,) int64) of the work copy a (b, n, n)."""
    b, n = a.shape[0], a.shape[-1]
    dev = a.device
    S = _full(a, herm)
    skip = T.zeros((b,), dtype=dt.bool_, device=dev)
    pend = T.zeros((b,), dtype=dt.int64, device=dev)
    info = T.zeros((b,), dtype=dt.int64, device=dev)
    cols, pivs = [], []
    for c in range(n):
        col, piv, zero, two, S = _step(S, c, herm, skip)
        piv = T.where(skip, pend, piv)
        info = T.where((info == 0) & zero, c + 1, info)
        pend = T.where(two, piv, pend)
        skip = two
        cols.append(T.concatenate([T.zeros((b, c), dtype=a.dtype, device=dev), col], axis=1))
        pivs.append(piv)
    LD = T.stack(cols, axis=-1)
    if herm and a.dtype.kind == "c":
        eye = T.eye(n, dtype=dt.bool_, device=dev)
        LD = T.where(eye, T.real(T.diagonal(LD, 0, -2, -1)).astype(a.dtype)[..., None, :], LD)
    return LD, T.stack(pivs, axis=-1), info


def _ldl_factor_ex_raw(A, hermitian=False, check_errors=False):
    A = as_matrix(A, "ldl_factor_ex", square=True)
    n = A.shape[-1]
    batch = A.shape[:-2]
    d = C.result_dtype(A.dtype)
    a = C.work(A)
    if a.numel():
        LD, piv, info = _factor(a, bool(hermitian))
    else:
        LD = a
        piv = T.zeros((a.shape[0], n), dtype=dt.int64, device=A.device)
        info = T.zeros((a.shape[0],), dtype=dt.int64, device=A.device)
    info = info.astype(dt.int32).reshape(batch)
    if check_errors:
        C.check_info(info, "ldl_factor_ex", batch, _zero_block)
    return (C._cast(LD, d, A.shape), piv.astype(dt.int32).reshape(batch + (n,)), info)


_ldl_factor_ex_op = differentiable("linalg_ldl_factor_ex", _ldl_factor_ex_raw)


def _zero_block(code):
    return (f"the factorization found D[{code - 1}, {code - 1}] exactly zero (the matrix is "
            "singular): a solve with it would divide by zero")


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False) -> LDLFactorExResult:
    """(LD, pivots, info): the Bunch-Kaufman LDL^T factorization of symmetric matrices (LDL^H of
    Hermitian ones when hermitian) in LAPACK's sytrf / hetrf compact format (this module's
    docstring), as PyTorch's; only A's lower triangle is read. info (int32, one per matrix) is
    k + 1 for the first exactly zero 1x1 block D[k, k] (the matrix is singular), 0 otherwise;
    check_errors raises LinAlgError instead. O(batch * n^3) work in n batched steps. Not
    differentiable (nor is PyTorch's, which raises at backward): an input that requires grad
    raises NotImplementedError here."""
    _refuse_grad(A, "ldl_factor_ex")
    return LDLFactorExResult(*_ldl_factor_ex_op(A, hermitian=hermitian, check_errors=check_errors))


def _refuse_grad(A, op: str) -> None:
    if isinstance(A, Tensor) and _wants_grad(A):
        raise NotImplementedError(f"linalg.{op}: not differentiable (nor is PyTorch's): A of shape "
                                  f"{A.shape} requires grad; factor A.detach(), or use linalg.solve")


def ldl_factor(A, *, hermitian: bool = False) -> LDLFactorResult:
    """(LD, pivots) of ldl_factor_ex; raises LinAlgError for a singular matrix (a zero block)."""
    _refuse_grad(A, "ldl_factor")
    LD, piv, info = _ldl_factor_ex_op(A, hermitian=hermitian)
    C.check_info(info, "ldl_factor", tuple(info.shape), _zero_block)
    return LDLFactorResult(LD, piv)


# ---------------------------------------------------------------- solve

def _schedule(piv: np.ndarray, n: int, op: str, batch: tuple):
    """From pivots (b, n) (1-based, checked here): per column c the swap (s, p) applied at it
    (b, n) each, and masks (b, n) of the columns that start / end a 2x2 block."""
    bad = (piv == 0) | (np.abs(piv) > n)
    if bad.any():
        i = np.argwhere(bad)[0]
        raise ValueError(f"linalg.{op}: pivots must satisfy 1 <= |pivot| <= {n} (the order of LD), "
                         f"got {int(piv[tuple(i)])} at index {tuple(int(k) for k in i)} of pivots "
                         f"of shape {batch + (n,)}; pass the pivots ldl_factor returned")
    b = piv.shape[0]
    first = np.zeros((b, n), bool)
    second = np.zeros((b, n), bool)
    s = np.broadcast_to(np.arange(n), (b, n)).copy()
    p = np.abs(piv) - 1
    for c in range(n):
        st = ~second[:, c]
        two = st & (piv[:, c] < 0)
        if c == n - 1 and two.any():
            raise ValueError(f"linalg.{op}: pivots[..., {n - 1}] is negative, which would start a "
                             f"2x2 block at the last column (matrix {int(np.argmax(two))} of the batch); "
                             "pass the pivots ldl_factor returned")
        first[:, c] = two
        if c + 1 < n:
            second[:, c + 1] = two
        s[two, c] += 1
    s[second] = np.arange(n)[None, :].repeat(b, 0)[second]
    p[second] = s[second]                 # the second column of a block swaps nothing
    return s, p, first, second


def _perm(s: np.ndarray, p: np.ndarray, n: int) -> np.ndarray:
    """Index arrays (b, n) that swap rows s and p of each matrix."""
    ar = np.broadcast_to(np.arange(n), (s.shape[0], n))
    return np.where(ar == s[:, None], p[:, None], np.where(ar == p[:, None], s[:, None], ar))


def ldl_solve(LD, pivots, B, *, hermitian: bool = False) -> Tensor:
    """X with A X = B for A factored by ldl_factor (LD, pivots; hermitian as given to it), as
    LAPACK's sytrs / hetrs and PyTorch's ldl_solve; batches broadcast. A zero block of D gives
    inf / NaN (as LAPACK). Differentiable in LD and B (composed of recorded ops). O(batch * n^2 *
    k) work in 2n batched steps, the swaps read from pivots on the host."""
    op = "ldl_solve"
    LD = as_matrix(LD, op, square=True)
    B = ew.as_tensor(B, f"linalg.{op}")
    pivots = ew.as_tensor(pivots, f"linalg.{op}")
    n = LD.shape[-1]
    if pivots.dtype.kind not in "iu":
        raise TypeError(f"linalg.{op}: pivots must be integers, got {pivots.dtype.name}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise ValueError(f"linalg.{op}: pivots must have shape LD.shape[:-1] = {LD.shape[:-1]}, "
                         f"got {pivots.shape}")
    if B.ndim < 2 or B.shape[-2] != n:
        raise ValueError(f"linalg.{op}: B must be a matrix or a batch of matrices with {n} rows "
                         f"(LD is {n} x {n}), got shape {B.shape}")
    C.same_device(LD, B, op)
    C.same_device(LD, pivots, op)
    herm = bool(hermitian)
    batch = C.broadcast_batch(LD, B, op)
    d = C.result_dtype(dt.result_type(LD, B))
    k = B.shape[-1]
    bt = math.prod(batch)
    L = T.broadcast_to(LD.astype(d), batch + (n, n)).reshape((bt, n, n))
    Y = T.broadcast_to(B.astype(d), batch + (n, k)).reshape((bt, n, k))
    piv = ew.astype(pivots, dt.int64, copy=False).to_device("cpu").numpy()
    piv = np.broadcast_to(piv, batch + (n,)).reshape(bt, n)
    if bt == 0 or n == 0 or k == 0:
        return T.zeros(batch + (n, k), dtype=d, device=LD.device)
    s, p, first, second = _schedule(piv, n, op, batch)
    dev = LD.device
    rows = np.arange(n)
    # L's multipliers: below the diagonal, except a 2x2 block's own entry LD[c+1, c]
    sub = (rows[:, None] == rows[None, :] + 1)[None]
    lmask = (rows[:, None] > rows[None, :])[None] & ~(first[:, None, :] & sub)
    Lm = T.where(T.asarray(lmask, device=dev), L, T.zeros_like(L))
    LmT = _adj(Lm, herm).swapaxes(-1, -2)
    perms = [None if (s[:, c] == p[:, c]).all() else T.asarray(_perm(s[:, c], p[:, c], n), device=dev)
             for c in range(n)]
    for c in range(n):   # L^-1 with the swaps: y <- P(c) y, then column c's elimination
        if perms[c] is not None:
            Y = T.take_along_axis(Y, perms[c][:, :, None], axis=1)
        if c + 1 < n:
            Y = Y - Lm[:, :, c:c + 1] * Y[:, c:c + 1, :]
    Y = _solve_d(L, Y, herm, T.asarray(first, device=dev), T.asarray(second, device=dev))
    onehot = T.eye(n, dtype=d, device=dev)
    for c in reversed(range(n)):   # L^-T (L^-H), the swaps after each column
        if c + 1 < n:
            Y = Y - onehot[:, c:c + 1] * T.matmul(LmT[:, c:c + 1, :], Y)
        if perms[c] is not None:
            Y = T.take_along_axis(Y, perms[c][:, :, None], axis=1)
    return Y.reshape(batch + (n, k))


def _solve_d(L: Tensor, Y: Tensor, herm: bool, first: Tensor, second: Tensor) -> Tensor:
    """D^-1 Y for the block-diagonal D stored in L (1x1 and 2x2 blocks, masks first / second)."""
    dg = _diag_value(T.diagonal(L, 0, -2, -1), herm)          # (b, n)
    sub = T.diagonal(L, -1, -2, -1)                            # (b, n - 1): D[c+1, c]
    d, dev = L.dtype, L.device
    z1 = T.zeros(dg.shape[:-1] + (1,), dtype=d, device=dev)
    e = T.concatenate([sub, z1], axis=-1)                      # e[c] = D[c+1, c]
    e_prev = T.concatenate([z1, sub], axis=-1)                 # D[c, c-1]
    dg_next = T.concatenate([dg[:, 1:], z1], axis=-1)
    dg_prev = T.concatenate([z1, dg[:, :-1]], axis=-1)
    zr = T.zeros(Y.shape[:-2] + (1, Y.shape[-1]), dtype=d, device=dev)
    y_next = T.concatenate([Y[:, 1:, :], zr], axis=1)
    y_prev = T.concatenate([zr, Y[:, :-1, :]], axis=1)
    one = T.ones_like(dg)
    # a 2x2 block [[a, b'], [b, c]] (b' = b, or conj(b) when Hermitian), det = a c - b b'
    det1 = T.where(first, dg * dg_next - e * _adj(e, herm), one)
    det2 = T.where(second, dg_prev * dg - e_prev * _adj(e_prev, herm), one)
    z_first = (dg_next[..., None] * Y - _adj(e, herm)[..., None] * y_next) / det1[..., None]
    z_second = (dg_prev[..., None] * Y - e_prev[..., None] * y_prev) / det2[..., None]
    z_one = Y / T.where(first | second, one, dg)[..., None]
    return T.where(first[..., None], z_first, T.where(second[..., None], z_second, z_one))


__all__ = ["LDLFactorExResult", "LDLFactorResult", "ldl_factor", "ldl_factor_ex",
           "ldl_solve"]
