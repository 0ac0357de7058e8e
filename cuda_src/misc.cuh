/* CUDA creation kernels (family "misc"): the device side of the CPU's misc family in
 * tensor/creation.py.
 *
 * iota: out[i] = start + i * step over n contiguous elements (grid-stride, 64-bit index).
 *   float dtypes: computed in double as fma((double)i, step, start) -- one rounding, as the
 *     CPU kernel's explicit fma -- then stored through the dtype's st() (float16 / bfloat16:
 *     double -> float -> 16-bit, as the CPU's ST_ macros).
 *   integer and bool dtypes: int64 arithmetic that wraps (the CPU builds with -fwrapv),
 *     then the dtype's st() (a truncating cast; bool: != 0). */
#ifndef STRIDEX_MISC_CUH
#define STRIDEX_MISC_CUH

#include "common.cuh"

#define SX_MBLK 256   /* threads per block of the misc kernels */

template <class S>
SX_DEV void sx_iota_f(typename S::T *o, int64_t n, double start, double step) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)blockDim.x * gridDim.x)
        o[i] = S::st(fma((double)i, step, start));
}

template <class S>
SX_DEV void sx_iota_i(typename S::T *o, int64_t n, int64_t start, int64_t step) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)blockDim.x * gridDim.x)
        o[i] = S::st((int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step));
}

#endif
