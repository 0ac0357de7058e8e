/*
 * random.c -- CPU random fills driven by the counter-based Philox4x32-10
 * stream defined in cuda_src/philox.h (the same header the CUDA kernels use,
 * so a given (seed, offset) produces the same bits on both devices).
 *
 * Every fill writes n values into a contiguous buffer (passed as intptr_t)
 * and consumes blocks offset .. offset + blocks - 1, where blocks is
 * philox_blocks_32(n) = ceil(n/4) for 32-bit kinds (bits32, uniform_f32,
 * normal_f32) and philox_blocks_64(n) = ceil(n/2) for 64-bit kinds
 * (uniform_f64, normal_f64, int64, perm_keys, randperm).  The caller advances
 * its offset by that count.  Each output element is a pure function of
 * (seed, offset, index), so results do not depend on nthreads.
 * Buffers must not overlap (no aliasing with anything else).
 *
 * Build: gcc -O3 -march=native -fopenmp -std=gnu11 -fPIC -shared
 *        -I<repo>/cuda_src random.c -lm     (never with -ffast-math)
 */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <omp.h>

#include "philox.h"

/* Work is split into chunks of CHUNK_BLOCKS Philox blocks.  Each chunk first
 * generates its raw words into an L1-resident stack buffer (a tight loop the
 * compiler vectorizes across blocks) and then converts them.  Chunks are
 * distributed with schedule(static); since every value depends only on
 * (seed, offset, index), the result is independent of nthreads. */
#define CHUNK_BLOCKS 256
/* Below this many chunks the fill runs on the calling thread only. */
#define PAR_MIN_CHUNKS 32

static inline int rand_nthreads(int nthreads)
{
    return nthreads > 0 ? nthreads : omp_get_max_threads();
}

static inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* buf[4*b + k] = word k of block first + b, b < nb */
static inline void fill_words32(uint32_t *restrict buf, philox4x32_key_t key,
                                uint64_t first, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++) {
        philox4x32_ctr_t r = philox_block_k(key, first + (uint64_t)b);
        buf[4 * b + 0] = r.v[0];
        buf[4 * b + 1] = r.v[1];
        buf[4 * b + 2] = r.v[2];
        buf[4 * b + 3] = r.v[3];
    }
}

/* buf[2*b + h] = 64-bit word h of block first + b, b < nb */
static inline void fill_words64(uint64_t *restrict buf, philox4x32_key_t key,
                                uint64_t first, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++) {
        philox4x32_ctr_t r = philox_block_k(key, first + (uint64_t)b);
        buf[2 * b + 0] = philox_u64(r, 0);
        buf[2 * b + 1] = philox_u64(r, 1);
    }
}

/* Chunk loop scaffolding.  Inside the body (the variadic argument):
 * i0 = index of the chunk's first value, cnt = number of values of this
 * chunk to write (<= VPB*CHUNK_BLOCKS), buf = the chunk's raw words
 * (VPB values per block; value i0 + i is buf[i]). */
#define CHUNKED_FILL(WORDT, VPB, FILL, ...)                                        \
    do {                                                                           \
        const philox4x32_key_t key = philox_key_from_seed(seed);                   \
        const int64_t nblocks = (n + (VPB) - 1) / (VPB);                           \
        const int64_t nchunks = (nblocks + CHUNK_BLOCKS - 1) / CHUNK_BLOCKS;       \
        _Pragma("omp parallel for schedule(static) num_threads(rand_nthreads(nthreads)) if (nchunks >= PAR_MIN_CHUNKS)") \
        for (int64_t c = 0; c < nchunks; c++) {                                    \
            WORDT buf[(VPB) * CHUNK_BLOCKS];                                       \
            const int64_t b0 = c * CHUNK_BLOCKS;                                   \
            const int64_t nb = min_i64(CHUNK_BLOCKS, nblocks - b0);                \
            const int64_t i0 = (VPB) * b0;                                         \
            const int64_t cnt = min_i64((VPB) * nb, n - i0);                       \
            FILL(buf, key, offset + (uint64_t)b0, nb);                             \
            __VA_ARGS__                                                            \
        }                                                                          \
    } while (0)

/* ------------------------------------------------------------------------ */
/* 32-bit kinds: value i <- block offset + i/4, word i%4                     */
/* ------------------------------------------------------------------------ */

void rand_bits32(intptr_t out, int64_t n, uint64_t seed, uint64_t offset, int nthreads)
{
    if (n <= 0) return;
    uint32_t *o = (uint32_t *)out;
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t full = n / 4;              /* complete blocks: write directly */
    const int64_t nchunks = (full + CHUNK_BLOCKS - 1) / CHUNK_BLOCKS;
#pragma omp parallel for schedule(static) num_threads(rand_nthreads(nthreads)) \
    if (nchunks >= PAR_MIN_CHUNKS)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t b0 = c * CHUNK_BLOCKS;
        fill_words32(o + 4 * b0, key, offset + (uint64_t)b0, min_i64(CHUNK_BLOCKS, full - b0));
    }
    if (n % 4) {
        uint32_t t[4];
        fill_words32(t, key, offset + (uint64_t)full, 1);
        memcpy(o + 4 * full, t, (size_t)(n % 4) * sizeof(uint32_t));
    }
}

void rand_uniform_f32(intptr_t out, int64_t n, uint64_t seed, uint64_t offset,
                      float low, float high, int nthreads)
{
    if (n <= 0) return;
    float *o = (float *)out;
    const float span = high - low;
    const float below = philox_below_f32(low, high);
    CHUNKED_FILL(uint32_t, 4, fill_words32, {
        float *restrict p = o + i0;
        for (int64_t i = 0; i < cnt; i++)
            p[i] = philox_uniform_f32_p(buf[i], low, span, high, below);
    });
}

/* Pair (2k, 2k+1) <- words (2*(k%2), 2*(k%2)+1) of block offset + k/2, i.e.
 * the 32-bit stream values 2k, 2k+1 (u1 from the first, u2 from the second). */
void rand_normal_f32(intptr_t out, int64_t n, uint64_t seed, uint64_t offset,
                     float mean, float std, int nthreads)
{
    if (n <= 0) return;
    float *o = (float *)out;
    CHUNKED_FILL(uint32_t, 4, fill_words32, {
        float *restrict p = o + i0;
        int64_t i = 0;
        for (; i + 1 < cnt; i += 2)
            philox_normal_pair_f32(buf[i], buf[i + 1], mean, std, &p[i], &p[i + 1]);
        if (i < cnt) {           /* odd n: keep the cosine value only */
            float unused;
            philox_normal_pair_f32(buf[i], buf[i + 1], mean, std, &p[i], &unused);
        }
    });
}

/* ------------------------------------------------------------------------ */
/* 64-bit kinds: value i <- block offset + i/2, words 2*(i%2), 2*(i%2)+1     */
/* ------------------------------------------------------------------------ */

void rand_uniform_f64(intptr_t out, int64_t n, uint64_t seed, uint64_t offset,
                      double low, double high, int nthreads)
{
    if (n <= 0) return;
    double *o = (double *)out;
    const double span = high - low;
    const double below = philox_below_f64(low, high);
    CHUNKED_FILL(uint64_t, 2, fill_words64, {
        double *restrict p = o + i0;
        for (int64_t i = 0; i < cnt; i++)
            p[i] = philox_uniform_f64_p(buf[i], low, span, high, below);
    });
}

/* Pair (2k, 2k+1) <- block offset + k: u1 from words 0,1; u2 from words 2,3
 * (the 64-bit stream values 2k, 2k+1). */
void rand_normal_f64(intptr_t out, int64_t n, uint64_t seed, uint64_t offset,
                     double mean, double std, int nthreads)
{
    if (n <= 0) return;
    double *o = (double *)out;
    CHUNKED_FILL(uint64_t, 2, fill_words64, {
        double *restrict p = o + i0;
        int64_t i = 0;
        for (; i + 1 < cnt; i += 2)
            philox_normal_pair_f64(buf[i], buf[i + 1], mean, std, &p[i], &p[i + 1]);
        if (i < cnt) {           /* odd n: keep the cosine value only */
            double unused;
            philox_normal_pair_f64(buf[i], buf[i + 1], mean, std, &p[i], &unused);
        }
    });
}

/* [low, low + range): low + (u64 mod range) in wrapping 64-bit arithmetic, a word in the
 * biased low run replaced by rejection (philox_bounded_i64_p), range 0 meaning 2^64 (the raw
 * words plus low): any int64 or uint64 range, the whole 64-bit space included (uint64 values
 * are the same bits as an int64 low). */
void rand_int64(intptr_t out, int64_t n, uint64_t seed, uint64_t offset,
                int64_t low, uint64_t range, int nthreads)
{
    if (n <= 0) return;
    int64_t *o = (int64_t *)out;
    const uint64_t t = philox_bounded_threshold(range);
    CHUNKED_FILL(uint64_t, 2, fill_words64, {
        int64_t *restrict p = o + i0;
        const uint64_t j0 = offset + (uint64_t)b0;   /* value i0 + i: block j0 + i/2, word i%2 */
        for (int64_t i = 0; i < cnt; i++)
            p[i] = philox_bounded_i64_p(key, j0 + (uint64_t)(i / 2), (int)(i % 2), buf[i], low,
                                        range, t);
    });
}

/* Raw 64-bit values of the 64-bit stream (uint64 output), e.g. sort keys
 * for a parallel permutation (argsort of the keys). */
void rand_perm_keys(intptr_t out, int64_t n, uint64_t seed, uint64_t offset, int nthreads)
{
    if (n <= 0) return;
    uint64_t *o = (uint64_t *)out;
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t full = n / 2;              /* complete blocks: write directly */
    const int64_t nchunks = (full + CHUNK_BLOCKS - 1) / CHUNK_BLOCKS;
#pragma omp parallel for schedule(static) num_threads(rand_nthreads(nthreads)) \
    if (nchunks >= PAR_MIN_CHUNKS)
    for (int64_t c = 0; c < nchunks; c++) {
        const int64_t b0 = c * CHUNK_BLOCKS;
        fill_words64(o + 2 * b0, key, offset + (uint64_t)b0, min_i64(CHUNK_BLOCKS, full - b0));
    }
    if (n % 2) {
        uint64_t t[2];
        fill_words64(t, key, offset + (uint64_t)full, 1);
        o[n - 1] = t[0];
    }
}

/* Fisher-Yates from the identity: for i = n-1 .. 1, swap p[i] and p[j] with
 * j = u64_i mod (i+1), u64_i = value i of the 64-bit stream (block
 * offset + i/2).  Sequential (nthreads is accepted for a uniform interface
 * and ignored).  Uses philox_blocks_64(n) = ceil(n/2) blocks. */
void randperm(intptr_t out_int64, int64_t n, uint64_t seed, uint64_t offset, int nthreads)
{
    (void)nthreads;
    if (n <= 0) return;
    int64_t *p = (int64_t *)out_int64;
    for (int64_t i = 0; i < n; i++) p[i] = i;
    const philox4x32_key_t key = philox_key_from_seed(seed);

    int64_t i = n - 1;
    while (i >= 1) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)(i / 2));
        /* this block serves values 2*(i/2)+1 (if <= i) and 2*(i/2) (if >= 1) */
        for (int h = (int)(i & 1); h >= 0 && i >= 1; h--, i--) {
            uint64_t j = philox_u64(r, h) % (uint64_t)(i + 1);
            int64_t t = p[i]; p[i] = p[j]; p[j] = t;
        }
    }
}
