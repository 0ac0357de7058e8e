/* Fused scaled-dot-product attention on CUDA (mirrors tensor/cpu/csrc/nn_attn.h: the same
 * operands, meta[] order, dropout bits and fully-masked-row rule; see that file).
 *
 * Forward (na_fwd): one block per (batch, query tile) (blockIdx.x = batch * tiles + tile); the
 * block's query rows sit in shared memory with the running max m, sum l and output
 * accumulator of each row (online softmax), and the key/value tiles stream through shared
 * memory. Nothing of size L x S is stored:
 * only the output and the per-row logsumexp lse = m + log(l).
 *
 * Backward (FlashAttention-2, no atomics): na_rowdot computes D = rowsum(dO * O); na_dkv runs one
 * block per (batch, key tile) that loops over every query tile, recomputing P = exp(s - lse)
 * and dS = P * (dP * Z - D) tile by tile and accumulating dK, dV for its keys in shared
 * memory; na_dq runs one block per (batch, query tile) over the key tiles for dQ. Each output
 * element is owned by one thread, which sums in a fixed order: results are deterministic.
 *
 * Tiles are NT x NT (query rows x keys) with NT chosen by the host from the head dims and the
 * compute type so the shared memory fits 48 KiB (tensor/cuda/nn_kernels.py). Arithmetic is in
 * the dtype's compute type: float (16-bit storage too) or double. */
#ifndef STRIDEX_NN_ATTN_CUH
#define STRIDEX_NN_ATTN_CUH
#include "common.cuh"
#include "philox.h"

#define NA_BLOCK 128   /* threads per block of every attention kernel */

/* meta: the CPU's meta[] (B, L, S, E, Ev, qs, ks, vs, msl, mss, causal, thr, seed, offset),
 * then the forward and backward tile sizes */
struct na_meta { int64_t v[16]; };
enum { NA_B, NA_L, NA_S_, NA_E, NA_EV, NA_QS, NA_KS, NA_VS, NA_MSL, NA_MSS, NA_CAUSAL, NA_THR,
       NA_SEED, NA_OFF, NA_TF, NA_TB };

template <class A> SX_DEV A na_neg_inf() { return (A)(-SX_INF_D); }

/* Whether dropout keeps weight (b, i, j): the top 24 bits of 32-bit Philox value
 * (b * L + i) * S + j of the draw (seed, offset) are >= thr. */
SX_DEV bool na_kept(const na_meta &m, int64_t b, int64_t i, int64_t j) {
    uint64_t idx = ((uint64_t)b * (uint64_t)m.v[NA_L] + (uint64_t)i) * (uint64_t)m.v[NA_S_] + (uint64_t)j;
    philox4x32_ctr_t blk = philox_block_k(philox_key_from_seed((uint64_t)m.v[NA_SEED]),
                                          (uint64_t)m.v[NA_OFF] + (idx >> 2));
    return (blk.v[idx & 3u] >> 8) >= (uint32_t)m.v[NA_THR];
}

/* rows r0 .. r0+n of a strided operand into shared dst (n x w, compute type, times mul); rows
 * past `lim` are zero. All threads of the block take part. */
template <class S>
SX_DEV void na_load(typename S::C *dst, const typename S::T *src, int64_t rs, int64_t r0, int n,
                    int64_t lim, int w, typename S::C mul) {
    for (int idx = threadIdx.x; idx < n * w; idx += NA_BLOCK) {
        int r = idx / w, e = idx - r * w;
        dst[idx] = r0 + r < lim ? S::ld(src[(r0 + r) * rs + e]) * mul : (typename S::C)0;
    }
}

template <class A>
SX_DEV A na_dot(const A *a, const A *b, int n) {
    A s = 0;
    for (int e = 0; e < n; e++) s += a[e] * b[e];
    return s;
}

/* The masked score of query row i and key j (q pre-scaled), -inf where hidden. */
template <class A>
SX_DEV A na_score(const na_meta &m, const A *qr, const A *kr, const A *mrow, int64_t i,
                  int64_t j, int64_t kend) {
    if (i >= m.v[NA_L] || j >= kend || (m.v[NA_CAUSAL] && j > i)) return na_neg_inf<A>();
    A s = na_dot(qr, kr, (int)m.v[NA_E]);
    return mrow ? s + mrow[j * m.v[NA_MSS]] : s;
}

template <class S>
SX_DEV void na_fwd(na_meta m, const typename S::T *Q, const typename S::T *K,
                   const typename S::T *V, const typename S::C *M, const int64_t *qo,
                   const int64_t *ko, const int64_t *vo, const int64_t *mo, typename S::T *O,
                   typename S::C *LSE, double scale, double dscale) {
    typedef typename S::C A;
    SX_EXTERN_SHARED(unsigned char, na_smem);
    const int NT = (int)m.v[NA_TF], E = (int)m.v[NA_E], Ev = (int)m.v[NA_EV];
    const int64_t L = m.v[NA_L], nt = (L + NT - 1) / NT, b = blockIdx.x / nt;
    const int64_t q0 = (blockIdx.x - b * nt) * NT;
    A *Qs = (A *)na_smem, *Ks = Qs + NT * E, *Vs = Ks + NT * E, *Ss = Vs + NT * Ev;
    A *Os = Ss + NT * NT, *ms = Os + NT * Ev, *ls = ms + NT, *al = ls + NT;
    const A NEG = na_neg_inf<A>();
    na_load<S>(Qs, Q + qo[b], m.v[NA_QS], q0, NT, L, E, (A)scale);
    for (int idx = threadIdx.x; idx < NT * Ev; idx += NA_BLOCK) Os[idx] = 0;
    for (int r = threadIdx.x; r < NT; r += NA_BLOCK) { ms[r] = NEG; ls[r] = 0; }
    const int64_t kend = m.v[NA_CAUSAL] && q0 + NT < m.v[NA_S_] ? q0 + NT : m.v[NA_S_];
    const A *mb = M ? M + mo[b] : nullptr;
    for (int64_t k0 = 0; k0 < kend; k0 += NT) {
        __syncthreads();   /* the previous tile's readers are done */
        na_load<S>(Ks, K + ko[b], m.v[NA_KS], k0, NT, kend, E, (A)1);
        na_load<S>(Vs, V + vo[b], m.v[NA_VS], k0, NT, kend, Ev, (A)1);
        __syncthreads();
        for (int idx = threadIdx.x; idx < NT * NT; idx += NA_BLOCK) {
            int r = idx / NT, c = idx - r * NT;
            int64_t i = q0 + r;
            Ss[idx] = na_score(m, Qs + r * E, Ks + c * E, mb ? mb + i * m.v[NA_MSL] : nullptr,
                               i, k0 + c, kend);
        }
        __syncthreads();
        for (int r = threadIdx.x; r < NT; r += NA_BLOCK) {   /* online softmax, one row each */
            A *s = Ss + r * NT, mx = NEG;
            for (int c = 0; c < NT; c++) mx = s[c] > mx ? s[c] : mx;
            A mnew = mx > ms[r] ? mx : ms[r];
            if (mnew == NEG) {                     /* every score so far is -inf */
                for (int c = 0; c < NT; c++) s[c] = 0;
                al[r] = 1;
                continue;
            }
            A alpha = SX_EXP(ms[r] - mnew), sum = 0;
            for (int c = 0; c < NT; c++) { A e = SX_EXP(s[c] - mnew); s[c] = e; sum += e; }
            ls[r] = ls[r] * alpha + sum;
            ms[r] = mnew;
            al[r] = alpha;
            if (m.v[NA_THR])
                for (int c = 0; c < NT && k0 + c < kend; c++)
                    s[c] = na_kept(m, b, q0 + r, k0 + c) ? s[c] * (A)dscale : (A)0;
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < NT * Ev; idx += NA_BLOCK) {
            int r = idx / Ev, e = idx - r * Ev;
            A a = Os[idx] * al[r];
            const A *p = Ss + r * NT;
            for (int c = 0; c < NT; c++) a += p[c] * Vs[c * Ev + e];
            Os[idx] = a;
        }
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < NT * Ev; idx += NA_BLOCK) {
        int r = idx / Ev, e = idx - r * Ev;
        if (q0 + r >= L) continue;
        bool dead = ms[r] == NEG;
        O[(b * L + q0 + r) * Ev + e] = S::st(dead ? (A)0 : Os[idx] / ls[r]);
        if (e == 0) LSE[b * L + q0 + r] = dead ? NEG : ms[r] + SX_LOG(ls[r]);
    }
}

/* D[r] = sum_e O[r, e] * dO[r, e] over the B * L contiguous rows (grid-stride). */
template <class S>
SX_DEV void na_rowdot(na_meta m, const typename S::T *O, const typename S::T *dO,
                      typename S::C *D) {
    typedef typename S::C A;
    const int64_t rows = m.v[NA_B] * m.v[NA_L], Ev = m.v[NA_EV];
    for (int64_t r = (int64_t)blockIdx.x * NA_BLOCK + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * NA_BLOCK) {
        A s = 0;
        for (int64_t e = 0; e < Ev; e++) s += S::ld(O[r * Ev + e]) * S::ld(dO[r * Ev + e]);
        D[r] = s;
    }
}

/* The backward operands of one block: the query-side tile (rows r0 ..) with lse and D. */
template <class S>
SX_DEV void na_load_qside(const na_meta &m, typename S::C *Qs, typename S::C *dOs,
                          typename S::C *ls, typename S::C *Ds, const typename S::T *Q,
                          const typename S::T *dO, const typename S::C *LSE,
                          const typename S::C *D, int64_t b, int64_t r0, int NT, double scale) {
    typedef typename S::C A;
    const int64_t L = m.v[NA_L];
    na_load<S>(Qs, Q, m.v[NA_QS], r0, NT, L, (int)m.v[NA_E], (A)scale);
    na_load<S>(dOs, dO + b * L * m.v[NA_EV], m.v[NA_EV], r0, NT, L, (int)m.v[NA_EV], (A)1);
    for (int r = threadIdx.x; r < NT; r += NA_BLOCK) {
        ls[r] = r0 + r < L ? LSE[b * L + r0 + r] : na_neg_inf<A>();
        Ds[r] = r0 + r < L ? D[b * L + r0 + r] : (A)0;
    }
}

/* P * Z and dS = P * (dP * Z - D) of query row i (tile row r) and key j (tile column c). */
template <class A>
SX_DEV void na_grad_entry(const na_meta &m, const A *Qs, const A *dOs, const A *Ks, const A *Vs,
                          const A *ls, const A *Ds, const A *mb, int64_t b, int64_t i, int64_t j,
                          int r, int c, double dscale, A *pz, A *ds) {
    const int E = (int)m.v[NA_E], Ev = (int)m.v[NA_EV];
    A s = ls[r] == na_neg_inf<A>() ? ls[r]
          : na_score(m, Qs + r * E, Ks + c * E, mb ? mb + i * m.v[NA_MSL] : nullptr, i, j, m.v[NA_S_]);
    if (s == na_neg_inf<A>()) { *pz = 0; *ds = 0; return; }
    A p = SX_EXP(s - ls[r]), dp = na_dot(dOs + r * Ev, Vs + c * Ev, Ev);
    A z = m.v[NA_THR] ? (na_kept(m, b, i, j) ? (A)dscale : (A)0) : (A)1;
    *pz = p * z;
    *ds = p * (dp * z - Ds[r]);
}

template <class S>
SX_DEV void na_dkv(na_meta m, const typename S::T *Q, const typename S::T *K,
                   const typename S::T *V, const typename S::C *M, const int64_t *qo,
                   const int64_t *ko, const int64_t *vo, const int64_t *mo,
                   const typename S::T *dO, const typename S::C *LSE, const typename S::C *D,
                   typename S::T *dK, typename S::T *dV, double scale, double dscale) {
    typedef typename S::C A;
    SX_EXTERN_SHARED(unsigned char, na_smem);
    const int NT = (int)m.v[NA_TB], E = (int)m.v[NA_E], Ev = (int)m.v[NA_EV];
    const int64_t L = m.v[NA_L], S_ = m.v[NA_S_], nt = (S_ + NT - 1) / NT, b = blockIdx.x / nt;
    const int64_t k0 = (blockIdx.x - b * nt) * NT;
    A *Ks = (A *)na_smem, *Vs = Ks + NT * E, *dKs = Vs + NT * Ev, *dVs = dKs + NT * E;
    A *Qs = dVs + NT * Ev, *dOs = Qs + NT * E, *Ps = dOs + NT * Ev, *dSs = Ps + NT * NT;
    A *ls = dSs + NT * NT, *Ds = ls + NT;
    na_load<S>(Ks, K + ko[b], m.v[NA_KS], k0, NT, S_, E, (A)1);
    na_load<S>(Vs, V + vo[b], m.v[NA_VS], k0, NT, S_, Ev, (A)1);
    for (int idx = threadIdx.x; idx < NT * E; idx += NA_BLOCK) dKs[idx] = 0;
    for (int idx = threadIdx.x; idx < NT * Ev; idx += NA_BLOCK) dVs[idx] = 0;
    const A *mb = M ? M + mo[b] : nullptr;
    for (int64_t q0 = m.v[NA_CAUSAL] ? k0 : 0; q0 < L; q0 += NT) {
        __syncthreads();
        na_load_qside<S>(m, Qs, dOs, ls, Ds, Q + qo[b], dO, LSE, D, b, q0, NT, scale);
        __syncthreads();
        for (int idx = threadIdx.x; idx < NT * NT; idx += NA_BLOCK) {
            int r = idx / NT, c = idx - r * NT;
            na_grad_entry(m, Qs, dOs, Ks, Vs, ls, Ds, mb, b, q0 + r, k0 + c, r, c, dscale,
                          Ps + idx, dSs + idx);
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < NT * Ev; idx += NA_BLOCK) {
            int c = idx / Ev, e = idx - c * Ev;
            A a = dVs[idx];
            for (int r = 0; r < NT; r++) a += Ps[r * NT + c] * dOs[r * Ev + e];
            dVs[idx] = a;
        }
        for (int idx = threadIdx.x; idx < NT * E; idx += NA_BLOCK) {
            int c = idx / E, e = idx - c * E;
            A a = dKs[idx];
            for (int r = 0; r < NT; r++) a += dSs[r * NT + c] * Qs[r * E + e];
            dKs[idx] = a;
        }
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < NT * E; idx += NA_BLOCK) {
        int c = idx / E, e = idx - c * E;
        if (k0 + c < S_) dK[(b * S_ + k0 + c) * E + e] = S::st(dKs[idx]);
    }
    for (int idx = threadIdx.x; idx < NT * Ev; idx += NA_BLOCK) {
        int c = idx / Ev, e = idx - c * Ev;
        if (k0 + c < S_) dV[(b * S_ + k0 + c) * Ev + e] = S::st(dVs[idx]);
    }
}

template <class S>
SX_DEV void na_dq(na_meta m, const typename S::T *Q, const typename S::T *K,
                  const typename S::T *V, const typename S::C *M, const int64_t *qo,
                  const int64_t *ko, const int64_t *vo, const int64_t *mo,
                  const typename S::T *dO, const typename S::C *LSE, const typename S::C *D,
                  typename S::T *dQ, double scale, double dscale) {
    typedef typename S::C A;
    SX_EXTERN_SHARED(unsigned char, na_smem);
    const int NT = (int)m.v[NA_TB], E = (int)m.v[NA_E], Ev = (int)m.v[NA_EV];
    const int64_t L = m.v[NA_L], nt = (L + NT - 1) / NT, b = blockIdx.x / nt;
    const int64_t q0 = (blockIdx.x - b * nt) * NT;
    A *Qs = (A *)na_smem, *dOs = Qs + NT * E, *Ks = dOs + NT * Ev, *Vs = Ks + NT * E;
    A *dQs = Vs + NT * Ev, *dSs = dQs + NT * E, *ls = dSs + NT * NT, *Ds = ls + NT;
    na_load_qside<S>(m, Qs, dOs, ls, Ds, Q + qo[b], dO, LSE, D, b, q0, NT, scale);
    for (int idx = threadIdx.x; idx < NT * E; idx += NA_BLOCK) dQs[idx] = 0;
    const int64_t kend = m.v[NA_CAUSAL] && q0 + NT < m.v[NA_S_] ? q0 + NT : m.v[NA_S_];
    const A *mb = M ? M + mo[b] : nullptr;
    for (int64_t k0 = 0; k0 < kend; k0 += NT) {
        __syncthreads();
        na_load<S>(Ks, K + ko[b], m.v[NA_KS], k0, NT, kend, E, (A)1);
        na_load<S>(Vs, V + vo[b], m.v[NA_VS], k0, NT, kend, Ev, (A)1);
        __syncthreads();
        for (int idx = threadIdx.x; idx < NT * NT; idx += NA_BLOCK) {
            int r = idx / NT, c = idx - r * NT;
            A pz;
            na_grad_entry(m, Qs, dOs, Ks, Vs, ls, Ds, mb, b, q0 + r, k0 + c, r, c, dscale, &pz,
                          dSs + idx);
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < NT * E; idx += NA_BLOCK) {
            int r = idx / E, e = idx - r * E;
            A a = dQs[idx];
            for (int c = 0; c < NT; c++) a += dSs[r * NT + c] * Ks[c * E + e];
            dQs[idx] = a;
        }
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < NT * E; idx += NA_BLOCK) {
        int r = idx / E, e = idx - r * E;
        if (q0 + r < L) dQ[(b * L + q0 + r) * E + e] = S::st(dQs[idx] * (A)scale);
    }
}

#endif
