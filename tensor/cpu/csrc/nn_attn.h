/* Fused scaled-dot-product attention on the CPU: softmax(q k^T * scale + mask) v, FlashAttention
 * style. The forward walks the keys in tiles of NA_BK with a running max and sum per query row
 * (online softmax), so no L x S matrix exists; it stores the output and the per-row logsumexp.
 * The backward recomputes the probabilities tile by tile from q, k and the logsumexp
 * (FlashAttention-2: D = rowsum(dO * O), dS = P * (dP - D)) in two passes that each own what
 * they write: one over key tiles (dK, dV: each tile loops over every query) and one over query
 * tiles (dQ). No floating-point atomics; each work item is computed start to end by one thread
 * in a fixed order, so results do not depend on the thread count (DESIGN.md, decision 7).
 *
 * Operands (the host, nn/_fused_attention.py, checks and prepares them): batch b of q is the row
 * block at q + qoff[b] with rows qs elements apart (k, v, mask likewise: broadcast or strided
 * batch dims cost no copy), last dim contiguous; o (B, L, Ev) and lse (B, L) contiguous; the
 * mask, when present, is additive and of the compute type, element (i, j) of batch b at
 * moff[b] + i * msl + j * mss. Dropout (thr > 0) zeroes attention weight (b, i, j) when the top
 * 24 bits of 32-bit Philox value (b * L + i) * S + j of the draw (seed, offset) are below thr:
 * the bits rand() of that shape would give (philox.h), so the composed path draws the same mask.
 *
 * Instantiated once per module for one storage dtype: the source defines NA_S (f16, bf16, f32,
 * f64). 16-bit floats compute in float (their C_ type). Rows whose every score is -inf (fully
 * masked) give output 0, lse -inf and zero gradients (PyTorch's safe softmax). */
#include "common.h"
#include "philox.h"

#ifndef NA_S
#error "define NA_S (f16, bf16, f32 or f64) before including nn_attn.h"
#endif

#define NA_CAT_(a, b) a##b
#define NA_CAT(a, b) NA_CAT_(a, b)
#define NA_FN(name) NA_CAT(name##_, NA_S)
#define NA_T NA_CAT(T_, NA_S)
#define NA_A NA_CAT(C_, NA_S)
#define NA_LD NA_CAT(LD_, NA_S)
#define NA_ST NA_CAT(ST_, NA_S)
#define NA_BQ 64        /* query rows per work item */
#define NA_BK 64        /* keys per tile (score rows are always NA_BK long: padded) */
#define NA_LANES 16     /* independent partial sums / maxima (vectorisable) */
#define NA_NEG_INF (-(NA_A)INFINITY)
#define NA_POS_INF ((NA_A)INFINITY)

/* meta[]: the int64 parameters, in this order */
enum { NA_B, NA_L, NA_S_, NA_E, NA_EV, NA_QS, NA_KS, NA_VS, NA_MSL, NA_MSS, NA_CAUSAL, NA_THR,
       NA_SEED, NA_OFF, NA_NMETA };

typedef struct {
    int64_t B, L, S, E, Ev, qs, ks, vs, msl, mss;
    int causal;
    uint32_t thr;
    philox4x32_key_t key;
    uint64_t off;
    NA_A scale, dscale;
} na_p;

static na_p na_params(const int64_t *meta, double scale, double dscale) {
    na_p p;
    p.B = meta[NA_B]; p.L = meta[NA_L]; p.S = meta[NA_S_]; p.E = meta[NA_E]; p.Ev = meta[NA_EV];
    p.qs = meta[NA_QS]; p.ks = meta[NA_KS]; p.vs = meta[NA_VS];
    p.msl = meta[NA_MSL]; p.mss = meta[NA_MSS];
    p.causal = (int)meta[NA_CAUSAL]; p.thr = (uint32_t)meta[NA_THR];
    p.key = philox_key_from_seed((uint64_t)meta[NA_SEED]); p.off = (uint64_t)meta[NA_OFF];
    p.scale = (NA_A)scale; p.dscale = (NA_A)dscale;
    return p;
}

static int na_threads(int64_t work, int nthreads) {
    return (work >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;
}

/* Rows r0 .. r0+n of a strided operand, converted to the compute type (times mul) into buf
 * (n x ld, row-major; columns w .. ld zero). */
static void na_load_rows(NA_A *buf, int64_t ld, const NA_T *base, int64_t rs, int64_t r0,
                         int64_t n, int64_t w, NA_A mul) {
    for (int64_t r = 0; r < n; r++) {
        const NA_T *x = base + (r0 + r) * rs;
        NA_A *o = buf + r * ld;
        for (int64_t e = 0; e < w; e++) o[e] = NA_LD(x[e]) * mul;
        for (int64_t e = w; e < ld; e++) o[e] = 0;
    }
}

/* Rows r0 .. r0+n transposed into buf (w x t, times mul), columns n .. t zero. */
static void na_load_t(NA_A *buf, int64_t t, const NA_T *base, int64_t rs, int64_t r0, int64_t n,
                      int64_t w, NA_A mul) {
    for (int64_t e = 0; e < w; e++)
        for (int64_t j = n; j < t; j++) buf[e * t + j] = 0;
    for (int64_t j = 0; j < n; j++) {
        const NA_T *x = base + (r0 + j) * rs;
        for (int64_t e = 0; e < w; e++) buf[e * t + j] = NA_LD(x[e]) * mul;
    }
}

#define na_load_cols(buf, base, rs, k0, n, w) na_load_t(buf, NA_BK, base, rs, k0, n, w, (NA_A)1)

/* The register-blocked micro-kernel (GCC vector extensions, as gemm.c): NA_RB rows x NA_NC
 * columns of C held in registers while the inner dimension streams. */
#if defined(__AVX512F__)
#define NA_VBYTES 64
#elif defined(__AVX__)
#define NA_VBYTES 32
#else
#define NA_VBYTES 16
#endif
typedef NA_A na_v __attribute__((vector_size(NA_VBYTES)));
#define NA_VL ((int)(NA_VBYTES / sizeof(NA_A)))
#define NA_NC (2 * NA_VL)    /* columns per micro-tile; NA_BK is a multiple of it */
#define NA_RB 6              /* rows per micro-tile: 12 accumulators fit 16 registers */

static inline na_v na_vld(const NA_A *p) { na_v v; memcpy(&v, p, sizeof v); return v; }
static inline void na_vst(NA_A *p, na_v v) { memcpy(p, &v, sizeof v); }

/* Columns w rounded up to the micro-tile's width (buffers are padded with zeros to it). */
static int64_t na_pad(int64_t w) { return (w + NA_NC - 1) / NA_NC * NA_NC; }

/* C (m x n, rows ldc apart) += A (m x K, A(i, k) = a[i * ai + k * ak]) B (K x n, rows ldb
 * apart); n a multiple of NA_NC. The sum over k runs in order: the result depends on the
 * shape only. */
static void na_mm(NA_A *c, int64_t ldc, const NA_A *a, int64_t ai, int64_t ak, const NA_A *b,
                  int64_t ldb, int64_t m, int64_t n, int64_t K) {
    for (int64_t i0 = 0; i0 < m; i0 += NA_RB) {
        const NA_A *ar[NA_RB];
        NA_A *cr[NA_RB];
        for (int r = 0; r < NA_RB; r++) {   /* rows past m repeat the last: computed, not kept */
            int64_t i = i0 + r < m ? i0 + r : m - 1;
            ar[r] = a + i * ai;
            cr[r] = c + i * ldc;
        }
        for (int64_t j0 = 0; j0 < n; j0 += NA_NC) {
            na_v acc[NA_RB][2];
            for (int r = 0; r < NA_RB; r++) {
                acc[r][0] = na_vld(cr[r] + j0);
                acc[r][1] = na_vld(cr[r] + j0 + NA_VL);
            }
            for (int64_t k = 0; k < K; k++) {
                na_v b0 = na_vld(b + k * ldb + j0), b1 = na_vld(b + k * ldb + j0 + NA_VL);
                for (int r = 0; r < NA_RB; r++) {
                    NA_A x = ar[r][k * ak];
                    acc[r][0] += x * b0;
                    acc[r][1] += x * b1;
                }
            }
            for (int r = 0; r < NA_RB && i0 + r < m; r++) {
                na_vst(cr[r] + j0, acc[r][0]);
                na_vst(cr[r] + j0 + NA_VL, acc[r][1]);
            }
        }
    }
}

static void na_zero(NA_A *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = 0;
}

/* Scores of query row i against keys k0 .. k0+nk: add the mask, -inf where causal hides a key
 * and in the padding. */
static void na_mask(const na_p *p, NA_A *s, const NA_A *mrow, int64_t i, int64_t k0, int64_t nk) {
    if (mrow)
        for (int64_t j = 0; j < nk; j++) s[j] += mrow[(k0 + j) * p->mss];
    int64_t lim = nk;
    if (p->causal && i - k0 + 1 < lim) lim = i - k0 + 1 > 0 ? i - k0 + 1 : 0;
    for (int64_t j = lim; j < NA_BK; j++) s[j] = NA_NEG_INF;
}

/* z[j] = dscale where dropout keeps weight (b, i, k0 + j), else 0. */
static void na_keep(const na_p *p, NA_A *z, int64_t b, int64_t i, int64_t k0, int64_t nk) {
    uint64_t idx = ((uint64_t)b * (uint64_t)p->L + (uint64_t)i) * (uint64_t)p->S + (uint64_t)k0;
    philox4x32_ctr_t blk = philox_block_k(p->key, p->off + (idx >> 2));
    for (int64_t j = 0; j < nk; j++, idx++) {
        if (j && !(idx & 3u)) blk = philox_block_k(p->key, p->off + (idx >> 2));
        z[j] = (blk.v[idx & 3u] >> 8) >= p->thr ? p->dscale : (NA_A)0;
    }
}

static NA_A na_merge(NA_A *s) {
    for (int w = NA_LANES / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) s[j] += s[j + w];
    return s[0];
}

static const NA_A *na_mrow(const na_p *p, const NA_A *M, const int64_t *moff, int64_t b, int64_t i) {
    return M ? M + moff[b] + i * p->msl : NULL;
}

/* ---------------------------------------------------------------- forward */

/* The forward and the dQ pass hold score tiles transposed, st[j * NA_BQ + i] for key k0 + j and
 * query q0 + i, so the per-query statistics vectorise across queries. Add the mask and -inf
 * where causal hides a key. */
static void na_mask_t(const na_p *p, NA_A *st, const NA_A *mb, int64_t q0, int64_t nq, int64_t k0,
                      int64_t nk) {
    if (mb)
        for (int64_t i = 0; i < nq; i++) {
            const NA_A *mr = mb + (q0 + i) * p->msl + k0 * p->mss;
            for (int64_t j = 0; j < nk; j++) st[j * NA_BQ + i] += mr[j * p->mss];
        }
    if (p->causal)
        for (int64_t j = 0; j < nk; j++) {   /* query i sees key k0 + j when q0 + i >= k0 + j */
            int64_t hide = k0 + j - q0 < nq ? k0 + j - q0 : nq;
            for (int64_t i = 0; i < hide; i++) st[j * NA_BQ + i] = NA_NEG_INF;
        }
}

/* The online-softmax step over a transposed tile of nk keys: st becomes the weights
 * exp(s - m) (0 in a column whose scores so far are all -inf), m and l the running max and
 * sum per query, alpha the factor each query's accumulator must be scaled by first. */
static void na_online_t(NA_A *st, int64_t nk, NA_A *m, NA_A *l, NA_A *alpha) {
    NA_A mx[NA_BQ], sh[NA_BQ], sum[NA_BQ];
    int dead[NA_BQ];
    for (int i = 0; i < NA_BQ; i++) { mx[i] = m[i]; sum[i] = 0; }
    for (int64_t j = 0; j < nk; j++)   /* a NaN is skipped here but poisons the sum */
        for (int i = 0; i < NA_BQ; i++) mx[i] = st[j * NA_BQ + i] > mx[i] ? st[j * NA_BQ + i] : mx[i];
    /* The dead flag is kept apart from the shift: a real maximum of +inf must give
     * exp(inf - inf) = NaN (as the composed path and the CUDA kernel do), not a dead row. */
    for (int i = 0; i < NA_BQ; i++) {
        dead[i] = mx[i] == NA_NEG_INF;
        alpha[i] = dead[i] ? (NA_A)1 : SX_EXP(m[i] - mx[i]);
        sh[i] = dead[i] ? NA_POS_INF : mx[i];   /* exp(s - inf) = 0 for the dead */
    }
    for (int64_t j = 0; j < nk; j++)
        for (int i = 0; i < NA_BQ; i++) {
            NA_A e = SX_EXP(st[j * NA_BQ + i] - sh[i]);
            st[j * NA_BQ + i] = e;
            sum[i] += e;
        }
    for (int i = 0; i < NA_BQ; i++) {
        l[i] = l[i] * alpha[i] + sum[i];
        if (!dead[i]) m[i] = mx[i];
    }
}

/* Dropout over a transposed tile: st[j][i] *= Z(b, q0 + i, k0 + j). */
static void na_drop_t(const na_p *p, NA_A *st, int64_t b, int64_t q0, int64_t nq, int64_t k0,
                      int64_t nk, NA_A *z) {
    for (int64_t i = 0; i < nq; i++) {
        na_keep(p, z, b, q0 + i, k0, nk);
        for (int64_t j = 0; j < nk; j++) st[j * NA_BQ + i] *= z[j];
    }
}

/* One work item: query rows q0 .. q0+nq of batch b. w: scratch of na_fwd_scratch values. */
static void na_fwd_item(const na_p *p, const NA_T *q, const NA_T *k, const NA_T *v, const NA_A *M,
                        const int64_t *moff, NA_T *O, NA_A *LSE, int64_t b, int64_t q0,
                        int64_t nq, NA_A *w) {
    const int64_t E = p->E, Ev = p->Ev, Evp = na_pad(Ev);
    NA_A *qt = w, *kb = qt + E * NA_BQ, *vb = kb + NA_BK * E, *acc = vb + NA_BK * Evp;
    NA_A *st = acc + NA_BQ * Evp, *m = st + NA_BK * NA_BQ, *l = m + NA_BQ, *al = l + NA_BQ;
    NA_A *z = al + NA_BQ;
    const NA_A *mb = M ? M + moff[b] : NULL;
    na_load_t(qt, NA_BQ, q, p->qs, q0, nq, E, p->scale);
    for (int i = 0; i < NA_BQ; i++) { m[i] = NA_NEG_INF; l[i] = 0; }
    na_zero(acc, NA_BQ * Evp);
    int64_t kend = p->causal && q0 + nq < p->S ? q0 + nq : p->S;
    for (int64_t k0 = 0; k0 < kend; k0 += NA_BK) {
        int64_t nk = kend - k0 < NA_BK ? kend - k0 : NA_BK;
        na_load_rows(kb, E, k, p->ks, k0, nk, E, (NA_A)1);
        na_load_rows(vb, Evp, v, p->vs, k0, nk, Ev, (NA_A)1);
        na_zero(st, nk * NA_BQ);
        na_mm(st, NA_BQ, kb, E, 1, qt, NA_BQ, nk, NA_BQ, E);
        na_mask_t(p, st, mb, q0, nq, k0, nk);
        na_online_t(st, nk, m, l, al);
        if (p->thr) na_drop_t(p, st, b, q0, nq, k0, nk, z);
        for (int64_t i = 0; i < nq; i++)
            if (al[i] != (NA_A)1)
                for (int64_t e = 0; e < Evp; e++) acc[i * Evp + e] *= al[i];
        na_mm(acc, Evp, st, 1, NA_BQ, vb, Evp, nq, Evp, nk);   /* acc += P v */
    }
    for (int64_t r = 0; r < nq; r++) {
        int64_t row = b * p->L + q0 + r;
        NA_T *o = O + row * Ev;
        int dead = m[r] == NA_NEG_INF;
        NA_A f = dead ? (NA_A)0 : (NA_A)1 / l[r];   /* dropout's 1/(1-p) is in the weights */
        for (int64_t e = 0; e < Ev; e++) o[e] = NA_ST(dead ? (NA_A)0 : acc[r * Evp + e] * f);
        LSE[row] = dead ? NA_NEG_INF : m[r] + SX_LOG(l[r]);
    }
}

static int64_t na_fwd_scratch(int64_t E, int64_t Ev) {
    int64_t Evp = na_pad(Ev);
    return NA_BQ * E + E * NA_BK + NA_BK * Evp + NA_BQ * Evp + NA_BQ * NA_BK + 3 * NA_BQ + NA_BK;
}

int NA_FN(sdpa_fwd)(const int64_t *meta, intptr_t pq, intptr_t pk, intptr_t pv, intptr_t pm,
                     intptr_t pqo, intptr_t pko, intptr_t pvo, intptr_t pmo, intptr_t po,
                     intptr_t plse, double scale, double dscale, int nthreads) {
    na_p p = na_params(meta, scale, dscale);
    const NA_T *Q = (const NA_T *)pq, *K = (const NA_T *)pk, *V = (const NA_T *)pv;
    const int64_t *qo = (const int64_t *)pqo, *ko = (const int64_t *)pko, *vo = (const int64_t *)pvo;
    const NA_A *M = (const NA_A *)pm;
    int64_t nqb = (p.L + NA_BQ - 1) / NA_BQ, items = p.B * nqb;
    int nt = na_threads(p.B * p.L * p.S, nthreads), fail = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        NA_A *w = (NA_A *)malloc(sizeof(NA_A) * na_fwd_scratch(p.E, p.Ev));
        if (!w) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < items; it++) {
            int64_t b = it / nqb, q0 = (it % nqb) * NA_BQ;
            int64_t nq = p.L - q0 < NA_BQ ? p.L - q0 : NA_BQ;
            if (w) na_fwd_item(&p, Q + qo[b], K + ko[b], V + vo[b], M, (const int64_t *)pmo,
                               (NA_T *)po, (NA_A *)plse, b, q0, nq, w);
        }
        free(w);
    }
    return fail;   /* 1: a thread's scratch could not be allocated (its items are not written) */
}

/* ---------------------------------------------------------------- backward */

typedef struct {
    const NA_T *Q, *K, *V, *dO;
    const int64_t *qo, *ko, *vo, *mo;
    const NA_A *M, *LSE, *D;
    NA_T *dQ, *dK, *dV;
} na_bwd_io;

/* Query rows i0 .. i0+nr against the key tile k0 .. k0+nk: from the scores s = (q * scale) k^T
 * and dp = dO v^T (nr x NA_BK tiles), recompute P = exp(s + mask - lse) and leave pz = P * Z in
 * s (for dV) and ds = P * (dP * Z - D) in dp (for dK and dQ); rows that add nothing (fully
 * masked, or hidden by causal) become zeros. */
static void na_bwd_tile(const na_p *p, const na_bwd_io *io, int64_t b, int64_t i0, int64_t nr,
                        int64_t k0, int64_t nk, NA_A *s, NA_A *dp, NA_A *z) {
    for (int64_t r = 0; r < nr; r++) {
        int64_t i = i0 + r, row = b * p->L + i;
        NA_A *sr = s + r * NA_BK, *dr = dp + r * NA_BK, lse = io->LSE[row], D = io->D[row];
        if (lse == NA_NEG_INF || (p->causal && i < k0)) {
            for (int j = 0; j < NA_BK; j++) sr[j] = dr[j] = 0;
            continue;
        }
        na_mask(p, sr, na_mrow(p, io->M, io->mo, b, i), i, k0, nk);
        for (int j = 0; j < NA_BK; j++) sr[j] = SX_EXP(sr[j] - lse);   /* 0 past nk */
        if (p->thr) {
            na_keep(p, z, b, i, k0, nk);
            for (int64_t j = 0; j < nk; j++) { dr[j] = sr[j] * (dr[j] * z[j] - D); sr[j] *= z[j]; }
        } else {
            for (int64_t j = 0; j < nk; j++) dr[j] = sr[j] * (dr[j] - D);
        }
        for (int64_t j = nk; j < NA_BK; j++) dr[j] = 0;
    }
}

/* dK, dV of keys k0 .. k0+nk of batch b: every query row, in blocks of NA_BQ, in order. */
static void na_dkv_item(const na_p *p, const na_bwd_io *io, int64_t b, int64_t k0, int64_t nk,
                        NA_A *w) {
    const int64_t E = p->E, Ev = p->Ev, L = p->L, Ep = na_pad(E), Evp = na_pad(Ev);
    NA_A *kt = w, *vt = kt + E * NA_BK, *dk = vt + Ev * NA_BK, *dv = dk + NA_BK * Ep;
    NA_A *qb = dv + NA_BK * Evp, *dob = qb + NA_BQ * Ep, *s = dob + NA_BQ * Evp;
    NA_A *dp = s + NA_BQ * NA_BK, *z = dp + NA_BQ * NA_BK;
    const NA_T *q = io->Q + io->qo[b];
    na_load_cols(kt, io->K + io->ko[b], p->ks, k0, nk, E);
    na_load_cols(vt, io->V + io->vo[b], p->vs, k0, nk, Ev);
    na_zero(dk, NA_BK * Ep);
    na_zero(dv, NA_BK * Evp);
    for (int64_t i0 = p->causal ? k0 : 0; i0 < L; i0 += NA_BQ) {
        int64_t nr = L - i0 < NA_BQ ? L - i0 : NA_BQ;
        na_load_rows(qb, Ep, q, p->qs, i0, nr, E, p->scale);
        na_load_rows(dob, Evp, io->dO + (b * L + i0) * Ev, Ev, 0, nr, Ev, (NA_A)1);
        na_zero(s, nr * NA_BK);
        na_zero(dp, nr * NA_BK);
        na_mm(s, NA_BK, qb, Ep, 1, kt, NA_BK, nr, NA_BK, E);
        na_mm(dp, NA_BK, dob, Evp, 1, vt, NA_BK, nr, NA_BK, Ev);
        na_bwd_tile(p, io, b, i0, nr, k0, nk, s, dp, z);
        na_mm(dv, Evp, s, 1, NA_BK, dob, Evp, nk, Evp, nr);   /* dV += (P * Z)^T dO */
        na_mm(dk, Ep, dp, 1, NA_BK, qb, Ep, nk, Ep, nr);      /* dK += dS^T (q * scale) */
    }
    for (int64_t j = 0; j < nk; j++) {
        NA_T *dkr = io->dK + (b * p->S + k0 + j) * E, *dvr = io->dV + (b * p->S + k0 + j) * Ev;
        for (int64_t e = 0; e < E; e++) dkr[e] = NA_ST(dk[j * Ep + e]);
        for (int64_t e = 0; e < Ev; e++) dvr[e] = NA_ST(dv[j * Evp + e]);
    }
}

/* dQ of query rows q0 .. q0+nq of batch b: every key tile, in order, the tiles transposed as
 * in the forward. */
static void na_dq_item(const na_p *p, const na_bwd_io *io, int64_t b, int64_t q0, int64_t nq,
                       NA_A *w) {
    const int64_t E = p->E, Ev = p->Ev, L = p->L, Ep = na_pad(E);
    NA_A *qt = w, *dot = qt + E * NA_BQ, *kb = dot + Ev * NA_BQ, *vb = kb + NA_BK * Ep;
    NA_A *st = vb + NA_BK * Ev, *dpt = st + NA_BK * NA_BQ, *dq = dpt + NA_BK * NA_BQ;
    NA_A *lse = dq + NA_BQ * Ep, *D = lse + NA_BQ, *z = D + NA_BQ;
    const NA_T *k = io->K + io->ko[b], *v = io->V + io->vo[b];
    const NA_A *mb = io->M ? io->M + io->mo[b] : NULL;
    na_load_t(qt, NA_BQ, io->Q + io->qo[b], p->qs, q0, nq, E, p->scale);
    na_load_t(dot, NA_BQ, io->dO + b * L * Ev, Ev, q0, nq, Ev, (NA_A)1);
    for (int64_t i = 0; i < NA_BQ; i++) {   /* a fully masked row: lse +inf makes its P 0 */
        NA_A x = i < nq ? io->LSE[b * L + q0 + i] : NA_NEG_INF;
        lse[i] = x == NA_NEG_INF ? NA_POS_INF : x;
        D[i] = i < nq ? io->D[b * L + q0 + i] : 0;
    }
    na_zero(dq, NA_BQ * Ep);
    int64_t kend = p->causal && q0 + nq < p->S ? q0 + nq : p->S;
    for (int64_t k0 = 0; k0 < kend; k0 += NA_BK) {
        int64_t nk = kend - k0 < NA_BK ? kend - k0 : NA_BK;
        na_load_rows(kb, Ep, k, p->ks, k0, nk, E, (NA_A)1);
        na_load_rows(vb, Ev, v, p->vs, k0, nk, Ev, (NA_A)1);
        na_zero(st, nk * NA_BQ);
        na_zero(dpt, nk * NA_BQ);
        na_mm(st, NA_BQ, kb, Ep, 1, qt, NA_BQ, nk, NA_BQ, E);
        na_mm(dpt, NA_BQ, vb, Ev, 1, dot, NA_BQ, nk, NA_BQ, Ev);
        na_mask_t(p, st, mb, q0, nq, k0, nk);
        for (int64_t j = 0; j < nk; j++)
            for (int i = 0; i < NA_BQ; i++) st[j * NA_BQ + i] = SX_EXP(st[j * NA_BQ + i] - lse[i]);
        if (p->thr) {
            for (int64_t i = 0; i < nq; i++) {
                na_keep(p, z, b, q0 + i, k0, nk);
                for (int64_t j = 0; j < nk; j++) {
                    NA_A *d = dpt + j * NA_BQ + i;
                    *d = st[j * NA_BQ + i] * (*d * z[j] - D[i]);
                }
            }
        } else {
            for (int64_t j = 0; j < nk; j++)
                for (int i = 0; i < NA_BQ; i++)
                    dpt[j * NA_BQ + i] = st[j * NA_BQ + i] * (dpt[j * NA_BQ + i] - D[i]);
        }
        na_mm(dq, Ep, dpt, 1, NA_BQ, kb, Ep, nq, Ep, nk);   /* dQ += dS k (times scale) */
    }
    for (int64_t r = 0; r < nq; r++) {
        NA_T *o = io->dQ + (b * L + q0 + r) * E;
        for (int64_t e = 0; e < E; e++) o[e] = NA_ST(dq[r * Ep + e] * p->scale);
    }
}

/* dq, dk, dv (contiguous (B, L, E), (B, S, E), (B, S, Ev)) from do (contiguous (B, L, Ev)), o
 * and lse of the forward; D: scratch of B * L compute-type values. */
int NA_FN(sdpa_bwd)(const int64_t *meta, intptr_t pq, intptr_t pk, intptr_t pv, intptr_t pm,
                     intptr_t pqo, intptr_t pko, intptr_t pvo, intptr_t pmo, intptr_t po,
                     intptr_t plse, intptr_t pdo, intptr_t pD, intptr_t pdq, intptr_t pdk,
                     intptr_t pdv, double scale, double dscale, int nthreads) {
    na_p p = na_params(meta, scale, dscale);
    na_bwd_io io = {(const NA_T *)pq, (const NA_T *)pk, (const NA_T *)pv, (const NA_T *)pdo,
                    (const int64_t *)pqo, (const int64_t *)pko, (const int64_t *)pvo,
                    (const int64_t *)pmo, (const NA_A *)pm, (const NA_A *)plse, (const NA_A *)pD,
                    (NA_T *)pdq, (NA_T *)pdk, (NA_T *)pdv};
    const NA_T *O = (const NA_T *)po;
    NA_A *D = (NA_A *)pD;
    int64_t rows = p.B * p.L, Ev = p.Ev, E = p.E;
    int nt = na_threads(rows * p.S, nthreads);
    int64_t nkb = (p.S + NA_BK - 1) / NA_BK, nqb = (p.L + NA_BQ - 1) / NA_BQ;
    int64_t Ep = na_pad(E), Evp = na_pad(Ev), tiles = 2 * NA_BQ * NA_BK + NA_BK;
    int64_t wk = tiles + (E + Ev) * NA_BK + NA_BK * (Ep + Evp) + NA_BQ * (Ep + Evp);
    int64_t wq = tiles + (E + Ev) * NA_BQ + NA_BK * (Ep + Ev) + NA_BQ * Ep + 2 * NA_BQ;
    int fail = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        NA_A *w = (NA_A *)malloc(sizeof(NA_A) * (wk > wq ? wk : wq));
        if (!w) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            NA_A a[NA_LANES] = {0};
            const NA_T *x = O + r * Ev, *g = io.dO + r * Ev;
            int64_t e = 0;
            for (; e + NA_LANES <= Ev; e += NA_LANES)
                for (int l = 0; l < NA_LANES; l++) a[l] += NA_LD(x[e + l]) * NA_LD(g[e + l]);
            for (int l = 0; e < Ev; e++, l++) a[l] += NA_LD(x[e]) * NA_LD(g[e]);
            D[r] = na_merge(a);
        }
        /* the implicit barrier: D is complete before either pass reads it */
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < p.B * nkb; it++) {
            int64_t b = it / nkb, k0 = (it % nkb) * NA_BK;
            if (w) na_dkv_item(&p, &io, b, k0, p.S - k0 < NA_BK ? p.S - k0 : NA_BK, w);
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < p.B * nqb; it++) {
            int64_t b = it / nqb, q0 = (it % nqb) * NA_BQ;
            if (w) na_dq_item(&p, &io, b, q0, p.L - q0 < NA_BQ ? p.L - q0 : NA_BQ, w);
        }
        free(w);
    }
    return fail;
}
