/* The table of the multi-tensor kernels (GradScaler's unscale: amp.h / amp.cuh; the master
 * weights' optimizer steps: optim.h / optim.cuh), shared by both compilers. The host builds it
 * (tensor.backend.multi_tensor_table): k columns of n addresses, n sizes, then the index of the
 * first chunk of each tensor and the total chunk count (n + 1 values); a chunk, a fixed number
 * of elements of one tensor, is a work item. */
#ifndef STRIDEX_SCALAR_MULTI_TENSOR_H
#define STRIDEX_SCALAR_MULTI_TENSOR_H
#include "scalar/types.h"

/* The tensor that chunk c belongs to: the last whose chunks start at or before c (a tensor
 * of no elements has none, and is skipped). */
SX_SCALAR_FN int64_t sx_chunk_owner(const int64_t *start, int64_t n, int64_t c) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (start[mid] <= c) lo = mid; else hi = mid - 1;
    }
    return lo;
}
#endif
