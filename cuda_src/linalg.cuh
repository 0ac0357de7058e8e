/* Dense factorizations and triangular solves on CUDA (issue 16; host side tensor/cuda/linalg.py):
 * LU with partial pivoting, Cholesky, triangular solves (trsm), lu_solve, Householder QR, for
 * float64 (T = double) and complex128 (T = sx_cd), generic over T through the la_* overloads.
 *
 * One block of LA_BLOCK threads per matrix at a time (grid-stride over the batch). The matrix
 * stays in global memory, addressed through its row stride (ld) and batch stride (bs): element
 * (i, j) of matrix b is at p[b * bs + i * ld + j]. Each step of an algorithm is one or two
 * parallel sweeps (a column scaled, a rank-1 trailing update flattened over (row, column)
 * pairs so that consecutive threads touch consecutive columns), separated by __syncthreads.
 * Reductions (the pivot search, column norms, Householder dot products) use warp butterflies
 * and then the warps' partials in a fixed order: no atomics, so results are bitwise identical
 * run to run. The unblocked algorithms are LAPACK's getf2 / potf2 (right-looking) / trsm /
 * getrs / geqr2 + org2r, for the small matrices of a batch; large matrices want blocked
 * panels whose trailing updates go through the GEMM kernels (see tensor/cuda/linalg.py). */
#ifndef STRIDEX_LINALG_CUH
#define STRIDEX_LINALG_CUH
#include "common.cuh"

#define LA_BLOCK 128
#define LA_WARPS (LA_BLOCK / 32)

/* ---- scalar arithmetic, overloaded on double and sx_cd ---- */
SX_DEV double la_re(double x) { return x; }
SX_DEV double la_re(sx_cd x) { return x.re; }
SX_DEV double la_im(double) { return 0.0; }
SX_DEV double la_im(sx_cd x) { return x.im; }
SX_DEV void la_set(double &x, double re, double) { x = re; }
SX_DEV void la_set(sx_cd &x, double re, double im) { x.re = re; x.im = im; }
template <class T> SX_DEV T la_mk(double re, double im = 0.0) { T x; la_set(x, re, im); return x; }
SX_DEV double la_conj(double x) { return x; }
SX_DEV sx_cd la_conj(sx_cd x) { sx_cd r = {x.re, -x.im}; return r; }
SX_DEV double la_add(double a, double b) { return a + b; }
SX_DEV sx_cd la_add(sx_cd a, sx_cd b) { sx_cd r = {a.re + b.re, a.im + b.im}; return r; }
SX_DEV double la_sub(double a, double b) { return a - b; }
SX_DEV sx_cd la_sub(sx_cd a, sx_cd b) { sx_cd r = {a.re - b.re, a.im - b.im}; return r; }
SX_DEV double la_mul(double a, double b) { return a * b; }
SX_DEV sx_cd la_mul(sx_cd a, sx_cd b) {
    sx_cd r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}
SX_DEV double la_div(double a, double b) { return a / b; }
SX_DEV sx_cd la_div(sx_cd a, sx_cd b) { return sx_cdiv(a, b); }   /* scaled (no overflow) */
SX_DEV double la_divr(double a, double d) { return a / d; }
SX_DEV sx_cd la_divr(sx_cd a, double d) { sx_cd r = {a.re / d, a.im / d}; return r; }
SX_DEV double la_abs1(double x) { return fabs(x); }
SX_DEV double la_abs1(sx_cd x) { return fabs(x.re) + fabs(x.im); }
SX_DEV double la_absmax(double x) { return fabs(x); }
SX_DEV double la_absmax(sx_cd x) { return fmax(fabs(x.re), fabs(x.im)); }
SX_DEV double la_ssq(double x, double s) { double u = x / s; return u * u; }
SX_DEV double la_ssq(sx_cd x, double s) {
    double u = x.re / s, v = x.im / s;
    return u * u + v * v;
}
SX_DEV bool la_iszero(double x) { return x == 0.0; }
SX_DEV bool la_iszero(sx_cd x) { return x.re == 0.0 && x.im == 0.0; }

/* The block's sweep over an nr x nc grid: (i, c) = (t / nc, t % nc) for t = threadIdx.x,
 * threadIdx.x + blockDim.x, ... < nr * nc, with the divisions done once per sweep, not per
 * element (64-bit division is slow on a GPU). Use: LA_FOR2(nr, nc, i, c) { body }. */
#define LA_FOR2(nr, nc, i, c)                                                               \
    for (int64_t i##_q = (nc) > 0 ? (int64_t)blockDim.x / (nc) : 0,                         \
                 i##_r = (nc) > 0 ? (int64_t)blockDim.x % (nc) : 0,                         \
                 i = (nc) > 0 ? (int64_t)threadIdx.x / (nc) : (nr),                         \
                 c = (nc) > 0 ? (int64_t)threadIdx.x % (nc) : 0;                            \
         i < (nr); i += i##_q + ((c += i##_r) >= (nc) ? (c -= (nc), 1) : 0))

/* ---- block reductions: every thread calls them and gets the result; they end synced ---- */
struct la_red { double v[LA_WARPS]; int64_t i[LA_WARPS]; };

/* The largest v and its index, the smallest index on ties (entries with idx < 0, v = -1 are
 * empty). */
SX_DEV void la_argmax(double &v, int64_t &idx, la_red *sh) {
    for (int o = 16; o > 0; o >>= 1) {
        double ov = sx_shfl_xor(v, o);
        int64_t oi = sx_shfl_xor(idx, o);
        if (ov > v || (ov == v && oi < idx)) { v = ov; idx = oi; }
    }
    if ((threadIdx.x & 31) == 0) { sh->v[threadIdx.x >> 5] = v; sh->i[threadIdx.x >> 5] = idx; }
    __syncthreads();
    v = sh->v[0];
    idx = sh->i[0];
    for (int w = 1; w < LA_WARPS; w++)
        if (sh->v[w] > v || (sh->v[w] == v && sh->i[w] < idx)) { v = sh->v[w]; idx = sh->i[w]; }
    __syncthreads();
}

/* Sum (op 0) or max (op 1) of v over the block. */
SX_DEV double la_breduce(double v, int op, la_red *sh) {
    for (int o = 16; o > 0; o >>= 1) {
        double ov = sx_shfl_xor(v, o);
        v = op ? fmax(v, ov) : v + ov;
    }
    if ((threadIdx.x & 31) == 0) sh->v[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh->v[0];
    for (int w = 1; w < LA_WARPS; w++) v = op ? fmax(v, sh->v[w]) : v + sh->v[w];
    __syncthreads();
    return v;
}

/* Sum of v over a warp (every lane gets it: the butterfly adds commute). */
template <class T> SX_DEV T la_wsum(T v) {
    for (int o = 16; o > 0; o >>= 1) v = la_add(v, sx_shfl_xor(v, o));
    return v;
}

/* ---- 1. LU with partial pivoting (getf2): P A = L U in place ---- */
template <class T>
SX_DEV void la_lu(T *a, int64_t *piv, int64_t *info, int64_t batch, int64_t m, int64_t n,
                  int64_t ld, int64_t bs) {
    __shared__ la_red red;
    const int64_t k = m < n ? m : n, tid = threadIdx.x, nt = blockDim.x;
    for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
        T *A = a + b * bs;
        int64_t inf = 0;
        for (int64_t j = 0; j < k; j++) {
            double best = -1.0;
            int64_t bi = -1;
            for (int64_t i = j + tid; i < m; i += nt) {
                double v = la_abs1(A[i * ld + j]);
                if (v > best) { best = v; bi = i; }
            }
            la_argmax(best, bi, &red);
            const int64_t p = bi < 0 ? j : bi;     /* a column of NaNs: no swap */
            if (p != j)
                for (int64_t c = tid; c < n; c += nt) {
                    T t = A[j * ld + c];
                    A[j * ld + c] = A[p * ld + c];
                    A[p * ld + c] = t;
                }
            if (tid == 0) piv[b * k + j] = p;
            __syncthreads();
            const T d = A[j * ld + j];
            if (la_iszero(d)) {            /* the column below is zero too: nothing to eliminate */
                if (!inf) inf = j + 1;
                continue;
            }
            for (int64_t i = j + 1 + tid; i < m; i += nt) A[i * ld + j] = la_div(A[i * ld + j], d);
            __syncthreads();
            const int64_t nr = m - j - 1, nc = n - j - 1;
            T *A1 = A + (j + 1) * ld + j + 1;     /* the trailing matrix */
            LA_FOR2(nr, nc, i, c) A1[i * ld + c] = la_sub(A1[i * ld + c], la_mul(A1[i * ld - 1], A1[c - ld]));
            __syncthreads();
        }
        if (tid == 0) info[b] = inf;
    }
}

/* ---- 2. Cholesky (right-looking potf2): A = L L^H, lower triangle read and written ---- */
template <class T>
SX_DEV void la_cholesky(T *a, int64_t *info, int64_t batch, int64_t n, int64_t ld, int64_t bs) {
    const int64_t tid = threadIdx.x, nt = blockDim.x;
    for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
        T *A = a + b * bs;
        int64_t inf = 0;
        for (int64_t j = 0; j < n; j++) {
            double d = la_re(A[j * ld + j]);
            if (!(d > 0.0)) { inf = j + 1; break; }   /* not positive, or NaN: stop (as potrf) */
            d = sqrt(d);
            for (int64_t i = j + 1 + tid; i < n; i += nt) A[i * ld + j] = la_divr(A[i * ld + j], d);
            __syncthreads();               /* everyone has read A[j, j]: it may be replaced */
            if (tid == 0) A[j * ld + j] = la_mk<T>(d);
            const int64_t nr = n - j - 1;
            T *A1 = A + (j + 1) * ld + j + 1;     /* the trailing matrix, its lower triangle */
            LA_FOR2(nr, nr, i, c)
                if (c <= i) A1[i * ld + c] = la_sub(A1[i * ld + c], la_mul(A1[i * ld - 1], la_conj(A1[c * ld - 1])));
            __syncthreads();
        }
        LA_FOR2(n, n, i, c) if (c > i) A[i * ld + c] = la_mk<T>(0.0);
        if (tid == 0) info[b] = inf;
        __syncthreads();
    }
}

/* ---- 3. triangular solve of one matrix by the block: op(A) X = B in place in B (n x k) ----
 * trans 0: A, 1: A^T, 2: A^H; only the triangle `lower` names is read. Column-oriented: x_j is
 * final once divided by the diagonal, then eliminated from the rows still to come. */
template <class T>
SX_DEV T la_opel(const T *A, int64_t ld, int64_t i, int64_t j, int trans) {
    if (trans == 0) return A[i * ld + j];
    return trans == 1 ? A[j * ld + i] : la_conj(A[j * ld + i]);
}

template <class T>
SX_DEV void la_trsm1(const T *A, int64_t lda, T *B, int64_t ldb, int64_t n, int64_t k, int lower,
                     int unit, int trans) {
    const int64_t tid = threadIdx.x, nt = blockDim.x;
    const bool fwd = (lower != 0) == (trans == 0);   /* op(A) lower: forward substitution */
    for (int64_t s = 0; s < n; s++) {
        const int64_t j = fwd ? s : n - 1 - s;
        if (!unit) {
            const T d = A[j * lda + j];
            const T dd = trans == 2 ? la_conj(d) : d;
            for (int64_t c = tid; c < k; c += nt) B[j * ldb + c] = la_div(B[j * ldb + c], dd);
            __syncthreads();
        }
        const int64_t nr = fwd ? n - 1 - j : j, i0 = fwd ? j + 1 : 0;
        LA_FOR2(nr, k, r, c) {
            const int64_t i = i0 + r;
            B[i * ldb + c] = la_sub(B[i * ldb + c], la_mul(la_opel(A, lda, i, j, trans), B[j * ldb + c]));
        }
        __syncthreads();
    }
}

template <class T>
SX_DEV void la_trsm(const T *a, T *b, int64_t batch, int64_t n, int64_t k, int64_t lda,
                    int64_t bsa, int64_t ldb, int64_t bsb, int lower, int unit, int trans) {
    for (int64_t bt = blockIdx.x; bt < batch; bt += gridDim.x)
        la_trsm1(a + bt * bsa, lda, b + bt * bsb, ldb, n, k, lower, unit, trans);
}

/* ---- 4. solve with an LU factorization (getrs): A = P^T L U ---- */
template <class T>
SX_DEV void la_swaps(T *B, int64_t ldb, const int64_t *P, int64_t n, int64_t k, bool forward) {
    for (int64_t c = threadIdx.x; c < k; c += blockDim.x)   /* each thread owns its columns */
        for (int64_t s = 0; s < n; s++) {
            const int64_t j = forward ? s : n - 1 - s, p = P[j];
            if (p != j) {
                T t = B[j * ldb + c];
                B[j * ldb + c] = B[p * ldb + c];
                B[p * ldb + c] = t;
            }
        }
    __syncthreads();
}

template <class T>
SX_DEV void la_lu_solve(const T *lu, const int64_t *piv, T *b, int64_t batch, int64_t n, int64_t k,
                        int64_t lda, int64_t bsa, int64_t ldb, int64_t bsb, int trans) {
    for (int64_t bt = blockIdx.x; bt < batch; bt += gridDim.x) {
        const T *A = lu + bt * bsa;
        const int64_t *P = piv + bt * n;
        T *B = b + bt * bsb;
        if (trans == 0) {                  /* L U X = P B */
            la_swaps(B, ldb, P, n, k, true);
            la_trsm1(A, lda, B, ldb, n, k, 1, 1, 0);
            la_trsm1(A, lda, B, ldb, n, k, 0, 0, 0);
        } else {                           /* op(U) op(L) P X = B */
            la_trsm1(A, lda, B, ldb, n, k, 0, 0, trans);
            la_trsm1(A, lda, B, ldb, n, k, 1, 1, trans);
            la_swaps(B, ldb, P, n, k, false);
        }
    }
}

/* ---- 5. Householder QR (geqr2, then org2r for Q) ----
 * H_j = I - tau_j v v^H, v = (1, A[j+1:, j]) (zlarfg: beta real, |beta| = ||x||, sign opposite
 * to Re x_0; tau = 0 when x is already beta e_1 with a real x_0). A := H_j^H A; Q = H_0 ... H_{k-1}.
 * work: k + max(n, kq) scalars per block (the taus, then one dot product per column). */
template <class T>
SX_DEV void la_reflect(T *X, int64_t ldx, const T *V, int64_t ldv, int64_t j, int64_t m, int64_t c0,
                       int64_t c1, T tau, T *W) {
    /* X[j:m, c0:c1] -= tau v (v^H X[j:m, c0:c1]), v = (1, V[j+1:m, j]) */
    const int64_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int64_t c = c0 + warp; c < c1; c += nw) {
        T acc = la_mk<T>(0.0);
        for (int64_t i = j + lane; i < m; i += 32) {
            const T x = X[i * ldx + c];
            acc = la_add(acc, i == j ? x : la_mul(la_conj(V[i * ldv + j]), x));
        }
        acc = la_wsum(acc);
        if (lane == 0) W[c] = la_mul(tau, acc);
    }
    __syncthreads();
    const int64_t nc = c1 - c0;
    LA_FOR2(m - j, nc, r, cc) {
        const int64_t i = j + r, c = c0 + cc;
        const T w = W[c];
        X[i * ldx + c] = la_sub(X[i * ldx + c], r == 0 ? w : la_mul(V[i * ldv + j], w));
    }
    __syncthreads();
}

template <class T>
SX_DEV void la_qr(T *a, T *q, T *r, int64_t *info, T *work, int64_t batch, int64_t m, int64_t n,
                  int64_t lda, int64_t bsa, int64_t kq, int64_t ldq, int64_t bsq, int64_t kr,
                  int64_t ldr, int64_t bsr) {
    __shared__ la_red red;
    const int64_t k = m < n ? m : n, tid = threadIdx.x, nt = blockDim.x;
    T *tau = work + (int64_t)blockIdx.x * (k + (n > kq ? n : kq)), *W = tau + k;
    for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
        T *A = a + b * bsa;
        for (int64_t j = 0; j < k; j++) {
            double s = 0.0, ss = 0.0;      /* scaled norm of the column below the diagonal */
            for (int64_t i = j + tid; i < m; i += nt) s = fmax(s, la_absmax(A[i * lda + j]));
            s = la_breduce(s, 1, &red);
            if (s > 0.0)
                for (int64_t i = j + 1 + tid; i < m; i += nt) ss += la_ssq(A[i * lda + j], s);
            ss = la_breduce(ss, 0, &red);
            const T alpha = A[j * lda + j];
            T tj = la_mk<T>(0.0);
            double beta = la_re(alpha);
            if (ss != 0.0 || la_im(alpha) != 0.0) {
                /* everything in units of s (tau and v do not depend on them): unscaled, a
                 * column of subnormals had 1 / (alpha - beta) = inf (NaN in Q and R) or an
                 * inexact tau (Q not orthogonal) */
                const double ar = la_re(alpha) / s, ai = la_im(alpha) / s;
                const double nrm = sqrt(ss + ar * ar + ai * ai);    /* >= 1 */
                const double bs = la_re(alpha) >= 0.0 ? -nrm : nrm;
                tj = la_mk<T>((bs - ar) / bs, -ai / bs);
                const T sc = la_div(la_mk<T>(1.0), la_mk<T>(ar - bs, ai));
                for (int64_t i = j + 1 + tid; i < m; i += nt)
                    A[i * lda + j] = la_mul(la_divr(A[i * lda + j], s), sc);
                beta = s * bs;
            }
            __syncthreads();               /* alpha read by all, v scaled */
            if (tid == 0) { A[j * lda + j] = la_mk<T>(beta); tau[j] = tj; }
            if (!la_iszero(tj) && j + 1 < n) la_reflect(A, lda, A, lda, j, m, j + 1, n, la_conj(tj), W);
        }
        __syncthreads();                   /* tau and the diagonal written by thread 0 */
        T *R = r + b * bsr;
        LA_FOR2(kr, n, i, c) R[i * ldr + c] = (i < k && c >= i) ? A[i * lda + c] : la_mk<T>(0.0);
        if (q) {
            T *Q = q + b * bsq;
            LA_FOR2(m, kq, i, c) Q[i * ldq + c] = la_mk<T>(i == c ? 1.0 : 0.0);
            __syncthreads();
            for (int64_t j = k - 1; j >= 0; j--)
                if (!la_iszero(tau[j])) la_reflect(Q, ldq, A, lda, j, m, j, kq, tau[j], W);
        }
        if (tid == 0) info[b] = 0;
        __syncthreads();
    }
}
#endif
