/* Eigen- and singular value kernels on CUDA (issue 16; the host side: tensor/cuda/linalg_eig.py).
 * One block per matrix (grid-stride over the batch), the matrix copied into a per-block work
 * area of global memory, the block's threads cooperating on each step; double precision, real
 * (double) or complex (sx_cd) through the overloads below. Deterministic: every float
 * reduction has a fixed order (a warp's butterfly is commutative at each level, so its lanes
 * agree bit for bit), decisions every thread takes are computed from the same values.
 *
 *   le_eigh  Hermitian eigenproblem (lower triangle read): two-sided cyclic Jacobi, round-robin
 *            ordering: the n/2 rotations of a round are disjoint, so J^H A J is applied in one
 *            pass by 2x2 blocks (rows of pair k, columns of pair k2 >= k; the mirror block is
 *            its conjugate transpose); rotations only where |a_pq| > eps sqrt(|a_pp a_qq|),
 *            until a sweep makes none; eigenvalues ascending, vectors the accumulated rotations.
 *   le_svd   one-sided Jacobi (Hestenes) on the columns of A (of A^H when wide), one warp per
 *            column pair, same ordering, relative test with tolerance sqrt(M) eps (the dot
 *            products' rounding), a sweep counting only when some pair's cosine was above
 *            (M + 4) eps (below it a rotation is rounding noise: a pair sitting between the two
 *            kept the sweeps going, as on the CPU, linalg_eig_svd.h); s descending; the left basis is the normalised columns,
 *            completed (zero singular values, full bases) with standard basis vectors
 *            orthogonalised twice (classical Gram-Schmidt).
 *   le_eig   complex general: Householder Hessenberg reduction, single-shift (Wilkinson) QR with
 *            deflation (explicit step by Givens rotations: rows, a barrier per rotation, then
 *            each thread runs its own rows through every column rotation), Schur vectors
 *            accumulated, eigenvectors by back substitution on the triangular factor (tiny
 *            divisors perturbed, growth rescaled), unit 2-norm.
 * Every matrix is first scaled by a power of two (exact) so that its largest entry is in
 * [0.5, 1). info[b]: 0, or 1 (eigh / svd: no convergence in LE_SWEEPS sweeps), or i + 1 (eig: the
 * QR iteration stalled with eigenvalue i still unconverged). */
#ifndef STRIDEX_LINALG_EIG_CUH
#define STRIDEX_LINALG_EIG_CUH
#include "common.cuh"

#define LE_BLOCK 128
#define LE_SWEEPS 60
#define LE_EPS 0x1p-53
#define LE_TINY 0x1p-1000    /* below this an off-diagonal entry / column norm counts as 0 */
#define LE_SMLNUM 0x1p-1000
/* svd: a column of W (scaled to [0.5, 1)) shorter than this counts as zero: the Jacobi pairs
 * leave it alone and its left vector is a completion (its dot products with the others would
 * fall under LE_TINY: left unrotated, it would not be orthogonal to them) */
#define LE_ZCOL 0x1p-450

/* ---- real / complex scalar overloads ---- */
SX_DEV double le_re(double x) { return x; }
SX_DEV double le_re(sx_cd x) { return x.re; }
SX_DEV double le_conj(double x) { return x; }
SX_DEV sx_cd le_conj(sx_cd x) { sx_cd r = {x.re, -x.im}; return r; }
SX_DEV double le_abs2(double x) { return x * x; }
SX_DEV double le_abs2(sx_cd x) { return x.re * x.re + x.im * x.im; }
SX_DEV double le_abs(double x) { return fabs(x); }
SX_DEV double le_abs(sx_cd x) { return hypot(x.re, x.im); }
SX_DEV double le_abs1(double x) { return fabs(x); }
SX_DEV double le_abs1(sx_cd x) { return fabs(x.re) + fabs(x.im); }
SX_DEV double le_mul(double a, double b) { return a * b; }
SX_DEV sx_cd le_mul(sx_cd a, sx_cd b) {
    sx_cd r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}
SX_DEV double le_cmul(double a, double b) { return a * b; }          /* conj(a) * b */
SX_DEV sx_cd le_cmul(sx_cd a, sx_cd b) { return le_mul(le_conj(a), b); }
SX_DEV double le_add(double a, double b) { return a + b; }
SX_DEV sx_cd le_add(sx_cd a, sx_cd b) { sx_cd r = {a.re + b.re, a.im + b.im}; return r; }
SX_DEV double le_sub(double a, double b) { return a - b; }
SX_DEV sx_cd le_sub(sx_cd a, sx_cd b) { sx_cd r = {a.re - b.re, a.im - b.im}; return r; }
SX_DEV double le_scal(double a, double t) { return a * t; }
SX_DEV sx_cd le_scal(sx_cd a, double t) { sx_cd r = {a.re * t, a.im * t}; return r; }
SX_DEV void le_mk(double x, double *r) { *r = x; }
SX_DEV void le_mk(double x, sx_cd *r) { r->re = x; r->im = 0.0; }
template <class T> SX_DEV T le_real(double x) { T r; le_mk(x, &r); return r; }
SX_DEV sx_cd le_cdiv(sx_cd a, sx_cd b) { return sx_cdiv(a, b); }
SX_DEV sx_cd le_csqrt(sx_cd a) { return sx_csqrt(a); }

/* Round-robin ordering of np (even) indices: round r in [0, np - 1), pair k in [0, np / 2);
 * over the np - 1 rounds every pair meets once; the pairs of one round are disjoint. */
SX_DEV void le_pair(int64_t r, int64_t k, int64_t np, int64_t *p, int64_t *q) {
    const int64_t m = np - 1;
    int64_t a, b;
    if (k == 0) { a = r; b = m; }
    else { a = (r + k) % m; b = (r - k + m) % m; }
    *p = a < b ? a : b;
    *q = a < b ? b : a;
}

/* The block's maximum of v (every thread gets it); red: LE_BLOCK doubles of shared memory. */
SX_DEV double le_block_max(double v, double *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    double m = 0.0;
    for (int i = 0; i < (int)blockDim.x; i++) m = red[i] > m ? red[i] : (red[i] != red[i] ? red[i] : m);
    __syncthreads();
    return m;
}

/* The block's sum of v, added in thread order (every thread gets it). */
SX_DEV double le_block_sum(double v, double *red) {
    red[threadIdx.x] = v;
    __syncthreads();
    double s = 0.0;
    for (int i = 0; i < (int)blockDim.x; i++) s += red[i];
    __syncthreads();
    return s;
}

/* 2^-e with amax = f 2^e, f in [0.5, 1): the exact scaling to apply (1 for 0, inf, nan). */
SX_DEV double le_scale_for(double amax, int *e) {
    *e = 0;
    if (!(amax > 0.0) || !(amax <= 0x1.fffffffffffffp1023)) return 1.0;
    frexp(amax, e);
    if (*e < -1020) *e = -1020;   /* subnormal amax: 2^-e itself would overflow */
    return ldexp(1.0, -*e);
}

/* Non-finite input (amax NaN or inf): the kernels write NaN results instead of iterating. */
#define LE_NAN __longlong_as_double(0x7ff8000000000000LL)
SX_DEV int le_nonfinite(double amax) { return !(amax <= 0x1.fffffffffffffp1023); }

/* Jacobi rotation of the Hermitian 2x2 [[a, b], [conj b, d]] (a, d real): J = [[c, s], [-z s, z c]]
 * with z = conj(b) / |b| makes J^H M J diagonal. Returns 0 (and the identity) when |b| is
 * negligible against tol sqrt(|a d|); tb: t |b|, the change of the diagonal. */
template <class T>
SX_DEV int le_jacobi2(double a, double d, T b, double *c, double *s, T *z, double *tb = 0,
                      double tol = LE_EPS) {
    const double ab = le_abs(b);
    if (!(ab > tol * sqrt(fabs(a)) * sqrt(fabs(d))) || !(ab > LE_TINY)) {
        *c = 1.0; *s = 0.0; *z = le_real<T>(1.0);
        return 0;
    }
    const double th = (d - a) / (2.0 * ab);
    const double t = (th >= 0.0 ? 1.0 : -1.0) / (fabs(th) + hypot(1.0, th));
    *c = 1.0 / hypot(1.0, t);
    *s = t * *c;
    *z = le_scal(le_conj(b), 1.0 / ab);
    if (tb) *tb = t * ab;   /* the new diagonal: a - t |b|, d + t |b| */
    return 1;
}

/* ---------------- eigh ---------------- */
template <class T>
SX_DEV void le_eigh(T *a, int64_t bs, int64_t lda, double *w, char *work, int64_t wstride,
                    int64_t *info, int64_t batch, int64_t n, int vectors) {
    __shared__ double red[LE_BLOCK];
    __shared__ int rot;
    const int64_t np = n + (n & 1), h = np / 2, tid = threadIdx.x, bd = blockDim.x;
    T *A = (T *)(work + (int64_t)blockIdx.x * wstride), *V = A + n * n;
    T *pz = V + (vectors ? n * n : 0);
    double *pc = (double *)(pz + h), *ps = pc + h, *pt = ps + h;
    int64_t *rank = (int64_t *)(pt + h);
    for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
        T *ab = a + b * bs;
        double mx = 0.0;
        for (int64_t idx = tid; idx < n * n; idx += bd) {
            const int64_t i = idx / n, j = idx % n;
            T v = i >= j ? ab[i * lda + j] : le_conj(ab[j * lda + i]);
            if (i == j) v = le_real<T>(le_re(v));
            A[idx] = v;
            if (vectors) V[idx] = le_real<T>(i == j ? 1.0 : 0.0);   /* else V is pz.. */
            const double t = le_abs1(v);
            mx = t > mx ? t : (t != t ? t : mx);
        }
        int ex;
        const double amax = le_block_max(mx, red), sc = le_scale_for(amax, &ex);
        if (le_nonfinite(amax)) {   /* NaN eigenvalues and vectors (NumPy's too), info 0 */
            for (int64_t idx = tid; idx < n * n; idx += bd) {
                if (idx < n) w[b * n + idx] = LE_NAN;
                if (vectors) ab[(idx / n) * lda + idx % n] = le_real<T>(LE_NAN);
            }
            if (tid == 0) info[b] = 0;
            __syncthreads();
            continue;
        }
        for (int64_t idx = tid; idx < n * n; idx += bd) A[idx] = le_scal(A[idx], sc);
        if (tid == 0) rot = 0;
        __syncthreads();
        int sweep = 0, done = n < 2;
        for (; sweep < LE_SWEEPS && !done; sweep++) {
            for (int64_t r = 0; r < np - 1; r++) {
                for (int64_t k = tid; k < h; k += bd) {
                    int64_t p, q;
                    le_pair(r, k, np, &p, &q);
                    double c = 1.0, s = 0.0, sh = 0.0;
                    T z = le_real<T>(1.0);
                    if (q < n) {
                        const double app = le_re(A[p * n + p]), aqq = le_re(A[q * n + q]);
                        const T apq = A[p * n + q];
                        if (le_jacobi2(app, aqq, apq, &c, &s, &z, &sh)) rot = sweep + 1;
                    }
                    pc[k] = c; ps[k] = s; pz[k] = z; pt[k] = sh;
                }
                __syncthreads();
                /* A <- J^H A J by 2x2 blocks (pair k rows, pair k2 columns, k <= k2; the mirror
                 * block is the conjugate transpose), V <- V J by row pairs: one pass, disjoint */
                const int64_t nb = h * h, nv = vectors ? h * n : 0;
                for (int64_t idx = tid; idx < nb + nv; idx += bd) {
                    if (idx >= nb) {
                        const int64_t k = (idx - nb) / n, i = (idx - nb) % n;
                        const double c = pc[k], s = ps[k];
                        if (s == 0.0) continue;
                        int64_t p, q;
                        le_pair(r, k, np, &p, &q);
                        const T z = pz[k], x = V[i * n + p], y = le_mul(z, V[i * n + q]);
                        V[i * n + p] = le_sub(le_scal(x, c), le_scal(y, s));
                        V[i * n + q] = le_add(le_scal(x, s), le_scal(y, c));
                        continue;
                    }
                    const int64_t k = idx / h, k2 = idx % h;
                    if (k2 < k) continue;
                    const double c = pc[k], s = ps[k], c2 = pc[k2], s2 = ps[k2];
                    if (s == 0.0 && s2 == 0.0) continue;
                    int64_t p, q, p2, q2;
                    le_pair(r, k, np, &p, &q);
                    le_pair(r, k2, np, &p2, &q2);
                    if (k == k2) {
                        A[p * n + p] = le_real<T>(le_re(A[p * n + p]) - pt[k]);
                        A[q * n + q] = le_real<T>(le_re(A[q * n + q]) + pt[k]);
                        A[p * n + q] = A[q * n + p] = le_real<T>(0.0);
                        continue;
                    }
                    /* the padding index (q or q2 == n, only when n is odd) has the identity */
                    const T zero = le_real<T>(0.0), z2 = pz[k2], zc = le_conj(pz[k]);
                    const T x00 = A[p * n + p2], x10 = q < n ? A[q * n + p2] : zero;
                    const T x01 = q2 < n ? A[p * n + q2] : zero;
                    const T x11 = q < n && q2 < n ? A[q * n + q2] : zero;
                    /* columns: X J2 */
                    const T y00 = le_sub(le_scal(x00, c2), le_scal(le_mul(z2, x01), s2));
                    const T y01 = le_add(le_scal(x00, s2), le_scal(le_mul(z2, x01), c2));
                    const T y10 = le_sub(le_scal(x10, c2), le_scal(le_mul(z2, x11), s2));
                    const T y11 = le_add(le_scal(x10, s2), le_scal(le_mul(z2, x11), c2));
                    /* rows: J^H Y */
                    const T w00 = le_sub(le_scal(y00, c), le_scal(le_mul(zc, y10), s));
                    const T w01 = le_sub(le_scal(y01, c), le_scal(le_mul(zc, y11), s));
                    const T w10 = le_add(le_scal(y00, s), le_scal(le_mul(zc, y10), c));
                    const T w11 = le_add(le_scal(y01, s), le_scal(le_mul(zc, y11), c));
                    A[p * n + p2] = w00;
                    A[p2 * n + p] = le_conj(w00);
                    if (q2 < n) { A[p * n + q2] = w01; A[q2 * n + p] = le_conj(w01); }
                    if (q < n) { A[q * n + p2] = w10; A[p2 * n + q] = le_conj(w10); }
                    if (q < n && q2 < n) { A[q * n + q2] = w11; A[q2 * n + q] = le_conj(w11); }
                }
                __syncthreads();
            }
            done = rot <= sweep;   /* a thread ahead may already have set sweep + 2 */
        }
        if (tid == 0) info[b] = done ? 0 : 1;
        for (int64_t i = tid; i < n; i += bd) {   /* rank in ascending order, NaN last, ties by index */
            const double wi = le_re(A[i * n + i]);
            int64_t rk = 0;
            for (int64_t j = 0; j < n; j++) {
                const double wj = le_re(A[j * n + j]);
                rk += (wj < wi) || (wi != wi && wj == wj) || ((wj == wi || (wi != wi && wj != wj)) && j < i);
            }
            rank[i] = rk;
            w[b * n + rk] = ldexp(wi, ex);
        }
        __syncthreads();
        if (vectors)
            for (int64_t idx = tid; idx < n * n; idx += bd) {
                const int64_t i = idx / n, j = idx % n;
                ab[i * lda + rank[j]] = V[idx];
            }
        __syncthreads();
    }
}

/* ---------------- svd ---------------- */
/* Sum over the warp of v (butterfly: every lane gets the same bits). */
SX_DEV double le_warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
SX_DEV double le_warp_sumc(double v) { return le_warp_sum(v); }
SX_DEV sx_cd le_warp_sumc(sx_cd v) {
    sx_cd r = {le_warp_sum(v.re), le_warp_sum(v.im)};
    return r;
}

/* a: (m, n) rows lda; W = A (tall) or A^H (wide): M x N column-major, M >= N. Left basis of W
 * in Q (M x kw), V (N x N) the right one; u / vh from them (A = W-side S V^H, or its
 * conjugate transpose when wide). */
template <class T>
SX_DEV void le_svd(T *a, int64_t bs, int64_t lda, double *s, T *u, int64_t ubs, int64_t ldu,
                   int64_t ku, T *vh, int64_t vbs, int64_t ldv, int64_t kv, char *work,
                   int64_t wstride, int64_t *info, int64_t batch, int64_t m, int64_t n, int vecs) {
    __shared__ double red[LE_BLOCK];
    __shared__ int rot;
    const int wide = m < n;
    const int64_t M = wide ? n : m, N = wide ? m : n, kw = vecs ? (wide ? kv : ku) : 0;
    const int64_t np = N + (N & 1), h = np / 2, tid = threadIdx.x, bd = blockDim.x;
    const int lane = (int)(tid & 31), warp = (int)(tid >> 5), nwarp = (int)(bd >> 5);
    const double tol = LE_EPS * sqrt((double)M);   /* the rounding of the dot products (xGESVJ's) */
    const double conv = LE_EPS * (double)(M + 4);   /* the computed cosine's rounding floor */
    T *W = (T *)(work + (int64_t)blockIdx.x * wstride), *V = W + M * N, *Q = V + (vecs ? N * N : 0);
    T *dots = Q + M * kw;
    double *nrm = (double *)(dots + kw);
    int64_t *rank = (int64_t *)(nrm + N);
    for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
        T *ab = a + b * bs;
        double mx = 0.0;
        for (int64_t idx = tid; idx < M * N; idx += bd) {
            const int64_t j = idx / M, i = idx % M;     /* W[i, j] */
            const T v = wide ? le_conj(ab[j * lda + i]) : ab[i * lda + j];
            W[idx] = v;
            const double t = le_abs1(v);
            mx = t > mx ? t : (t != t ? t : mx);
        }
        if (vecs)
            for (int64_t idx = tid; idx < N * N; idx += bd) V[idx] = le_real<T>(idx / N == idx % N ? 1.0 : 0.0);
        int ex;
        const double amax = le_block_max(mx, red), sc = le_scale_for(amax, &ex);
        if (le_nonfinite(amax)) {   /* NaN results, info 1 (NumPy: "SVD did not converge") */
            for (int64_t i = tid; i < N; i += bd) s[b * N + i] = LE_NAN;
            T *ub = u + b * ubs, *vb = vh + b * vbs;
            for (int64_t idx = tid; vecs && idx < m * ku; idx += bd) ub[(idx / ku) * ldu + idx % ku] = le_real<T>(LE_NAN);
            for (int64_t idx = tid; vecs && idx < kv * n; idx += bd) vb[(idx / n) * ldv + idx % n] = le_real<T>(LE_NAN);
            if (tid == 0) info[b] = 1;
            __syncthreads();
            continue;
        }
        for (int64_t idx = tid; idx < M * N; idx += bd) W[idx] = le_scal(W[idx], sc);
        if (tid == 0) rot = 0;
        __syncthreads();
        int sweep = 0, done = N < 2;
        for (; sweep < LE_SWEEPS && !done; sweep++) {
            for (int64_t r = 0; r < np - 1; r++) {
                for (int64_t k = warp; k < h; k += nwarp) {
                    int64_t p, q;
                    le_pair(r, k, np, &p, &q);
                    if (q >= N) continue;
                    T *wp = W + p * M, *wq = W + q * M;
                    double al = 0.0, be = 0.0;
                    T ga = le_real<T>(0.0);
                    for (int64_t i = lane; i < M; i += 32) {
                        al += le_abs2(wp[i]);
                        be += le_abs2(wq[i]);
                        ga = le_add(ga, le_cmul(wp[i], wq[i]));
                    }
                    al = le_warp_sum(al);
                    be = le_warp_sum(be);
                    ga = le_warp_sumc(ga);
                    /* a column under LE_ZCOL counts as zero (as on the CPU): its squared
                     * norm is subnormal or 0 (every test below then asked for a rotation
                     * every sweep), its dot products with the others under LE_TINY */
                    if (al < LE_ZCOL * LE_ZCOL || be < LE_ZCOL * LE_ZCOL) continue;
                    double c, sn;
                    T z;
                    if (!le_jacobi2(al, be, ga, &c, &sn, &z, (double *)0, tol)) continue;
                    if (lane == 0 && le_abs(ga) > conv * sqrt(al) * sqrt(be)) rot = sweep + 1;
                    for (int64_t i = lane; i < M; i += 32) {
                        const T x = wp[i], y = le_mul(z, wq[i]);
                        wp[i] = le_sub(le_scal(x, c), le_scal(y, sn));
                        wq[i] = le_add(le_scal(x, sn), le_scal(y, c));
                    }
                    if (vecs) {
                        T *vp = V + p * N, *vq = V + q * N;
                        for (int64_t i = lane; i < N; i += 32) {
                            const T x = vp[i], y = le_mul(z, vq[i]);
                            vp[i] = le_sub(le_scal(x, c), le_scal(y, sn));
                            vq[i] = le_add(le_scal(x, sn), le_scal(y, c));
                        }
                    }
                }
                __syncthreads();
            }
            done = rot <= sweep;   /* a thread ahead may already have set sweep + 2 */
        }
        if (tid == 0) info[b] = done ? 0 : 1;
        for (int64_t j = warp; j < N; j += nwarp) {
            double t = 0.0;
            for (int64_t i = lane; i < M; i += 32) t += le_abs2(W[j * M + i]);
            t = sqrt(le_warp_sum(t));
            if (lane == 0) nrm[j] = t;
        }
        __syncthreads();
        int64_t good = 0;   /* columns with a nonzero singular value (they sort first) */
        for (int64_t j = 0; j < N; j++) good += nrm[j] >= LE_ZCOL;
        for (int64_t j = tid; j < N; j += bd) {   /* rank in descending order, NaN first */
            const double sj = nrm[j];
            int64_t rk = 0;
            for (int64_t i = 0; i < N; i++) {
                const double si = nrm[i];
                rk += (si > sj) || (si != si && sj == sj) || ((si == sj || (si != si && sj != sj)) && i < j);
            }
            rank[j] = rk;
            s[b * N + rk] = ldexp(sj, ex);
        }
        __syncthreads();
        if (vecs) {
            for (int64_t idx = tid; idx < M * N; idx += bd) {
                const int64_t j = idx / M, i = idx % M;
                if (rank[j] < good && rank[j] < kw) Q[rank[j] * M + i] = le_scal(W[idx], 1.0 / nrm[j]);
            }
            __syncthreads();
            int64_t e = 0;
            for (int64_t c = good; c < kw && e < M; e++) {   /* complete with e_e, orthogonalised twice */
                T *x = Q + c * M;
                for (int64_t i = tid; i < M; i += bd) x[i] = le_real<T>(i == e ? 1.0 : 0.0);
                __syncthreads();
                for (int pass = 0; pass < 2; pass++) {
                    for (int64_t j = warp; j < c; j += nwarp) {
                        T d = le_real<T>(0.0);
                        for (int64_t i = lane; i < M; i += 32) d = le_add(d, le_cmul(Q[j * M + i], x[i]));
                        d = le_warp_sumc(d);
                        if (lane == 0) dots[j] = d;
                    }
                    __syncthreads();
                    for (int64_t i = tid; i < M; i += bd) {
                        T t = x[i];
                        for (int64_t j = 0; j < c; j++) t = le_sub(t, le_mul(Q[j * M + i], dots[j]));
                        x[i] = t;
                    }
                    __syncthreads();
                }
                double t = 0.0;
                for (int64_t i = tid; i < M; i += bd) t += le_abs2(x[i]);
                const double nx = le_block_sum(t, red);
                if (nx >= 0.5 / (double)M) {
                    const double f = 1.0 / sqrt(nx);
                    for (int64_t i = tid; i < M; i += bd) x[i] = le_scal(x[i], f);
                    c++;
                }
                __syncthreads();
            }
            /* the W side (Q) and the V side (V, columns permuted by rank) into u / vh */
            T *ub = u + b * ubs, *vb = vh + b * vbs;
            if (!wide) {
                for (int64_t idx = tid; idx < m * ku; idx += bd) {
                    const int64_t i = idx / ku, j = idx % ku;
                    ub[i * ldu + j] = Q[j * M + i];
                }
                for (int64_t idx = tid; idx < N * N; idx += bd) {
                    const int64_t j = idx / N, i = idx % N;   /* V[i, j] -> vh[rank j, i] */
                    vb[rank[j] * ldv + i] = le_conj(V[idx]);
                }
            } else {
                for (int64_t idx = tid; idx < kv * n; idx += bd) {
                    const int64_t i = idx / n, j = idx % n;
                    vb[i * ldv + j] = le_conj(Q[i * M + j]);
                }
                for (int64_t idx = tid; idx < N * N; idx += bd) {
                    const int64_t j = idx / N, i = idx % N;   /* V[i, j] -> u[i, rank j] */
                    ub[i * ldu + rank[j]] = V[idx];
                }
            }
        }
        __syncthreads();
    }
}

/* ---------------- eig (complex128) ---------------- */
/* Givens G = [[c, s], [-conj s, c]] with G [x; y] = [r; 0]. */
SX_DEV void le_givens(sx_cd x, sx_cd y, double *c, sx_cd *s, sx_cd *r) {
    const double ax = le_abs(x), ay = le_abs(y);
    if (ay == 0.0) { *c = 1.0; *s = le_real<sx_cd>(0.0); *r = x; return; }
    if (ax == 0.0) { *c = 0.0; *s = le_scal(le_conj(y), 1.0 / ay); *r = le_real<sx_cd>(ay); return; }
    const double nr = hypot(ax, ay);
    const sx_cd ph = le_scal(x, 1.0 / ax);
    *c = ax / nr;
    *s = le_scal(le_mul(ph, le_conj(y)), 1.0 / nr);
    *r = le_scal(ph, nr);
}

SX_DEV void le_eig(sx_cd *a, int64_t bs, int64_t lda, sx_cd *w, sx_cd *v, int64_t vbs, int64_t ldv,
                   char *work, int64_t wstride, int64_t *info, int64_t batch, int64_t n, int vecs) {
    typedef sx_cd T;
    __shared__ double red[LE_BLOCK];
    __shared__ double s_uu;
    const int64_t tid = threadIdx.x, bd = blockDim.x;
    const int64_t nz = vecs ? n * n : 0;
    T *H = (T *)(work + (int64_t)blockIdx.x * wstride), *Z = H + n * n, *X = Z + nz;
    T *uv = X + nz, *gs = uv + n;
    double *gc = (double *)(gs + n);
    for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
        const T *ab = a + b * bs;
        double mx = 0.0;
        for (int64_t idx = tid; idx < n * n; idx += bd) {
            const int64_t i = idx / n, j = idx % n;
            H[idx] = ab[i * lda + j];
            if (vecs) Z[idx] = le_real<T>(i == j ? 1.0 : 0.0);
            const double t = le_abs1(H[idx]);
            mx = t > mx ? t : (t != t ? t : mx);
        }
        int ex;
        const double amax = le_block_max(mx, red), sc = le_scale_for(amax, &ex);
        if (le_nonfinite(amax)) {   /* NaN results, info n (NumPy refuses such input) */
            for (int64_t idx = tid; idx < n * n; idx += bd) {
                if (idx < n) w[b * n + idx] = le_real<T>(LE_NAN);
                if (vecs) v[b * vbs + (idx / n) * ldv + idx % n] = le_real<T>(LE_NAN);
            }
            if (tid == 0) info[b] = n;
            __syncthreads();
            continue;
        }
        for (int64_t idx = tid; idx < n * n; idx += bd) H[idx] = le_scal(H[idx], sc);
        __syncthreads();
        /* Householder reduction to upper Hessenberg: H <- P H P, P = I - 2 u u^H / u^H u */
        for (int64_t k = 0; k + 2 < n; k++) {
            if (tid == 0) {
                /* u from the column scaled by a power of two near its largest entry: a
                 * column of ~1e-155 has a subnormal u^H u (2 / u^H u overflows) */
                double cm = 0.0;
                for (int64_t i = k + 1; i < n; i++) cm = fmax(cm, le_abs1(H[i * n + k]));
                int ce;
                const double cs = le_scale_for(cm, &ce);
                double xs = 0.0;
                for (int64_t i = k + 2; i < n; i++) xs += le_abs2(le_scal(H[i * n + k], cs));
                double uu = 0.0;
                if (xs > 0.0) {
                    const T al = le_scal(H[(k + 1) * n + k], cs);
                    const double aa = le_abs(al), nr = sqrt(aa * aa + xs);
                    const T ph = aa > 0.0 ? le_scal(al, 1.0 / aa) : le_real<T>(1.0);
                    uv[k + 1] = le_add(al, le_scal(ph, nr));
                    for (int64_t i = k + 2; i < n; i++) uv[i] = le_scal(H[i * n + k], cs);
                    uu = le_abs2(uv[k + 1]) + xs;
                    uv[k] = le_scal(ph, -nr / cs);     /* beta: the new H[k + 1, k] */
                }
                s_uu = uu;
            }
            __syncthreads();
            const double uu = s_uu;
            if (uu > 0.0) {
                const double f = 2.0 / uu;
                for (int64_t j = k + tid; j < n; j += bd) {     /* left: columns k..n-1 */
                    if (j == k) {
                        H[(k + 1) * n + k] = uv[k];
                        for (int64_t i = k + 2; i < n; i++) H[i * n + k] = le_real<T>(0.0);
                        continue;
                    }
                    T d = le_real<T>(0.0);
                    for (int64_t i = k + 1; i < n; i++) d = le_add(d, le_cmul(uv[i], H[i * n + j]));
                    d = le_scal(d, f);
                    for (int64_t i = k + 1; i < n; i++) H[i * n + j] = le_sub(H[i * n + j], le_mul(uv[i], d));
                }
                __syncthreads();
                for (int64_t i = tid; i < 2 * n; i += bd) {      /* right: rows of H, then of Z */
                    T *row = i < n ? H + i * n : Z + (i - n) * n;
                    if (i >= n && !vecs) break;
                    T d = le_real<T>(0.0);
                    for (int64_t j = k + 1; j < n; j++) d = le_add(d, le_mul(row[j], uv[j]));
                    d = le_scal(d, f);
                    for (int64_t j = k + 1; j < n; j++) row[j] = le_sub(row[j], le_mul(d, le_conj(uv[j])));
                }
            }
            __syncthreads();
        }
        /* shifted QR on the Hessenberg matrix, deflating at the bottom */
        double anorm = 0.0;
        for (int64_t idx = tid; idx < n * n; idx += bd) anorm = fmax(anorm, le_abs1(H[idx]));
        anorm = le_block_max(anorm, red) * (double)n;
        const int64_t itmax = 30 * (n > 10 ? n : 10);
        int64_t hi = n - 1, its = 0, bad = 0;
        while (hi >= 0) {
            int64_t l = hi;
            for (; l > 0; l--) {
                const double sd = le_abs1(H[l * n + l - 1]);
                if (sd <= LE_SMLNUM) break;
                double tst = le_abs1(H[(l - 1) * n + l - 1]) + le_abs1(H[l * n + l]);
                if (tst == 0.0) tst = anorm;
                if (sd <= LE_EPS * tst) {   /* and Ahues & Tisseur's test (as the CPU's) */
                    const double u = le_abs1(H[(l - 1) * n + l]), hl = le_abs1(H[l * n + l]);
                    const double dd = le_abs1(le_sub(H[(l - 1) * n + l - 1], H[l * n + l]));
                    const double ab = fmax(sd, u), ba = fmin(sd, u), aa = fmax(hl, dd);
                    const double bb = fmin(hl, dd), s = aa + ab;
                    if (ba * (ab / s) <= fmax(LE_SMLNUM, LE_EPS * (bb * (aa / s)))) break;
                }
            }
            __syncthreads();
            if (l > 0 && tid == 0) H[l * n + l - 1] = le_real<T>(0.0);
            if (l == hi) { hi--; its = 0; __syncthreads(); continue; }
            if (its >= itmax) { bad = hi + 1; break; }
            T mu;
            if (its > 0 && its % 10 == 0) {
                const int64_t e = its % 20 == 0 ? hi : l + 1;
                mu = le_add(H[e * n + e], le_real<T>(0.75 * fabs(H[e * n + e - 1].re)));
            } else {     /* Wilkinson: the eigenvalue of the trailing 2x2 nearer its corner,
                          * from the block scaled by a power of two near its largest entry
                          * (unscaled, hh^2 + bc of a ~1e-163 block underflows: a complex pair
                          * then gets a real shift forever) */
                T a11 = H[(hi - 1) * n + hi - 1], a12 = H[(hi - 1) * n + hi];
                T a21 = H[hi * n + hi - 1], a22 = H[hi * n + hi];
                int we;
                const double ws = le_scale_for(fmax(fmax(le_abs1(a11), le_abs1(a12)),
                                                    fmax(le_abs1(a21), le_abs1(a22))), &we);
                a11 = le_scal(a11, ws); a12 = le_scal(a12, ws);
                a21 = le_scal(a21, ws); a22 = le_scal(a22, ws);
                const T hh = le_scal(le_sub(a11, a22), 0.5), bc = le_mul(a12, a21);
                T dsc = le_csqrt(le_add(le_mul(hh, hh), bc));
                if (hh.re * dsc.re + hh.im * dsc.im < 0.0) dsc = le_scal(dsc, -1.0);
                const T den = le_add(hh, dsc);
                mu = le_scal(le_abs1(den) > 0.0 ? le_sub(a22, le_cdiv(bc, den)) : a22, 1.0 / ws);
            }
            __syncthreads();
            /* rows: G_k (from the shifted column k) on rows k, k+1, columns k+1..n-1 */
            double c;
            T sn, rr, rprev = le_real<T>(0.0);
            for (int64_t k = l; k < hi; k++) {
                T x = H[k * n + k];
                if (k == l) x = le_sub(x, mu);
                le_givens(x, H[(k + 1) * n + k], &c, &sn, &rr);
                if (tid == 0) {
                    gc[k] = c; gs[k] = sn;
                    if (k > l) { H[(k - 1) * n + k - 1] = rprev; H[k * n + k - 1] = le_real<T>(0.0); }
                }
                rprev = rr;
                for (int64_t j = k + 1 + tid; j < n; j += bd) {
                    const T x0 = H[k * n + j];
                    T y0 = H[(k + 1) * n + j];
                    if (j == k + 1) y0 = le_sub(y0, mu);
                    H[k * n + j] = le_add(le_scal(x0, c), le_mul(sn, y0));
                    H[(k + 1) * n + j] = le_sub(le_scal(y0, c), le_mul(le_conj(sn), x0));
                }
                __syncthreads();
            }
            if (tid == 0) { H[(hi - 1) * n + hi - 1] = rprev; H[hi * n + hi - 1] = le_real<T>(0.0); }
            __syncthreads();
            /* columns: every row through G_l^H .. G_{hi-1}^H, then the shift back on the diagonal */
            for (int64_t i = tid; i < 2 * n; i += bd) {
                if (i >= n && !vecs) break;
                T *row = i < n ? H + i * n : Z + (i - n) * n;
                if (i < n && i > hi) continue;     /* rows below the window: zero there */
                const int64_t k0 = i < n && i - 1 > l ? i - 1 : l;   /* R's row i starts at i */
                for (int64_t k = k0; k < hi; k++) {
                    const T x0 = row[k], y0 = row[k + 1];
                    row[k] = le_add(le_scal(x0, gc[k]), le_mul(le_conj(gs[k]), y0));
                    row[k + 1] = le_sub(le_scal(y0, gc[k]), le_mul(gs[k], x0));
                }
                if (i < n && i >= l && i <= hi) row[i] = le_add(row[i], mu);
            }
            __syncthreads();
            its++;
        }
        if (tid == 0) info[b] = bad;
        for (int64_t k = tid; k < n; k += bd) w[b * n + k] = le_scal(H[k * n + k], ldexp(1.0, ex));
        if (vecs) {
            /* back substitution (T - w_k I) x = 0, x_k = 1, into column k of X */
            for (int64_t k = tid; k < n; k += bd) {
                T *x = X + k * n;
                const T lam = H[k * n + k];
                const double smin = fmax(LE_EPS * le_abs1(lam), LE_SMLNUM * (double)n / LE_EPS);
                const double big = 0x1p500;
                for (int64_t j = k + 1; j < n; j++) x[j] = le_real<T>(0.0);
                x[k] = le_real<T>(1.0);
                for (int64_t j = k - 1; j >= 0; j--) {
                    T sm = le_real<T>(0.0);
                    for (int64_t l2 = j + 1; l2 <= k; l2++) sm = le_add(sm, le_mul(H[j * n + l2], x[l2]));
                    T d = le_sub(H[j * n + j], lam);
                    double dd = le_abs1(d);
                    if (dd < smin) { d = le_real<T>(smin); dd = smin; }
                    const double q = le_abs1(sm);
                    if (dd < 1.0 && q > dd * big) {      /* keep |x| <= big: rescale the solution so far */
                        const double f = dd * big / q;
                        for (int64_t l2 = j + 1; l2 <= k; l2++) x[l2] = le_scal(x[l2], f);
                        sm = le_scal(sm, f);
                    }
                    x[j] = le_scal(le_cdiv(sm, d), -1.0);
                }
            }
            __syncthreads();
            T *vb = v + b * vbs;
            for (int64_t idx = tid; idx < n * n; idx += bd) {   /* V = Z X into H's place (T done) */
                const int64_t i = idx / n, k = idx % n;
                T t = le_real<T>(0.0);
                for (int64_t l2 = 0; l2 <= k; l2++) t = le_add(t, le_mul(Z[i * n + l2], X[k * n + l2]));
                H[idx] = t;
            }
            __syncthreads();
            for (int64_t k = tid; k < n; k += bd) {   /* unit 2-norm columns (scaled sum of squares) */
                double m2 = 0.0, ss = 0.0;
                for (int64_t i = 0; i < n; i++) m2 = fmax(m2, le_abs1(H[i * n + k]));
                const double f = m2 > 0.0 ? 1.0 / m2 : 1.0;
                for (int64_t i = 0; i < n; i++) ss += le_abs2(le_scal(H[i * n + k], f));
                const double g = ss > 0.0 ? f / sqrt(ss) : 1.0;
                for (int64_t i = 0; i < n; i++) vb[i * ldv + k] = le_scal(H[i * n + k], g);
            }
        }
        __syncthreads();
    }
}
#endif
