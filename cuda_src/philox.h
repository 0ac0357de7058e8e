/*
 * philox.h -- counter-based Philox4x32-10 random number core.
 *
 * This single header is compiled both as C (CPU backend: gcc -std=gnu11)
 * and as CUDA C++ (NVRTC / nvcc), so that the same (seed, offset) gives the
 * same random bits on every device.
 *
 * ---------------------------------------------------------------------------
 * Generator
 * ---------------------------------------------------------------------------
 * philox4x32_10(ctr, key) is the Philox4x32 bijection with 10 rounds
 * (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
 * multipliers 0xD2511F53 / 0xCD9E8D57, Weyl key increments
 * 0x9E3779B9 / 0xBB67AE85.  It reproduces the published known-answer
 * vectors, e.g. ctr = {0,0,0,0}, key = {0,0}
 *   -> {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}.
 *
 * ---------------------------------------------------------------------------
 * Stream definition
 * ---------------------------------------------------------------------------
 * A generator state is (seed: uint64, offset: uint64).
 *   key            = { seed & 0xffffffff, seed >> 32 }
 *   block j        = philox4x32_10({ j & 0xffffffff, j >> 32, 0, 0 }, key)
 *                    (4 uint32 words w[0..3]; j is taken mod 2^64)
 *
 * A "draw" of n values starting at `offset` uses blocks offset, offset+1, ...
 *
 *   32-bit kinds (raw uint32 bits, float32 uniform, float32 normal):
 *     value i  <-  block (offset + i/4), word (i % 4)
 *     blocks used: philox_blocks_32(n) = ceil(n / 4)
 *
 *   64-bit kinds (float64 uniform, float64 normal, int64 in [low,high),
 *                 64-bit permutation keys, randperm):
 *     value i  <-  block (offset + i/2), words (2*(i%2), 2*(i%2)+1)
 *     the 64-bit word is  u64 = w[2*(i%2)] | ((uint64)w[2*(i%2)+1] << 32)
 *     (first word = low half)
 *     blocks used: philox_blocks_64(n) = ceil(n / 2)
 *
 * The caller advances offset by the number of blocks used.  Consequently a
 * second draw always starts at a fresh block: drawing n then m values equals
 * the first n and the last m values of one draw of n+m values only when n is
 * a multiple of 4 (32-bit kinds) or of 2 (64-bit kinds); otherwise the unused
 * words of the last block of the first draw are discarded.
 *
 * ---------------------------------------------------------------------------
 * Conversions
 * ---------------------------------------------------------------------------
 *   uint32 -> float  in [0,1):  (x >> 8) * 2^-24           (exact)
 *   uint64 -> double in [0,1):  (u64 >> 11) * 2^-53         (exact)
 *   uniform(low, high):  fma(high - low, u, low), computed with an explicit
 *     fused multiply-add so the result does not depend on the compiler's
 *     contraction choices (fma is correctly rounded on CPU and GPU).
 *     float32 and float64: a result that rounds up to `high` is replaced by
 *     nextafter(high, low), so results lie in [low, high).  Requires
 *     low < high (low >= high yields low; validate ranges in the caller).
 *
 *   normal (Box-Muller), value pair (2k, 2k+1):
 *     float32: the pair comes from the two 32-bit values 2k, 2k+1 of the
 *       32-bit stream, i.e. block offset + k/2, words (2*(k%2), 2*(k%2)+1):
 *         u1 = 1 - float_uniform(w_a)   in (0,1]   (avoids log(0))
 *         u2 =     float_uniform(w_b)   in [0,1)
 *         r = sqrt(-2 log u1), t = 2*pi*u2
 *         value 2k = r*cos(t), value 2k+1 = r*sin(t)
 *       This matches the 32-bit layout: value i still lives in block
 *       offset + i/4.  blocks used: ceil(n/4).
 *     float64: the pair comes from the two 64-bit values 2k, 2k+1 of the
 *       64-bit stream, i.e. block offset + k: u1 = 1 - double_uniform(w0,w1),
 *       u2 = double_uniform(w2,w3); same formulas.  blocks used: ceil(n/2).
 *     For odd n the last pair is computed and only its cosine value is kept.
 *     out = fma(std, z, mean).
 *
 *   Bit-exactness: raw bits, uniforms, integers and normals are bitwise
 *   identical on CPU and CUDA (integer arithmetic, exact conversions,
 *   explicit fma; the normals' log, sin and cos are our own polynomials in
 *   scalar/random_xform.h, not libm's or CUDA's, whose last bits differ).
 *   Build without -ffast-math (gcc) and without --use_fast_math / --ftz=true
 *   (NVRTC/nvcc): flushing subnormals or approximate math would break it.
 *
 *   bounded integers in [low, high) (64-bit range R = high - low, computed
 *   as uint64, 1 <= R <= 2^64-1):  value = low + (u64 % R), in wrapping 64-bit
 *   arithmetic (uint64 ranges are the same bits), unbiased: a word below
 *   2^64 mod R is redrawn from counters outside the stream (the rule and its
 *   bound are in scalar/random_xform.h), so a range under 2^32 almost never
 *   redraws.  R = 2^64 (the whole int64 or uint64 range) is passed as 0:
 *   value = low + u64, uniform bits.
 *
 *   randperm(n): Fisher-Yates, sequential.  For i = n-1 down to 1, step i
 *   swaps p[i] with p[j], j = u64_i % (i+1), where u64_i is value i of the
 *   64-bit stream (block offset + i/2).  Starts from the identity.  Uses
 *   ceil(n/2) blocks (value 0 is unused).
 *
 * Helpers: philox_block(seed, j) / philox_block_k(key, j) give block j;
 * philox_stream_u32 / philox_stream_u64(key, offset, i) give value i of a
 * draw (random access, e.g. one thread per value); philox_blocks_32/64(n)
 * give the offset advance of a draw.
 */
#ifndef PHILOX_H_
#define PHILOX_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define PHILOX_FN __host__ __device__ __forceinline__
#else
#define PHILOX_FN static inline
#endif

/* the fixed-width integer types (NVRTC has no system headers) and <math.h> elsewhere */
#include "scalar/types.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

typedef struct { uint32_t v[4]; } philox4x32_ctr_t;
typedef struct { uint32_t v[2]; } philox4x32_key_t;

/* ----------------------------------------------------------------------- */
/* Core bijection                                                           */
/* ----------------------------------------------------------------------- */

PHILOX_FN uint32_t philox_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
#if defined(__CUDA_ARCH__)
    *hi = __umulhi(a, b);
    return a * b;
#else
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
#endif
}

PHILOX_FN philox4x32_ctr_t philox4x32_round(philox4x32_ctr_t c, philox4x32_key_t k)
{
    uint32_t hi0, hi1;
    uint32_t lo0 = philox_mulhilo32(PHILOX_M0, c.v[0], &hi0);
    uint32_t lo1 = philox_mulhilo32(PHILOX_M1, c.v[2], &hi1);
    philox4x32_ctr_t r;
    r.v[0] = hi1 ^ c.v[1] ^ k.v[0];
    r.v[1] = lo1;
    r.v[2] = hi0 ^ c.v[3] ^ k.v[1];
    r.v[3] = lo0;
    return r;
}

PHILOX_FN philox4x32_key_t philox4x32_bumpkey(philox4x32_key_t k)
{
    k.v[0] += PHILOX_W0;
    k.v[1] += PHILOX_W1;
    return k;
}

/* Philox4x32 with 10 rounds (9 key bumps between the rounds). */
PHILOX_FN philox4x32_ctr_t philox4x32_10(philox4x32_ctr_t ctr, philox4x32_key_t key)
{
    ctr = philox4x32_round(ctr, key);                                   /* 1 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 2 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 3 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 4 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 5 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 6 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 7 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 8 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 9 */
    key = philox4x32_bumpkey(key); ctr = philox4x32_round(ctr, key);    /* 10 */
    return ctr;
}

/* ----------------------------------------------------------------------- */
/* Stream                                                                   */
/* ----------------------------------------------------------------------- */

PHILOX_FN philox4x32_key_t philox_key_from_seed(uint64_t seed)
{
    philox4x32_key_t k;
    k.v[0] = (uint32_t)(seed & 0xffffffffu);
    k.v[1] = (uint32_t)(seed >> 32);
    return k;
}

/* Block with absolute index j (= offset + block index within a draw). */
PHILOX_FN philox4x32_ctr_t philox_block_k(philox4x32_key_t key, uint64_t j)
{
    philox4x32_ctr_t c;
    c.v[0] = (uint32_t)(j & 0xffffffffu);
    c.v[1] = (uint32_t)(j >> 32);
    c.v[2] = 0u;
    c.v[3] = 0u;
    return philox4x32_10(c, key);
}

PHILOX_FN philox4x32_ctr_t philox_block(uint64_t seed, uint64_t j)
{
    return philox_block_k(philox_key_from_seed(seed), j);
}

/* Blocks consumed by a draw of n values (n >= 0). */
PHILOX_FN uint64_t philox_blocks_32(int64_t n)   /* 32-bit kinds */
{
    return n <= 0 ? 0u : ((uint64_t)n + 3u) / 4u;
}

PHILOX_FN uint64_t philox_blocks_64(int64_t n)   /* 64-bit kinds */
{
    return n <= 0 ? 0u : ((uint64_t)n + 1u) / 2u;
}

/* 64-bit word h (0 or 1) of a block: words 2h (low half) and 2h+1 (high). */
PHILOX_FN uint64_t philox_u64(philox4x32_ctr_t b, int h)
{
    return (uint64_t)b.v[2 * h] | ((uint64_t)b.v[2 * h + 1] << 32);
}

/* Value i of a 32-bit / 64-bit draw starting at `offset` (random access). */
PHILOX_FN uint32_t philox_stream_u32(philox4x32_key_t key, uint64_t offset, uint64_t i)
{
    philox4x32_ctr_t b = philox_block_k(key, offset + i / 4u);
    return b.v[i % 4u];
}

PHILOX_FN uint64_t philox_stream_u64(philox4x32_key_t key, uint64_t offset, uint64_t i)
{
    philox4x32_ctr_t b = philox_block_k(key, offset + i / 2u);
    return philox_u64(b, (int)(i % 2u));
}

/* The conversions of words to values (uniform, normal, bounded integers; the
 * "Conversions" above) are written once for float and double in scalar/random_xform.h. */
#include "scalar/random_xform.h"

#endif /* PHILOX_H_ */
