/* CUDA random fills: the device side of tensor/cpu/csrc/random.c, driven by the same
 * Philox4x32-10 stream (philox.h), so the same (n, seed, offset, parameters) gives the same
 * values on both devices. Stream layout (see philox.h):
 *   32-bit kinds (bits32, uniform_f32, normal_f32): value i <- block offset + i/4, word i%4
 *   64-bit kinds (uniform_f64, normal_f64, int64, perm keys, randperm): value i <- block
 *     offset + i/2, 64-bit word i%2 (words 2*(i%2) low, 2*(i%2)+1 high).
 * One thread computes one Philox block and writes the (up to 4 or 2) values it feeds, in a
 * grid-stride loop over blocks with 64-bit indices. Each value is a pure function of
 * (seed, offset, index), so results do not depend on the launch shape.
 *
 * Bit-exactness with the CPU: raw bits, uniforms (explicit fma + nextafter), int64 (same
 * u64 % range and rejection), randperm and normals (our own log/sin/cos,
 * scalar/random_xform.h) are bitwise identical.
 *
 * randperm: the CPU runs Fisher-Yates sequentially (i = n-1 .. 1 swaps p[i] and p[H[i]],
 * H[i] = u64_i % (i+1)). The GPU runs the *same* swaps with deterministic reservations
 * (Shun, Gu, Blelloch, Fineman, Gibbons: "Sequential random permutation, list contraction
 * and tree contraction are highly parallel", SODA 2015): in each round every pending swap i
 * reserves positions i and H[i] with atomicMax of (round << 40 | i) -- the largest i, i.e. the
 * earliest swap of the sequential order, wins -- and a swap holding both its reservations
 * commits. Committed swaps of one round touch disjoint positions, and a swap commits only
 * after every earlier swap touching its positions did, so the result is exactly the
 * sequential one, in O(log n) rounds. The order in which pending swaps are compacted
 * (atomicAdd) does not affect the result.
 *   randperm_small: n <= SX_PERM_SMALL, one block, all rounds in one launch (shared memory).
 *   randperm_init/reserve/commit_{u32,u64}: any n < 2^40, one launch per phase; the host
 *     runs rounds until the pending count it reads back is 0 (index type u32 when n < 2^32).
 */
#ifndef STRIDEX_RANDOM_CUH
#define STRIDEX_RANDOM_CUH

#include "common.cuh"
#include "philox.h"

#define SX_RBLK 256           /* threads per block of the fills */
#define SX_PERM_SMALL 4096    /* largest n of randperm_small */
#define SX_PERM_SBLK 1024     /* threads of randperm_small */

#define SX_GRID_LOOP(b, nb)                                                          \
    for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < (nb);       \
         b += (int64_t)blockDim.x * gridDim.x)

/* ---------------------------------------------------------------- 32-bit kinds */

SX_DEV void sx_rand_bits32(uint32_t *o, int64_t n, uint64_t seed, uint64_t offset) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_32(n);
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
        int64_t i = 4 * b;
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (i + k < n) o[i + k] = r.v[k];
    }
}

SX_DEV void sx_rand_uniform_f32(float *o, int64_t n, uint64_t seed, uint64_t offset,
                                float low, float high) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_32(n);
    const float span = high - low;
    const float below = philox_below_f32(low, high);
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
        int64_t i = 4 * b;
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (i + k < n) o[i + k] = philox_uniform_f32_p(r.v[k], low, span, high, below);
    }
}

/* Pairs (4b, 4b+1) <- words 0, 1 and (4b+2, 4b+3) <- words 2, 3 of block offset + b; an odd
 * last pair keeps its cosine value only (as the CPU). */
SX_DEV void sx_rand_normal_f32(float *o, int64_t n, uint64_t seed, uint64_t offset,
                               float mean, float std) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_32(n);
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int64_t i = 4 * b + 2 * h;
            if (i < n) {
                float z0, z1;
                philox_normal_pair_f32(r.v[2 * h], r.v[2 * h + 1], mean, std, &z0, &z1);
                o[i] = z0;
                if (i + 1 < n) o[i + 1] = z1;
            }
        }
    }
}

/* ---------------------------------------------------------------- 64-bit kinds */

SX_DEV void sx_rand_uniform_f64(double *o, int64_t n, uint64_t seed, uint64_t offset,
                                double low, double high) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_64(n);
    const double span = high - low;
    const double below = philox_below_f64(low, high);
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
        int64_t i = 2 * b;
        o[i] = philox_uniform_f64_p(philox_u64(r, 0), low, span, high, below);
        if (i + 1 < n) o[i + 1] = philox_uniform_f64_p(philox_u64(r, 1), low, span, high, below);
    }
}

/* Pair (2b, 2b+1) <- block offset + b: u1 from 64-bit word 0, u2 from word 1. */
SX_DEV void sx_rand_normal_f64(double *o, int64_t n, uint64_t seed, uint64_t offset,
                               double mean, double std) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_64(n);
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
        double z0, z1;
        philox_normal_pair_f64(philox_u64(r, 0), philox_u64(r, 1), mean, std, &z0, &z1);
        int64_t i = 2 * b;
        o[i] = z0;
        if (i + 1 < n) o[i + 1] = z1;
    }
}

/* [low, low + range): low + (u64 % range), wrapping, with the CPU's rejection of the biased
 * low run (philox_bounded_i64_p); range 0 means 2^64 (the raw words). */
SX_DEV void sx_rand_int64(int64_t *o, int64_t n, uint64_t seed, uint64_t offset,
                          int64_t low, uint64_t range) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_64(n);
    const uint64_t t = philox_bounded_threshold(range);
    SX_GRID_LOOP(b, nb) {
        int64_t i = 2 * b;
        uint64_t j = offset + (uint64_t)b;
        philox4x32_ctr_t r = philox_block_k(key, j);
        o[i] = philox_bounded_i64_p(key, j, 0, philox_u64(r, 0), low, range, t);
        if (i + 1 < n) o[i + 1] = philox_bounded_i64_p(key, j, 1, philox_u64(r, 1), low, range, t);
    }
}

/* Raw 64-bit values of the 64-bit stream (the CPU's rand_perm_keys). */
SX_DEV void sx_rand_perm_keys(uint64_t *o, int64_t n, uint64_t seed, uint64_t offset) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_64(n);
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
        int64_t i = 2 * b;
        o[i] = philox_u64(r, 0);
        if (i + 1 < n) o[i + 1] = philox_u64(r, 1);
    }
}

/* ---------------------------------------------------------------- randperm */

/* One block, n <= SX_PERM_SMALL: p = identity, then rounds of reserve / commit in shared
 * memory until no swap is pending. H[i] = target of swap i (bit 31: done), R[pos] = the
 * reservation (round << 13 | i). */
SX_DEV void sx_randperm_small(int64_t *p, int64_t n, uint64_t seed, uint64_t offset) {
    __shared__ uint32_t H[SX_PERM_SMALL];
    __shared__ uint32_t R[SX_PERM_SMALL];
    __shared__ uint32_t pending;          /* the last round that left a swap pending */
    const uint32_t DONE = 0x80000000u;
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int m = (int)n;
    for (int i = threadIdx.x; i < m; i += blockDim.x) {
        p[i] = i;
        R[i] = 0;
        H[i] = i == 0 ? DONE
                      : (uint32_t)(philox_stream_u64(key, offset, (uint64_t)i) % (uint64_t)(i + 1));
    }
    if (threadIdx.x == 0) pending = 0;
    __syncthreads();
    for (uint32_t round = 1;; round++) {
        for (int i = threadIdx.x; i < m; i += blockDim.x) {
            uint32_t j = H[i];
            if (!(j & DONE)) {
                uint32_t s = (round << 13) | (uint32_t)i;
                atomicMax(&R[i], s);
                atomicMax(&R[j], s);
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < m; i += blockDim.x) {
            uint32_t j = H[i];
            if (!(j & DONE)) {
                uint32_t s = (round << 13) | (uint32_t)i;
                if (R[i] == s && R[j] == s) {
                    int64_t t = p[i]; p[i] = p[j]; p[j] = t;
                    H[i] = j | DONE;
                } else {
                    pending = round;
                }
            }
        }
        __syncthreads();   /* the swaps (global memory) and `pending` are visible to the block */
        if (pending != round) break;
    }
}

/* p = identity, H[i] = u64_i % (i+1) (one Philox block per pair), R = 0, list L = 1..n-1,
 * cnt[0] = n-1 (pending in L), cnt[1] = 0. */
template <class I>
SX_DEV void sx_randperm_init(int64_t *p, I *H, uint64_t *R, I *L, uint64_t *cnt, int64_t n,
                             uint64_t seed, uint64_t offset) {
    const philox4x32_key_t key = philox_key_from_seed(seed);
    const int64_t nb = (int64_t)philox_blocks_64(n);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cnt[0] = (uint64_t)(n - 1);
        cnt[1] = 0;
    }
    SX_GRID_LOOP(b, nb) {
        philox4x32_ctr_t r = philox_block_k(key, offset + (uint64_t)b);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int64_t i = 2 * b + h;
            if (i < n) {
                p[i] = i;
                R[i] = 0;
                H[i] = (I)(i == 0 ? 0 : philox_u64(r, h) % (uint64_t)(i + 1));
                if (i > 0) L[i - 1] = (I)i;
            }
        }
    }
}

/* Every pending swap i of L[0 .. *cin) reserves positions i and H[i]; zeroes *cout for the
 * commit that follows. stamp = round << 40. */
template <class I>
SX_DEV void sx_randperm_reserve(const I *H, uint64_t *R, const I *L, const uint64_t *cin,
                                uint64_t *cout, uint64_t stamp) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *cout = 0;
    const int64_t m = (int64_t)*cin;
    SX_GRID_LOOP(t, m) {
        uint64_t i = (uint64_t)L[t];
        unsigned long long s = (unsigned long long)(stamp | i);
        atomicMax((unsigned long long *)&R[i], s);
        atomicMax((unsigned long long *)&R[H[i]], s);
    }
}

/* A swap holding both reservations commits; the others go to Lout (count *cout). */
template <class I>
SX_DEV void sx_randperm_commit(int64_t *p, const I *H, const uint64_t *R, const I *L,
                               const uint64_t *cin, I *Lout, uint64_t *cout, uint64_t stamp) {
    const int64_t m = (int64_t)*cin;
    SX_GRID_LOOP(t, m) {
        I i = L[t];
        I j = H[i];
        uint64_t s = stamp | (uint64_t)i;
        if (R[i] == s && R[j] == s) {
            int64_t v = p[i]; p[i] = p[j]; p[j] = v;
        } else {
            unsigned long long k = atomicAdd((unsigned long long *)cout, 1ull);
            Lout[k] = i;
        }
    }
}

#endif
