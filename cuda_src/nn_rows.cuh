/* Row-wise fused kernels of nn on CUDA (mirror tensor/cpu/csrc/nn_rows.h): softmax /
 * log_softmax, layer_norm and cross-entropy with class indices, forward and backward, with
 * the CPU's formulas and argument conventions. Rows are contiguous (the host moves the axis
 * last and makes it contiguous).
 *
 * A row is processed by a group of TPR threads: one warp (TPR = 32, NR_BLOCK / 32 rows per
 * block) for short rows or the whole block (TPR = NR_BLOCK) for long ones; the host picks the
 * group from the row length alone. Thread `lane` of the group folds elements lane, lane + TPR,
 * ... in order, then a butterfly of __shfl_xor_sync (every lane gets the same bits: each step
 * adds the same two values) and, for a block group, the warp totals summed in warp order from
 * shared memory. So the tree is fixed by the shape: results are deterministic. 16-bit floats
 * compute in float (S::C), statistics (max, sums, mean, rstd, lse) are kept in that type.
 *
 * The layer_norm weight/bias gradients are column sums over rows: nr_ln_bwd_cols writes, per
 * block of rb rows and per column, the partial sums in row order (one thread per (block,
 * column)); the host sums the blocks with the deterministic reduction (pass two). No atomics.
 *
 * Cross-entropy targets are checked on the device: a target neither in [0, C) nor ignore
 * records its row in *bad (atomicMin: the first bad row) and the row gets loss 0 and reads
 * nothing out of bounds; the host reads the word at the next synchronization and raises
 * (tensor/cuda/checks.py). */
#ifndef STRIDEX_NN_ROWS_CUH
#define STRIDEX_NN_ROWS_CUH
#include "common.cuh"

#define NR_BLOCK 256                 /* threads per block of every row kernel */
#define NR_NWARPS (NR_BLOCK / 32)

/* NaN is skipped by the max (as the CPU's) but still poisons the row through exp(NaN - m). */
template <class A> SX_DEV A nr_maxv(A m, A v) { return v > m ? v : m; }

/* Reduce v over the row group (sum, or max when MAX); every thread of the group gets the
 * result. sm: NR_NWARPS slots of shared memory (block groups only). All threads of the group
 * call it. */
template <int TPR, bool MAX, class A>
SX_DEV A nr_group_reduce(A v, A *sm) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        A u = sx_shfl_xor(v, o);
        v = MAX ? nr_maxv(v, u) : v + u;
    }
    if (TPR == 32) return v;
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    __syncthreads();                 /* the previous reduction's readers are done with sm */
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    A r = sm[0];
#pragma unroll
    for (int w = 1; w < NR_NWARPS; w++) r = MAX ? nr_maxv(r, sm[w]) : r + sm[w];
    return r;
}

/* The row loop: `lane` is the thread's index in its group, rows advance grid-stride. */
#define NR_ROWS(TPR, r, lane)                                                                \
    const int lane = (TPR) == 32 ? (int)(threadIdx.x & 31u) : (int)threadIdx.x;             \
    const int64_t rpb_ = NR_BLOCK / (TPR);                                                   \
    const int64_t slot_ = (TPR) == 32 ? (int64_t)(threadIdx.x >> 5) : 0;                     \
    for (int64_t r = (int64_t)blockIdx.x * rpb_ + slot_; r < rows; r += (int64_t)gridDim.x * rpb_)

/* Cached rows (NC > 0, L <= TPR * NC): each thread keeps its elements lane, lane + TPR, ...
 * in registers, so the row is read from memory once instead of once per pass; the passes
 * fold the same values in the same order (the same bits as the uncached loops). NR_EACH(j, i)
 * visits them, unrolled so that the arrays stay in registers. The registers cost occupancy
 * (NC 32 took 94 a thread on an H200, and softmax ran at half the uncached speed): the host
 * picks the variant (nn_kernels.ROW_CACHE). */
#define NR_EACH(j, i)                                                                        \
    _Pragma("unroll") for (int j = 0; j < NC; j++)                                          \
        for (int64_t i = lane + (int64_t)j * TPR; i < L; i = L)
#define NR_CACHED (NC > 0 && L <= (int64_t)TPR * NC)
#define NR_NCR (NC > 0 ? NC : 1)

/* ---------------------------------------------------------------- softmax / log_softmax */

template <class S, int TPR, int NC>
SX_DEV void nr_softmax_fwd(const typename S::T *X, typename S::T *Y, int64_t rows, int64_t L,
                           int log_) {
    typedef typename S::C A; typedef typename S::T T;
    __shared__ A sm[NR_NWARPS];
    NR_ROWS(TPR, r, lane) {
        const T *x = X + r * L; T *y = Y + r * L;
        A m = S::lo();
        if (NR_CACHED) {
            A v[NR_NCR];
            NR_EACH(j, i) { v[j] = S::ld(x[i]); m = nr_maxv(m, v[j]); }
            m = nr_group_reduce<TPR, true>(m, sm);
            A s = 0;
            if (log_) NR_EACH(j, i) s += SX_EXP(v[j] - m);
            else NR_EACH(j, i) { v[j] = SX_EXP(v[j] - m); s += v[j]; }
            s = nr_group_reduce<TPR, false>(s, sm);
            if (log_) {
                A ls = SX_LOG(s);
                NR_EACH(j, i) y[i] = S::st((v[j] - m) - ls);
            } else {
                A inv = (A)1 / s;
                NR_EACH(j, i) y[i] = S::st(v[j] * inv);
            }
            continue;
        }
        for (int64_t i = lane; i < L; i += TPR) m = nr_maxv(m, S::ld(x[i]));
        m = nr_group_reduce<TPR, true>(m, sm);
        A s = 0;
        if (!log_ && sizeof(T) >= 4) {   /* exp terms stored exactly: scale them below */
            for (int64_t i = lane; i < L; i += TPR) {
                A e = SX_EXP(S::ld(x[i]) - m);
                s += e; y[i] = S::st(e);
            }
        } else {
            for (int64_t i = lane; i < L; i += TPR) s += SX_EXP(S::ld(x[i]) - m);
        }
        s = nr_group_reduce<TPR, false>(s, sm);
        if (log_) {
            A ls = SX_LOG(s);
            for (int64_t i = lane; i < L; i += TPR) y[i] = S::st((S::ld(x[i]) - m) - ls);
        } else if (sizeof(T) >= 4) {     /* each thread rescales the terms it wrote */
            A inv = (A)1 / s;
            for (int64_t i = lane; i < L; i += TPR) y[i] = S::st(S::ld(y[i]) * inv);
        } else {                         /* 16-bit storage would round twice: recompute */
            A inv = (A)1 / s;
            for (int64_t i = lane; i < L; i += TPR) y[i] = S::st(SX_EXP(S::ld(x[i]) - m) * inv);
        }
    }
}

/* softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g). */
template <class S, int TPR, int NC>
SX_DEV void nr_softmax_bwd(const typename S::T *Y, const typename S::T *G, typename S::T *GX,
                           int64_t rows, int64_t L, int log_) {
    typedef typename S::C A; typedef typename S::T T;
    __shared__ A sm[NR_NWARPS];
    NR_ROWS(TPR, r, lane) {
        const T *y = Y + r * L, *g = G + r * L; T *gx = GX + r * L;
        A s = 0;
        if (NR_CACHED) {
            A gv[NR_NCR], yv[NR_NCR];
            NR_EACH(j, i) {
                gv[j] = S::ld(g[i]); yv[j] = S::ld(y[i]);
                s += log_ ? gv[j] : gv[j] * yv[j];
            }
            s = nr_group_reduce<TPR, false>(s, sm);
            if (log_) NR_EACH(j, i) gx[i] = S::st(gv[j] - SX_EXP(yv[j]) * s);
            else NR_EACH(j, i) gx[i] = S::st(yv[j] * (gv[j] - s));
            continue;
        }
        if (log_) for (int64_t i = lane; i < L; i += TPR) s += S::ld(g[i]);
        else for (int64_t i = lane; i < L; i += TPR) s += S::ld(g[i]) * S::ld(y[i]);
        s = nr_group_reduce<TPR, false>(s, sm);
        if (log_)
            for (int64_t i = lane; i < L; i += TPR) gx[i] = S::st(S::ld(g[i]) - SX_EXP(S::ld(y[i])) * s);
        else
            for (int64_t i = lane; i < L; i += TPR) gx[i] = S::st(S::ld(y[i]) * (S::ld(g[i]) - s));
    }
}

/* ---------------------------------------------------------------- layer_norm */

/* y = (x - mean) * rstd * w + b per row; w, b may be null. mean, rstd: one S::C per row. */
template <class S, int TPR, int NC>
SX_DEV void nr_ln_fwd(const typename S::T *X, const typename S::T *w, const typename S::T *b,
                      typename S::T *Y, typename S::C *MEAN, typename S::C *RSTD, int64_t rows,
                      int64_t L, double eps) {
    typedef typename S::C A; typedef typename S::T T;
    __shared__ A sm[NR_NWARPS];
    NR_ROWS(TPR, r, lane) {
        const T *x = X + r * L; T *y = Y + r * L;
        A s = 0;
        if (NR_CACHED) {
            A v[NR_NCR];
            NR_EACH(j, i) { v[j] = S::ld(x[i]); s += v[j]; }
            A mean = nr_group_reduce<TPR, false>(s, sm) / (A)L;
            A q = 0;
            NR_EACH(j, i) { A d = v[j] - mean; q += d * d; }
            q = nr_group_reduce<TPR, false>(q, sm);
            A rstd = (A)1 / sx1_sqrt(q / (A)L + (A)eps);
            if (lane == 0) { MEAN[r] = mean; RSTD[r] = rstd; }
            NR_EACH(j, i) {
                A o = (v[j] - mean) * rstd;
                if (w) o *= S::ld(w[i]);
                if (b) o += S::ld(b[i]);
                y[i] = S::st(o);
            }
            continue;
        }
        for (int64_t i = lane; i < L; i += TPR) s += S::ld(x[i]);
        A mean = nr_group_reduce<TPR, false>(s, sm) / (A)L;
        A q = 0;
        for (int64_t i = lane; i < L; i += TPR) { A d = S::ld(x[i]) - mean; q += d * d; }
        q = nr_group_reduce<TPR, false>(q, sm);
        A rstd = (A)1 / sx1_sqrt(q / (A)L + (A)eps);
        if (lane == 0) { MEAN[r] = mean; RSTD[r] = rstd; }
        for (int64_t i = lane; i < L; i += TPR) {
            A v = (S::ld(x[i]) - mean) * rstd;
            if (w) v *= S::ld(w[i]);
            if (b) v += S::ld(b[i]);
            y[i] = S::st(v);
        }
    }
}

/* gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w (w may be null). */
template <class S, int TPR, int NC>
SX_DEV void nr_ln_bwd(const typename S::T *X, const typename S::C *MEAN, const typename S::C *RSTD,
                      const typename S::T *G, const typename S::T *w, typename S::T *GX,
                      int64_t rows, int64_t L) {
    typedef typename S::C A; typedef typename S::T T;
    __shared__ A sm[NR_NWARPS];
    NR_ROWS(TPR, r, lane) {
        const T *x = X + r * L, *g = G + r * L; T *gx = GX + r * L;
        A mean = MEAN[r], rstd = RSTD[r];
        A s1 = 0, s2 = 0;
        if (NR_CACHED) {
            A gv[NR_NCR], xv[NR_NCR];
            NR_EACH(j, i) {
                gv[j] = S::ld(g[i]) * (w ? S::ld(w[i]) : (A)1); xv[j] = S::ld(x[i]);
                s1 += gv[j]; s2 += gv[j] * (xv[j] - mean) * rstd;
            }
            A a = nr_group_reduce<TPR, false>(s1, sm) / (A)L;
            A c = nr_group_reduce<TPR, false>(s2, sm) / (A)L;
            NR_EACH(j, i) gx[i] = S::st(rstd * (gv[j] - a - (xv[j] - mean) * rstd * c));
            continue;
        }
        for (int64_t i = lane; i < L; i += TPR) {
            A gw = S::ld(g[i]) * (w ? S::ld(w[i]) : (A)1);
            s1 += gw; s2 += gw * (S::ld(x[i]) - mean) * rstd;
        }
        A a = nr_group_reduce<TPR, false>(s1, sm) / (A)L;
        A c = nr_group_reduce<TPR, false>(s2, sm) / (A)L;
        for (int64_t i = lane; i < L; i += TPR) {
            A gw = S::ld(g[i]) * (w ? S::ld(w[i]) : (A)1);
            gx[i] = S::st(rstd * (gw - a - (S::ld(x[i]) - mean) * rstd * c));
        }
    }
}

/* Pass one of the weight/bias gradients: for block k of rb rows and column i,
 * PW[k * L + i] = sum over the block's rows (in order) of g * xhat, PB the sum of g
 * (either may be null). One thread per (block, column), grid-stride. */
template <class S, class I>
SX_DEV void nr_ln_cols_loop(const typename S::T *X, const typename S::C *MEAN,
                            const typename S::C *RSTD, const typename S::T *G, typename S::C *PW,
                            typename S::C *PB, I rows, I L, I rb) {
    typedef typename S::C A;
    I nblk = (rows + rb - 1) / rb, n = nblk * L, step = (I)blockDim.x * (I)gridDim.x;
#pragma unroll 1
    for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += step) {
        I k = e / L, i = e - k * L;
        I lo = k * rb, hi = lo + rb < rows ? lo + rb : rows;
        A aw = 0, ab = 0;
        for (I r = lo; r < hi; r++) {
            A gv = S::ld(G[r * L + i]);
            if (PW) aw += gv * ((S::ld(X[r * L + i]) - MEAN[r]) * RSTD[r]);
            ab += gv;
        }
        if (PW) PW[e] = aw;
        if (PB) PB[e] = ab;
    }
}

template <class S>
SX_DEV void nr_ln_bwd_cols(const typename S::T *X, const typename S::C *MEAN,
                           const typename S::C *RSTD, const typename S::T *G, typename S::C *PW,
                           typename S::C *PB, int64_t rows, int64_t L, int64_t rb) {
    /* 32-bit index arithmetic when every offset fits, and so does the grid-stride loop's last
     * `e += step` (e < n <= rows * L): a wrapped int32 e would be negative, pass `e < n` and
     * index out of bounds */
    if (rows * L <= 2147483647LL - (int64_t)blockDim.x * gridDim.x)
        nr_ln_cols_loop<S, int32_t>(X, MEAN, RSTD, G, PW, PB, (int32_t)rows, (int32_t)L, (int32_t)rb);
    else
        nr_ln_cols_loop<S, int64_t>(X, MEAN, RSTD, G, PW, PB, rows, L, rb);
}

/* ---------------------------------------------------------------- cross-entropy (class indices) */

/* Per row with target t (rows with t == ignore give 0):
 *   loss = (1 - eps) * w[t] * (lse - x[t]) + eps / C * sum_c w[c] * (lse - x[c])
 * (w = 1 when null), lse = log(sum(exp(x))) stored for backward. */
template <class S, int TPR, int NC>
SX_DEV void nr_ce_fwd(const typename S::T *X, const int64_t *TG, const typename S::T *w,
                      typename S::T *LOSS, typename S::C *LSE, int64_t rows, int64_t C,
                      int64_t ignore, double eps, unsigned long long *bad) {
    typedef typename S::C A; typedef typename S::T T;
    __shared__ A sm[NR_NWARPS];
    const A ls_eps = (A)eps, keep = (A)(1.0 - eps), per = (A)(eps / (double)C);
    NR_ROWS(TPR, r, lane) {
        const T *x = X + r * C;
        const int64_t L = C;
        A m = S::lo(), s = 0;
        if (NR_CACHED) {      /* read once (label smoothing reads the row again) */
            A v[NR_NCR];
            NR_EACH(j, i) { v[j] = S::ld(x[i]); m = nr_maxv(m, v[j]); }
            m = nr_group_reduce<TPR, true>(m, sm);
            NR_EACH(j, i) s += SX_EXP(v[j] - m);
        } else {
            for (int64_t i = lane; i < C; i += TPR) m = nr_maxv(m, S::ld(x[i]));
            m = nr_group_reduce<TPR, true>(m, sm);
            for (int64_t i = lane; i < C; i += TPR) s += SX_EXP(S::ld(x[i]) - m);
        }
        s = nr_group_reduce<TPR, false>(s, sm);
        A ls = SX_LOG(s);
        int64_t t = TG[r];
        bool skip = t == ignore || t < 0 || t >= C;
        if (lane == 0) {
            LSE[r] = m + ls;
            if (skip) LOSS[r] = S::st((A)0);
            if (t != ignore && (t < 0 || t >= C)) atomicMin(bad, (unsigned long long)r);
        }
        if (skip) continue;          /* uniform over the group */
        A loss = keep * (w ? S::ld(w[t]) : (A)1) * (ls - (S::ld(x[t]) - m));
        if (ls_eps != 0) {
            A q = 0;
            for (int64_t i = lane; i < C; i += TPR) q += (w ? S::ld(w[i]) : (A)1) * (ls - (S::ld(x[i]) - m));
            q = nr_group_reduce<TPR, false>(q, sm);
            loss += per * q;
        }
        if (lane == 0) LOSS[r] = S::st(loss);
    }
}

/* gx[c] = g[i] * ((1 - eps) * w[t] * (p[c] - [c == t]) + eps / C * (W * p[c] - w[c])),
 * p = exp(x - lse), W = sum(w) (C when null); ignored rows (and, defensively, targets out of
 * range) get 0. Elementwise over rows * C, grid-stride. */
template <class S, class I>
SX_DEV void nr_ce_bwd_loop(const typename S::T *X, const int64_t *TG, const typename S::T *w,
                           const typename S::C *LSE, const typename S::T *G, typename S::T *GX,
                           I rows, I C, int64_t ignore, double eps, double wsum) {
    typedef typename S::C A;
    const A keep = (A)(1.0 - eps), per = (A)(eps / (double)C), W = (A)wsum;
    I n = rows * C, step = (I)blockDim.x * (I)gridDim.x;
#pragma unroll 1
    for (I e = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; e < n; e += step) {
        I r = e / C, c = e - r * C;
        int64_t t = TG[r];
        if (t == ignore || t < 0 || t >= (int64_t)C) { GX[e] = S::st((A)0); continue; }
        A g = S::ld(G[r]), lse = LSE[r];
        A hot = g * keep * (w ? S::ld(w[t]) : (A)1);
        A cp = hot + g * per * W, cw = g * per;
        GX[e] = S::st(cp * SX_EXP(S::ld(X[e]) - lse) - cw * (w ? S::ld(w[c]) : (A)1)
                      - ((int64_t)c == t ? hot : (A)0));
    }
}

template <class S>
SX_DEV void nr_ce_bwd(const typename S::T *X, const int64_t *TG, const typename S::T *w,
                      const typename S::C *LSE, const typename S::T *G, typename S::T *GX,
                      int64_t rows, int64_t C, int64_t ignore, double eps, double wsum) {
    if (rows * C <= 2147483647LL - (int64_t)blockDim.x * gridDim.x)   /* e + step fits too */
        nr_ce_bwd_loop<S, int32_t>(X, TG, w, LSE, G, GX, (int32_t)rows, (int32_t)C, ignore, eps, wsum);
    else
        nr_ce_bwd_loop<S, int64_t>(X, TG, w, LSE, G, GX, rows, C, ignore, eps, wsum);
}

#endif
