/* Indexing kernels: index arrays -> element offsets (wrap + bounds check), gather,
 * scatter (assign / accumulate), nonzero, and the index expansion behind repeat.
 *
 * All shapes, strides and offsets are in ELEMENTS. An "offset" is relative to the
 * address of element 0 of the tensor being indexed, so negative strides work.
 * The module instantiates:
 *   #define SX_INDEX_COMMON  before the include: the dtype-independent kernels
 *                            (offsets, nonzero, repeat)
 *   SX_GATHER(W, T)          gather of W-byte elements (T the carrier type)
 *   SX_TAKE(W, T)            fused bounds check + 1-d gather of W-byte elements
 *   SX_PUT(W, T)             bounds pass + 1-d scatter-assign of W-byte elements
 *   SX_SCATTER_SET(W, T)     scatter-assign of W-byte elements: sx_scatter_W
 *   SX_SCATTER_ADD(S)        scatter-accumulate in dtype S: sx_scatter_add_S
 *   SX_SCATTER_CADD(S)       the same for a complex dtype
 * Scatters walk the index positions in order (the last write wins, accumulation is
 * sequential per destination) and split only the non-indexed inner space between
 * threads, so results are deterministic. */
#include "common.h"

#define SX_IDX_PAR_MIN 4096

/* The carrier of 16-byte elements (complex128): copied whole, never computed on. */
typedef struct { uint64_t w[2]; } sx_w16;

/* Thread t's share [lo, hi) of n items. */
#define SX_SPLIT(n, t, T, lo, hi)                                              \
    int64_t lo = (int64_t)((__int128)(n) * (t) / (T));                          \
    int64_t hi = (int64_t)((__int128)(n) * ((t) + 1) / (T))

SX_INLINE int sx_team(int64_t work, int64_t min_work, int nthreads) {
    return (work >= min_work && nthreads > 1) ? nthreads : 1;
}

SX_INLINE void sx_thread(int *t, int *T) {
    *t = 0; *T = 1;
#ifdef _OPENMP
    *t = omp_get_thread_num(); *T = omp_get_num_threads();
#endif
}

/* Unravel linear position `lin` of `shape` (row-major) into idx; return sum idx*st. */
SX_INLINE int64_t sx_unravel(int nd, const int64_t *shape, const int64_t *st, int64_t lin, int64_t *idx) {
    int64_t o = 0;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = lin % shape[d];
        lin /= shape[d];
        o += idx[d] * st[d];
    }
    return o;
}

/* Advance idx by one over all dims but the last; returns the change of sum idx*st. */
SX_INLINE int64_t sx_carry(int nd, const int64_t *shape, const int64_t *st, int64_t *idx) {
    int64_t delta = 0;
    for (int d = nd - 2; d >= 0; d--) {
        idx[d]++;
        delta += st[d];
        if (idx[d] < shape[d]) break;
        delta -= idx[d] * st[d];
        idx[d] = 0;
    }
    return delta;
}

#ifdef SX_INDEX_COMMON
/* Advance the multi-index idx by one over dims 0..nd-2 (the last dim is walked in runs). */
static void sx_next_row(int nd, const int64_t *shape, int64_t *idx) {
    for (int d = nd - 2; d >= 0; d--) {
        if (++idx[d] < shape[d]) return;
        idx[d] = 0;
    }
}

/* off[p] = sum_j wrap(idx_j[p]) * xst[j] over the broadcast index space `shape` (nd
 * dims; int64 array j at ptrs[j] with element strides ist[j*nd..]). Returns -1, or
 * j*n + p for the first bad index of the first array that has one (NumPy's order). */
int64_t sx_index_offsets(int k, int nd, const int64_t *shape, const intptr_t *ptrs,
                         const int64_t *ist, const int64_t *sizes, const int64_t *xst,
                         intptr_t out, int nthreads) {
    int64_t n = 1, bad = INT64_MAX;
    for (int d = 0; d < nd; d++) n *= shape[d];
    if (n <= 0) return -1;
    int nt = sx_team(n, SX_PAR_MIN, nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(min: bad)
    {
        int t, T; sx_thread(&t, &T);
        SX_SPLIT(n, t, T, lo, hi);
        int64_t idx[SX_MAXDIM];
        int64_t *o = (int64_t *)out;
        sx_unravel(nd, shape, ist, lo, idx);
        int64_t inner = shape[nd - 1];
        for (int64_t p = lo; p < hi;) {
            int64_t len = inner - idx[nd - 1];
            if (len > hi - p) len = hi - p;
            for (int j = 0; j < k; j++) {
                const int64_t *st = ist + (int64_t)j * nd;
                int64_t pos = 0;
                for (int d = 0; d < nd; d++) pos += idx[d] * st[d];
                const int64_t *a = (const int64_t *)ptrs[j] + pos;
                int64_t s = st[nd - 1], sz = sizes[j], xs = xst[j], first = -1;
                if (s == 1 && j == 0) {   /* one contiguous run: no branch an element, so the */
                    int anybad = 0;       /* loop vectorises (a 2^18 bincount's offsets 2x) */
                    for (int64_t i = 0; i < len; i++) {
                        int64_t v = a[i];
                        v += v < 0 ? sz : 0;
                        anybad |= (uint64_t)v >= (uint64_t)sz;
                        o[p + i] = v * xs;
                    }
                    for (int64_t i = 0; anybad && i < len; i++) {
                        int64_t v = a[i] + (a[i] < 0 ? sz : 0);
                        if ((uint64_t)v >= (uint64_t)sz) { first = i; break; }
                    }
                } else {
                    for (int64_t i = 0; i < len; i++) {
                        int64_t v = a[i * s];
                        v += v < 0 ? sz : 0;
                        if ((uint64_t)v >= (uint64_t)sz && first < 0) first = i;
                        if (j == 0) o[p + i] = v * xs; else o[p + i] += v * xs;
                    }
                }
                if (first >= 0 && j * n + p + first < bad) bad = j * n + p + first;
            }
            p += len;
            idx[nd - 1] += len;
            if (idx[nd - 1] == inner) {
                idx[nd - 1] = 0;
                sx_next_row(nd, shape, idx);
            }
        }
    }
    return bad == INT64_MAX ? -1 : bad;
}

/* Nonzero bytes of m[0, n), 8 at a time: a byte's top bit after ((w & 0x7f..) + 0x7f..) | w is set
 * iff the byte is nonzero; those bits, moved down, add into byte lanes for up to 255 words (no
 * lane overflows), which a multiply then folds. The byte loop this replaced ran 7x NumPy's
 * count_nonzero (widening every byte to an int64 lane). */
#define SX_LO7 0x7f7f7f7f7f7f7f7fULL
SX_INLINE uint64_t sx_nz_bits(uint64_t w) { return (((w & SX_LO7) + SX_LO7) | w) & ~SX_LO7; }

SX_INLINE int64_t sx_count_bytes(const uint8_t *m, int64_t n) {
    int64_t c = 0, i = 0;
    while (n - i >= 8) {
        int64_t blk = (n - i) / 8;
        if (blk > 255) blk = 255;
        uint64_t acc = 0;
        for (int64_t j = 0; j < blk; j++) {
            uint64_t w;
            memcpy(&w, m + i + 8 * j, 8);
            acc += sx_nz_bits(w) >> 7;
        }
        acc = (acc & 0x00ff00ff00ff00ffULL) + ((acc >> 8) & 0x00ff00ff00ff00ffULL);   /* 16-bit lanes */
        c += (int64_t)((acc * 0x0001000100010001ULL) >> 48);
        i += 8 * blk;
    }
    for (; i < n; i++) c += m[i] != 0;
    return c;
}

/* Number of nonzero bytes in a contiguous bool array. */
int64_t sx_count_nonzero(int64_t n, intptr_t mask, int nthreads) {
    const uint8_t *m = (const uint8_t *)mask;
    int64_t c = 0;
    int nt = sx_team(n, SX_PAR_MIN, nthreads);
    if (nt <= 1) return sx_count_bytes(m, n);
    #pragma omp parallel num_threads(nt) reduction(+: c)
    {
        int t, T; sx_thread(&t, &T);
        SX_SPLIT(n, t, T, lo, hi);
        c += sx_count_bytes(m + lo, hi - lo);
    }
    return c;
}

/* out[r] = number of nonzero bytes in row r of a contiguous (rows, len) bool array. */
void sx_count_rows(int64_t rows, int64_t len, intptr_t mask, intptr_t out, int nthreads) {
    const uint8_t *m = (const uint8_t *)mask;
    int64_t *o = (int64_t *)out;
    if (rows == 1) { o[0] = sx_count_nonzero(len, mask, nthreads); return; }
    int nt = sx_team(rows * len, SX_PAR_MIN, nthreads);
    #pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) o[r] = sx_count_bytes(m + r * len, len);
}

/* Positions of the nonzero bytes of a contiguous bool array of `shape`, in row-major
 * order: mode 0 writes coordinate d to the int64 array coords[d]; mode 1 writes the
 * single offset sum_d coord_d * st[d] to `off`. Threads count their slice, then fill
 * from the prefix of the counts before them. */
void sx_nonzero_fill(int nd, const int64_t *shape, intptr_t mask, int mode,
                     const intptr_t *coords, intptr_t off, const int64_t *st, int nthreads) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    if (n <= 0) return;
    const uint8_t *m = (const uint8_t *)mask;
    int nt = sx_team(n, SX_PAR_MIN, nthreads);
    int64_t one[2] = {0, 0};   /* no memory for the threads' counts: one thread, no calloc */
    int64_t *counts = (int64_t *)calloc((size_t)nt + 1, sizeof(int64_t));
    if (!counts) { counts = one; nt = 1; }
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t, T; sx_thread(&t, &T);
        SX_SPLIT(n, t, T, lo, hi);
        counts[t + 1] = sx_count_bytes(m + lo, hi - lo);
        #pragma omp barrier
        int64_t w = 0;
        for (int u = 0; u <= t; u++) w += counts[u];
        int64_t wend = w + counts[t + 1];   /* this slice writes [w, wend) */
        int64_t idx[SX_MAXDIM];
        int64_t acc = sx_unravel(nd, shape, st, lo, idx);
        int64_t inner = shape[nd - 1], sl = st[nd - 1];
        for (int64_t p = lo; p < hi;) {
            int64_t len = inner - idx[nd - 1];
            if (len > hi - p) len = hi - p;
            int64_t i0 = idx[nd - 1];
            /* 8 bytes at a time: zero words skipped; with 8 or more positions of the slice
             * still to write, a word's 8 candidates are stored unconditionally and the cursor
             * advances by each byte's bit (no branch a byte; a zero byte's store is overwritten
             * by a later nonzero one); near the end, one iteration per nonzero byte. The byte
             * loop this replaced ran 9x NumPy's nonzero on a random mask. */
            const uint8_t *mr = m + p;
            for (int64_t i = 0; i < len;) {
                uint64_t bits;
                int64_t step = len - i >= 8 ? 8 : 1;
                if (step == 8) {
                    uint64_t wd;
                    memcpy(&wd, mr + i, 8);
                    bits = sx_nz_bits(wd);
                } else {
                    bits = mr[i] ? 0x80u : 0u;
                }
                if (bits && step == 8 && wend - w >= 8) {
                    if (mode == 1) {
                        int64_t *o = (int64_t *)off, b = acc + i * sl;
                        for (int k = 0; k < 8; k++) { o[w] = b + k * sl; w += (bits >> (8 * k + 7)) & 1; }
                    } else if (nd == 1) {   /* 1-d: no other coordinates (the general loop's */
                        int64_t b = i0 + i, *o = (int64_t *)coords[0];   /* reloads: 3x NumPy) */
                        for (int k = 0; k < 8; k++) { o[w] = b + k; w += (bits >> (8 * k + 7)) & 1; }
                    } else {
                        int64_t b = i0 + i, *last = (int64_t *)coords[nd - 1];   /* hoisted: the stores */
                        for (int k = 0; k < 8; k++) {                          /* may alias coords[] */
                            for (int d = 0; d < nd - 1; d++) ((int64_t *)coords[d])[w] = idx[d];
                            last[w] = b + k;
                            w += (bits >> (8 * k + 7)) & 1;
                        }
                    }
                } else if (mode == 1) {
                    int64_t *o = (int64_t *)off;
                    for (; bits; bits &= bits - 1)
                        o[w++] = acc + (i + (__builtin_ctzll(bits) >> 3)) * sl;
                } else {
                    for (; bits; bits &= bits - 1) {
                        for (int d = 0; d < nd - 1; d++) ((int64_t *)coords[d])[w] = idx[d];
                        ((int64_t *)coords[nd - 1])[w++] = i0 + i + (__builtin_ctzll(bits) >> 3);
                    }
                }
                i += step;
            }
            p += len;
            acc += len * sl;
            idx[nd - 1] += len;
            if (p < hi && idx[nd - 1] == inner) {
                idx[nd - 1] = 0;
                acc += sx_carry(nd, shape, st, idx) - inner * sl;
            }
        }
    }
    if (counts != one) free(counts);
}

/* The first i < n with the contiguous int64 idx[i] outside [lo, hi), or -1 (an embedding's ids). */
int64_t sx_check_range(int64_t n, intptr_t idx, int64_t lo, int64_t hi) {
    const int64_t *x = (const int64_t *)idx;
    for (int64_t i = 0; i < n; i++)
        if (x[i] < lo || x[i] >= hi) return i;
    return -1;
}

/* repeat's index expansion: with out == 0 return the total of the int64 counts, or
 * -(i + 1) for the first negative count i; else write i counts[i] times to out. */
int64_t sx_repeat_index(int64_t n, intptr_t counts, intptr_t out) {
    const int64_t *c = (const int64_t *)counts;
    int64_t total = 0;
    if (!out) {   /* a count past INT64_MAX / n could make the total overflow: -(n + i + 1) */
        for (int64_t i = 0; i < n; i++) {
            if (c[i] < 0) return -(i + 1);
            if (c[i] > INT64_MAX / n) return -(n + i + 1);
        }
        for (int64_t i = 0; i < n; i++) total += c[i];
        return total;
    }
    int64_t *o = (int64_t *)out;
    for (int64_t i = 0; i < n; i++)
        for (int64_t r = 0; r < c[i]; r++) o[total++] = i;
    return total;
}
#endif

/* dst[b * osb + dr(r)] = src[off[b] + sr(r)] for b < nb and r over rshape (nr dims,
 * src strides sst, dst strides dst_st). The (b, r) space is split evenly between threads. */
#define SX_GATHER(W, T)                                                                \
void sx_gather_##W(int64_t nb, intptr_t offp, int64_t osb, int nr, const int64_t *rshape, \
                   const int64_t *sst, const int64_t *dst_st, intptr_t src, intptr_t dst, \
                   int nthreads) {                                                     \
    const int64_t *off = (const int64_t *)offp;                                        \
    const T *s = (const T *)src;                                                       \
    T *d = (T *)dst;                                                                   \
    int64_t rn = 1;                                                                    \
    for (int i = 0; i < nr; i++) rn *= rshape[i];                                      \
    if (nb <= 0 || rn <= 0) return;                                                    \
    if (nr == 0 || rn == 1) {                                                          \
        int nt = sx_team(nb, SX_PAR_MIN, nthreads);                                    \
        _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")       \
        for (int64_t b = 0; b < nb; b++) d[b * osb] = s[off[b]];                       \
        return;                                                                        \
    }                                                                                  \
    int64_t n = nb * rn, inner = rshape[nr - 1];                                       \
    int64_t si = sst[nr - 1], di = dst_st[nr - 1];                                     \
    int nt = sx_team(n, SX_PAR_MIN, nthreads);                                         \
    _Pragma("omp parallel num_threads(nt) if (nt > 1)")                                \
    {                                                                                  \
        int t, T_; sx_thread(&t, &T_);                                                 \
        SX_SPLIT(n, t, T_, lo, hi);                                                    \
        int64_t idx[SX_MAXDIM];                                                        \
        int64_t b = lo / rn;                                                           \
        int64_t so = sx_unravel(nr, rshape, sst, lo % rn, idx);                        \
        int64_t dof = 0;                                                               \
        for (int i = 0; i < nr; i++) dof += idx[i] * dst_st[i];                        \
        for (int64_t p = lo; p < hi;) {                                                \
            int64_t len = inner - idx[nr - 1];                                         \
            if (len > hi - p) len = hi - p;                                            \
            const T *sp = s + off[b] + so;                                             \
            T *dp = d + b * osb + dof;                                                 \
            if (si == 1 && di == 1) memcpy(dp, sp, (size_t)len * sizeof(T));           \
            else for (int64_t i = 0; i < len; i++) dp[i * di] = sp[i * si];            \
            p += len;                                                                  \
            idx[nr - 1] += len; so += len * si; dof += len * di;                       \
            if (p < hi && idx[nr - 1] == inner) {                                      \
                idx[nr - 1] = 0; so -= inner * si; dof -= inner * di;                  \
                int wrapped = 1;                                                       \
                for (int i = nr - 2; i >= 0; i--) {                                    \
                    idx[i]++; so += sst[i]; dof += dst_st[i];                          \
                    if (idx[i] < rshape[i]) { wrapped = 0; break; }                    \
                    so -= idx[i] * sst[i]; dof -= idx[i] * dst_st[i]; idx[i] = 0;      \
                }                                                                      \
                b += wrapped;                                                          \
            }                                                                          \
        }                                                                              \
    }                                                                                  \
}

/* The 1-d hot path of x[idx] / take, fused: dst[b * osb] = src[wrap(idx[b * is]) * xs].
 * The output is fresh memory, so checking while copying is safe; returns the first
 * bad b, or -1. */
#define SX_TAKE(W, T)                                                                  \
int64_t sx_take_##W(int64_t nb, intptr_t idxp, int64_t is, int64_t size, int64_t xs,   \
                    int64_t osb, intptr_t src, intptr_t dst, int nthreads) {            \
    const int64_t *idx = (const int64_t *)idxp;                                        \
    const T *s = (const T *)src;                                                       \
    T *d = (T *)dst;                                                                   \
    int64_t bad = INT64_MAX;                                                           \
    int nt = sx_team(nb, SX_PAR_MIN, nthreads);                                        \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static) reduction(min: bad)") \
    for (int64_t b = 0; b < nb; b++) {                                                 \
        int64_t v = idx[b * is];                                                       \
        v += v < 0 ? size : 0;                                                         \
        if ((uint64_t)v >= (uint64_t)size) { bad = b < bad ? b : bad; continue; }      \
        d[b * osb] = s[v * xs];                                                        \
    }                                                                                  \
    return bad == INT64_MAX ? -1 : bad;                                                \
}

/* The 1-d hot path of x[idx] = v, fused: a read-only bounds pass (returns the first bad
 * b, having written nothing), then dst[wrap(idx[b * is]) * xs] = val[b * vs] in order.
 * The caller passes an idx that dst does not overlap (tensor/aliasing.py: stable); the
 * write pass checks again anyway, so a broken promise can never write out of bounds. */
#define SX_PUT(W, T)                                                                   \
int64_t sx_put_##W(int64_t nb, intptr_t idxp, int64_t is, int64_t size, int64_t xs,    \
                   intptr_t val, int64_t vs, intptr_t dst) {                           \
    const int64_t *idx = (const int64_t *)idxp;                                        \
    const T *v = (const T *)val;                                                       \
    T *d = (T *)dst;                                                                   \
    for (int64_t b = 0; b < nb; b++) {                                                 \
        int64_t i = idx[b * is];                                                       \
        if ((uint64_t)(i + (i < 0 ? size : 0)) >= (uint64_t)size) return b;            \
    }                                                                                  \
    for (int64_t b = 0; b < nb; b++) {                                                 \
        int64_t i = idx[b * is];                                                       \
        i += i < 0 ? size : 0;                                                         \
        if ((uint64_t)i >= (uint64_t)size) return b;                                   \
        d[i * xs] = v[b * vs];                                                         \
    }                                                                                  \
    return -1;                                                                         \
}

/* For each index position b in order (nbd dims bshape; value strides vbs; destination
 * offset off[b]), and each r over rshape (nr dims; destination strides dst_st, value
 * strides vrs): OP(dst[off[b] + dr(r)], val[vb(b) + vr(r)]). Threads own disjoint
 * slices of r and walk every b in order, so repeated positions resolve as sequentially. */
#define SX_SCATTER(NAME, T, OP)                                                        \
void NAME(int nbd, const int64_t *bshape, const int64_t *vbs, intptr_t offp,           \
          int nr, const int64_t *rshape, const int64_t *dst_st, const int64_t *vrs,     \
          intptr_t dst, intptr_t val, int nthreads) {                                  \
    const int64_t *off = (const int64_t *)offp;                                        \
    T *d = (T *)dst;                                                                   \
    const T *v = (const T *)val;                                                       \
    int64_t nb = 1, rn = 1;                                                            \
    for (int i = 0; i < nbd; i++) nb *= bshape[i];                                     \
    for (int i = 0; i < nr; i++) rn *= rshape[i];                                      \
    if (nb <= 0 || rn <= 0) return;                                                    \
    if (nr == 0 && nbd <= 1) {  /* the common 1-d scatter: one sequential pass */      \
        int64_t bs = nbd ? vbs[0] : 0;                                                 \
        for (int64_t b = 0; b < nb; b++) OP(&d[off[b]], v[b * bs]);                    \
        return;                                                                        \
    }                                                                                  \
    int nt = rn >= SX_IDX_PAR_MIN ? sx_team(nb * rn, SX_PAR_MIN, nthreads) : 1;        \
    _Pragma("omp parallel num_threads(nt) if (nt > 1)")                                \
    {                                                                                  \
        int t, T_; sx_thread(&t, &T_);                                                 \
        SX_SPLIT(rn, t, T_, lo, hi);                                                   \
        int64_t bidx[SX_MAXDIM], ridx[SX_MAXDIM];                                      \
        int64_t vb = 0;                                                                \
        for (int i = 0; i < nbd; i++) bidx[i] = 0;                                     \
        int64_t bin = nbd ? bshape[nbd - 1] : 1, bs = nbd ? vbs[nbd - 1] : 0;          \
        for (int64_t b = 0; b < nb; b++) {                                             \
            if (nr == 0) {                                                             \
                OP(&d[off[b]], v[vb]);                                                 \
            } else {                                                                   \
                int64_t dr = sx_unravel(nr, rshape, dst_st, lo, ridx);                 \
                int64_t vr = 0;                                                        \
                for (int i = 0; i < nr; i++) vr += ridx[i] * vrs[i];                   \
                int64_t rin = rshape[nr - 1], ds = dst_st[nr - 1], vs = vrs[nr - 1];   \
                for (int64_t p = lo; p < hi;) {                                        \
                    int64_t len = rin - ridx[nr - 1];                                  \
                    if (len > hi - p) len = hi - p;                                    \
                    T *dp = d + off[b] + dr;                                           \
                    const T *vp = v + vb + vr;                                         \
                    for (int64_t i = 0; i < len; i++) OP(&dp[i * ds], vp[i * vs]);    \
                    p += len; ridx[nr - 1] += len; dr += len * ds; vr += len * vs;     \
                    if (p < hi && ridx[nr - 1] == rin) {                               \
                        ridx[nr - 1] = 0;                                              \
                        dr += sx_carry(nr, rshape, dst_st, ridx) - rin * ds;           \
                        vr = 0;                                                        \
                        for (int i = 0; i < nr; i++) vr += ridx[i] * vrs[i];           \
                    }                                                                  \
                }                                                                      \
            }                                                                          \
            if (nbd) {                                                                 \
                bidx[nbd - 1]++; vb += bs;                                             \
                if (bidx[nbd - 1] == bin && b + 1 < nb) {                              \
                    bidx[nbd - 1] = 0;                                                 \
                    vb += sx_carry(nbd, bshape, vbs, bidx) - bin * bs;                 \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    }                                                                                  \
}

#define SX_SCATTER_SET(W, T)                                                           \
SX_INLINE void sx_set_##W(T *d, T v) { *d = v; }                                       \
SX_SCATTER(sx_scatter_##W, T, sx_set_##W)

/* bool accumulates as logical or: ST_b8 maps any nonzero sum to 1. */
#define SX_SCATTER_ADD(S)                                                              \
SX_INLINE void sx_add_##S(T_##S *d, T_##S v) { *d = ST_##S(LD_##S(*d) + LD_##S(v)); }  \
SX_SCATTER(sx_scatter_add_##S, T_##S, sx_add_##S)
/* complex: C has no + on structs */
#define SX_SCATTER_CADD(S)                                                             \
SX_INLINE void sx_add_##S(T_##S *d, T_##S v) { *d = sx_cadd(*d, v); }                  \
SX_SCATTER(sx_scatter_add_##S, T_##S, sx_add_##S)
