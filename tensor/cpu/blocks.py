"""CPU kernel of joins (concatenate / stack of many contiguous tensors): one call copies every
input's rows into the output, instead of one elementwise launch (a few microseconds of host
work) per input. No CUDA twin: the CUDA backend's concat_rows is None (one copy per input)."""
from __future__ import annotations

import math

import numpy as np

from . import kernels as K

_SRC = """#include "common.h"
#include <string.h>
/* out: `outer` rows of out_row bytes; input i: `outer` rows of len[i] bytes at src[i], placed
 * one after another in each output row. Rows of the output in parallel when there are many. */
void sx_concat_rows(int64_t n, intptr_t src, intptr_t len, int64_t outer, intptr_t out,
                    int64_t out_row, int nthreads) {
    const int64_t *s = (const int64_t *)src, *l = (const int64_t *)len;
    char *o = (char *)out;
    int nt = (outer > 1 && outer * out_row >= (1 << 20) && nthreads > 1) ? nthreads : 1;
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")
    for (int64_t r = 0; r < outer; r++) {
        char *dst = o + r * out_row;
        for (int64_t i = 0; i < n; i++) {
            int64_t b = l[i];
            const char *p = (const char *)s[i] + r * b;
            switch (b) {   /* fixed sizes: an inline copy, not a call */
            case 4: memcpy(dst, p, 4); break;
            case 8: memcpy(dst, p, 8); break;
            case 16: memcpy(dst, p, 16); break;
            default: memcpy(dst, p, (size_t)b);
            }
            dst += b;
        }
    }
}
"""
_CDEF = ("void sx_concat_rows(int64_t n, intptr_t src, intptr_t len, int64_t outer, intptr_t out, "
         "int64_t out_row, int nthreads);")

K.register_family("blocks", lambda d: (_SRC, _CDEF))


def concat_rows(out, ins: list, outer: int) -> None:
    """out (contiguous) seen as `outer` rows: each row is the ins' rows laid end to end, input
    i (contiguous, out's dtype) seen as `outer` rows of its numel() // outer elements."""
    if out.numel() == 0:
        return
    w = out.dtype.itemsize
    src = np.array([t.data_ptr() for t in ins], dtype=np.int64)
    lens = np.fromiter((math.prod(t._shape) for t in ins), np.int64, len(ins)) // outer * w
    K.kernel("blocks", None, "sx_concat_rows")(len(ins), src.ctypes.data, lens.ctypes.data, outer,
                                               out.data_ptr(), out.numel() // outer * w, K._num_threads)
