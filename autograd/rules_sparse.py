"""Derivative rules of tensor.sparse's recorded ops (tensor/sparse/_ops.py).

sparse_spmm: Y = A B, A the CSR (crow, col, values) of shape (m, k). Reverse: the values'
gradient keeps the pattern, g_values[j] = dot(G[row j], B[col j]) (an SDDMM of G and B^T);
B's is A^T G through the transposed pattern (A's values permuted into it). Forward: Y' =
A' B + A B' (A' has A's pattern with the values' tangent).
sparse_sddmm: y = beta s + alpha (X Y^T) at the pattern. Reverse: g_s = beta g, g_X = alpha
G_S Y, g_Y = alpha G_S^T X with G_S the sparse matrix of g on the pattern. Every rule is
written with the same recorded ops, so higher derivatives work too."""
from __future__ import annotations

from tensor.sparse._ops import sddmm, spmm, transposed

from .graph import RULES, Rule


def _need(ctx, i):
    return ctx.needs is None or bool(ctx.needs[i])


def _spmm_vjp(ctx, g):
    crow, col, values, b, shape, _ = ctx.args
    gv = gb = None
    if _need(ctx, 2):
        gv = sddmm(crow, col, g, b, None, 0.0, 1.0)
    if _need(ctx, 3):
        crt, colt, perm, bal = transposed(crow, col, shape[1])
        gb = spmm(crt, colt, values[perm], g, (shape[1], shape[0]), bal)
    return (None, None, gv, gb, None, None)


def _spmm_jvp(ctx, tans):
    crow, col, values, b, shape, bal = ctx.args
    tv, tb = tans[2], tans[3]
    out = None
    if tv is not None:
        out = spmm(crow, col, tv, b, shape, bal)
    if tb is not None:
        t = spmm(crow, col, values, tb, shape, bal)
        out = t if out is None else out + t
    return out


def _sddmm_vjp(ctx, g):
    crow, col, x, y, s, beta, alpha = ctx.args
    gx = gy = gs = None
    m, ncols = x.shape[0], y.shape[0]
    if s is not None and _need(ctx, 4):
        gs = g * beta
    if _need(ctx, 2):
        gx = spmm(crow, col, g, y, (m, ncols), False) * alpha
    if _need(ctx, 3):
        crt, colt, perm, bal = transposed(crow, col, ncols)
        gy = spmm(crt, colt, g[perm], x, (ncols, m), bal) * alpha
    return (None, None, gx, gy, gs, None, None)


def _sddmm_jvp(ctx, tans):
    crow, col, x, y, s, beta, alpha = ctx.args
    tx, ty, ts = tans[2], tans[3], tans[4]
    out = None
    if tx is not None:
        out = sddmm(crow, col, tx, y, None, 0.0, alpha)
    if ty is not None:
        t = sddmm(crow, col, x, ty, None, 0.0, alpha)
        out = t if out is None else out + t
    if ts is not None and s is not None:
        t = ts * beta
        out = t if out is None else out + t
    return out


RULES["sparse_spmm"] = Rule("sparse_spmm", _spmm_vjp, _spmm_jvp, (0, 1, 2, 3))
RULES["sparse_sddmm"] = Rule("sparse_sddmm", _sddmm_vjp, _sddmm_jvp, (0, 1, 2, 3))
