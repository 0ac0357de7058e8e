/* The real general eigenproblem on CUDA (tensor/cuda/linalg_eig.py's eig_real): one thread per
 * matrix, grid-stride over the batch, each thread running the sequential algorithm of
 * scalar/linalg_eig_real.h (the CPU's too: Hessenberg reduction, Francis
 * double-shift QR to the real Schur form, back substitution) in its own work area of global
 * memory. Matrices reach here only below the backend's HOST_LINALG size, so a thread's
 * O(n^3) sequential work stays small; a batch fills the device. */
#ifndef STRIDEX_LINALG_EIG_REAL_CUH
#define STRIDEX_LINALG_EIG_REAL_CUH
#include "common.cuh"
#include "scalar/linalg_eig_real.h"

/* a (batch, n, n) float64, batch / row strides bs, lda; w (batch, n), v (batch, n, n) complex128
 * (v: batch / row strides vbs, ldv; unused unless vecs); work: wstride bytes per thread of the
 * grid; info[b]: 0, n + 1 (non-finite input) or i + 1 (no convergence). */
SX_DEV void le_eig_real(const double *a, int64_t bs, int64_t lda, sx_cd *w, sx_cd *v, int64_t vbs,
                        int64_t ldv, char *work, int64_t wstride, int64_t *info, int64_t batch,
                        int64_t n, int vecs) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nt = (int64_t)gridDim.x * blockDim.x;
    double *wk = (double *)(work + t * wstride);
    for (int64_t b = t; b < batch; b += nt)
        info[b] = lr_eig1(a + b * bs, lda, n, (lr_c *)(w + b * n), vecs ? (lr_c *)(v + b * vbs) : 0,
                          ldv, wk);
}
#endif
