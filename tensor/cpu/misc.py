"""CPU kernels of creation: iota (arange, linspace). CUDA twin: tensor/cuda/misc.py."""
from __future__ import annotations

from .. import dtypes as dt
from . import kernels as K


def source(d: dt.DType):
    ctype = d.ctype
    if d.kind == "f":
        # one rounding (an explicit fma: the same on every compiler and on the GPU)
        body = f"o[i] = ST_{d.sfx}(fma((double)i, step, start));"
        sig = f"void iota_{d.sfx}(int64_t n, intptr_t out, double start, double step)"
    else:
        body = f"o[i] = ({ctype})(start + i * step);"
        sig = f"void iota_{d.sfx}(int64_t n, intptr_t out, int64_t start, int64_t step)"
    src = f"""#include "common.h"
{sig} {{
    T_{d.sfx} *o = (T_{d.sfx} *)out;
    for (int64_t i = 0; i < n; i++) {body}
}}
"""
    return src, sig + ";"


K.register_family("misc", source)


def iota(out, n: int, start, step) -> None:
    """out[i] = start + i * step for the n contiguous elements of out."""
    if n <= 0:
        return
    d = out.dtype
    if d.kind == "f":
        K.kernel("misc", d, f"iota_{d.sfx}")(n, out.data_ptr(), float(start), float(step))
    else:
        K.kernel("misc", d, f"iota_{d.sfx}")(n, out.data_ptr(), int(start), int(step))
