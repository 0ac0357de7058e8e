/* CPU sort kernels (family "sort", one module per dtype; CUDA twin: cuda_src/sort.cuh).
 *
 * sx_sort_rows_<sfx>: each of `rows` contiguous rows of length L sorted stably by the shared
 *   order-preserving keys (cuda_src/scalar/sort_key.h): iout gets the int64 positions in the
 *   row, vout (when not 0) the values. A stable sort is unique, so the CUDA radix sort gives
 *   the same indices. Short rows: merge sort of (key, position) pairs, insertion-sorted runs
 *   of 16, then bottom-up merges that take from the left run on ties (stability); rows of
 *   >= 128 x itemsize elements: LSD radix sort of the pairs (8-byte pairs for keys of <= 4
 *   bytes); rows already in key order: no sort. OpenMP across rows.
 *   Returns 0, or -1 when a thread's scratch (2 L pairs) could not be allocated.
 * sx_topk_rows_<sfx> (family "topk", SX_TOPK_DEF; CPU only): the first k of each row's
 *   stable sort (what sx_sort_rows gives, cut to k): a bounded max-heap of the k least
 *   (key, position) pairs seen so far, then a sort of those k. Pairs are distinct (positions are), so the selection is the sort's prefix bit for
 *   bit; an element whose key equals the heap's largest comes later in the row, so it never
 *   displaces it (stability). O(L) for most rows (one compare an element once the heap is
 *   warm); at worst O(L log k) (rows already in reverse order). iout / vout hold k per row.
 * sx_partition_rows_<sfx> (family "partition", SX_PARTITION_DEF; CPU only): NumPy's
 *   (arg)partition of each contiguous row at the ascending, distinct positions kth[0 .. m):
 *   position kth[j] gets the element the stable sort puts there, those before it rank below it
 *   and those after above (NaN last; any such order is valid, as NumPy's). Ranks are those of
 *   the distinct (key, position) pairs the stable sort orders by, packed into one integer; an
 *   introselect (quickselect with the median of 3 pseudo-random elements as pivot, a
 *   branch-free Lomuto partition, a heap sort past its depth limit) places each kth in turn.
 *   O(L) a row where the sort it replaced cost several passes (20x NumPy's partition of 2^18
 *   float32). Deterministic: equal rows give equal output. Returns 0, or -1 when scratch could
 *   not be allocated.
 * sx_searchsorted_<sfx>: out[j] = the insertion point of v[j] in the ascending contiguous a
 *   (left: first i with key(a[i]) >= key(v[j]); right: first with >), by the same keys, so
 *   NaNs and signed zeros place exactly as sort orders them. */
#ifndef STRIDEX_SORT_H
#define STRIDEX_SORT_H
#include "common.h"
#include "scalar/sort_key.h"

/* sx_unkey_<sfx>(k, &r): the bits r whose ascending key is k; 0 where that is not unique (a
 * float's zero and NaN keys: -0.0 / +0.0, every NaN), 1 otherwise. */
#define SX_UNKEY_F(S, U, SIGN, MASK)                                                            \
    static inline int sx_unkey_##S(uint64_t k, U *r) {                                          \
        *r = (U)(k >= (SIGN) ? k ^ (SIGN) : ~k & (MASK));                                       \
        return k != (SIGN) && k != (MASK);                                                      \
    }
#define SX_UNKEY_I(S, U, FLIP)                                                                  \
    static inline int sx_unkey_##S(uint64_t k, U *r) { *r = (U)(k ^ (FLIP)); return 1; }
SX_UNKEY_F(f16, uint16_t, 0x8000u, 0xffffu)
SX_UNKEY_F(bf16, uint16_t, 0x8000u, 0xffffu)
SX_UNKEY_F(f32, uint32_t, 0x80000000u, 0xffffffffu)
SX_UNKEY_F(f64, uint64_t, 0x8000000000000000ull, ~0ull)
SX_UNKEY_I(u8, uint8_t, 0)
SX_UNKEY_I(i8, uint8_t, 0x80u)
SX_UNKEY_I(i16, uint16_t, 0x8000u)
SX_UNKEY_I(u16, uint16_t, 0)
SX_UNKEY_I(i32, uint32_t, 0x80000000u)
SX_UNKEY_I(u32, uint32_t, 0)
SX_UNKEY_I(i64, uint64_t, 0x8000000000000000ull)
SX_UNKEY_I(u64, uint64_t, 0)
/* bool: any nonzero byte is True, so its bits are read at its position */
static inline int sx_unkey_b8(uint64_t k, uint8_t *r) { *r = (uint8_t)k; return 0; }

typedef struct { uint64_t k; int64_t i; } sx_kv;
typedef void (*sx_keys_fn)(const char *x, int64_t n, int desc, sx_kv *kv);

#define SX_SORT_RUN 16

static sx_kv *sx_merge_sort(sx_kv *a, sx_kv *tmp, int64_t n) {
    for (int64_t lo = 0; lo < n; lo += SX_SORT_RUN) {
        int64_t hi = lo + SX_SORT_RUN < n ? lo + SX_SORT_RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            sx_kv v = a[i];
            int64_t j = i;
            for (; j > lo && a[j - 1].k > v.k; j--) a[j] = a[j - 1];
            a[j] = v;
        }
    }
    for (int64_t w = SX_SORT_RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = a[j].k < a[i].k ? a[j++] : a[i++];
            while (i < mid) tmp[o++] = a[i++];
            while (j < hi) tmp[o++] = a[j++];
        }
        sx_kv *t = a; a = tmp; tmp = t;
    }
    return a;
}

/* LSD radix sort of the pairs by their keys, over only the bits that differ between keys
 * (one OR pass finds them: integers below 1000 sort in one pass of 10 bits, not two of a
 * byte each), in passes of equal digits of at most 8 bits, or 11 from SX_RADIX11_MIN pairs,
 * where the longer prefix sums pay for a pass fewer (3 instead of 4 for 32 bits). Stable, so
 * it gives the merge sort's permutation; it reads the pairs 2 + passes times instead of
 * log2(n / 16) times, without the merge's unpredictable branches (a 1M-element float32 sort
 * was 30x NumPy's time, rows of 1000 elements 37 ns an element). `bytes`: the key's width. */
#define SX_RADIX_MIN 512   /* elements per key byte from which radix beats merging */
#define SX_RADIX11_MIN 32768

#define SX_RADIX_DEF(NAME, PAIR)                                                            \
static PAIR *NAME(PAIR *a, PAIR *tmp, int64_t n, int bytes) {                               \
    int64_t cnt[8][2048];                                                                   \
    uint64_t k0 = a[0].k, diff = 0;                                                         \
    for (int64_t i = 0; i < n; i++) diff |= a[i].k ^ k0;                                    \
    if (diff == 0 || bytes <= 0) return a;                                                  \
    const int lo = __builtin_ctzll(diff), span = 64 - __builtin_clzll(diff) - lo;           \
    const int Dmax = n >= SX_RADIX11_MIN ? 11 : 8, passes = (span + Dmax - 1) / Dmax;       \
    const int D = (span + passes - 1) / passes;                                             \
    const uint64_t R = (uint64_t)1 << D, M = R - 1;                                         \
    for (int b = 0; b < passes; b++) memset(cnt[b], 0, sizeof(int64_t) * R);                \
    for (int64_t i = 0; i < n; i++) {                                                       \
        uint64_t k = a[i].k >> lo;                                                          \
        for (int b = 0; b < passes; b++) cnt[b][(k >> (D * b)) & M]++;                      \
    }                                                                                       \
    for (int b = 0; b < passes; b++) {                                                      \
        int64_t *c = cnt[b];                                                                \
        const int sh = lo + D * b;                                                          \
        if (c[(k0 >> sh) & M] == n) continue;   /* one bucket: nothing moves */             \
        int64_t sum = 0;                                                                    \
        for (uint64_t d = 0; d < R; d++) { int64_t v = c[d]; c[d] = sum; sum += v; }        \
        for (int64_t i = 0; i < n; i++) tmp[c[(a[i].k >> sh) & M]++] = a[i];                \
        PAIR *t = a; a = tmp; tmp = t;                                                      \
    }                                                                                       \
    return a;                                                                               \
}
/* Keys of at most 4 bytes and rows under 2^32 elements sort 8-byte pairs: half the memory
 * traffic of a pass. */
typedef struct { uint32_t k, i; } sx_kv32;
typedef void (*sx_keys32_fn)(const char *x, int64_t n, int desc, sx_kv32 *kv);
SX_RADIX_DEF(sx_radix_sort, sx_kv)
SX_RADIX_DEF(sx_radix_sort32, sx_kv32)

/* out[j] = the int64 positions, vout[j] (when not NULL) the values, of the sorted pairs s */
#define SX_SORT_OUT(s, VALS)                                                                  \
    do {                                                                                    \
        for (int64_t j = 0; j < L; j++) iout[r * L + j] = (s)[j].i;                         \
        if (vout && VALS) {                                                                 \
            VALS((s), L, desc, xr, vout + r * L * width);                                   \
        } else if (vout) {   /* a fixed-size copy per width: memcpy of a run-time size is a call */ \
            char *vr = vout + r * L * width;                                                \
            switch (width) {                                                                \
            case 1: for (int64_t j = 0; j < L; j++) vr[j] = xr[(s)[j].i]; break;            \
            case 2: for (int64_t j = 0; j < L; j++) memcpy(vr + 2 * j, xr + 2 * (int64_t)(s)[j].i, 2); break; \
            case 4: for (int64_t j = 0; j < L; j++) memcpy(vr + 4 * j, xr + 4 * (int64_t)(s)[j].i, 4); break; \
            case 8: for (int64_t j = 0; j < L; j++) memcpy(vr + 8 * j, xr + 8 * (int64_t)(s)[j].i, 8); break; \
            default:                                                                        \
                for (int64_t j = 0; j < L; j++)                                             \
                    memcpy(vr + j * width, xr + (int64_t)(s)[j].i * width, width);          \
            }                                                                               \
        }                                                                                   \
    } while (0)

/* vals / vals32 (or NULL: a gather by position): the sorted values written from the sorted
 * pairs' keys, which hold every value but NaN's and -0.0's bits (those read at their position):
 * a sequential pass where the gather was a random one (half of a 2^18 int64 sort's time). */
typedef void (*sx_vals_fn)(const sx_kv *s, int64_t L, int desc, const char *x, char *out);
typedef void (*sx_vals32_fn)(const sx_kv32 *s, int64_t L, int desc, const char *x, char *out);

SX_INLINE int sx_sort_rows_impl(int64_t rows, int64_t L, const char *x, char *vout, int64_t *iout,
                                 int desc, int nthreads, int width, sx_keys_fn keys,
                                 sx_keys32_fn keys32, sx_vals_fn vals, sx_vals32_fn vals32) {
    int nt = (rows > 1 && rows * L >= 4096 && nthreads > 1) ? nthreads : 1, failed = 0;
    int radix = L >= SX_RADIX_MIN / 4 * width, compact = radix && width <= 4 && L <= UINT32_MAX;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(|: failed)
    {
        sx_kv *buf = (sx_kv *)malloc(2 * (size_t)L * sizeof(sx_kv));
        failed |= buf == NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < rows; r++) {
            if (buf == NULL) continue;
            const char *xr = x + r * L * width;
            int64_t up = 1;   /* keys already in order (sorted or constant input): nothing moves */
            if (compact) {
                sx_kv32 *a = (sx_kv32 *)buf;
                keys32(xr, L, desc, a);
                while (up < L && a[up - 1].k <= a[up].k) up++;
                sx_kv32 *s = up >= L ? a : sx_radix_sort32(a, a + L, L, width);
                SX_SORT_OUT(s, vals32);
            } else {
                keys(xr, L, desc, buf);
                while (up < L && buf[up - 1].k <= buf[up].k) up++;
                sx_kv *s = up >= L ? buf : radix ? sx_radix_sort(buf, buf + L, L, width)
                                                 : sx_merge_sort(buf, buf + L, L);
                SX_SORT_OUT(s, vals);
            }
        }
        free(buf);
    }
    return failed ? -1 : 0;
}

/* (a.k, a.i) > (b.k, b.i): the order of distinct (key, position) pairs */
#define SX_KV_GT(a, b) ((a).k > (b).k || ((a).k == (b).k && (a).i > (b).i))

static inline void sx_heap_down(sx_kv *h, int64_t n, int64_t j) {   /* max-heap of n pairs */
    sx_kv v = h[j];
    for (;;) {
        int64_t c = 2 * j + 1;
        if (c >= n) break;
        if (c + 1 < n && SX_KV_GT(h[c + 1], h[c])) c++;
        if (!SX_KV_GT(h[c], v)) break;
        h[j] = h[c];
        j = c;
    }
    h[j] = v;
}

#define SX_TOPK_DEF(S, U)                                                                      \
int sx_topk_rows_##S(int64_t rows, int64_t L, int64_t k, intptr_t x, intptr_t vout,           \
                     intptr_t iout, int desc, int nthreads) {                                   \
    int nt = (rows > 1 && rows * L >= 4096 && nthreads > 1) ? nthreads : 1, failed = 0;         \
    _Pragma("omp parallel num_threads(nt) if (nt > 1) reduction(|: failed)")                    \
    {                                                                                           \
        sx_kv *h = (sx_kv *)malloc((size_t)(k > 0 ? k : 1) * sizeof(sx_kv));                    \
        failed |= h == NULL;                                                                    \
        _Pragma("omp for schedule(dynamic, 1)")                                                 \
        for (int64_t r = 0; r < rows; r++) {                                                    \
            if (h == NULL || k == 0) continue;                                                  \
            const U *p = (const U *)x + r * L;                                                  \
            for (int64_t i = 0; i < k; i++) { h[i].k = sx_sort_key_##S(p[i], desc); h[i].i = i; } \
            for (int64_t j = k / 2 - 1; j >= 0; j--) sx_heap_down(h, k, j);                     \
            uint64_t top = h[0].k;                                                              \
            for (int64_t i = k; i < L; i++) {                                                   \
                uint64_t kk = sx_sort_key_##S(p[i], desc);                                      \
                if (kk < top) {   /* equal keys: the later position is the greater pair */      \
                    h[0].k = kk; h[0].i = i;                                                    \
                    sx_heap_down(h, k, 0);                                                      \
                    top = h[0].k;                                                               \
                }                                                                               \
            }                                                                                   \
            for (int64_t n = k - 1; n > 0; n--) {   /* heap sort: ascending (key, position) */  \
                sx_kv t = h[0]; h[0] = h[n]; h[n] = t;                                          \
                sx_heap_down(h, n, 0);                                                          \
            }                                                                                   \
            int64_t *io = (int64_t *)iout + r * k;                                              \
            U *vo = vout ? (U *)vout + r * k : NULL;                                            \
            for (int64_t j = 0; j < k; j++) {                                                   \
                io[j] = h[j].i;                                                                 \
                if (vo) vo[j] = p[h[j].i];                                                      \
            }                                                                                   \
        }                                                                                       \
        free(h);                                                                                \
    }                                                                                           \
    return failed ? -1 : 0;                                                                     \
}

/* Introselect on distinct packed (key, position) integers of type W: afterwards a[k] holds the
 * one of rank k among a[lo, hi] and a[lo, k) < a[k] < a(k, hi]. */
#define SX_SELECT_DEF(NAME, W)                                                                   \
static void NAME##_heapsort(W *a, int64_t n) {                                                  \
    for (int64_t s = n / 2; s-- > 0;) {                                                         \
        for (int64_t j = s;;) {                                                                 \
            int64_t c = 2 * j + 1;                                                              \
            if (c >= n) break;                                                                  \
            if (c + 1 < n && a[c + 1] > a[c]) c++;                                              \
            if (a[c] <= a[j]) break;                                                            \
            W t = a[c]; a[c] = a[j]; a[j] = t; j = c;                                           \
        }                                                                                       \
    }                                                                                           \
    for (int64_t e = n - 1; e > 0; e--) {                                                       \
        W t = a[0]; a[0] = a[e]; a[e] = t;                                                      \
        for (int64_t j = 0;;) {                                                                 \
            int64_t c = 2 * j + 1;                                                              \
            if (c >= e) break;                                                                  \
            if (c + 1 < e && a[c + 1] > a[c]) c++;                                              \
            if (a[c] <= a[j]) break;                                                            \
            W u = a[c]; a[c] = a[j]; a[j] = u; j = c;                                           \
        }                                                                                       \
    }                                                                                           \
}                                                                                               \
static void NAME(W *a, int64_t lo, int64_t hi, int64_t k) {                                     \
    int depth = 8;                                                                              \
    uint64_t rs = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(hi - lo + 1);                              \
    for (int64_t n = hi - lo + 1; n > 1; n >>= 1) depth += 2;                                   \
    while (hi > lo) {                                                                           \
        if (hi - lo < 16 || depth-- == 0) {   /* short: insertion; too deep: heap sort */       \
            if (hi - lo < 16) {                                                                 \
                for (int64_t i = lo + 1; i <= hi; i++) {                                        \
                    W v = a[i]; int64_t j = i;                                                  \
                    for (; j > lo && a[j - 1] > v; j--) a[j] = a[j - 1];                        \
                    a[j] = v;                                                                   \
                }                                                                               \
            } else {                                                                            \
                NAME##_heapsort(a + lo, hi - lo + 1);                                           \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        /* the median of 3 elements at pseudo-random positions (xorshift, seeded by the row's \
         * length: deterministic), moved to a[hi]: fixed positions let orders such as organ \
         * pipes drive every step into the heap sort (100 ms for 2^18 elements) */              \
        uint64_t n = (uint64_t)(hi - lo + 1);                                                   \
        int64_t c[3];                                                                           \
        for (int q = 0; q < 3; q++) {                                                           \
            rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;                                      \
            c[q] = lo + (int64_t)(rs % n);                                                      \
        }                                                                                       \
        int64_t med = (a[c[0]] < a[c[1]])                                                       \
            ? (a[c[1]] < a[c[2]] ? c[1] : (a[c[0]] < a[c[2]] ? c[2] : c[0]))                    \
            : (a[c[0]] < a[c[2]] ? c[0] : (a[c[1]] < a[c[2]] ? c[2] : c[1]));                   \
        W t = a[med]; a[med] = a[hi]; a[hi] = t;                                                \
        W p = a[hi];                                                                            \
        int64_t i = lo;   /* branch-free Lomuto: a[lo, i) < p <= a[i, j) */                      \
        for (int64_t j = lo; j < hi; j++) {                                                     \
            W v = a[j]; a[j] = a[i]; a[i] = v;                                                  \
            i += v < p;                                                                         \
        }                                                                                       \
        a[hi] = a[i]; a[i] = p;                                                                 \
        if (i == k) return;                                                                     \
        if (k < i) hi = i - 1; else lo = i + 1;                                                 \
    }                                                                                           \
}
typedef unsigned __int128 sx_u128;
SX_SELECT_DEF(sx_select64, uint64_t)
SX_SELECT_DEF(sx_select128, sx_u128)

/* One row of sx_partition_rows with packed pairs of type W (key << SH | position): select each
 * kth in turn (the later ones right of the earlier), then read the positions off the pairs. */
#define SX_PART_ROW(W, SH, KEY)                                                                  \
    do {                                                                                        \
        W *a = (W *)buf;                                                                        \
        for (int64_t i = 0; i < L; i++) a[i] = ((W)KEY(p[i]) << SH) | (W)i;                     \
        int64_t lo = 0;                                                                         \
        for (int64_t j = 0; j < m; j++) {                                                       \
            _Generic(a, uint64_t *: sx_select64, sx_u128 *: sx_select128)(a, lo, L - 1, kth[j]); \
            lo = kth[j] + 1;                                                                    \
        }                                                                                       \
        const W low = ((W)1 << SH) - 1;                                                         \
        for (int64_t i = 0; i < L; i++) io[i] = (int64_t)(a[i] & low);                          \
        if (vo) for (int64_t i = 0; i < L; i++) vo[i] = p[io[i]];                               \
    } while (0)

#define SX_PARTITION_DEF(S, U)                                                                 \
static inline uint64_t sx_skey_##S##_asc(U r) { return sx_sort_key_##S(r, 0); }          \
int sx_partition_rows_##S(int64_t rows, int64_t L, intptr_t x, intptr_t vout, intptr_t iout,  \
                          int64_t m, const int64_t *kth, int nthreads) {                        \
    int nt = (rows > 1 && rows * L >= 4096 && nthreads > 1) ? nthreads : 1, failed = 0;         \
    int compact = sizeof(U) <= 4 && L <= (int64_t)UINT32_MAX;                                   \
    size_t wsz = compact ? sizeof(uint64_t) : sizeof(sx_u128);                                  \
    _Pragma("omp parallel num_threads(nt) if (nt > 1) reduction(|: failed)")                    \
    {                                                                                           \
        void *buf = malloc((size_t)L * wsz);                                                    \
        failed |= buf == NULL;                                                                  \
        _Pragma("omp for schedule(dynamic, 1)")                                                 \
        for (int64_t r = 0; r < rows; r++) {                                                    \
            if (buf == NULL) continue;                                                          \
            const U *p = (const U *)x + r * L;                                                  \
            int64_t *io = (int64_t *)iout + r * L;                                              \
            U *vo = vout ? (U *)vout + r * L : NULL;                                            \
            if (compact) {                                                                      \
                SX_PART_ROW(uint64_t, 32, sx_skey_##S##_asc);                               \
            } else {                                                                            \
                SX_PART_ROW(sx_u128, 64, sx_skey_##S##_asc);                                \
            }                                                                                   \
        }                                                                                       \
        free(buf);                                                                              \
    }                                                                                           \
    return failed ? -1 : 0;                                                                     \
}

/* Binary search over the n keys KEY(ARR[i], 0): the first i whose key is >= kv (left) or > kv
 * (right), probing as the classic lo / hi search does (mid = lo + len / 2), so that an unsorted
 * array, which digitize may pass, gives the answer it gave before and NumPy's gives. */
#define SX_BSEARCH(KEY, ARR, n, kv, right, out)                                                 \
    do {                                                                                        \
        int64_t lo_ = 0, hi_ = (n);                                                             \
        while (lo_ < hi_) {                                                                     \
            int64_t mid_ = lo_ + (hi_ - lo_) / 2;                                               \
            uint64_t km_ = KEY((ARR)[mid_], 0);                                                 \
            if ((right) ? km_ <= (kv) : km_ < (kv)) lo_ = mid_ + 1; else hi_ = mid_;            \
        }                                                                                       \
        (out) = lo_;                                                                            \
    } while (0)
/* The same over n >= 1 sorted keys ka, where every search order gives that answer: a step by
 * a select, not a branch on the data, and the same number of steps for every query (so the
 * loop's one branch predicts): 5x the classic search's speed on random queries. */
#define SX_BSEARCH_SORTED(ka, n, kv, right, out)                                                \
    do {                                                                                        \
        int64_t base_ = 0, len_ = (n);                                                          \
        if (right) {                                                                            \
            while (len_ > 1) {                                                                  \
                int64_t half_ = len_ >> 1;                                                      \
                base_ += (ka)[base_ + half_ - 1] <= (kv) ? half_ : 0;                           \
                len_ -= half_;                                                                  \
            }                                                                                   \
            (out) = base_ + ((ka)[base_] <= (kv));                                              \
        } else {                                                                                \
            while (len_ > 1) {                                                                  \
                int64_t half_ = len_ >> 1;                                                      \
                base_ += (ka)[base_ + half_ - 1] < (kv) ? half_ : 0;                            \
                len_ -= half_;                                                                  \
            }                                                                                   \
            (out) = base_ + ((ka)[base_] < (kv));                                               \
        }                                                                                       \
    } while (0)
#define SX_KEYED(k, desc) (k)
#define SX_SS_BLOCK 256

/* With no more elements in a than queries, a's keys are computed once (a float's key costs
 * more than a search step's compare: a 2^18 histogram's search of 65 edges was 7x NumPy) and
 * checked to be in order, which lets the search step without branches; without memory for
 * them, or with more elements than queries, each step keys its element. Queries go in blocks
 * whose keys are computed first (a vectorised loop). */
#define SX_SEARCHSORTED_DEF(S, U)                                                              \
void sx_searchsorted_##S(int64_t n, intptr_t a, int64_t m, intptr_t v, int right,              \
                         intptr_t out, int nthreads) {                                          \
    const U *ap = (const U *)a, *vp = (const U *)v;                                             \
    int64_t *o = (int64_t *)out;                                                                \
    if (n == 0) { for (int64_t j = 0; j < m; j++) o[j] = 0; return; }                           \
    uint64_t *ka = n <= m ? (uint64_t *)malloc((size_t)n * sizeof(uint64_t)) : NULL;            \
    int sorted = ka != NULL;                                                                    \
    if (ka) for (int64_t i = 0; i < n; i++) {                                                   \
        ka[i] = sx_sort_key_##S(ap[i], 0);                                                          \
        sorted &= i == 0 || ka[i - 1] <= ka[i];                                                 \
    }                                                                                           \
    int64_t nblk = (m + SX_SS_BLOCK - 1) / SX_SS_BLOCK;                                         \
    int nt = (m >= 4096 && nthreads > 1) ? nthreads : 1;                                        \
    _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")                    \
    for (int64_t blk = 0; blk < nblk; blk++) {                                                  \
        int64_t j0 = blk * SX_SS_BLOCK, nj = m - j0 < SX_SS_BLOCK ? m - j0 : SX_SS_BLOCK;       \
        uint64_t kb[SX_SS_BLOCK];                                                               \
        for (int64_t j = 0; j < nj; j++) kb[j] = sx_sort_key_##S(vp[j0 + j], 0);                    \
        if (sorted) {                                                                           \
            for (int64_t j = 0; j < nj; j++) SX_BSEARCH_SORTED(ka, n, kb[j], right, o[j0 + j]); \
        } else if (ka) {                                                                        \
            for (int64_t j = 0; j < nj; j++) SX_BSEARCH(SX_KEYED, ka, n, kb[j], right, o[j0 + j]); \
        } else {                                                                                \
            for (int64_t j = 0; j < nj; j++) SX_BSEARCH(sx_sort_key_##S, ap, n, kb[j], right, o[j0 + j]); \
        }                                                                                       \
    }                                                                                           \
    free(ka);                                                                                   \
}

/* The values of the sorted pairs s from their keys (sx_unkey), or at their positions in x
 * where the key does not say (NaN, zeros; a run each). A descending key is the ascending one
 * inverted within the width. */
#define SX_VALS_DEF(S, U, NAME, PAIR)                                                          \
static void NAME(const PAIR *s, int64_t L, int desc, const char *x, char *out) {                \
    const U *xp = (const U *)x;                                                                 \
    U *o = (U *)out;                                                                            \
    const uint64_t wmask = sizeof(U) == 8 ? ~0ull : ((uint64_t)1 << (8 * sizeof(U))) - 1;       \
    for (int64_t j = 0; j < L; j++) {                                                           \
        uint64_t k = (uint64_t)s[j].k;                                                          \
        U r;                                                                                    \
        if (!sx_unkey_##S(desc ? ~k & wmask : k, &r)) r = xp[s[j].i];                           \
        o[j] = r;                                                                               \
    }                                                                                           \
}

#define SX_SORT(S, U)                                                                          \
static void sx_keys_##S(const char *x, int64_t n, int desc, sx_kv *kv) {                        \
    const U *p = (const U *)x;                                                                  \
    for (int64_t i = 0; i < n; i++) { kv[i].k = sx_sort_key_##S(p[i], desc); kv[i].i = i; }     \
}                                                                                               \
static void sx_keys32_##S(const char *x, int64_t n, int desc, sx_kv32 *kv) {                    \
    const U *p = (const U *)x;   /* used for keys of <= 4 bytes only: they fit */               \
    for (int64_t i = 0; i < n; i++) {                                                           \
        kv[i].k = (uint32_t)sx_sort_key_##S(p[i], desc); kv[i].i = (uint32_t)i; }               \
}                                                                                               \
SX_VALS_DEF(S, U, sx_vals_##S, sx_kv)                                                           \
SX_VALS_DEF(S, U, sx_vals32_##S, sx_kv32)                                                       \
int sx_sort_rows_##S(int64_t rows, int64_t L, intptr_t x, intptr_t vout, intptr_t iout,         \
                     int desc, int nthreads) {                                                  \
    return sx_sort_rows_impl(rows, L, (const char *)x, (char *)vout, (int64_t *)iout, desc, nthreads,  \
                             (int)sizeof(U), sx_keys_##S, sx_keys32_##S, sx_vals_##S, sx_vals32_##S); \
}                                                                                               \
SX_SEARCHSORTED_DEF(S, U)

#endif
