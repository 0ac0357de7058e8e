/* Reduction and scan templates.
 *
 * A reduction sees the input as kept dims x reduced dims (both coalesced by the caller):
 *   meta = [nk, nr, kshape[nk], kstride_in[nk], kstride_out[nk], rshape[nr], rstride_in[nr]]
 * with byte strides. Determinism: the reduced index space of every output is cut into
 * fixed chunks of SX_RCHUNK elements; a chunk sums with SX_RW lane accumulators (a
 * vectorisable shape), each folding its blocks of SX_RFB / SX_RW elements apart and then
 * the blocks' partials (a lane's rounding grows with 32 + 8 terms, not 256: a float32 sum of
 * 2e7 x 0.1 was 2.4e-6 off, NumPy's pairwise sum 1e-7), lanes merged by a fixed tree, and
 * chunk partials pairwise. None of
 * this depends on the thread count, so results are bitwise identical for every run.
 * When the kept dims are the contiguous ones (e.g. summing the rows of a C-ordered
 * matrix) an "outer" loop accumulates a block of outputs at once instead. */
#include "common.h"

#define SX_RCHUNK 4096
#define SX_RW 16
#define SX_OUTER_BLOCK 16384  /* outputs accumulated together: each input row streams once (acc in L2) */

/* The combines (SX_ADD, SX_MAXF, SX_ARGMAXF, ...) and the identities LO_sfx / HI_sfx are the
 * CUDA reductions' own (cuda_src/scalar/reduce_ops.h). */
#include "scalar/reduce_ops.h"
/* The same selections as reduce_ops.h's NaN-propagating max / min (b when b is NaN or
 * better, else a: bit for bit the same results), written as nested selects: gcc compiles
 * these to a compare and a blend, the OR of the two compares to branches (4x slower). */
#undef SX_MAXF
#undef SX_MINF
#undef SX_NANMAXF
#undef SX_NANMINF
#define SX_MAXF(a, b) ((b) != (b) ? (b) : (b) > (a) ? (b) : (a))
#define SX_MINF(a, b) ((b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define SX_NANMAXF(a, b) ((a) != (a) ? (b) : (b) > (a) ? (b) : (a))
#define SX_NANMINF(a, b) ((a) != (a) ? (b) : (b) < (a) ? (b) : (a))

/* Vector folds for max / min / nanmax / nanmin (and the arg-reductions' best value): gcc
 * leaves the lane loops of these selects scalar, so kernels.py instantiates them and argmax /
 * argmin of the types below with SX_VFOLD set to one of these (a float32 max took 35x NumPy's
 * time). sx_vfold_<op>_<sfx>(lanes, x, n, &k) folds the SX_RW-element groups of x from k on
 * into lanes[SX_RW] (lane j gets x[g * SX_RW + j]) and leaves k past them. The fold takes v
 * exactly when the scalar one does (TAKE: max / min, v NaN or v OP lane; nanmax / nanmin, v OP
 * lane or the lane NaN), and it is a selection: a run of values folds to its last NaN, else
 * to its first best value (nanmax / nanmin: to its first best number, else to its last NaN);
 * folding contiguous parts of a lane's run and then the parts in order selects the same
 * element. So the groups are cut into four contiguous parts folded side by side (four
 * independent chains: one chain is bound by the compare-and-blend latency) and merged in
 * order: bit for bit the scalar fold's result. */
/* The vectors are the machine's own width (SX_VB bytes), an SX_RW-lane group being SX_NV(T) of
 * them side by side: gcc lowers generic vectors wider than the machine's (64 bytes on AVX2)
 * compare by compare, which made the fold scalar (a float32 max 40x NumPy's time on AVX2). */
#if defined(__AVX512F__)
#define SX_VB 64
#elif defined(__AVX__)
#define SX_VB 32
#else
#define SX_VB 16
#endif
#define SX_NV(T) ((int)(SX_RW * sizeof(T) / SX_VB))
#define SX_TAKE_NAN(v, acc, OP) (((v) != (v)) | ((v) OP (acc)))      /* max / min: NaN wins */
#define SX_TAKE_NUM(v, acc, OP) (((v) OP (acc)) | ((acc) != (acc)))  /* nanmax / nanmin */
#define SX_VTAKE(acc, v, OP, TAKE) do {                                                    \
        vi take_ = TAKE(v, acc, OP);                                                      \
        acc = (vt)(((vi)(v) & take_) | ((vi)(acc) & ~take_)); } while (0)
/* fold the group at x + o into the lanes l (SX_NV vectors) */
#define SX_VTAKE_GROUP(l, x, o, OP, TAKE) do {                                             \
        for (int u_ = 0; u_ < NV; u_++) {                                                 \
            memcpy(&v, (x) + (o) + u_ * VL, sizeof v); SX_VTAKE((l)[u_], v, OP, TAKE); } } while (0)
#define SX_VFOLD_DEF(NAME, T, IT, OP, TAKE)                                                \
static inline void NAME(T *lanes, const T *x, int64_t n, int64_t *kp) {                   \
    typedef T vt __attribute__((vector_size(SX_VB)));                                    \
    typedef IT vi __attribute__((vector_size(SX_VB)));                                   \
    enum { NV = SX_NV(T), VL = SX_VB / sizeof(T) };                                       \
    int64_t k = *kp, groups = (n - k) / SX_RW;                                            \
    vt l0[NV], v;                                                                         \
    memcpy(l0, lanes, sizeof l0);                                                         \
    if (groups >= 8) {                                                                    \
        int64_t q = groups / 4, s1 = k + q * SX_RW, s2 = s1 + q * SX_RW, s3 = s2 + q * SX_RW; \
        vt l1[NV], l2[NV], l3[NV];   /* each part starts at its own first group */        \
        memcpy(l1, x + s1, sizeof l1); memcpy(l2, x + s2, sizeof l2);                     \
        memcpy(l3, x + s3, sizeof l3);                                                    \
        for (int64_t g = 0; g < q; g++) {                                                 \
            int64_t o = g * SX_RW;                                                        \
            SX_VTAKE_GROUP(l0, x + k, o, OP, TAKE);                                       \
            if (g) { SX_VTAKE_GROUP(l1, x + s1, o, OP, TAKE);                             \
                     SX_VTAKE_GROUP(l2, x + s2, o, OP, TAKE);                             \
                     SX_VTAKE_GROUP(l3, x + s3, o, OP, TAKE); }                           \
        }                                                                                 \
        for (int64_t o = s3 + q * SX_RW; o + SX_RW <= n; o += SX_RW)                      \
            SX_VTAKE_GROUP(l3, x, o, OP, TAKE);                                           \
        for (int u = 0; u < NV; u++) {                                                    \
            SX_VTAKE(l0[u], l1[u], OP, TAKE); SX_VTAKE(l0[u], l2[u], OP, TAKE);           \
            SX_VTAKE(l0[u], l3[u], OP, TAKE); }                                           \
        k += groups * SX_RW;                                                              \
    }                                                                                     \
    for (; k + SX_RW <= n; k += SX_RW) SX_VTAKE_GROUP(l0, x, k, OP, TAKE);                \
    memcpy(lanes, l0, sizeof l0); *kp = k;                                                \
}
SX_VFOLD_DEF(sx_vfold_max_f32, float, int32_t, >, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_min_f32, float, int32_t, <, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_max_f64, double, int64_t, >, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_min_f64, double, int64_t, <, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_max_i32, int32_t, int32_t, >, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_min_i32, int32_t, int32_t, <, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_max_i64, int64_t, int64_t, >, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_min_i64, int64_t, int64_t, <, SX_TAKE_NAN)
SX_VFOLD_DEF(sx_vfold_nanmax_f32, float, int32_t, >, SX_TAKE_NUM)
SX_VFOLD_DEF(sx_vfold_nanmin_f32, float, int32_t, <, SX_TAKE_NUM)
SX_VFOLD_DEF(sx_vfold_nanmax_f64, double, int64_t, >, SX_TAKE_NUM)
SX_VFOLD_DEF(sx_vfold_nanmin_f64, double, int64_t, <, SX_TAKE_NUM)
/* The arg-reductions' fold: the same lanes and parts, each lane also keeping the group of its
 * value (gidx). A lane takes only strictly better values (or NaN), so with no NaN a lane holds
 * the first occurrence of its best value: the best value's first position is the smallest
 * gidx * SX_RW + j among the lanes holding it, else in the tail past the groups. */
#define SX_VARGTAKE(acc, gacc, v, gv, OP, TAKE) do {                                      \
        vi take_ = TAKE(v, acc, OP);                                                      \
        acc = (vt)(((vi)(v) & take_) | ((vi)(acc) & ~take_));                              \
        gacc = ((gv) & take_) | ((gacc) & ~take_); } while (0)
/* fold the group at x + o, whose group index is gv, into the lanes l and their groups gl */
#define SX_VARGTAKE_GROUP(l, gl, x, o, gv, OP, TAKE) do {                                  \
        for (int u_ = 0; u_ < NV; u_++) {                                                 \
            memcpy(&v, (x) + (o) + u_ * VL, sizeof v);                                    \
            SX_VARGTAKE((l)[u_], (gl)[u_], v, gv, OP, TAKE); }                            \
    } while (0)
#define SX_VARGFOLD_DEF(NAME, T, IT, OP, TAKE)                                                 \
static inline void NAME(T *lanes, IT *gidx, const T *x, int64_t n, int64_t *kp) {         \
    typedef T vt __attribute__((vector_size(SX_VB)));                                    \
    typedef IT vi __attribute__((vector_size(SX_VB)));                                   \
    enum { NV = SX_NV(T), VL = SX_VB / sizeof(T) };                                       \
    int64_t k = *kp, groups = (n - k) / SX_RW;                                            \
    vt l0[NV], v; vi g0[NV], gv, zero = {0};                                              \
    memcpy(l0, lanes, sizeof l0); memcpy(g0, gidx, sizeof g0);                           \
    if (groups >= 8) {                                                                    \
        int64_t q = groups / 4, s1 = k + q * SX_RW, s2 = s1 + q * SX_RW, s3 = s2 + q * SX_RW; \
        vt l1[NV], l2[NV], l3[NV]; vi g1[NV], g2[NV], g3[NV];                             \
        memcpy(l1, x + s1, sizeof l1); memcpy(l2, x + s2, sizeof l2);                     \
        memcpy(l3, x + s3, sizeof l3);                                                    \
        for (int u = 0; u < NV; u++) {                                                    \
            g1[u] = zero + (IT)(s1 / SX_RW); g2[u] = g1[u] + (IT)q; g3[u] = g2[u] + (IT)q; } \
        for (int64_t g = 0; g < q; g++) {                                                 \
            int64_t o = g * SX_RW;                                                        \
            gv = zero + (IT)((k + o) / SX_RW);                                            \
            SX_VARGTAKE_GROUP(l0, g0, x + k, o, gv, OP, TAKE);                            \
            if (g) { SX_VARGTAKE_GROUP(l1, g1, x + s1, o, gv + (IT)q, OP, TAKE);          \
                     SX_VARGTAKE_GROUP(l2, g2, x + s2, o, gv + (IT)(2 * q), OP, TAKE);          \
                     SX_VARGTAKE_GROUP(l3, g3, x + s3, o, gv + (IT)(3 * q), OP, TAKE); }        \
        }                                                                                 \
        for (int64_t o = s3 + q * SX_RW; o + SX_RW <= n; o += SX_RW) {                    \
            gv = zero + (IT)(o / SX_RW);                                                  \
            SX_VARGTAKE_GROUP(l3, g3, x, o, gv, OP, TAKE); }                                    \
        for (int u = 0; u < NV; u++) {                                                    \
            SX_VARGTAKE(l0[u], g0[u], l1[u], g1[u], OP, TAKE);                            \
            SX_VARGTAKE(l0[u], g0[u], l2[u], g2[u], OP, TAKE);                            \
            SX_VARGTAKE(l0[u], g0[u], l3[u], g3[u], OP, TAKE); }                                \
        k += groups * SX_RW;                                                              \
    }                                                                                     \
    for (; k + SX_RW <= n; k += SX_RW) {                                                  \
        gv = zero + (IT)(k / SX_RW);                                                      \
        SX_VARGTAKE_GROUP(l0, g0, x, k, gv, OP, TAKE); }                                        \
    memcpy(lanes, l0, sizeof l0); memcpy(gidx, g0, sizeof g0); *kp = k;                   \
}
SX_VARGFOLD_DEF(sx_vargfold_max_f32, float, int32_t, >, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_min_f32, float, int32_t, <, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_max_f64, double, int64_t, >, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_min_f64, double, int64_t, <, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_max_i32, int32_t, int32_t, >, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_min_i32, int32_t, int32_t, <, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_max_i64, int64_t, int64_t, >, SX_TAKE_NAN)
SX_VARGFOLD_DEF(sx_vargfold_min_i64, int64_t, int64_t, <, SX_TAKE_NAN)
/* nanargmax / nanargmin (SX_NANARGMAXF...): lanes take a better value or replace a NaN, so
 * a lane holds the first occurrence of its best number (else a NaN); the chunk's post-pass
 * below is the arg-reductions' own. Selected by the BETTER macro's name (BETTER##_VF below), as
 * kernels.py sets SX_VFOLD for argmax / argmin only; 16-bit floats fold in scalar. */
SX_VARGFOLD_DEF(sx_vargfold_nanmax_f32, float, int32_t, >, SX_TAKE_NUM)
SX_VARGFOLD_DEF(sx_vargfold_nanmin_f32, float, int32_t, <, SX_TAKE_NUM)
SX_VARGFOLD_DEF(sx_vargfold_nanmax_f64, double, int64_t, >, SX_TAKE_NUM)
SX_VARGFOLD_DEF(sx_vargfold_nanmin_f64, double, int64_t, <, SX_TAKE_NUM)
/* BETTER##_VFON(SI), BETTER##_VF(SI): whether an arg-reduction has a fold of its own, and it
 * (else kernels.py's SX_VFOLD, if any);
 * BETTER##_FIX(SI, best, i): its answer from the slice's best value and first index. */
#define SX_ARGMAXF_VF(SI) SX_VFOLD_NONE
#define SX_ARGMINF_VF(SI) SX_VFOLD_NONE
#define SX_ARGMAXI_VF(SI) SX_VFOLD_NONE
#define SX_ARGMINI_VF(SI) SX_VFOLD_NONE
#define SX_NANARGMAXF_VF(SI) sx_vargfold_nanmax_##SI
#define SX_NANARGMINF_VF(SI) sx_vargfold_nanmin_##SI
#define sx_vargfold_nanmax_f16 SX_VFOLD_NONE
#define sx_vargfold_nanmin_f16 SX_VFOLD_NONE
#define sx_vargfold_nanmax_bf16 SX_VFOLD_NONE
#define sx_vargfold_nanmin_bf16 SX_VFOLD_NONE
#define SX_ARGMAXF_VFON(SI) 0
#define SX_ARGMINF_VFON(SI) 0
#define SX_ARGMAXI_VFON(SI) 0
#define SX_ARGMINI_VFON(SI) 0
#define SX_NANARGMAXF_VFON(SI) SX_NANVF_ON_##SI
#define SX_NANARGMINF_VFON(SI) SX_NANVF_ON_##SI
#define SX_NANVF_ON_f32 1
#define SX_NANVF_ON_f64 1
#define SX_NANVF_ON_f16 0
#define SX_NANVF_ON_bf16 0
#define SX_ARGMAXF_FIX(SI, b, i) (i)
#define SX_ARGMINF_FIX(SI, b, i) (i)
#define SX_ARGMAXI_FIX(SI, b, i) (i)
#define SX_ARGMINI_FIX(SI, b, i) (i)
#define SX_NANARGMAXF_FIX(SI, b, i) ((b) != (b) ? (int64_t)-1 : (b) == LO_##SI ? (int64_t)0 : (i))
#define SX_NANARGMINF_FIX(SI, b, i) ((b) != (b) ? (int64_t)-1 : (b) == HI_##SI ? (int64_t)0 : (i))

/* any / all of bytes (bool, uint8): one OR (a min for all) over the groups, then one lane set
 * (their results are booleans: any structure gives the same). */
static inline void sx_vfold_any_u8(uint8_t *lanes, const uint8_t *x, int64_t n, int64_t *kp) {
    int64_t k = *kp, e = k + (n - k) / SX_RW * SX_RW;
    uint8_t m = 0;
    for (; k < e; k++) m |= x[k];
    if (m) lanes[0] = 1;
    *kp = k;
}
static inline void sx_vfold_all_u8(uint8_t *lanes, const uint8_t *x, int64_t n, int64_t *kp) {
    int64_t k = *kp, e = k + (n - k) / SX_RW * SX_RW;
    uint8_t m = 0xff;
    for (; k < e; k++) m = x[k] < m ? x[k] : m;
    if (!m) lanes[0] = 0;
    *kp = k;
}
/* The hook as the templates below expand it: no vector fold unless an instantiation sets one
 * (redefine SX_VFOLD to a fold and SX_VFOLD_ON to 1, instantiate, restore these defaults). */
#define SX_VFOLD_NONE(...) ((void)0)
#define SX_VFOLD SX_VFOLD_NONE
#define SX_VFOLD_ON 0
#define SX_VFOLD_GIDX int64_t   /* the arg-reductions' group index type: IT of their fold */

typedef struct {
    int nk, nr;
    const int64_t *ks, *kin, *kout, *rs, *rin;
    int64_t K, R;
    const int64_t *ctx;   /* a fused kernel's operands (SX_REDUCE_BODY's LOAD), else NULL */
} sx_red_meta;

SX_INLINE sx_red_meta sx_red_parse(const int64_t *meta) {
    sx_red_meta m;
    m.nk = (int)meta[0]; m.nr = (int)meta[1];
    m.ks = meta + 2; m.kin = m.ks + m.nk; m.kout = m.kin + m.nk;
    m.rs = m.kout + m.nk; m.rin = m.rs + m.nr;
    m.K = 1; for (int d = 0; d < m.nk; d++) m.K *= m.ks[d];
    m.R = 1; for (int d = 0; d < m.nr; d++) m.R *= m.rs[d];
    m.ctx = NULL;
    return m;
}

/* Byte offsets of linear index i in a (shape, strides) space, for input and output. */
SX_INLINE int64_t sx_offset_of(int64_t i, int nd, const int64_t *shape, const int64_t *st) {
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; d--) { off += (i % shape[d]) * st[d]; i /= shape[d]; }
    return off;
}

/* Inside an omp parallel region: this thread's share of the outputs (a contiguous range of
 * k), with kin_ / kout_ the byte offsets of output k's input row and output, stepped along
 * the kept dims like an odometer (no sx_offset_of divisions per output: many short rows). */
#ifdef _OPENMP
#define SX_THREAD_RANGE(N, lo, hi)                                                         \
    int64_t lo = (int64_t)((__int128)(N) * omp_get_thread_num() / omp_get_num_threads()),   \
            hi = (int64_t)((__int128)(N) * (omp_get_thread_num() + 1) / omp_get_num_threads());
#else
#define SX_THREAD_RANGE(N, lo, hi) int64_t lo = 0, hi = (N);
#endif
#define SX_KEPT_WALK(m, k)                                                                 \
    SX_THREAD_RANGE((m).K, k0_, k1_)                                                      \
    int64_t kidx_[SX_MAXDIM], rem_ = k0_, kin_ = 0, kout_ = 0;                            \
    for (int d = (m).nk - 1; d >= 0; d--) {                                               \
        kidx_[d] = rem_ % (m).ks[d]; rem_ /= (m).ks[d];                                   \
        kin_ += kidx_[d] * (m).kin[d]; kout_ += kidx_[d] * (m).kout[d]; }                 \
    for (int64_t k = k0_; k < k1_; k++) {
#define SX_KEPT_WALK_END(m)                                                                \
        for (int d = (m).nk - 1; d >= 0; d--) {                                           \
            kin_ += (m).kin[d]; kout_ += (m).kout[d];                                     \
            if (++kidx_[d] < (m).ks[d]) break;                                            \
            kin_ -= (m).ks[d] * (m).kin[d]; kout_ -= (m).ks[d] * (m).kout[d]; kidx_[d] = 0; \
        }                                                                                 \
    }

/* SX_REDUCE(NAME, SI, SO, ACC, INIT, COMBINE, MERGE): COMBINE(acc, x) folds one element
 * (x already in compute type), MERGE(a, b) folds two partial results. SX_REDUCE_BODY is
 * the same without the entry point (NAME##_run(&meta, in, out, nthreads) runs it), its input
 * read through FILL(SI, x, cnt, buf, m) (a pointer to the values of the cnt <= SX_RFB
 * contiguous elements from x: x itself, SX_RFILL) and LOAD(SI, p, m) (the compute-typed
 * value of the element at p, for strided ranges: SX_RLOAD). A captured step's fused kernel
 * (tensor/cpu/fused.py) computes the elements instead, from the operands in m->ctx, into buf.
 * The blocks of SX_RFB (a multiple of SX_RW) do not change which lane an element joins. */
#define SX_RFB 512
#define SX_RLOAD(SI, p, m) LD_##SI(*(p))
#define SX_RFILL(SI, x, cnt, buf, m) (x)
#define SX_REDUCE(NAME, SI, SO, ACC, INIT, COMBINE, MERGE)                                 \
SX_REDUCE_BODY(NAME, SI, SO, ACC, INIT, COMBINE, MERGE, SX_RLOAD, SX_RFILL)               \
void NAME(const int64_t *meta, intptr_t in, intptr_t out, int nthreads) {                 \
    sx_red_meta m = sx_red_parse(meta);                                                   \
    NAME##_run(&m, (const char *)in, (char *)out, nthreads);                              \
}
#define SX_REDUCE_BODY(NAME, SI, SO, ACC, INIT, COMBINE, MERGE, LOAD, FILL)               \
static ACC NAME##_chunk(const char *base, const sx_red_meta *m, int64_t lo, int64_t hi) {  \
    ACC acc[SX_RW];                                                                       \
    for (int j = 0; j < SX_RW; j++) acc[j] = INIT;                                        \
    int nr = m->nr; int64_t idx[SX_MAXDIM], rem = lo;                                     \
    const char *p = base;                                                                 \
    if (m->ctx == NULL && nr == 1 && lo == 0 && hi <= SX_RW) {                            \
        /* a short row (one element a lane): the same folds and tree as below, in registers \
         * (the general loop's lane arrays stall store forwarding: 22 -> 17 ns a row of 3) */ \
        ACC l[SX_RW]; int64_t s1 = m->rin[0];                                             \
        for (int j = 0; j < SX_RW; j++) {                                                 \
            ACC b = INIT;                                                                 \
            if (j < hi) { C_##SI v = LD_##SI(*(const T_##SI *)(base + j * s1)); b = COMBINE(b, v); } \
            ACC a0 = INIT; l[j] = MERGE(a0, b);                                           \
        }                                                                                 \
        for (int w = SX_RW / 2; w >= 1; w /= 2)                                           \
            for (int j = 0; j < w; j++) l[j] = MERGE(l[j], l[j + w]);                     \
        return l[0];                                                                      \
    }                                                                                     \
    if (lo == 0) { for (int d = 0; d < nr; d++) idx[d] = 0; }  /* no divisions */           \
    else for (int d = nr - 1; d >= 0; d--) { idx[d] = rem % m->rs[d]; rem /= m->rs[d]; p += idx[d] * m->rin[d]; } \
    int64_t s = m->rin[nr - 1], inner = m->rs[nr - 1];                                    \
    for (int64_t i = lo; i < hi;) {                                                       \
        int64_t len = inner - idx[nr - 1];                                                \
        if (len > hi - i) len = hi - i;                                                   \
        if (s == (int64_t)sizeof(T_##SI)) {                                               \
            T_##SI fb[SX_RFB];                                                            \
            for (int64_t k0 = 0; k0 < len; k0 += SX_RFB) {                                \
                int64_t kn = len - k0 < SX_RFB ? len - k0 : SX_RFB, k = 0;                \
                const T_##SI *x = FILL(SI, (const T_##SI *)p + k0, kn, fb, m);            \
                ACC blk[SX_RW];                                                           \
                for (int j = 0; j < SX_RW; j++) blk[j] = INIT;                            \
                SX_VFOLD(blk, x, kn, &k);                                                 \
                for (; k + SX_RW <= kn; k += SX_RW)                                       \
                    for (int j = 0; j < SX_RW; j++) { C_##SI v = LD_##SI(x[k + j]); blk[j] = COMBINE(blk[j], v); } \
                for (; k < kn; k++) { C_##SI v = LD_##SI(x[k]); blk[k % SX_RW] = COMBINE(blk[k % SX_RW], v); } \
                for (int j = 0; j < SX_RW; j++) acc[j] = MERGE(acc[j], blk[j]);           \
            }                                                                             \
        } else {                                                                          \
            for (int64_t k0 = 0; k0 < len; k0 += SX_RFB) {                                \
                int64_t kn = len - k0 < SX_RFB ? len - k0 : SX_RFB;                       \
                ACC blk[SX_RW];                                                           \
                for (int j = 0; j < SX_RW; j++) blk[j] = INIT;                            \
                for (int64_t k = 0; k < kn; k++) {                                        \
                    C_##SI v = LOAD(SI, (const T_##SI *)(p + (k0 + k) * s), m);            \
                    blk[k % SX_RW] = COMBINE(blk[k % SX_RW], v); }                        \
                for (int j = 0; j < SX_RW; j++) acc[j] = MERGE(acc[j], blk[j]);           \
            }                                                                             \
        }                                                                                 \
        i += len;                                                                         \
        if (i >= hi) break;                                                               \
        p += len * s; idx[nr - 1] += len;                                                 \
        for (int d = nr - 1; d > 0 && idx[d] == m->rs[d]; d--) {                         \
            idx[d] = 0; idx[d - 1]++; p += m->rin[d - 1] - m->rs[d] * m->rin[d]; }        \
    }                                                                                     \
    for (int w = SX_RW / 2; w >= 1; w /= 2)                                               \
        for (int j = 0; j < w; j++) acc[j] = MERGE(acc[j], acc[j + w]);                   \
    return acc[0];                                                                        \
}                                                                                         \
static ACC NAME##_merge_all(ACC *part, int64_t n) {                                       \
    while (n > 1) {                                                                       \
        int64_t h = n / 2;                                                                \
        for (int64_t j = 0; j < h; j++) part[j] = MERGE(part[2 * j], part[2 * j + 1]);    \
        if (n & 1) part[h] = part[n - 1];                                                 \
        n = h + (n & 1);                                                                  \
    }                                                                                     \
    return part[0];                                                                       \
}                                                                                         \
/* merge_all's tree over the chunks [c, c + s) (s a power of two), computed without scratch: \
 * the same pairs in the same order, so the same bits (a failed malloc falls back to it). */ \
static ACC NAME##_tree(const char *base, const sx_red_meta *m, int64_t c, int64_t s, int64_t nc) { \
    if (s == 1)                                                                           \
        return NAME##_chunk(base, m, c * SX_RCHUNK, c + 1 == nc ? m->R : (c + 1) * SX_RCHUNK); \
    ACC l = NAME##_tree(base, m, c, s / 2, nc);                                           \
    if (c + s / 2 < nc) {   /* (MERGE may read its operands twice: no call inside it) */  \
        ACC r = NAME##_tree(base, m, c + s / 2, s / 2, nc);                               \
        l = MERGE(l, r);                                                                  \
    }                                                                                     \
    return l;                                                                             \
}                                                                                         \
static ACC NAME##_one(const char *base, const sx_red_meta *m) {                           \
    int64_t nc = (m->R + SX_RCHUNK - 1) / SX_RCHUNK, s = 1;                               \
    while (s < nc) s *= 2;                                                                \
    return NAME##_tree(base, m, 0, s, nc);                                                \
}                                                                                         \
static void NAME##_outer(const char *in, char *out, const sx_red_meta *m, int nthreads) { \
    int nk = m->nk; int64_t inner = m->ks[nk - 1], rows = m->K / inner;                   \
    int nt = (m->K * m->R >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                  \
    /* Each output sums its rows in order whatever the blocking: thread-count independent. */ \
    int64_t blk = rows >= nt ? SX_OUTER_BLOCK : ((inner + nt - 1) / nt + 63) / 64 * 64;  \
    if (blk > SX_OUTER_BLOCK) blk = SX_OUTER_BLOCK;                                       \
    int64_t nblk = (inner + blk - 1) / blk;                                               \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")             \
    for (int64_t t = 0; t < rows * nblk; t++) {                                           \
        int64_t row = t / nblk, j0 = (t % nblk) * blk;                                    \
        int64_t nj = inner - j0 < blk ? inner - j0 : blk;                                 \
        const char *pin = in + sx_offset_of(row, nk - 1, m->ks, m->kin) + j0 * m->kin[nk - 1]; \
        char *pout = out + sx_offset_of(row, nk - 1, m->ks, m->kout) + j0 * m->kout[nk - 1]; \
        ACC acc[SX_OUTER_BLOCK];                                                          \
        for (int64_t j = 0; j < nj; j++) acc[j] = INIT;                                   \
        T_##SI fb[SX_RFB];                                                                \
        for (int64_t r = 0; r < m->R; r++) {                                              \
            const T_##SI *xr = (const T_##SI *)(pin + sx_offset_of(r, m->nr, m->rs, m->rin)); \
            for (int64_t j0 = 0; j0 < nj; j0 += SX_RFB) {                                 \
                int64_t jn = nj - j0 < SX_RFB ? nj - j0 : SX_RFB;                         \
                const T_##SI *x = FILL(SI, xr + j0, jn, fb, m);                           \
                for (int64_t j = 0; j < jn; j++) { C_##SI v = LD_##SI(x[j]); acc[j0 + j] = COMBINE(acc[j0 + j], v); } \
            }                                                                             \
        }                                                                                 \
        for (int64_t j = 0; j < nj; j++) *(T_##SO *)(pout + j * m->kout[nk - 1]) = ST_##SO(acc[j]); \
    }                                                                                     \
}                                                                                         \
static void NAME##_run(const sx_red_meta *mp, const char *pin, char *pout, int nthreads) { \
    const sx_red_meta m = *mp;                                                            \
    if (m.K == 0) return;                                                                 \
    if (m.R == 0) {                                                                       \
        for (int64_t k = 0; k < m.K; k++)                                                 \
            *(T_##SO *)(pout + sx_offset_of(k, m.nk, m.ks, m.kout)) = ST_##SO(INIT);      \
        return;                                                                           \
    }                                                                                     \
    int nt = (m.K * m.R >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                    \
    if (m.nk > 0 && m.kin[m.nk - 1] == (int64_t)sizeof(T_##SI) && m.ks[m.nk - 1] >= 16 && \
        m.rin[m.nr - 1] != (int64_t)sizeof(T_##SI)) {                                     \
        NAME##_outer(pin, pout, &m, nthreads); return;                                    \
    }                                                                                     \
    if (m.K >= nt) {                                                                      \
        _Pragma("omp parallel num_threads(nt) if (nt > 1)")                               \
        {                                                                                 \
            SX_KEPT_WALK(m, k)                                                            \
                ACC r = NAME##_one(pin + kin_, &m);                                       \
                *(T_##SO *)(pout + kout_) = ST_##SO(r);                                   \
            SX_KEPT_WALK_END(m)                                                           \
        }                                                                                 \
        return;                                                                           \
    }                                                                                     \
    int64_t nc = (m.R + SX_RCHUNK - 1) / SX_RCHUNK;                                       \
    ACC *part = (ACC *)malloc(sizeof(ACC) * nc);                                          \
    for (int64_t k = 0; k < m.K; k++) {                                                   \
        const char *b = pin + sx_offset_of(k, m.nk, m.ks, m.kin);                         \
        if (!part) { /* no scratch: one thread, the same tree */                          \
            *(T_##SO *)(pout + sx_offset_of(k, m.nk, m.ks, m.kout)) = ST_##SO(NAME##_one(b, &m)); \
            continue;                                                                     \
        }                                                                                 \
        _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")         \
        for (int64_t c = 0; c < nc; c++)                                                  \
            part[c] = NAME##_chunk(b, &m, c * SX_RCHUNK, c + 1 == nc ? m.R : (c + 1) * SX_RCHUNK); \
        ACC r = NAME##_merge_all(part, nc);                                               \
        *(T_##SO *)(pout + sx_offset_of(k, m.nk, m.ks, m.kout)) = ST_##SO(r);             \
    }                                                                                     \
    free(part);                                                                           \
}

/* Arg-reductions: index (in the logical order of the reduced space) of the first element
 * that BETTER(x, best) prefers (argmax / argmin: NaN wins and the first NaN is kept), mapped
 * by BETTER##_FIX (nanargmax / nanargmin: -1 for a slice of NaNs). */
#define SX_ARGREDUCE(NAME, SI, BETTER)                                                     \
static void NAME##_chunk(const char *base, const sx_red_meta *m, int64_t lo, int64_t hi,   \
                         C_##SI *bv, int64_t *bi) {                                       \
    int one = m->nr == 1; int64_t s0 = m->rin[0];                                         \
    if ((SX_VFOLD_ON || BETTER##_VFON(SI)) && one && s0 == (int64_t)sizeof(T_##SI) &&     \
        hi - lo >= SX_RW) {                                                               \
        /* contiguous, with a vector fold (reduce.h's SX_VARGFOLD_DEF): the scan's answer,  \
         * the first element no other is BETTER than (argmax: a NaN if any, its first one) */ \
        const T_##SI *x = (const T_##SI *)(base + lo * s0); int64_t n = hi - lo, k = SX_RW;  \
        T_##SI lane[SX_RW]; int64_t gl[SX_RW];                                            \
        memcpy(lane, x, sizeof lane);                                                     \
        if (SX_VFOLD_ON) {                                                                \
            SX_VFOLD_GIDX gi[SX_RW];                                                      \
            for (int j = 0; j < SX_RW; j++) gi[j] = 0;                                    \
            SX_VFOLD(lane, gi, x, n, &k);                                                 \
            for (int j = 0; j < SX_RW; j++) gl[j] = (int64_t)gi[j] * SX_RW + j;           \
        } else {   /* (SX_VFOLD_GIDX of the f32 / f64 folds: int32_t / int64_t) */        \
            int64_t gi64[SX_RW]; int32_t gi32[SX_RW];                                     \
            for (int j = 0; j < SX_RW; j++) gi64[j] = gi32[j] = 0;                        \
            if (sizeof(T_##SI) == 4) BETTER##_VF(SI)(lane, (void *)gi32, x, n, &k);       \
            else BETTER##_VF(SI)(lane, (void *)gi64, x, n, &k);                           \
            for (int j = 0; j < SX_RW; j++)                                               \
                gl[j] = (sizeof(T_##SI) == 4 ? (int64_t)gi32[j] : gi64[j]) * SX_RW + j;   \
        }                                                                                 \
        C_##SI best = LD_##SI(lane[0]);                                                   \
        for (int j = 0; j < SX_RW; j++) {                                                 \
            C_##SI v = LD_##SI(lane[j]);                                                  \
            if (BETTER(v, best)) best = v; }                                              \
        int64_t tail = k;                                                                 \
        for (; k < n; k++) { C_##SI v = LD_##SI(x[k]); if (BETTER(v, best)) best = v; }   \
        int64_t i = n;                                                                    \
        if (best != best) { i = 0; while (LD_##SI(x[i]) == LD_##SI(x[i])) i++; }         \
        else {                                                                            \
            for (int j = 0; j < SX_RW; j++)                                               \
                if (LD_##SI(lane[j]) == best && gl[j] < i) i = gl[j];                     \
            if (i == n) { i = tail; while (!(LD_##SI(x[i]) == best)) i++; }                \
        }                                                                                 \
        *bv = best; *bi = lo + i; return;                                                 \
    }                                                                                     \
    C_##SI best = LD_##SI(*(const T_##SI *)(base + sx_offset_of(lo, m->nr, m->rs, m->rin))); \
    int64_t besti = lo;                                                                   \
    for (int64_t i = lo + 1; i < hi; i++) {                                               \
        int64_t off = one ? i * s0 : sx_offset_of(i, m->nr, m->rs, m->rin);               \
        C_##SI x = LD_##SI(*(const T_##SI *)(base + off));                                \
        if (BETTER(x, best)) { best = x; besti = i; }                                     \
    }                                                                                     \
    *bv = best; *bi = besti;                                                              \
}                                                                                         \
static int64_t NAME##_one(const char *base, const sx_red_meta *m, int nt) {               \
    int64_t nc = (m->R + SX_RCHUNK - 1) / SX_RCHUNK;                                      \
    if (nc == 1) { /* one chunk: no scratch buffers (a malloc per output was the cost) */  \
        C_##SI b1; int64_t i1; NAME##_chunk(base, m, 0, m->R, &b1, &i1);                  \
        return BETTER##_FIX(SI, b1, i1);                                                  \
    }                                                                                     \
    C_##SI *bv = (C_##SI *)malloc(sizeof(C_##SI) * nc);                                  \
    int64_t *bi = (int64_t *)malloc(sizeof(int64_t) * nc);                                \
    if (!bv || !bi) { /* no scratch: the chunks in order on one thread (the same answer) */ \
        free(bv); free(bi);                                                               \
        C_##SI best, v; int64_t besti, i;                                                 \
        NAME##_chunk(base, m, 0, SX_RCHUNK, &best, &besti);                               \
        for (int64_t c = 1; c < nc; c++) {                                                \
            NAME##_chunk(base, m, c * SX_RCHUNK, c + 1 == nc ? m->R : (c + 1) * SX_RCHUNK, &v, &i); \
            if (BETTER(v, best)) { best = v; besti = i; }                                 \
        }                                                                                 \
        return BETTER##_FIX(SI, best, besti);                                             \
    }                                                                                     \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")             \
    for (int64_t c = 0; c < nc; c++)                                                      \
        NAME##_chunk(base, m, c * SX_RCHUNK, c + 1 == nc ? m->R : (c + 1) * SX_RCHUNK, bv + c, bi + c); \
    C_##SI best = bv[0]; int64_t besti = bi[0];                                           \
    for (int64_t c = 1; c < nc; c++) if (BETTER(bv[c], best)) { best = bv[c]; besti = bi[c]; } \
    free(bv); free(bi);                                                                   \
    return BETTER##_FIX(SI, best, besti);                                                 \
}                                                                                         \
void NAME(const int64_t *meta, intptr_t in, intptr_t out, int nthreads) {                 \
    sx_red_meta m = sx_red_parse(meta);                                                   \
    const char *pin = (const char *)in; char *pout = (char *)out;                         \
    int nt = (m.K * m.R >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                    \
    if (m.K >= nt) {                                                                      \
        _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")         \
        for (int64_t k = 0; k < m.K; k++)                                                 \
            *(int64_t *)(pout + sx_offset_of(k, m.nk, m.ks, m.kout)) =                    \
                NAME##_one(pin + sx_offset_of(k, m.nk, m.ks, m.kin), &m, 1);              \
        return;                                                                           \
    }                                                                                     \
    for (int64_t k = 0; k < m.K; k++)                                                     \
        *(int64_t *)(pout + sx_offset_of(k, m.nk, m.ks, m.kout)) =                        \
            NAME##_one(pin + sx_offset_of(k, m.nk, m.ks, m.kin), &m, nt);                 \
}

/* Inclusive scans along one axis. meta = [nd, shape[nd], st_in[nd], st_out[nd]] (bytes),
 * the scanned axis last. Rows are independent (parallel); within a row the order is
 * sequential, so results are deterministic. */
#define SX_SCAN(NAME, SI, SO, ACC, INIT, COMBINE)                                          \
void NAME(const int64_t *meta, intptr_t in, intptr_t out, int nthreads) {                 \
    int nd = (int)meta[0];                                                                \
    const int64_t *sh = meta + 1, *si = sh + nd, *so = si + nd;                           \
    int64_t L = sh[nd - 1], rows = 1;                                                     \
    for (int d = 0; d < nd - 1; d++) rows *= sh[d];                                       \
    if (rows == 0 || L == 0) return;                                                      \
    int nt = (rows * L >= SX_PAR_MIN && nthreads > 1) ? nthreads : 1;                     \
    int64_t sin_ = si[nd - 1], sout = so[nd - 1];                                         \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")             \
    for (int64_t r = 0; r < rows; r++) {                                                  \
        const char *pi = (const char *)in + sx_offset_of(r, nd - 1, sh, si);             \
        char *po = (char *)out + sx_offset_of(r, nd - 1, sh, so);                        \
        ACC acc = INIT;                                                                   \
        for (int64_t i = 0; i < L; i++) {                                                 \
            C_##SI v = LD_##SI(*(const T_##SI *)(pi + i * sin_));                        \
            acc = COMBINE(acc, v);                                                        \
            *(T_##SO *)(po + i * sout) = ST_##SO(acc);                                    \
        }                                                                                 \
    }                                                                                     \
}
