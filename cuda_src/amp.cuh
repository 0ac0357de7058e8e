/* GradScaler's unscale and inf/NaN check on CUDA (the CPU's: tensor/cpu/csrc/amp.h): one
 * launch over many contiguous tensors of one dtype, each element x becoming x * inv_scale (in
 * float, double for float64) and found[0] set to 1 where any x was inf or NaN. `table` (int64,
 * on the device) lists n addresses, n sizes and n + 1 chunk starts; a block takes a chunk of
 * `chunk` elements at a time (grid-stride over all chunks), finds its tensor by binary search
 * and walks the chunk with its threads. */
#ifndef STRIDEX_AMP_CUH
#define STRIDEX_AMP_CUH
#include "common.cuh"
#include "scalar/multi_tensor.h"

#define SA_BLOCK 256

template <class S>
SX_DEV void sa_unscale(const int64_t *table, int64_t n, int64_t chunk, double inv_scale,
                       float *found) {
    typedef typename S::T T;
    typedef typename S::C A;
    S s;
    const int64_t *sizes = table + n, *start = table + 2 * n;
    const A inv = (A)(float)inv_scale;
    int bad = 0;
    for (int64_t c = blockIdx.x; c < start[n]; c += gridDim.x) {
        int64_t lo = sx_chunk_owner(start, n, c);
        T *p = reinterpret_cast<T *>(table[lo]);
        int64_t i0 = (c - start[lo]) * chunk, end = i0 + chunk;
        if (end > sizes[lo]) end = sizes[lo];
        for (int64_t i = i0 + threadIdx.x; i < end; i += blockDim.x) {
            A v = s.ld(p[i]);
            bad |= (v - v != 0);      /* inf - inf and NaN - NaN are NaN */
            p[i] = s.st(v * inv);
        }
    }
    if (bad) *found = 1.0f;           /* every writer writes the same value */
}
#endif
