"""Derivative rules of tensor.linalg's recorded primitives (tensor/linalg/_core.py): solve,
solve_triangular, lu_factor, cholesky, qr, eigh, svd, eig, vector_norm (_norm.py), det and
pinv (_pinv_det.py).

Written for complex numbers directly, in PyTorch's convention (the gradient of a real loss is
its conjugate Wirtinger derivative), so every Rule has conj=False; for real inputs the formulas
reduce to the familiar real ones. <X, Y> below is Re tr(X^H Y). Each vjp is the adjoint of the
jvp next to it (derivations in the comments); spectral rules divide by eigenvalue gaps and so
are infinite for repeated eigenvalues or singular values, as PyTorch's.
"""
from __future__ import annotations

import math

import tensor as T
from tensor.linalg import _core as C
from tensor.linalg import _pinv_det as PD
from tensor.linalg._norm import norm_axes

from .graph import RULES, Rule
from .rules_util import fit


def _H(x):
    return x.mT.conj()


def _st(A, B, upper, left=True, unit=False):
    return C.solve_triangular_op(A, B, upper, left, unit)


def _diag(v):
    """diag_embed: (..., n) -> (..., n, n)."""
    n = v.shape[-1]
    return T.expand_dims(v, -1) * T.eye(n, dtype=v.dtype, device=v.device)


def _dg(x):
    return T.diagonal(x, 0, -2, -1)


def _real_diag(x):
    """x with its diagonal's imaginary part removed."""
    if x.dtype.kind != "c":
        return x
    return x - _diag(1j * T.imag(_dg(x)).astype(x.dtype))


def _gap(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    d = T.expand_dims(w, -2) - T.expand_dims(w, -1)
    n = w.shape[-1]
    eye = T.eye(n, dtype=T.bool, device=w.device)
    return T.where(eye, T.zeros_like(d), 1 / T.where(eye, T.ones_like(d), d))


def _check_gauge(op, im, scale):
    """Raise when a loss depends on the free phases of eigen/singular vectors (the imaginary
    diagonal `im` of V^H gV is not ~0), as PyTorch does: its gradient is not defined."""
    lim = T.finfo(im.dtype).eps ** 0.5 * max(1.0, float(T.max(T.abs(scale))) if scale.size else 1.0)
    if im.size and float(T.max(T.abs(im))) > lim:
        raise RuntimeError(f"linalg.{op}: the loss depends on the phase of the (complex) "
                           "vectors, which is arbitrary: its gradient is not defined; make it "
                           "invariant to v -> v * exp(i phi)")


def _register(name, vjp, jvp, save):
    RULES[name] = Rule(name, vjp, jvp, save, conj=False)


# ---------------------------------------------------------------- solve
# X = A^-1 B: dX = A^-1 (dB - dA X); gB = A^-H g, gA = -gB X^H (right: X = B A^-1,
# dX = (dB - X dA) A^-1, gB = g A^-H, gA = -X^H gB). A 1-D B is a column (a row when right).

def _mat(B, left):
    return B if B.ndim > 1 else (T.expand_dims(B, -1) if left else T.expand_dims(B, 0))


def _solve_args(ctx):
    """(A, B, left): a solve recorded without `left` (solve_op's default, as eig's rules call it
    under create_graph) is a left solve."""
    A, B, *rest = ctx.args
    return A, B, (rest[0] if rest else True)


def _solve_vjp(ctx, g):
    A, B, left = _solve_args(ctx)
    X = ctx.out
    gX, Xm = _mat(g, left), _mat(X, left)
    gB = C.solve_op(_H(A), gX, left)
    gA = -T.matmul(gB, _H(Xm)) if left else -T.matmul(_H(Xm), gB)
    gB = gB if B.ndim > 1 else gB.reshape(gB.shape[:-2] + (B.shape[0],))
    return (fit(gA, A), fit(gB, B)) + (None,) * (len(ctx.args) - 2)


def _solve_jvp(ctx, tans):
    A, B, left = _solve_args(ctx)
    tA, tB = tans[0], tans[1]
    if tA is None and tB is None:
        return None
    X = ctx.out
    Xm = _mat(X, left)
    r = 0
    if tB is not None:
        r = _mat(tB, left)
    if tA is not None:
        r = r - (T.matmul(tA, Xm) if left else T.matmul(Xm, tA))
    dX = C.solve_op(A, r, left)
    return dX if X.ndim == dX.ndim else dX.reshape(X.shape)


_register("linalg_solve", _solve_vjp, _solve_jvp, (0, 1, "out"))


# ---------------------------------------------------------------- solve_triangular

def _tri(x, upper, unit):
    k = 1 if unit else 0
    return T.triu(x, k) if upper else T.tril(x, -k)


def _trsv_vjp(ctx, g):
    A, B, upper, left, unit = ctx.args
    X = ctx.out
    gB = _st(_H(A), g, not upper, left, unit)
    gA = -T.matmul(gB, _H(X)) if left else -T.matmul(_H(X), gB)
    return fit(_tri(gA, upper, unit), A), fit(gB, B), None, None, None


def _trsv_jvp(ctx, tans):
    A, B, upper, left, unit = ctx.args
    tA, tB = tans[0], tans[1]
    X = ctx.out
    r = 0 if tB is None else tB
    if tA is not None:
        t = _tri(tA, upper, unit)
        r = r - (T.matmul(t, X) if left else T.matmul(X, t))
    return _st(A, r + T.zeros_like(X), upper, left, unit)


_register("linalg_solve_triangular", _trsv_vjp, _trsv_jvp, (0, 1, "out"))


# ---------------------------------------------------------------- LU (square)
# A = P L U. X = L^-1 P^T dA U^-1: dL = L tril(X, -1), dU = triu(X) U, packed dLU = dL + dU.
# gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H with gL = tril(g, -1), gU = triu(g).

def _lu_parts(LU, piv):
    from tensor.linalg._funcs import _perm_matrix
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise NotImplementedError("linalg.lu_factor: derivatives of a rectangular LU "
                                  f"factorization (shape {LU.shape}) are not supported")
    return _perm_matrix(piv, n, LU)


def _lu_vjp(ctx, gs):
    A = ctx.args[0]
    LU, piv = ctx.out
    g = gs[0]
    if g is None:
        return (None,)
    P = _lu_parts(LU, piv)
    L = T.tril(LU, -1) + T.eye(LU.shape[-1], dtype=LU.dtype, device=LU.device)
    U = T.triu(LU)
    M = T.tril(T.matmul(_H(L), T.tril(g, -1)), -1) + T.triu(T.matmul(T.triu(g), _H(U)))
    M = _st(_H(U), M, False, left=False)            # M U^-H
    M = _st(_H(L), M, True, unit=True)              # L^-H M
    return (fit(T.matmul(P, M), A),)


def _lu_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    LU, piv = ctx.out
    P = _lu_parts(LU, piv)
    X = _st(LU, T.matmul(P.mT, t), False, unit=True)
    X = _st(LU, X, True, left=False)
    L = T.tril(LU, -1) + T.eye(LU.shape[-1], dtype=LU.dtype, device=LU.device)
    return T.matmul(L, T.tril(X, -1)) + T.matmul(T.triu(X), T.triu(LU)), None


_register("linalg_lu_factor", _lu_vjp, _lu_jvp, ("out",))


# ---------------------------------------------------------------- Cholesky
# A = L L^H. X = L^-1 dA L^-H (Hermitian): dL = L phi(X), phi = the lower triangle with half
# the diagonal. Adjoint: gA = L^-H S L^-1 with S the Hermitian matrix whose lower triangle is
# phi(L^H gL), phi being self-adjoint; symmetrised (dA is Hermitian), as PyTorch's.

def _phi(x):
    return T.tril(x, -1) + 0.5 * _diag(_dg(x))


def _chol_vjp(ctx, g):
    A, upper = ctx.args
    L = ctx.out
    if upper:
        L, g = _H(L), _H(g)
    P = _phi(T.matmul(_H(L), g))
    S = 0.5 * (P + _H(P))
    S = _st(_H(L), S, True)                 # L^-H S
    S = _st(L, S, False, left=False)        # ... L^-1
    return fit(S, A), None


def _chol_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    upper = ctx.args[1]
    L = _H(ctx.out) if upper else ctx.out
    X = _st(L, t, False)
    X = _st(_H(L), X, True, left=False)
    dL = T.matmul(L, _phi(X))
    return _H(dL) if upper else dL


_register("linalg_cholesky", _chol_vjp, _chol_jvp, ("out",))


# ---------------------------------------------------------------- QR
# Tall or square (m >= n, reduced): X = Q^H dA R^-1, C = tril(X, -1) - tril(X, -1)^H +
# i Im diag(X) (Q^H dQ, skew-Hermitian), dR = (X - C) R, dQ = dA R^-1 - Q (X - C).
# Adjoint: M = gR R^H - Q^H gQ, N = triu(M, 1) + tril(M^H, -1) + Re diag(M),
# gA = (gQ + Q N) R^-H. Wide (m < n): A = Q [U V], the square case on A[:, :m] with
# gQ + A2 gV^H, and gA2 = Q gV.

def _qr_differentiable(A, mode) -> tuple:
    m, n = A.shape[-2:]
    if mode == "r" or (mode == "complete" and m > n):
        raise NotImplementedError(f"linalg.qr: mode={mode!r} is not differentiable for shape "
                                  f"{A.shape} (use mode='reduced')")
    return m, n


def _qr_vjp(ctx, gs):
    A, mode = ctx.args
    Q, R = ctx.out
    m, n = _qr_differentiable(A, mode)
    gQ, gR = gs
    gQ = T.zeros_like(Q) if gQ is None else gQ
    gR = T.zeros_like(R) if gR is None else gR
    if m >= n:
        return fit(_qr_square_vjp(Q, R, gQ, gR), A), None
    U, gU = R[..., :, :m], gR[..., :, :m]
    gV = gR[..., :, m:]
    gQ = gQ + T.matmul(A[..., :, m:], _H(gV))
    g1 = _qr_square_vjp(Q, U, gQ, gU)
    return fit(T.concat([g1, T.matmul(Q, gV)], axis=-1), A), None


def _qr_square_vjp(Q, R, gQ, gR):
    M = T.matmul(gR, _H(R)) - T.matmul(_H(Q), gQ)
    N = T.triu(M, 1) + T.tril(_H(M), -1) + _diag(T.real(_dg(M)).astype(M.dtype))
    return _st(_H(R), gQ + T.matmul(Q, N), False, left=False)    # (gQ + Q N) R^-H


def _qr_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    A, mode = ctx.args
    Q, R = ctx.out
    m, n = _qr_differentiable(A, mode)
    if m < n:
        U = R[..., :, :m]
        dQ, dU = _qr_square_jvp(Q, U, t[..., :, :m])
        dV = T.matmul(_H(dQ), A[..., :, m:]) + T.matmul(_H(Q), t[..., :, m:])
        return dQ, T.concat([dU, dV], axis=-1)
    return _qr_square_jvp(Q, R, t)


def _qr_square_jvp(Q, R, t):
    X = _st(R, T.matmul(_H(Q), t), True, left=False)
    Cm = T.tril(X, -1) - _H(T.tril(X, -1))
    if X.dtype.kind == "c":
        Cm = Cm + _diag(1j * T.imag(_dg(X)).astype(X.dtype))
    D = X - Cm
    dQ = _st(R, t, True, left=False) - T.matmul(Q, D)
    return dQ, T.matmul(D, R)


_register("linalg_qr", _qr_vjp, _qr_jvp, (0, "out"))


# ---------------------------------------------------------------- eigh
# A = V diag(w) V^H. X = V^H dA V: dw = Re diag(X), dV = V (F o X), F = _gap(w).
# gA = V (diag(gw) + F o skew(V^H gV)) V^H, skew(E) = (E - E^H) / 2.

def _eigh_vjp(ctx, gs):
    A = ctx.args[0]
    w, V = ctx.out
    gw, gV = gs
    M = 0
    if gV is not None:
        E = T.matmul(_H(V), gV)
        if E.dtype.kind == "c":
            _check_gauge("eigh", T.imag(_dg(E)), E)
        # only E's skew-Hermitian part moves an orthonormal V: the gradient of a Hermitian A is
        # Hermitian (PyTorch's), so second derivatives along Hermitian directions are right
        M = _gap(w).astype(V.dtype) * ((E - _H(E)) / 2)
    if gw is not None:
        M = M + _diag(gw.astype(V.dtype))
    if isinstance(M, int):
        return None, None
    return fit(T.matmul(V, T.matmul(M, _H(V))), A), None


def _eigh_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    w, V = ctx.out
    X = T.matmul(_H(V), T.matmul(t, V))
    dw = T.real(_dg(X)) if X.dtype.kind == "c" else _dg(X)
    return dw.astype(w.dtype), T.matmul(V, _gap(w).astype(V.dtype) * X)


_register("linalg_eigh", _eigh_vjp, _eigh_jvp, ("out",))


# ---------------------------------------------------------------- SVD (the reduced part)
# A = U S V^H, k = min(m, n), E[i, j] = s_j^2 - s_i^2. With J = U^H gU, K = V^H gV:
# gA = U [ (J - J^H)/E S + S (K - K^H)/E + diag(gS) + i Im diag(J) / (2 S) ] V^H
#      + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H).

def _svd_vjp(ctx, gs):
    A, full = ctx.args
    U, S, Vh = ctx.out
    m, n = A.shape[-2:]
    k = min(m, n)
    gU, gS, gVh = gs
    U, Vh = U[..., :, :k], Vh[..., :k, :]
    if full:   # the completing columns are not unique: their gradients are not used
        gU = None if gU is None else gU[..., :, :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    V = _H(Vh)
    d = U.dtype
    Sd = S.astype(d)
    inner = _diag(gS.astype(d)) if gS is not None else T.zeros((k, k), dtype=d, device=A.device)
    F = _gap(S * S).astype(d)
    if d.kind == "c" and (gU is not None or gVh is not None):   # Im diag(U^H gU + V^H gV)
        im = T.zeros((k,), dtype=S.dtype, device=A.device)
        if gU is not None:
            im = im + T.imag(_dg(T.matmul(_H(U), gU)))
        if gVh is not None:
            im = im - T.imag(_dg(T.matmul(gVh, V)))
        _check_gauge("svd", im, im)
    extra = 0
    if gU is not None:
        J = T.matmul(_H(U), gU)
        inner = inner + F * (J - _H(J)) * T.expand_dims(Sd, -2)
        if d.kind == "c":
            inner = inner + _diag(1j * T.imag(_dg(J)).astype(d) / Sd)
        if m > k:
            extra = T.matmul(gU - T.matmul(U, J), T.expand_dims(1 / Sd, -1) * Vh)
    if gVh is not None:
        gV = _H(gVh)
        K = T.matmul(Vh, gV)
        inner = inner + T.expand_dims(Sd, -1) * (F * (K - _H(K)))
        if n > k:
            extra = extra + T.matmul(U * T.expand_dims(1 / Sd, -2), _H(gV - T.matmul(V, K)))
    return fit(T.matmul(U, T.matmul(inner, Vh)) + extra, A), None


def _svd_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    A, full = ctx.args
    U, S, Vh = ctx.out
    m, n = A.shape[-2:]
    k = min(m, n)
    if full and m != n:
        raise NotImplementedError("linalg.svd: forward-mode derivatives need "
                                  "full_matrices=False for non-square input")
    U, Vh = U[..., :, :k], Vh[..., :k, :]
    V = _H(Vh)
    d = U.dtype
    Sd = S.astype(d)
    X = T.matmul(_H(U), T.matmul(t, V))             # k x k
    dS = T.real(_dg(X)) if d.kind == "c" else _dg(X)
    F = _gap(S * S).astype(d)
    Xs = X * T.expand_dims(Sd, -2)                  # X S
    SX = T.expand_dims(Sd, -1) * X                  # S X
    dU = T.matmul(U, F * (Xs + _H(Xs)))
    dV = T.matmul(V, F * (SX + _H(SX)))
    if d.kind == "c":
        dU = dU + T.matmul(U, _diag(1j * T.imag(_dg(X)).astype(d) / Sd))
    if m > k:
        dU = dU + T.matmul(t - T.matmul(U, T.matmul(_H(U), t)), V) * T.expand_dims(1 / Sd, -2)
    if n > k:
        dV = dV + T.matmul(_H(t) - T.matmul(V, T.matmul(Vh, _H(t))), U) * T.expand_dims(1 / Sd, -2)
    return dU, dS.astype(S.dtype), _H(dV)


_register("linalg_svd", _svd_vjp, _svd_jvp, (0, "out"))


# ---------------------------------------------------------------- eig (general)
# A V = V diag(w), unit columns. X = V^-1 dA V: dw = diag(X), dV = V (F o X) - V Re diag(
# V^H V (F o X)) (the normalisation). Adjoint: gA = V^-H (diag(gw) + conj(F) o (V^H gV -
# V^H V Re diag(V^H gV))) V^H, with F[i, j] = 1 / (w_j - w_i).

def _eig_vjp(ctx, gs):
    A = ctx.args[0]
    w, V = ctx.out
    gw, gV = gs
    M = T.zeros(V.shape, dtype=V.dtype, device=V.device)
    if gV is not None:
        VhgV = T.matmul(_H(V), gV)
        _check_gauge("eig", T.imag(_dg(VhgV)), VhgV)
        VhV = T.matmul(_H(V), V)
        re = T.real(_dg(VhgV)).astype(V.dtype)
        M = M + _gap(w).conj() * (VhgV - VhV * T.expand_dims(re, -2))
    if gw is not None:
        M = M + _diag(gw.astype(V.dtype))
    gA = C.solve_op(_H(V), T.matmul(M, _H(V)), True)
    if A.dtype.kind != "c":
        gA = T.real(gA)
    return fit(gA, A), None


def _eig_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    w, V = ctx.out
    X = C.solve_op(V, T.matmul(t.astype(V.dtype), V), True)
    FX = _gap(w) * X
    dV = T.matmul(V, FX)
    corr = T.real(_dg(T.matmul(_H(V), dV))).astype(V.dtype)
    return _dg(X), dV - V * T.expand_dims(corr, -2)


_register("linalg_eig", _eig_vjp, _eig_jvp, (0, "out"))


# ---------------------------------------------------------------- vector_norm
# p-norm r = (sum |x|^p)^(1/p): dr/dx (conjugate Wirtinger) = sgn(x) |x|^(p-1) / r^(p-1);
# inf / -inf: sgn(x) on the elements equal to r, shared equally among ties; 0 where r = 0.

def _vn_grad(x, r, ord, axis, keepdims):  # noqa: A002
    ax = norm_axes(x, axis)
    if not keepdims:
        for a in sorted(ax):
            r = T.expand_dims(r, a)
    a = T.abs(x)
    sgn = T.sign(x) if x.dtype.kind != "c" else x / T.where(a == 0, T.ones_like(a), a).astype(x.dtype)
    if ord == 0:
        return None, r, ax
    if ord in (math.inf, -math.inf):
        hit = (a == r).astype(a.dtype)
        share = hit / T.sum(hit, axis=ax, keepdims=True)
        return sgn * share.astype(sgn.dtype), r, ax
    if ord == 1:
        return sgn, r, ax
    safe = T.where(r == 0, T.ones_like(r), r)
    if ord == 2:
        return x / safe.astype(x.dtype) * (r != 0).astype(x.dtype), r, ax
    p = float(ord)
    w = (a / safe) ** (p - 1) * (r != 0).astype(a.dtype)
    return sgn * w.astype(sgn.dtype), r, ax


def _vn_vjp(ctx, g):
    x, ord, axis, keepdims = ctx.args  # noqa: A001
    J, _, ax = _vn_grad(x, ctx.out, ord, axis, keepdims)
    if J is None:
        return T.zeros_like(x), None, None, None
    if not keepdims:
        for a in sorted(ax):
            g = T.expand_dims(g, a)
    return fit(J * g.astype(J.dtype), x), None, None, None


def _vn_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    x, ord, axis, keepdims = ctx.args  # noqa: A001
    J, _, ax = _vn_grad(x, ctx.out, ord, axis, keepdims)
    if J is None:
        return T.zeros_like(ctx.out)
    prod = T.real(J.conj() * t) if J.dtype.kind == "c" else J * t
    return T.sum(prod, axis=ax, keepdims=keepdims).astype(ctx.out.dtype)


_register("linalg_vector_norm", _vn_vjp, _vn_jvp, (0, "out"))


# ---------------------------------------------------------------- det
# d det = tr(adj(A) dA): gA = g adj(A)^H, tangent sum(conj(adj(A)^H) * tA). adj(A)^H is
# conj(det) A^-H where A is invertible, from the SVD where it is not (tensor/linalg/_pinv_det.py):
# finite at singular matrices (the composition through lu_factor divided by the zero pivot).

def _det_vjp(ctx, g):
    A = ctx.args[0]
    adjh = PD.adjugate_h(A, ctx.out)
    return (fit(T.expand_dims(T.expand_dims(g, -1), -1).astype(adjh.dtype) * adjh, A),)


def _det_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    adjh = PD.adjugate_h(ctx.args[0], ctx.out)
    return T.sum(adjh.conj() * t.astype(adjh.dtype), axis=(-2, -1)).astype(ctx.out.dtype)


_register("linalg_det", _det_vjp, _det_jvp, (0, "out"))


# ---------------------------------------------------------------- pinv
# P = A^+ (Golub & Pereyra, for a constant rank, as PyTorch's):
# dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P; its adjoint
# gA = -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A). Finite at repeated singular
# values (the composition through the SVD's rule divided by their gaps).

def _pinv_parts(A, P):
    m, n = A.shape[-2:]
    I_m = T.eye(m, dtype=P.dtype, device=P.device)
    I_n = T.eye(n, dtype=P.dtype, device=P.device)
    return I_m - T.matmul(A, P), I_n - T.matmul(P, A)


def _pinv_vjp(ctx, g):
    A, P = ctx.args[0], ctx.out
    A = A.astype(P.dtype)
    g = g.astype(P.dtype)
    Ph, gh = _H(P), _H(g)
    ra, rp = _pinv_parts(A, P)
    gA = (-T.matmul(T.matmul(Ph, g), Ph) + T.matmul(T.matmul(ra, gh), T.matmul(P, Ph))
          + T.matmul(T.matmul(Ph, P), T.matmul(gh, rp)))
    return fit(gA, ctx.args[0]), None, None


def _pinv_jvp(ctx, tans):
    t = tans[0]
    if t is None:
        return None
    A, P = ctx.args[0], ctx.out
    A = A.astype(P.dtype)
    t = t.astype(P.dtype)
    th = _H(t)
    ra, rp = _pinv_parts(A, P)
    return (-T.matmul(T.matmul(P, t), P) + T.matmul(T.matmul(P, _H(P)), T.matmul(th, ra))
            + T.matmul(T.matmul(rp, th), T.matmul(_H(P), P)))


_register("linalg_pinv", _pinv_vjp, _pinv_jvp, (0, "out"))
