/* GradScaler's unscale and inf/NaN check (tensor/amp.py) over many tensors in one call, each
 * element x becoming x * inv_scale (computed in float, in double for float64: PyTorch's
 * opmath) and found[0] set to 1 where any x was inf or NaN. The tensors are contiguous, of one
 * dtype; `table` lists n addresses, n sizes and n + 1 chunk starts (int64): the chunks of
 * `chunk` elements are the work items the threads share, whatever the tensors' sizes. CUDA
 * twin: cuda_src/amp.cuh (the same table, one launch). */
#include "common.h"
#include "scalar/multi_tensor.h"

#define SX_AMP_UNSCALE(S)                                                                \
void amp_unscale_##S(intptr_t table_, int64_t n, int64_t chunk, double inv_scale,        \
                     intptr_t found_, int nthreads) {                                    \
    const int64_t *table = (const int64_t *)table_, *sizes = table + n, *start = table + 2 * n; \
    float *found = (float *)found_;                                                      \
    const C_##S inv = (C_##S)(float)inv_scale;                                           \
    const int64_t total = start[n];                                                      \
    const int nt = (total > 1 && nthreads > 1) ? nthreads : 1;                           \
    int bad = 0;                                                                         \
    _Pragma("omp parallel for schedule(dynamic) reduction(|:bad) num_threads(nt) if (nt > 1)") \
    for (int64_t c = 0; c < total; c++) {                                                \
        int64_t lo = sx_chunk_owner(start, n, c);                                        \
        T_##S *p = (T_##S *)(intptr_t)table[lo];                                         \
        int64_t i0 = (c - start[lo]) * chunk, end = i0 + chunk;                          \
        if (end > sizes[lo]) end = sizes[lo];                                            \
        int b = 0;                                                                       \
        for (int64_t i = i0; i < end; i++) {                                             \
            C_##S v = LD_##S(p[i]);                                                      \
            b |= (v - v != 0);        /* inf - inf and NaN - NaN are NaN */              \
            p[i] = ST_##S(v * inv);                                                      \
        }                                                                                \
        bad |= b;                                                                        \
    }                                                                                    \
    if (bad) found[0] = 1.0f;                                                            \
}
