/* The general eigenproblem of a REAL matrix (tensor/cpu/linalg_eig.py's eig_real): the batch
 * driver, included by the float64 module after linalg_eig.h (its LE_BATCH). The algorithm
 * (Hessenberg, Francis double-shift QR to the real Schur form, back substitution)
 * is cuda_src/scalar/linalg_eig_real.h, which the CUDA kernel runs too. */
#include "scalar/linalg_eig_real.h"

int linalg_eig_real_f64(intptr_t ap, int64_t B, int64_t n, int64_t bs, int64_t lda, intptr_t wp,
                        intptr_t vp, int64_t vbs, int64_t ldv, intptr_t infop, int nthreads) {
    const double *a = (const double *)ap;
    lr_c *w = (lr_c *)wp, *v = (lr_c *)vp;
    int64_t *info = (int64_t *)infop;
    const size_t ws = sizeof(double) * (size_t)LR_WORK(n) + 64;
    LE_BATCH(B, 10.0 * n * n * n, ws,
             info[b] = lr_eig1(a + b * bs, lda, n, w + b * n, v ? v + b * vbs : NULL, ldv,
                               (double *)work));
    return 0;
}
