"""CUDA creation kernels (family "misc", cuda_src/misc.cuh): the device side of the CPU's misc
family (tensor/creation.py). iota_<sfx> for every dtype: out[i] = start + i * step, equal to
the CPU's values bit for bit (float: one fma in double, then the dtype's rounding; integer:
wrapping int64 arithmetic, then a truncating cast)."""
from __future__ import annotations

import ctypes

from .. import dtypes as dt
from . import kernels as CK

BLOCK = 256  # SX_MBLK


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    if d.kind == "f":
        sig, fn = "double start, double step", "sx_iota_f"
    else:
        sig, fn = "int64_t start, int64_t step", "sx_iota_i"
    return '#include "misc.cuh"\n', {f"iota_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SX_MBLK) iota_{s}(sx_{s}::T *out, '
        f"int64_t n, {sig}) {{ {fn}<sx_{s}>(out, n, start, step); }}")}


CK.register_family("misc", entries, dt.REAL, exact=True)


def iota(out, n: int, start, step) -> None:
    """out[i] = start + i * step for the n contiguous elements of the CUDA tensor out."""
    from . import runtime as R
    if n <= 0:
        return
    d = out.dtype
    if d.kind == "f":
        a, b = ctypes.c_double(float(start)), ctypes.c_double(float(step))
    else:
        start, step = int(start), int(step)
        if not (-2**63 <= start < 2**63 and -2**63 <= step < 2**63):
            raise OverflowError(f"iota: start {start} / step {step} do not fit int64")
        a, b = ctypes.c_int64(start), ctypes.c_int64(step)
    k = R.kernel("misc", d, f"iota_{d.sfx}", out.device)
    k(R.blocks_for(n, BLOCK, out.device), BLOCK, ctypes.c_void_p(out.data_ptr()), ctypes.c_int64(n), a, b)
