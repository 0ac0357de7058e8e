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
#define NA_LANES 8
#define NA_NEG_INF (-(NA_A)INFINITY)

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
 * (n x w, row-major). */
static void na_load_rows(NA_A *buf, const NA_T *base, int64_t rs, int64_t r0, int64_t n,
                         int64_t w, NA_A mul) {
    for (int64_t r = 0; r < n; r++) {
        const NA_T *x = base + (r0 + r) * rs;
        for (int64_t e = 0; e < w; e++) buf[r * w + e] = NA_LD(x[e]) * mul;
    }
}

/* Keys k0 .. k0+n transposed into buf (w x NA_BK), columns n .. NA_BK zero. */
static void na_load_cols(NA_A *buf, const NA_T *base, int64_t rs, int64_t k0, int64_t n,
                         int64_t w) {
    for (int64_t e = 0; e < w; e++)
        for (int64_t j = n; j < NA_BK; j++) buf[e * NA_BK + j] = 0;
    for (int64_t j = 0; j < n; j++) {
        const NA_T *x = base + (k0 + j) * rs;
        for (int64_t e = 0; e < w; e++) buf[e * NA_BK + j] = NA_LD(x[e]);
    }
}

/* out[j] = sum_e a[e] * bt[e][j] for the NA_BK columns of bt (vectorised over j). */
static void na_rowdot(NA_A *out, const NA_A *a, const NA_A *bt, int64_t w) {
    for (int j = 0; j < NA_BK; j++) out[j] = 0;
    for (int64_t e = 0; e < w; e++) {
        NA_A ae = a[e];
        const NA_A *b = bt + e * NA_BK;
        for (int j = 0; j < NA_BK; j++) out[j] += ae * b[j];
    }
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

/* s[j] = exp(s[j] - m) over the tile; returns their sum (fixed lane order). */
static NA_A na_exp_sum(NA_A *s, NA_A m) {
    NA_A acc[NA_LANES] = {0};
    for (int j0 = 0; j0 < NA_BK; j0 += NA_LANES)
        for (int l = 0; l < NA_LANES; l++) {
            NA_A e = SX_EXP(s[j0 + l] - m);
            s[j0 + l] = e;
            acc[l] += e;
        }
    return na_merge(acc);
}

static const NA_A *na_mrow(const na_p *p, const NA_A *M, const int64_t *moff, int64_t b, int64_t i) {
    return M ? M + moff[b] + i * p->msl : NULL;
}

/* ---------------------------------------------------------------- forward */

/* One work item: query rows q0 .. q0+nq of batch b. w: scratch of na_fwd_scratch floats. */
static void na_fwd_item(const na_p *p, const NA_T *q, const NA_T *k, const NA_T *v, const NA_A *M,
                        const int64_t *moff, NA_T *O, NA_A *LSE, int64_t b, int64_t q0,
                        int64_t nq, NA_A *w) {
    const int64_t E = p->E, Ev = p->Ev;
    NA_A *qb = w, *kt = qb + NA_BQ * E, *vb = kt + E * NA_BK, *acc = vb + NA_BK * Ev;
    NA_A *m = acc + NA_BQ * Ev, *l = m + NA_BQ, *s = l + NA_BQ, *z = s + NA_BK;
    na_load_rows(qb, q, p->qs, q0, nq, E, p->scale);
    for (int64_t r = 0; r < nq; r++) { m[r] = NA_NEG_INF; l[r] = 0; }
    for (int64_t r = 0; r < nq * Ev; r++) acc[r] = 0;
    int64_t kend = p->causal && q0 + nq < p->S ? q0 + nq : p->S;
    for (int64_t k0 = 0; k0 < kend; k0 += NA_BK) {
        int64_t nk = kend - k0 < NA_BK ? kend - k0 : NA_BK;
        na_load_cols(kt, k, p->ks, k0, nk, E);
        na_load_rows(vb, v, p->vs, k0, nk, Ev, (NA_A)1);
        for (int64_t r = 0; r < nq; r++) {
            int64_t i = q0 + r;
            na_rowdot(s, qb + r * E, kt, E);
            na_mask(p, s, na_mrow(p, M, moff, b, i), i, k0, nk);
            NA_A mx = NA_NEG_INF;
            for (int j = 0; j < NA_BK; j++) mx = s[j] > mx ? s[j] : mx;
            NA_A mnew = mx > m[r] ? mx : m[r];
            if (mnew == NA_NEG_INF) continue;      /* every score so far is -inf */
            NA_A alpha = SX_EXP(m[r] - mnew);
            l[r] = l[r] * alpha + na_exp_sum(s, mnew);
            m[r] = mnew;
            if (p->thr) {
                na_keep(p, z, b, i, k0, nk);
                for (int64_t j = 0; j < nk; j++) s[j] *= z[j];
            }
            NA_A *a = acc + r * Ev;
            if (alpha != (NA_A)1)
                for (int64_t e = 0; e < Ev; e++) a[e] *= alpha;
            for (int64_t j = 0; j < nk; j++) {
                NA_A pj = s[j];
                const NA_A *vj = vb + j * Ev;
                if (pj != (NA_A)0)
                    for (int64_t e = 0; e < Ev; e++) a[e] += pj * vj[e];
            }
        }
    }
    for (int64_t r = 0; r < nq; r++) {
        int64_t row = b * p->L + q0 + r;
        NA_T *o = O + row * Ev;
        int dead = m[r] == NA_NEG_INF;
        NA_A f = dead ? (NA_A)0 : (NA_A)1 / l[r];   /* dropout's 1/(1-p) is in the weights */
        for (int64_t e = 0; e < Ev; e++) o[e] = NA_ST(dead ? (NA_A)0 : acc[r * Ev + e] * f);
        LSE[row] = dead ? NA_NEG_INF : m[r] + SX_LOG(l[r]);
    }
}

static int64_t na_fwd_scratch(int64_t E, int64_t Ev) {
    return NA_BQ * E + E * NA_BK + NA_BK * Ev + NA_BQ * Ev + 2 * NA_BQ + 2 * NA_BK;
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

/* Recompute, for query row i (qr: q * scale, dor: dO, both compute type) against the key tile
 * k0 .. k0+nk (kt, vt transposed): pz = P * Z (the dropped weights, for dV) and ds = P * (dP * Z
 * - D) (for dK and dQ), where P = exp(s - lse). Returns 0 when the row adds nothing. */
static int na_bwd_row(const na_p *p, const NA_A *qr, const NA_A *dor, const NA_A *kt,
                      const NA_A *vt, const NA_A *mrow, NA_A lse, NA_A D, int64_t b, int64_t i,
                      int64_t k0, int64_t nk, NA_A *pz, NA_A *ds) {
    if (lse == NA_NEG_INF) return 0;                 /* a fully masked row: zero gradients */
    if (p->causal && i < k0) return 0;
    na_rowdot(pz, qr, kt, p->E);
    na_mask(p, pz, mrow, i, k0, nk);
    for (int j = 0; j < NA_BK; j++) pz[j] = SX_EXP(pz[j] - lse);
    na_rowdot(ds, dor, vt, p->Ev);
    if (p->thr) {
        NA_A z[NA_BK];
        na_keep(p, z, b, i, k0, nk);
        for (int64_t j = 0; j < nk; j++) { ds[j] = pz[j] * (ds[j] * z[j] - D); pz[j] *= z[j]; }
    } else {
        for (int64_t j = 0; j < nk; j++) ds[j] = pz[j] * (ds[j] - D);
    }
    return 1;
}

typedef struct {
    const NA_T *Q, *K, *V, *dO;
    const int64_t *qo, *ko, *vo, *mo;
    const NA_A *M, *LSE, *D;
    NA_T *dQ, *dK, *dV;
} na_bwd_io;

/* dK, dV of keys k0 .. k0+nk of batch b: every query row, in order. */
static void na_dkv_item(const na_p *p, const na_bwd_io *io, int64_t b, int64_t k0, int64_t nk,
                        NA_A *w) {
    const int64_t E = p->E, Ev = p->Ev, L = p->L;
    NA_A *kt = w, *vt = kt + E * NA_BK, *dk = vt + Ev * NA_BK, *dv = dk + NA_BK * E;
    NA_A *qr = dv + NA_BK * Ev, *dor = qr + E, *pz = dor + Ev, *ds = pz + NA_BK;
    const NA_T *q = io->Q + io->qo[b], *k = io->K + io->ko[b], *v = io->V + io->vo[b];
    na_load_cols(kt, k, p->ks, k0, nk, E);
    na_load_cols(vt, v, p->vs, k0, nk, Ev);
    for (int64_t r = 0; r < NA_BK * E; r++) dk[r] = 0;
    for (int64_t r = 0; r < NA_BK * Ev; r++) dv[r] = 0;
    for (int64_t i = p->causal ? k0 : 0; i < L; i++) {
        int64_t row = b * L + i;
        na_load_rows(qr, q, p->qs, i, 1, E, p->scale);
        na_load_rows(dor, io->dO + row * Ev, Ev, 0, 1, Ev, (NA_A)1);
        if (!na_bwd_row(p, qr, dor, kt, vt, na_mrow(p, io->M, io->mo, b, i), io->LSE[row],
                        io->D[row], b, i, k0, nk, pz, ds))
            continue;
        for (int64_t j = 0; j < nk; j++) {
            NA_A a = pz[j], c = ds[j];
            NA_A *dvj = dv + j * Ev, *dkj = dk + j * E;
            for (int64_t e = 0; e < Ev; e++) dvj[e] += a * dor[e];
            for (int64_t e = 0; e < E; e++) dkj[e] += c * qr[e];
        }
    }
    for (int64_t j = 0; j < nk; j++) {
        NA_T *dkr = io->dK + (b * p->S + k0 + j) * E, *dvr = io->dV + (b * p->S + k0 + j) * Ev;
        for (int64_t e = 0; e < E; e++) dkr[e] = NA_ST(dk[j * E + e]);
        for (int64_t e = 0; e < Ev; e++) dvr[e] = NA_ST(dv[j * Ev + e]);
    }
}

/* dQ of query rows q0 .. q0+nq of batch b: every key tile, in order. */
static void na_dq_item(const na_p *p, const na_bwd_io *io, int64_t b, int64_t q0, int64_t nq,
                       NA_A *w) {
    const int64_t E = p->E, Ev = p->Ev, L = p->L;
    NA_A *kt = w, *vt = kt + E * NA_BK, *kb = vt + Ev * NA_BK, *qb = kb + NA_BK * E;
    NA_A *dob = qb + NA_BQ * E, *dq = dob + NA_BQ * Ev, *pz = dq + NA_BQ * E, *ds = pz + NA_BK;
    const NA_T *q = io->Q + io->qo[b], *k = io->K + io->ko[b], *v = io->V + io->vo[b];
    na_load_rows(qb, q, p->qs, q0, nq, E, p->scale);
    na_load_rows(dob, io->dO + (b * L + q0) * Ev, Ev, 0, nq, Ev, (NA_A)1);
    for (int64_t r = 0; r < nq * E; r++) dq[r] = 0;
    int64_t kend = p->causal && q0 + nq < p->S ? q0 + nq : p->S;
    for (int64_t k0 = 0; k0 < kend; k0 += NA_BK) {
        int64_t nk = kend - k0 < NA_BK ? kend - k0 : NA_BK;
        na_load_cols(kt, k, p->ks, k0, nk, E);
        na_load_cols(vt, v, p->vs, k0, nk, Ev);
        na_load_rows(kb, k, p->ks, k0, nk, E, (NA_A)1);
        for (int64_t r = 0; r < nq; r++) {
            int64_t i = q0 + r, row = b * L + i;
            if (!na_bwd_row(p, qb + r * E, dob + r * Ev, kt, vt, na_mrow(p, io->M, io->mo, b, i),
                            io->LSE[row], io->D[row], b, i, k0, nk, pz, ds))
                continue;
            NA_A *d = dq + r * E;
            for (int64_t j = 0; j < nk; j++) {
                NA_A c = ds[j];
                const NA_A *kj = kb + j * E;
                for (int64_t e = 0; e < E; e++) d[e] += c * kj[e];
            }
        }
    }
    for (int64_t r = 0; r < nq; r++) {
        NA_T *o = io->dQ + (b * L + q0 + r) * E;
        for (int64_t e = 0; e < E; e++) o[e] = NA_ST(dq[r * E + e] * p->scale);
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
    int64_t wk = 2 * (E + Ev) * NA_BK + E + Ev + 2 * NA_BK;
    int64_t wq = (E + Ev) * NA_BK + NA_BK * E + NA_BQ * (2 * E + Ev) + 2 * NA_BK;
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
