"""SpMM and SDDMM in the dtypes the kernels lack, written with the kernels' recorded ops (so
both autograd modes work as for float32 / float64):

- float16 / bfloat16: computed in float32 and rounded once to the dtype at the end (PyTorch
  computes its COO products of these dtypes in float32 too);
- complex64 / complex128: four products of the real and imaginary parts in float32 / float64,
  (Ar Br - Ai Bi) + i (Ar Bi + Ai Br).

Integer and bool matrices have no product (float64 would round int64 past 2**53): a clear
TypeError names the op and the dtype."""
from __future__ import annotations

from .. import dtypes as dt
from ._ops import KERNEL_DTYPES, pub, sddmm, spmm

_HALF = (dt.float16, dt.bfloat16)


def check(op: str, d) -> None:
    if d not in KERNEL_DTYPES and d not in _HALF and d.kind != "c":
        raise TypeError(f"{op}: sparse products take float16, bfloat16, float32, float64, "
                        f"complex64 or complex128, got {d.name}")


def _parts(x):
    return pub("real")(x), pub("imag")(x)


def spmm_any(crow, col, values, b, shape, balanced):
    """A @ b (dense (m, n)) for A = CSR (crow, col, values) of any dtype check() accepts."""
    d = values.dtype
    if d in KERNEL_DTYPES:
        return spmm(crow, col, values, b, shape, balanced)
    if d in _HALF:
        f = dt.float32
        return spmm(crow, col, values.astype(f), b.astype(f), shape, balanced).astype(d)
    (vr, vi), (br, bi) = _parts(values), _parts(b)

    def p(v, x):
        return spmm(crow, col, v, x, shape, balanced)
    return pub("complex")(p(vr, br) - p(vi, bi), p(vr, bi) + p(vi, br))


def sddmm_any(crow, col, x, y, s, beta: float, alpha: float):
    """beta * s + alpha * (x @ y^T) at the CSR pattern (crow, col), any dtype check() accepts."""
    d = x.dtype
    if d in KERNEL_DTYPES:
        return sddmm(crow, col, x, y, s, beta, alpha)
    if d in _HALF:
        f = dt.float32
        out = sddmm(crow, col, x.astype(f), y.astype(f), s.astype(f), beta, alpha)
        return out.astype(d)
    (xr, xi), (yr, yi) = _parts(x), _parts(y)

    def p(u, v):
        return sddmm(crow, col, u, v, None, 0.0, 1.0)
    prod = pub("complex")(p(xr, yr) - p(xi, yi), p(xr, yi) + p(xi, yr))
    out = prod * alpha if alpha != 1.0 else prod
    return out + s * beta if beta != 0.0 else out


__all__ = ["check", "spmm_any", "sddmm_any"]
